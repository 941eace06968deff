/**
 * The leaf client: ids from ranges leased from leaf servers, handed out
 * in-process. The behaviour is the Go client's (the leaf repository's
 * docs/go-client.md), held to it by the conformance suite in
 * clients/conformance.
 */
import { LeafError } from "./errors";
import { SnowflakeLayout } from "./layout";
import { Worker } from "./worker";
/** The largest range a server hands out in one answer. */
export declare const MAX_RANGE = 1000000;
/** The largest snowflake batch a server answers. */
export declare const MAX_SNOWFLAKE_BATCH = 10000;
/** The largest n of nextIds. */
export declare const MAX_N = 1000000;
export declare const MAX_SEQUENCE_KEY = 256;
export declare const MAX_SEQUENCE_BATCH = 10000;
/** What a Client needs. Only endpoints is required; times are in milliseconds. */
export interface ClientOptions {
    /** Base URLs of leaf servers, e.g. "http://leaf-1:8080"; at least one. */
    endpoints: string[];
    /** Bound of one request to one endpoint; default 2000. */
    requestTimeoutMs?: number;
    /** Bounds of the ids asked for in one range; default 100 and 1,000,000. */
    minRange?: number;
    maxRange?: number;
    /** How often, per tag, the client aims to ask for a range; default 1000. */
    refillIntervalMs?: number;
    /** Snowflake ids fetched a request; default 100, at most 10,000. */
    snowflakeBatch?: number;
    /** The oldest snowflake id handed out, counted from its request; default 1000. */
    snowflakeMaxAgeMs?: number;
    /** Back-off of a failing endpoint: from backoffMinMs (100) doubling to backoffMaxMs (5000). */
    backoffMinMs?: number;
    backoffMaxMs?: number;
    /** The least time between two fetches of a space's routing table; default 2000. */
    routesIntervalMs?: number;
    /**
     * Call the owner of a key's section directly, at the address the servers
     * advertise (default true); false sends every sequence call to endpoints.
     */
    directSequences?: boolean;
    /** Bearer token of the servers' id routes (leaf serve --id-token), sent with every request; default none. */
    token?: string;
}
/** A server: its base URL and its health. */
declare class Endpoint {
    readonly base: string;
    failures: number;
    until: number;
    last?: LeafError;
    constructor(base: string);
    usable(t: number): boolean;
    answered(): void;
    /** Leaves the endpoint out for a back-off that doubles with each failure in a row, with jitter. */
    failed(err: LeafError, t: number, lo: number, hi: number): void;
}
interface RouteTable {
    version: string;
    owners: (Endpoint | undefined)[];
}
/**
 * Hands out segment-mode ids of leaf from ranges it leases from the servers,
 * and snowflake ids it fetches in batches. Ids are bigints (they pass 2^53).
 *
 * Make one per process and share it: concurrent calls share each tag's
 * ranges and a single request in flight per tag. `nextId` resolves from
 * memory and waits for a server only on a tag's first call and when ranges
 * run out faster than they arrive. `close()` stops its timers and requests.
 */
