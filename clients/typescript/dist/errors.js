"use strict";
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
Object.defineProperty(exports, "__esModule", { value: true });
exports.ClosedError = exports.UnavailableError = exports.LeafError = exports.ERROR_CODES = void 0;
exports.errorAnswer = errorAnswer;
exports.failsOver = failsOver;
/** The error codes of the server's one table, and "closed". */
exports.ERROR_CODES = [
    "invalid_tag",
    "invalid_id",
    "invalid_count",
    "invalid_request",
    "unauthorized",
    "unknown_tag",
    "not_found",
    "method_not_allowed",
    "tag_exists",
    "tag_exhausted",
    "tag_bound_reached",
    "lease_lost",
    "tag_misconfigured",
    "unavailable",
    "store_not_durable",
    "internal",
    "invalid_format",
    "format_fixed",
    "not_numeric",
    "period_closed",
    "sequence_full",
    "invalid_space",
    "invalid_key",
    "unknown_space",
    "space_exists",
    "sequence_exhausted",
    "closed",
];
const known = new Set(exports.ERROR_CODES);
/** An error of the leaf client; `code` says which. */
class LeafError extends Error {
    code;
    endpoint;
    status;
    serverCode;
    retryAfterMs;
    /** The Leaf-Routes-Version an error answer came with, if any. */
    routesVersion;
    constructor(code, message, details = {}) {
        super(message, details.cause === undefined ? undefined : { cause: details.cause });
        this.name = "LeafError";
        this.code = code;
        this.endpoint = details.endpoint;
        this.status = details.status;
        this.serverCode = details.serverCode;
        this.retryAfterMs = details.retryAfterMs;
    }
}
exports.LeafError = LeafError;
/**
 * No server could serve the call: retrying later may succeed (the code
 * `unavailable`, or `store_not_durable` for one server that takes numbers only
 * from a durable database and found its own can forget). `errors` holds
 * the last error of each endpoint (undefined for one that never failed), in
 * the order configured.
 */
class UnavailableError extends LeafError {
    errors;
    constructor(message, errors = [], details = {}, code = "unavailable") {
        super(code, message, details);
        this.name = "UnavailableError";
        this.errors = errors;
    }
}
exports.UnavailableError = UnavailableError;
/** The client was closed. */
class ClosedError extends LeafError {
    constructor() {
        super("closed", "leaf client: closed");
        this.name = "ClosedError";
    }
}
exports.ClosedError = ClosedError;
/**
 * The error of an error answer: by its code when the server sent a known
 * one, else by its status (a proxy's 502 is unavailable).
 */
function errorAnswer(endpoint, status, serverCode, message, retryAfterMs) {
    let code;
    if (serverCode !== undefined && known.has(serverCode) && serverCode !== "closed") {
        code = serverCode;
    }
    else if (status >= 200 && status < 300) {
        code = "internal";
    }
    else if (status === 429 || status >= 500) {
        code = "unavailable";
    }
    else if (status === 404) {
        code = "not_found";
    }
    else if (status === 401 || status === 403) {
        code = "unauthorized";
    }
    else {
        code = "invalid_request";
    }
    const text = serverCode ? `${endpoint}: ${status} ${serverCode}: ${message}` : `${endpoint}: ${status} ${message}`.trimEnd();
    const details = { endpoint, status, serverCode, retryAfterMs };
    return code === "unavailable" || code === "store_not_durable"
        ? new UnavailableError(text, [], details, code)
        : new LeafError(code, text, details);
}
/**
 * Whether another endpoint may answer where this one failed: no answer, a
 * 429, an unreadable 200, or a 5xx other than tag_misconfigured, which
 * every server reading the same row gives.
 */
function failsOver(err) {
    const s = err.status;
    if (s === undefined || s === 429 || s < 300)
        return true;
    if (s >= 500)
        return err.serverCode !== "tag_misconfigured";
    return false;
}
