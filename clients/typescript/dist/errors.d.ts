/**
 * Errors of the leaf client. Every error it throws or rejects with is a
 * {@link LeafError} whose `code` is one of the server's error codes
 * (docs/http-api.md, "Errors"), or `"closed"` after {@link Client.close}:
 *
 * ```ts
 * try {
 *   await client.nextId("orders");
 * } catch (err) {
 *   if (err instanceof LeafError && err.code === "unknown_tag") { ... }
 * }
 * ```
 */
/** The error codes of the server's one table, and "closed". */
export declare const ERROR_CODES: readonly ["invalid_tag", "invalid_id", "invalid_count", "invalid_request", "unauthorized", "unknown_tag", "not_found", "method_not_allowed", "tag_exists", "tag_exhausted", "tag_bound_reached", "lease_lost", "tag_misconfigured", "unavailable", "store_not_durable", "internal", "invalid_format", "format_fixed", "not_numeric", "period_closed", "sequence_full", "invalid_space", "invalid_key", "unknown_space", "space_exists", "sequence_exhausted", "closed"];
export type ErrorCode = (typeof ERROR_CODES)[number];
/** Details of an error answer, or of a request that got none. */
export interface ErrorDetails {
    /** The endpoint asked, as configured. */
    endpoint?: string;
    /** The HTTP status; undefined when no answer came. */
    status?: number;
    /** The code the server sent, even one this client does not know. */
    serverCode?: string;
    /** The server's Retry-After, in milliseconds. */
    retryAfterMs?: number;
    /** Why no answer could be used (a network error). */
    cause?: unknown;
}
/** An error of the leaf client; `code` says which. */
export declare class LeafError extends Error {
    readonly code: ErrorCode;
    readonly endpoint?: string;
    readonly status?: number;
    readonly serverCode?: string;
    readonly retryAfterMs?: number;
    /** The Leaf-Routes-Version an error answer came with, if any. */
    routesVersion?: string;
    constructor(code: ErrorCode, message: string, details?: ErrorDetails);
}
/**
 * No server could serve the call: retrying later may succeed (the code
 * `unavailable`, or `store_not_durable` for one server that takes numbers only
 * from a durable database and found its own can forget). `errors` holds
 * the last error of each endpoint (undefined for one that never failed), in
 * the order configured.
 */
export declare class UnavailableError extends LeafError {
    readonly errors: (LeafError | undefined)[];
    constructor(message: string, errors?: (LeafError | undefined)[], details?: ErrorDetails, code?: "unavailable" | "store_not_durable");
}
/** The client was closed. */
export declare class ClosedError extends LeafError {
    constructor();
}
/**
 * The error of an error answer: by its code when the server sent a known
 * one, else by its status (a proxy's 502 is unavailable).
 */
export declare function errorAnswer(endpoint: string, status: number, serverCode: string | undefined, message: string, retryAfterMs?: number): LeafError;
/**
 * Whether another endpoint may answer where this one failed: no answer, a
 * 429, an unreadable 200, or a 5xx other than tag_misconfigured, which
 * every server reading the same row gives.
 */
export declare function failsOver(err: LeafError): boolean;
