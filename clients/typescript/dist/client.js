"use strict";
/**
 * The leaf client: ids from ranges leased from leaf servers, handed out
 * in-process. The behaviour is the Go client's (the leaf repository's
 * docs/go-client.md), held to it by the conformance suite in
 * clients/conformance.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.IdSource = exports.Client = exports.MAX_SEQUENCE_BATCH = exports.MAX_SEQUENCE_KEY = exports.MAX_N = exports.MAX_SNOWFLAKE_BATCH = exports.MAX_RANGE = void 0;
exports.sectionOf = sectionOf;
exports.routeTable = routeTable;
const errors_1 = require("./errors");
const layout_1 = require("./layout");
const worker_1 = require("./worker");
/** The largest range a server hands out in one answer. */
exports.MAX_RANGE = 1_000_000;
/** The largest snowflake batch a server answers. */
exports.MAX_SNOWFLAKE_BATCH = 10_000;
/** The largest n of nextIds. */
exports.MAX_N = 1_000_000;
exports.MAX_SEQUENCE_KEY = 256;
exports.MAX_SEQUENCE_BATCH = 10_000;
const MAX_INT64 = (1n << 63n) - 1n;
const HEADER_ROUTES_VERSION = "Leaf-Routes-Version";
const ROUTE_SCHEME = "fnv1a64-mod";
/** Bound of what is read of an answer. */
const MAX_BODY = 1 << 20;
/**
 * The load of the next range starts when a quarter of the current one is
 * used, leaving three quarters of refillIntervalMs for a request that may
 * have to fail over.
 */