export declare class Client {
    private readonly s;
    private readonly eps;
    private turn;
    private readonly tags;
    private readonly spans;
    private readonly pending;
    private closed;
    private readonly aborter;
    private readonly closing;
    private closeNow;
    private readonly tasks;
    private readonly routes;
    private readonly flakes;
    constructor(options: ClientOptions);
    /**
     * Stops the client: waiting calls and later ones reject with a
     * ClosedError, requests in flight are aborted, and the returned promise
     * resolves once every background task has ended. Unused ids are not
     * handed back: they are lost, which costs only numbers.
     */
    close(): Promise<void>;
    /** Runs f in the background, tracked for close; never rejects. */
    private spawn;
    /** One GET to one endpoint: the decoded answer and the routes version answered. */
    private try;
    /**
     * Asks the endpoints in turn for path, skipping those backing off; one that
     * gives no usable answer is left out for a while and the next is asked. An
     * answer another server would give as well (a 4xx) is thrown at once.
     */
    private get;
    /** How long until some endpoint's back-off ends, at least backoffMinMs. */
    private retryIn;
    /**
     * The next id of tag. It comes from a range buffered in the client; the
     * call waits for a server only when the tag has no range left. Rejects
     * with a LeafError: unknown_tag, not_numeric (a formatted or opaque tag),
     * invalid_request (an ordered tag), unavailable, closed, ...
     */
    nextId(tag: string): Promise<bigint>;
    /**
     * The next id of tag if the client has one buffered, else undefined (then
     * `await nextId(tag)`). No promise: for loops that take many ids at once,
     * `client.tryNextId(tag) ?? (await client.nextId(tag))`.
     */
    tryNextId(tag: string): bigint | undefined;
    /**
     * A source of ids of tag for a loop that takes many: `source.tryNext() ??
     * (await source.next())` takes an id with no map lookup and no promise
     * until a range runs out. Its ids come from the client's ranges of tag,
     * as nextId's do, and it follows close.
     */
    source(tag: string): IdSource;
    /** The next id of b's span in use, past its limit; undefined at its end. */
    private take;
    /** Makes the hot path find b's span in use, once b has had a range and while the client is open. */
    private useSpan;
    private nextSlow;
    /**
     * n ids of tag (0 ≤ n ≤ 1,000,000), increasing. They may come from several
     * ranges, so they are not always consecutive.
     */
    nextIds(tag: string, n: number): Promise<bigint[]>;
    private buffer;
    private prefetch;
    /** Makes the range after s current, waiting for its load if need be. */
    private advance;
    private startLoad;
    /**
     * Sizes the next range to last about refillIntervalMs at the tag's recent
     * rate, changing by a factor of 4 at most; a caller that had to wait
     * doubles it at least.
     */
    private plan;
    /**
     * Loads b's next range; after a failed round it tries again when an
     * endpoint's back-off ends, or at once when a caller waits, as long as the
     * tag has a range in use.
     */
    private load;
    /**
     * Leases a worker id of the fleet's for snowflake ids made in this process
     * (POST /api/snowflake/leases), for ttlMs (3000 to 600000), renewed in the
     * background until the worker is closed.
     */
    leaseWorker(holder: string, ttlMs?: number): Promise<Worker>;
    /**
     * The layout of the servers' snowflake ids (GET /api/snowflake/layout): with
     * it, ids are decoded and the bounds of a span of time computed without a
     * call (SnowflakeLayout.decode, SnowflakeLayout.bounds).
     */
    snowflakeLayout(): Promise<SnowflakeLayout>;
    /** A snowflake id from a batch fetched ahead of time; never one older than snowflakeMaxAgeMs. */
    snowflake(): Promise<bigint>;
    private fetchFlakes;
    /**
     * Takes n consecutive numbers of key in the sequence space (1 ≤ n ≤ 10,000)
     * and returns the first: above every number the key was given before. One
     * request a call, to the owner of the key's section.
     */
    sequenceNext(space: string, key: string, n?: number): Promise<bigint>;
    /** The last number issued to key, without taking one. */
    sequenceCurrent(space: string, key: string): Promise<bigint>;
    private sequenceGet;
    private noteVersion;
    /** Fetches the space's table in the background, unless a fetch runs or one started less than routesIntervalMs ago. */
    private refreshRoutes;
}
/** The section of key: the 64-bit FNV-1a hash of its UTF-8 bytes modulo sections, as the server computes it. */
export declare function sectionOf(key: string, sections: number): number;
/**
 * The routing table of an answer, from the endpoint whose base is from: its
 * owners are called with from's scheme, so a client given https:// endpoints
 * never calls one in clear. Exported for the tests, not by the package.
 */
export declare function routeTable(v: unknown, old: RouteTable | undefined, from: string): RouteTable | undefined;
/**
 * Ids of one tag from a Client's ranges, for a loop that takes many
 * (`client.source(tag)`): `tryNext()` takes an id from the range in use with
 * one comparison and no promise, or answers undefined at a range's end,
 * where `await next()` waits for the next range. Ids are unique with every
 * other taken from the client, and increase.
 */
export declare class IdSource {
    private readonly client;
    readonly tag: string;
    private s;
    constructor(client: Client, tag: string);
    /** The next id if one is buffered, else undefined (then `await next()`). */
    tryNext(): bigint | undefined;
    /** The next id, waiting for a range when none is buffered. */
    next(): Promise<bigint>;
    private refill;
}
export {};