const PREFETCH_QUARTER = 4;
function settings(o) {
    if (!o || !Array.isArray(o.endpoints) || o.endpoints.length === 0) {
        throw new TypeError("leaf client: no endpoints");
    }
    const maxRange = o.maxRange ?? exports.MAX_RANGE;
    const s = {
        endpoints: o.endpoints.map(parseEndpoint),
        requestTimeoutMs: o.requestTimeoutMs ?? 2000,
        minRange: o.minRange ?? Math.min(100, maxRange),
        maxRange,
        refillIntervalMs: o.refillIntervalMs ?? 1000,
        snowflakeBatch: o.snowflakeBatch ?? 100,
        snowflakeMaxAgeMs: o.snowflakeMaxAgeMs ?? 1000,
        backoffMinMs: o.backoffMinMs ?? 100,
        backoffMaxMs: o.backoffMaxMs ?? 5000,
        routesIntervalMs: o.routesIntervalMs ?? 2000,
        directSequences: o.directSequences ?? true,
        token: o.token ?? "",
    };
    for (const k of ["requestTimeoutMs", "refillIntervalMs", "snowflakeMaxAgeMs", "backoffMinMs", "backoffMaxMs", "routesIntervalMs"]) {
        if (!(s[k] > 0) || !Number.isFinite(s[k]))
            throw new RangeError(`leaf client: ${k} ${s[k]}: want milliseconds above 0`);
    }
    for (const [k, hi] of [["minRange", exports.MAX_RANGE], ["maxRange", exports.MAX_RANGE], ["snowflakeBatch", exports.MAX_SNOWFLAKE_BATCH]]) {
        if (!Number.isInteger(s[k]) || s[k] < 1 || s[k] > hi)
            throw new RangeError(`leaf client: ${k} ${s[k]}: want 1 to ${hi}`);
    }
    if (s.minRange > s.maxRange)
        throw new RangeError(`leaf client: minRange ${s.minRange} is above maxRange ${s.maxRange}`);
    if (s.backoffMinMs > s.backoffMaxMs)
        throw new RangeError(`leaf client: backoffMinMs ${s.backoffMinMs} is above backoffMaxMs ${s.backoffMaxMs}`);
    return s;
}
function parseEndpoint(e) {
    let u;
    try {
        u = new URL(e);
    }
    catch {
        throw new TypeError(`leaf client: endpoint ${JSON.stringify(e)}: not a URL`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:")
        throw new TypeError(`leaf client: endpoint ${JSON.stringify(e)}: want an http:// or https:// URL`);
    if (u.search || u.hash || u.username || u.password)
        throw new TypeError(`leaf client: endpoint ${JSON.stringify(e)}: want a base URL without user, query or fragment`);
    return e.replace(/\/+$/, "");
}
const now = () => performance.now();
/** A server: its base URL and its health. */
class Endpoint {
    base;
    failures = 0;
    until = 0; // performance.now() until which it is left out
    last;
    constructor(base) {
        this.base = base;
    }
    usable(t) {
        return t >= this.until;
    }
    answered() {
        this.failures = 0;
        this.until = 0;
    }
    /** Leaves the endpoint out for a back-off that doubles with each failure in a row, with jitter. */
    failed(err, t, lo, hi) {
        this.failures++;
        let d = Math.min(hi, lo * 2 ** Math.min(this.failures - 1, 32));
        d = d / 2 + (Math.random() * d) / 2;
        if (err.retryAfterMs !== undefined && err.retryAfterMs > d)
            d = Math.min(err.retryAfterMs, hi);
        this.until = t + d;
        this.last = err;
    }
}
/**
 * A range being handed out: ids next … end-1; the take of trigger starts
 * loading the next one. An id below limit needs nothing but its take: limit
 * is trigger until the trigger is taken, then end. next and limit live in a
 * typed array (at[0], at[1]), where the hot paths read and write them as
 * 64-bit integers, with no bigint stored on the heap per id.
 */
class Span {
    size;
    at = new BigUint64Array(2);
    end;
    trigger;
    constructor(start, size) {
        this.size = size;
        this.end = start + BigInt(size);
        this.trigger = size ? start + BigInt(Math.max(1, Math.floor(size / PREFETCH_QUARTER)) - 1) : -1n;
        this.at[0] = start;
        this.at[1] = size ? this.trigger : 0n;
    }
    get next() {
        return this.at[0];
    }
    set next(v) {
        this.at[0] = v;
    }
    get limit() {
        return this.at[1];
    }
    set limit(v) {
        this.at[1] = v;
    }
}
/** A promise resolved at the end of a round of loading, and its resolver. */
class Round {
    done;
    end;
    constructor() {
        this.done = new Promise((resolve) => (this.end = resolve));
    }
}
/** One tag's double buffer. */
class TagBuffer {
    tag;
    size;
    cur = new Span(0n, 0);
    next;
    since; // when the last load was planned
    taken = 0; // ids taken from spans no longer current
    takenThen = 0; // ids taken in all at the last plan
    short = false; // a caller found no range since the last plan
    published = false;
    running = false;
    err;
    round = new Round();
    kick; // set while a failed load waits to try again
    path;
    constructor(tag, size) {
        this.tag = tag;
        this.size = size;
        this.path = "/api/segment/range/" + encodeURIComponent(tag) + "?count=";
    }
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
class Client {
    s;
    eps;
    turn = 0;
    tags = new Map(); // tags that have had a range
    spans = new Map(); // the span in use of each of tags: the hot path's
    pending = new Map(); // tags waiting for their first range
    closed = false;
    aborter = new AbortController();
    closing;
    closeNow;
    tasks = new Set();
    routes = new Map();
    flakes = {
        cur: [],
        curSent: 0,
        next: [],
        nextSent: 0,
        running: false,
        err: undefined,
        round: new Round(),
    };
    constructor(options) {
        this.s = settings(options);
        this.eps = this.s.endpoints.map((e) => new Endpoint(e));
        this.closing = new Promise((resolve) => (this.closeNow = resolve));
    }
    /**
     * Stops the client: waiting calls and later ones reject with a
     * ClosedError, requests in flight are aborted, and the returned promise
     * resolves once every background task has ended. Unused ids are not
     * handed back: they are lost, which costs only numbers.
     */
    async close() {
        if (this.closed)
            return;
        this.closed = true;
        for (const b of this.tags.values())
            b.cur.limit = 0n; // a Source holding it takes no more
        this.tags.clear();
        this.spans.clear();
        this.pending.clear();
        this.aborter.abort();
        this.closeNow();
        await Promise.allSettled([...this.tasks]);
    }
    /** Runs f in the background, tracked for close; never rejects. */
    spawn(f) {
        if (this.closed)
            return false;
        const p = f().catch(() => { }).finally(() => this.tasks.delete(p));
        this.tasks.add(p);
        return true;
    }
    // --- requests ---------------------------------------------------------
    /** One GET to one endpoint: the decoded answer and the routes version answered. */
    async try(e, path, held, send) {
        const timeout = new AbortController();
        const onClose = () => timeout.abort();
        this.aborter.signal.addEventListener("abort", onClose);
        // A caller that awaits only resolved promises (ids from memory, in a
        // loop) keeps the event loop from reading the answer: when the timer
        // fires late, the answer may have been waiting, so it gets a moment more.
        const deadline = now() + this.s.requestTimeoutMs;
        let timer;
        const arm = (ms, grace) => {
            timer = setTimeout(() => (grace && now() - deadline > 20 ? arm(50, false) : timeout.abort()), ms);
        };
        arm(this.s.requestTimeoutMs, true);
        const headers = { Accept: "application/json" };
        if (this.s.token)
            headers.Authorization = "Bearer " + this.s.token;
        if (held)
            headers[HEADER_ROUTES_VERSION] = held;
        if (send)
            headers["Content-Type"] = "application/json";
        try {
            let resp;
            let body;
            try {
                resp = await fetch(e.base + path, { headers, signal: timeout.signal, method: send?.method, body: send ? JSON.stringify(send.body) : undefined });
                body = await resp.text();
            }
            catch (cause) {
                if (this.closed)
                    throw new errors_1.ClosedError();
                const why = timeout.signal.aborted ? `no answer within ${this.s.requestTimeoutMs}ms (requestTimeoutMs)` : transportWhy(cause);
                throw new errors_1.UnavailableError(`${e.base}: ${why}`, [], { endpoint: e.base, cause });
            }
            const seen = resp.headers.get(HEADER_ROUTES_VERSION);
            if (resp.status < 200 || resp.status > 299) {
                let code;
                let message = body.slice(0, 200);
                try {
                    const eb = JSON.parse(body).error;
                    if (typeof eb.code === "string")
                        [code, message] = [eb.code, String(eb.message)];
                }
                catch {
                    // not the API's error body: the status alone
                }
                const ra = Number(resp.headers.get("Retry-After"));
                const err = (0, errors_1.errorAnswer)(e.base, resp.status, code, message, Number.isInteger(ra) && ra > 0 ? ra * 1000 : undefined);
                err.routesVersion = seen ?? undefined;
                throw err;
            }
            if (body.length > MAX_BODY)
                throw malformed(e, "an answer over 1 MiB");
            try {
                // Ids are strings in the API's JSON; a bare number (sequence
                // current) is read as a bigint.
                return { value: /^\d+$/.test(body.trim()) ? BigInt(body.trim()) : JSON.parse(body), seen };
            }
            catch {
                throw malformed(e, "not JSON");
            }
        }
        finally {
            clearTimeout(timer);
            this.aborter.signal.removeEventListener("abort", onClose);
        }
    }
    /**
     * Asks the endpoints in turn for path, skipping those backing off; one that
     * gives no usable answer is left out for a while and the next is asked. An
     * answer another server would give as well (a 4xx) is thrown at once.
     */
    async get(op, path, check, held, send) {
        const n = this.eps.length;
        const first = ++this.turn % n;
        for (let i = 0; i < n; i++) {
            const e = this.eps[(first + i) % n];
            if (!e.usable(now()))
                continue;
            if (this.closed)
                throw new errors_1.ClosedError();
            try {
                const a = await this.try(e, path, held, send);
                const value = check(e, a.value);
                e.answered();
                return { value, seen: a.seen };
            }
            catch (err) {
                if (!(err instanceof errors_1.LeafError) || err.code === "closed")
                    throw err;
                if (!(0, errors_1.failsOver)(err)) {
                    e.answered();
                    throw err;
                }
                e.failed(err, now(), this.s.backoffMinMs, this.s.backoffMaxMs);
            }
        }
        const errs = this.eps.map((e) => e.last);
        const text = errs.filter((x) => x).map((x) => x.message).join("; ");
        throw new errors_1.UnavailableError(`leaf client: ${op}: no endpoint available${text ? ": " + text : ""}`, errs);
    }
    /** How long until some endpoint's back-off ends, at least backoffMinMs. */
    retryIn() {
        const t = now();
        let d = this.s.backoffMaxMs;
        for (const e of this.eps)
            d = Math.min(d, e.until - t);
        return Math.max(d, this.s.backoffMinMs);
    }
    // --- segment ids --------------------------------------------------------
    /**
     * The next id of tag. It comes from a range buffered in the client; the
     * call waits for a server only when the tag has no range left. Rejects
     * with a LeafError: unknown_tag, not_numeric (a formatted or opaque tag),
     * invalid_request (an ordered tag), unavailable, closed, ...
     */
    nextId(tag) {
        const s = this.spans.get(tag);
        if (s !== undefined) {
            const at = s.at;
            const id = at[0];
            if (id < at[1]) {
                at[0] = id + 1n;
                return Promise.resolve(id);
            }
        }
        return this.nextSlow(tag);
    }
    /**
     * The next id of tag if the client has one buffered, else undefined (then
     * `await nextId(tag)`). No promise: for loops that take many ids at once,
     * `client.tryNextId(tag) ?? (await client.nextId(tag))`.
     */
    tryNextId(tag) {
        const s = this.spans.get(tag);
        if (s !== undefined) {
            const at = s.at;
            const id = at[0];
            if (id < at[1]) {
                at[0] = id + 1n;
                return id;
            }
        }
        const b = this.tags.get(tag);
        return b === undefined ? undefined : this.take(b);
    }
    /**
     * A source of ids of tag for a loop that takes many: `source.tryNext() ??
     * (await source.next())` takes an id with no map lookup and no promise
     * until a range runs out. Its ids come from the client's ranges of tag,
     * as nextId's do, and it follows close.
     */
    source(tag) {
        if (typeof tag !== "string" || tag === "")
            throw new errors_1.LeafError("invalid_tag", `leaf client: tag ${JSON.stringify(tag)}: want a non-empty string`);
        return new IdSource(this, tag);
    }
    /** @internal The span in use of tag, for a Source; undefined before its first range. */
    spanOf(tag) {
        return this.spans.get(tag);
    }
    /** The next id of b's span in use, past its limit; undefined at its end. */
    take(b) {
        const s = b.cur;
        const id = s.next;
        if (id >= s.end)
            return undefined;
        s.next = id + 1n;
        if (id >= s.trigger) {
            s.limit = s.end; // the trigger is taken: from now on, only the end
            if (id === s.trigger)
                this.prefetch(b, s);
        }
        this.useSpan(b);
        return id;
    }
    /** Makes the hot path find b's span in use, once b has had a range and while the client is open. */
    useSpan(b) {
        if (!this.closed && this.tags.get(b.tag) === b && this.spans.get(b.tag) !== b.cur)
            this.spans.set(b.tag, b.cur);
    }
    async nextSlow(tag) {
        const b = this.buffer(tag);
        for (;;) {
            const id = this.take(b);
            if (id !== undefined)
                return id;
            await this.advance(b, b.cur);
        }
    }
    /**
     * n ids of tag (0 ≤ n ≤ 1,000,000), increasing. They may come from several
     * ranges, so they are not always consecutive.
     */
    async nextIds(tag, n) {
        if (!Number.isInteger(n) || n < 0 || n > exports.MAX_N) {
            throw new errors_1.LeafError("invalid_count", `leaf client: ${n} ids asked for, want 0 to ${exports.MAX_N}`);
        }
        const b = this.buffer(tag);
        const ids = [];
        while (ids.length < n) {
            const s = b.cur;
            if (s.next < s.end) {
                const take = Math.min(n - ids.length, Number(s.end - s.next));
                const from = s.next;
                s.next += BigInt(take);
                for (let i = 0; i < take; i++)
                    ids.push(from + BigInt(i));
                if (s.trigger < s.next)
                    s.limit = s.end;
                if (from <= s.trigger && s.trigger < s.next)
                    this.prefetch(b, s);
                continue;
            }
            await this.advance(b, s);
        }
        for (let i = 1; i < ids.length; i++) {
            if (ids[i - 1] > ids[i]) {
                ids.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
                break;
            }
        }
        return ids;
    }
    buffer(tag) {
        if (typeof tag !== "string" || tag === "")
            throw new errors_1.LeafError("invalid_tag", `leaf client: tag ${JSON.stringify(tag)}: want a non-empty string`);
        if (this.closed)
            throw new errors_1.ClosedError();
        let b = this.tags.get(tag) ?? this.pending.get(tag);
        if (b === undefined) {
            b = new TagBuffer(tag, this.s.minRange);
            this.pending.set(tag, b);
        }
        return b;
    }
    prefetch(b, s) {
        if (b.cur === s && b.next === undefined && !b.running) {
            this.startLoad(b, Math.max(1, Math.floor(s.size / PREFETCH_QUARTER)));
        }
    }
    /** Makes the range after s current, waiting for its load if need be. */
    async advance(b, s) {
        for (;;) {
            if (b.cur !== s)
                return;
            if (b.next !== undefined) {
                b.taken += s.size;
                b.cur = b.next;
                b.next = undefined;
                this.useSpan(b);
                return;
            }
            if (this.closed)
                throw new errors_1.ClosedError();
            if (s.size > 0)
                b.short = true;
            if (!b.running) {
                if (!this.startLoad(b, s.size))
                    throw new errors_1.ClosedError();
            }
            else {
                b.kick?.();
            }
            await Promise.race([b.round.done, this.closing]);
            if (this.closed)
                throw new errors_1.ClosedError();
            if (b.cur === s && b.next === undefined && b.err !== undefined)
                throw b.err;
        }
    }
    startLoad(b, used) {
        const size = this.plan(b, used, now());
        b.running = true;
        if (!this.spawn(() => this.load(b, size))) {
            b.running = false;
            return false;
        }
        return true;
    }
    /**
     * Sizes the next range to last about refillIntervalMs at the tag's recent
     * rate, changing by a factor of 4 at most; a caller that had to wait
     * doubles it at least.
     */
    plan(b, used, t) {
        const total = b.taken + used;
        let size = b.size;
        if (b.since !== undefined) {
            const took = total - b.takenThen;
            const d = t - b.since;
            if (took > 0 && d > 0) {
                const want = (took / d) * this.s.refillIntervalMs;
                size = Math.floor(Math.min(Math.max(want, b.size / 4), b.size * 4));
            }
            if (b.short)
                size = Math.max(size, 2 * b.size);
        }
        b.short = false;
        b.since = t;
        b.takenThen = total;
        b.size = Math.min(Math.max(size, this.s.minRange), this.s.maxRange);
        return b.size;
    }
    /**
     * Loads b's next range; after a failed round it tries again when an
     * endpoint's back-off ends, or at once when a caller waits, as long as the
     * tag has a range in use.
     */
    async load(b, size) {
        const op = `range of ${JSON.stringify(b.tag)}`;
        const path = b.path + size;
        for (;;) {
            let err;
            let next;
            try {
                next = (await this.get(op, path, (e, v) => checkRange(e, v, b.tag, size))).value;
            }
            catch (e) {
                err = e instanceof errors_1.LeafError ? e : new errors_1.LeafError("internal", String(e));
            }
            if (next !== undefined)
                b.next = next;
            b.err = err;
            const round = b.round;
            b.round = new Round();
            round.end();
            const first = err === undefined && !b.published;
            if (first)
                b.published = true;
            const retry = err instanceof errors_1.UnavailableError && b.published && !this.closed;
            if (!retry)
                b.running = false;
            if (first) {
                if (this.pending.get(b.tag) === b)
                    this.pending.delete(b.tag);
                if (!this.closed && !this.tags.has(b.tag))
                    this.tags.set(b.tag, b);
                return;
            }
            if (err !== undefined && !b.published) {
                if (this.pending.get(b.tag) === b)
                    this.pending.delete(b.tag);
                return;
            }
            if (!retry)
                return;
            await new Promise((resolve) => {
                const timer = setTimeout(resolve, this.retryIn());
                timer.unref?.();
                b.kick = () => {
                    clearTimeout(timer);
                    resolve();
                };
                this.closing.then(b.kick);
            });
            b.kick = undefined;
            if (this.closed) {
                b.running = false;
                return;
            }
        }
    }
    // --- snowflake ids ------------------------------------------------------
    /** @internal A call of the worker-lease routes, for Worker. */
    async _send(op, method, path, body, check) {
        return (await this.get(op, path, (e, v) => {
            try {
                return check(v);
            }
            catch (err) {
                throw malformed(e, String(err.message));
            }
        }, undefined, { method, body })).value;
    }
    /**
     * Leases a worker id of the fleet's for snowflake ids made in this process
     * (POST /api/snowflake/leases), for ttlMs (3000 to 600000), renewed in the
     * background until the worker is closed.
     */
    leaseWorker(holder, ttlMs = 30_000) {
        return worker_1.Worker.lease(this, holder, ttlMs);
    }
    /**
     * The layout of the servers' snowflake ids (GET /api/snowflake/layout): with
     * it, ids are decoded and the bounds of a span of time computed without a
     * call (SnowflakeLayout.decode, SnowflakeLayout.bounds).
     */
    async snowflakeLayout() {
        return (await this.get("snowflake layout", "/api/snowflake/layout", (e, v) => {
            try {
                return new layout_1.SnowflakeLayout(v);
            }
            catch (err) {
                throw malformed(e, String(err.message));
            }
        })).value;
    }
    /** A snowflake id from a batch fetched ahead of time; never one older than snowflakeMaxAgeMs. */
    async snowflake() {
        const p = this.flakes;
        const maxAge = this.s.snowflakeMaxAgeMs;
        for (;;) {
            if (this.closed)
                throw new errors_1.ClosedError();
            const t = now();
            if (p.cur.length === 0 || t - p.curSent > maxAge) {
                [p.cur, p.curSent, p.next] = [p.next, p.nextSent, []];
                if (t - p.curSent > maxAge)
                    p.cur = [];
            }
            if (p.cur.length > 0) {
                const id = p.cur.pop();
                if (p.next.length === 0 && !p.running && (2 * p.cur.length < this.s.snowflakeBatch || 2 * (t - p.curSent) > maxAge)) {
                    this.fetchFlakes();
                }
                return id;
            }
            if (!p.running && !this.fetchFlakes())
                throw new errors_1.ClosedError();
            await Promise.race([p.round.done, this.closing]);
            if (this.closed)
                throw new errors_1.ClosedError();
            if (p.next.length === 0 && p.err !== undefined)
                throw p.err;
        }
    }
    fetchFlakes() {
        const p = this.flakes;
        p.running = true;
        const ok = this.spawn(async () => {
            const sent = now();
            let ids = [];
            let err;
            try {
                ids = (await this.get("snowflake batch", `/api/snowflake/batch?count=${this.s.snowflakeBatch}`, (e, v) => checkFlakes(e, v, this.s.snowflakeBatch))).value;
                if (now() - sent > this.s.snowflakeMaxAgeMs) {
                    throw new errors_1.UnavailableError(`leaf client: snowflake batch: the answer took longer than snowflakeMaxAgeMs ${this.s.snowflakeMaxAgeMs}`);
                }
            }
            catch (e) {
                err = e instanceof errors_1.LeafError ? e : new errors_1.LeafError("internal", String(e));
            }
            if (err === undefined) {
                ids.reverse(); // handed out with pop()
                p.next = ids;
                p.nextSent = sent;
            }
            p.err = err;
            p.running = false;
            const round = p.round;
            p.round = new Round();
            round.end();
        });
        if (!ok)
            p.running = false;
        return ok;
    }
    // --- per-key sequences ----------------------------------------------------
    /**
     * Takes n consecutive numbers of key in the sequence space (1 ≤ n ≤ 10,000)
     * and returns the first: above every number the key was given before. One
     * request a call, to the owner of the key's section.
     */
    async sequenceNext(space, key, n = 1) {
        checkSequence(space, key);
        if (!Number.isInteger(n) || n < 1 || n > exports.MAX_SEQUENCE_BATCH) {
            throw new errors_1.LeafError("invalid_count", `leaf client: ${n} numbers, want 1 to ${exports.MAX_SEQUENCE_BATCH}`);
        }
        const path = `/api/sequence/next/${encodeURIComponent(space)}/${encodeURIComponent(key)}?count=${n}`;
        return this.sequenceGet("sequence next", space, key, path, (e, v) => checkSeqs(e, v, n));
    }
    /** The last number issued to key, without taking one. */
    async sequenceCurrent(space, key) {
        checkSequence(space, key);
        const path = `/api/sequence/current/${encodeURIComponent(space)}/${encodeURIComponent(key)}`;
        return this.sequenceGet("sequence current", space, key, path, (e, v) => {
            if (typeof v !== "bigint")
                throw malformed(e, `${JSON.stringify(v)} is not a sequence number`);
            return v;
        });
    }
    async sequenceGet(op, space, key, path, check) {
        if (this.closed)
            throw new errors_1.ClosedError();
        if (!this.s.directSequences)
            return (await this.get(op, path, check)).value;
        let sr = this.routes.get(space);
        if (sr === undefined) {
            sr = { fetching: false };
            this.routes.set(space, sr);
        }
        const t = sr.table;
        if (t === undefined)
            this.refreshRoutes(space, sr);
        const owner = t?.owners[sectionOf(key, t.owners.length)];
        if (owner !== undefined && owner.usable(now())) {
            try {
                const a = await this.try(owner, path, t.version);
                const v = check(owner, a.value);
                owner.answered();
                this.noteVersion(space, sr, t, a.seen);
                return v;
            }
            catch (err) {
                if (!(err instanceof errors_1.LeafError) || err.code === "closed")
                    throw err;
                if (!(0, errors_1.failsOver)(err)) {
                    owner.answered();
                    this.noteVersion(space, sr, t, err.routesVersion);
                    throw err;
                }
                owner.failed(err, now(), this.s.backoffMinMs, this.s.backoffMaxMs);
                this.refreshRoutes(space, sr);
            }
        }
        try {
            const a = await this.get(op, path, check, t?.version);
            this.noteVersion(space, sr, t, a.seen);
            return a.value;
        }
        catch (err) {
            if (err instanceof errors_1.LeafError)
                this.noteVersion(space, sr, t, err.routesVersion);
            throw err;
        }
    }
    noteVersion(space, sr, t, seen) {
        if (t !== undefined && seen && seen !== t.version)
            this.refreshRoutes(space, sr);
    }
    /** Fetches the space's table in the background, unless a fetch runs or one started less than routesIntervalMs ago. */
    refreshRoutes(space, sr) {
        const t = now();
        if (sr.fetching || (sr.last !== undefined && t - sr.last < this.s.routesIntervalMs))
            return;
        sr.fetching = true;
        sr.last = t;
        const ok = this.spawn(async () => {
            try {
                const path = "/api/sequence/routes/" + encodeURIComponent(space);
                const n = this.eps.length;
                const first = ++this.turn % n;
                for (let i = 0; i < n; i++) {
                    const e = this.eps[(first + i) % n];
                    if (!e.usable(now()) || this.closed)
                        continue;
                    let a;
                    try {
                        a = await this.try(e, path);
                    }
                    catch (err) {
                        if (err instanceof errors_1.LeafError && (0, errors_1.failsOver)(err) && err.code !== "closed")
                            continue;
                        return;
                    }
                    const table = routeTable(a.value, sr.table, e.base);
                    if (table !== undefined)
                        sr.table = table;
                    return;
                }
            }
            finally {
                sr.fetching = false;
            }
        });
        if (!ok)
            sr.fetching = false;
    }
}
exports.Client = Client;
function malformed(e, what) {
    return new errors_1.LeafError("internal", `${e.base}: 200: malformed answer: ${what}`, { endpoint: e.base, status: 200 });
}
function int64(s) {
    if (typeof s !== "string" || !/^\d{1,19}$/.test(s))
        return undefined;
    const v = BigInt(s);
    return v >= 1n && v <= MAX_INT64 ? v : undefined;
}
function checkRange(e, v, tag, asked) {
    const a = v;
    const start = int64(a?.start);
    if (a?.tag !== tag)
        throw malformed(e, `a range of tag ${JSON.stringify(a?.tag)}, asked for ${JSON.stringify(tag)}`);
    const count = a.count;
    if (start === undefined || typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > asked || start > MAX_INT64 - BigInt(count) + 1n) {
        throw malformed(e, `a range of ${count} ids from ${a.start}, asked for ${asked}`);
    }
    return new Span(start, count);
}
function checkFlakes(e, v, asked) {
    const list = v?.ids;
    if (!Array.isArray(list) || list.length < 1 || list.length > asked)
        throw malformed(e, `not a batch of at most ${asked} snowflake ids`);
    return list.map((x) => {
        const id = int64(x);
        if (id === undefined)
            throw malformed(e, `snowflake id ${JSON.stringify(x)} is not a positive 64-bit integer`);
        return id;
    });
}
function checkSeqs(e, v, asked) {
    const list = v?.seqs;
    if (!Array.isArray(list) || list.length !== asked)
        throw malformed(e, `not ${asked} sequence numbers`);
    const first = int64(list[0]);
    if (first === undefined || list.some((x, i) => int64(x) !== first + BigInt(i)))
        throw malformed(e, "sequence numbers that are not consecutive positive numbers");
    return first;
}
const LONE_SURROGATE = /\p{Surrogate}/u;
const encoder = new TextEncoder();
function checkSequence(space, key) {
    if (typeof space !== "string" || space === "" || LONE_SURROGATE.test(space)) {
        throw new errors_1.LeafError("invalid_space", `leaf client: sequence space ${JSON.stringify(space)}: want a non-empty string`);
    }
    if (typeof key !== "string" || key === "" || LONE_SURROGATE.test(key) || encoder.encode(key).length > exports.MAX_SEQUENCE_KEY) {
        throw new errors_1.LeafError("invalid_key", `leaf client: sequence key: want 1 to ${exports.MAX_SEQUENCE_KEY} bytes of UTF-8`);
    }
}
/** The section of key: the 64-bit FNV-1a hash of its UTF-8 bytes modulo sections, as the server computes it. */
function sectionOf(key, sections) {
    let h = 14695981039346656037n;
    for (const c of encoder.encode(key))
        h = BigInt.asUintN(64, (h ^ BigInt(c)) * 1099511628211n);
    return Number(h % BigInt(sections));
}
/**
 * The routing table of an answer, from the endpoint whose base is from: its
 * owners are called with from's scheme, so a client given https:// endpoints
 * never calls one in clear. Exported for the tests, not by the package.
 */
function routeTable(v, old, from) {
    const a = v;
    const sections = a?.sections;
    const members = a?.members;
    const owners = a?.owners;
    if (typeof sections !== "number" || !Number.isInteger(sections) || sections < 1 ||
        !Array.isArray(owners) || owners.length !== sections || !Array.isArray(members) ||
        typeof a.version !== "string" || !a.version || typeof a.scheme !== "string" ||
        owners.some((o) => !Number.isInteger(o) || o < -1 || o >= members.length)) {
        return undefined;
    }
    const table = new Array(sections).fill(undefined);
    if (a.scheme === ROUTE_SCHEME) {
        const known = new Map();
        for (const e of old?.owners ?? [])
            if (e)
                known.set(e.base, e);
        owners.forEach((o, i) => {
            if (o < 0)
                return;
            const base = from.slice(0, from.indexOf("://") + 3) + String(members[o]);
            if (!known.has(base))
                known.set(base, new Endpoint(base));
            table[i] = known.get(base);
        });
    }
    return { version: a.version, owners: table };
}
/**
 * Says why fetch got no answer, in words: its TypeError ("fetch failed")
 * keeps the network's error beneath, as its cause.
 */
function transportWhy(err) {
    const c = err?.cause;
    switch (c?.code) {
        case "ECONNREFUSED":
            return "cannot connect: connection refused";
        case "ENOTFOUND":
        case "EAI_AGAIN":
            return `cannot connect: unknown host (${c.code})`;
        case "ECONNRESET":
            return "the connection was reset";
    }
    const m = c?.message ?? err?.message ?? String(err);
    return c?.code ? `${c.code}: ${m}` : m;
}
const NO_SPAN = new Span(0n, 0);
/**
 * Ids of one tag from a Client's ranges, for a loop that takes many
 * (`client.source(tag)`): `tryNext()` takes an id from the range in use with
 * one comparison and no promise, or answers undefined at a range's end,
 * where `await next()` waits for the next range. Ids are unique with every
 * other taken from the client, and increase.
 */
class IdSource {
    client;
    tag;
    s = NO_SPAN;
    constructor(client, tag) {
        this.client = client;
        this.tag = tag;
    }
    /** The next id if one is buffered, else undefined (then `await next()`). */
    tryNext() {
        const at = this.s.at;
        const id = at[0];
        if (id < at[1]) {
            at[0] = id + 1n;
            return id;
        }
        return this.refill(this.client.tryNextId(this.tag));
    }
    /** The next id, waiting for a range when none is buffered. */
    async next() {
        return this.tryNext() ?? this.refill(await this.client.nextId(this.tag));
    }
    refill(id) {
        this.s = this.client.spanOf(this.tag) ?? NO_SPAN;
        return id;
    }
}
exports.IdSource = IdSource;
