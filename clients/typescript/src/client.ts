/**
 * The leaf client: ids from ranges leased from leaf servers, handed out
 * in-process. The behaviour is the Go client's (the leaf repository's
 * docs/go-client.md), held to it by the conformance suite in
 * clients/conformance.
 */

import { ClosedError, LeafError, UnavailableError, errorAnswer, failsOver } from "./errors";
import { SnowflakeLayout, SnowflakeLayoutFields } from "./layout";
import { Worker } from "./worker";

/** The largest range a server hands out in one answer. */
export const MAX_RANGE = 1_000_000;
/** The largest snowflake batch a server answers. */
export const MAX_SNOWFLAKE_BATCH = 10_000;
/** The largest n of nextIds. */
export const MAX_N = 1_000_000;
export const MAX_SEQUENCE_KEY = 256;
export const MAX_SEQUENCE_BATCH = 10_000;

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

type Settings = Required<ClientOptions>;

function settings(o: ClientOptions): Settings {
  if (!o || !Array.isArray(o.endpoints) || o.endpoints.length === 0) {
    throw new TypeError("leaf client: no endpoints");
  }
  const maxRange = o.maxRange ?? MAX_RANGE;
  const s: Settings = {
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
  for (const k of ["requestTimeoutMs", "refillIntervalMs", "snowflakeMaxAgeMs", "backoffMinMs", "backoffMaxMs", "routesIntervalMs"] as const) {
    if (!(s[k] > 0) || !Number.isFinite(s[k])) throw new RangeError(`leaf client: ${k} ${s[k]}: want milliseconds above 0`);
  }
  for (const [k, hi] of [["minRange", MAX_RANGE], ["maxRange", MAX_RANGE], ["snowflakeBatch", MAX_SNOWFLAKE_BATCH]] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 1 || s[k] > hi) throw new RangeError(`leaf client: ${k} ${s[k]}: want 1 to ${hi}`);
  }
  if (s.minRange > s.maxRange) throw new RangeError(`leaf client: minRange ${s.minRange} is above maxRange ${s.maxRange}`);
  if (s.backoffMinMs > s.backoffMaxMs) throw new RangeError(`leaf client: backoffMinMs ${s.backoffMinMs} is above backoffMaxMs ${s.backoffMaxMs}`);
  return s;
}

function parseEndpoint(e: string): string {
  let u: URL;
  try {
    u = new URL(e);
  } catch {
    throw new TypeError(`leaf client: endpoint ${JSON.stringify(e)}: not a URL`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new TypeError(`leaf client: endpoint ${JSON.stringify(e)}: want an http:// or https:// URL`);
  if (u.search || u.hash || u.username || u.password) throw new TypeError(`leaf client: endpoint ${JSON.stringify(e)}: want a base URL without user, query or fragment`);
  return e.replace(/\/+$/, "");
}

const now = () => performance.now();

/** A server: its base URL and its health. */
class Endpoint {
  failures = 0;
  until = 0; // performance.now() until which it is left out
  last?: LeafError;
  constructor(readonly base: string) {}

  usable(t: number): boolean {
    return t >= this.until;
  }

  answered(): void {
    this.failures = 0;
    this.until = 0;
  }

  /** Leaves the endpoint out for a back-off that doubles with each failure in a row, with jitter. */
  failed(err: LeafError, t: number, lo: number, hi: number): void {
    this.failures++;
    let d = Math.min(hi, lo * 2 ** Math.min(this.failures - 1, 32));
    d = d / 2 + (Math.random() * d) / 2;
    if (err.retryAfterMs !== undefined && err.retryAfterMs > d) d = Math.min(err.retryAfterMs, hi);
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
  readonly at = new BigUint64Array(2);
  readonly end: bigint;
  readonly trigger: bigint;

  constructor(
    start: bigint,
    readonly size: number,
  ) {
    this.end = start + BigInt(size);
    this.trigger = size ? start + BigInt(Math.max(1, Math.floor(size / PREFETCH_QUARTER)) - 1) : -1n;
    this.at[0] = start;
    this.at[1] = size ? this.trigger : 0n;
  }

  get next(): bigint {
    return this.at[0];
  }
  set next(v: bigint) {
    this.at[0] = v;
  }
  get limit(): bigint {
    return this.at[1];
  }
  set limit(v: bigint) {
    this.at[1] = v;
  }
}

/** A promise resolved at the end of a round of loading, and its resolver. */
class Round {
  readonly done: Promise<void>;
  end!: () => void;
  constructor() {
    this.done = new Promise((resolve) => (this.end = resolve));
  }
}

/** One tag's double buffer. */
class TagBuffer {
  cur: Span = new Span(0n, 0);
  next?: Span;
  since?: number; // when the last load was planned
  taken = 0; // ids taken from spans no longer current
  takenThen = 0; // ids taken in all at the last plan
  short = false; // a caller found no range since the last plan
  published = false;
  running = false;
  err?: LeafError;
  round = new Round();
  kick?: () => void; // set while a failed load waits to try again
  readonly path: string;
  constructor(readonly tag: string, public size: number) {
    this.path = "/api/segment/range/" + encodeURIComponent(tag) + "?count=";
  }
}

interface RouteTable {
  version: string;
  owners: (Endpoint | undefined)[];
}

interface SpaceRoutes {
  table?: RouteTable;
  fetching: boolean;
  last?: number;
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
export class Client {
  private readonly s: Settings;
  private readonly eps: Endpoint[];
  private turn = 0;
  private readonly tags = new Map<string, TagBuffer>(); // tags that have had a range
  private readonly spans = new Map<string, Span>(); // the span in use of each of tags: the hot path's
  private readonly pending = new Map<string, TagBuffer>(); // tags waiting for their first range
  private closed = false;
  private readonly aborter = new AbortController();
  private readonly closing: Promise<void>;
  private closeNow!: () => void;
  private readonly tasks = new Set<Promise<unknown>>();
  private readonly routes = new Map<string, SpaceRoutes>();
  private readonly flakes = {
    cur: [] as bigint[],
    curSent: 0,
    next: [] as bigint[],
    nextSent: 0,
    running: false,
    err: undefined as LeafError | undefined,
    round: new Round(),
  };

  constructor(options: ClientOptions) {
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
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const b of this.tags.values()) b.cur.limit = 0n; // a Source holding it takes no more
    this.tags.clear();
    this.spans.clear();
    this.pending.clear();
    this.aborter.abort();
    this.closeNow();
    await Promise.allSettled([...this.tasks]);
  }

  /** Runs f in the background, tracked for close; never rejects. */
  private spawn(f: () => Promise<void>): boolean {
    if (this.closed) return false;
    const p: Promise<void> = f().catch(() => {}).finally(() => this.tasks.delete(p));
    this.tasks.add(p);
    return true;
  }

  // --- requests ---------------------------------------------------------

  /** One GET to one endpoint: the decoded answer and the routes version answered. */
  private async try(e: Endpoint, path: string, held?: string, send?: { method: string; body: unknown }): Promise<{ value: unknown; seen: string | null }> {
    const timeout = new AbortController();
    const onClose = () => timeout.abort();
    this.aborter.signal.addEventListener("abort", onClose);
    // A caller that awaits only resolved promises (ids from memory, in a
    // loop) keeps the event loop from reading the answer: when the timer
    // fires late, the answer may have been waiting, so it gets a moment more.
    const deadline = now() + this.s.requestTimeoutMs;
    let timer: ReturnType<typeof setTimeout>;
    const arm = (ms: number, grace: boolean) => {
      timer = setTimeout(() => (grace && now() - deadline > 20 ? arm(50, false) : timeout.abort()), ms);
    };
    arm(this.s.requestTimeoutMs, true);
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.s.token) headers.Authorization = "Bearer " + this.s.token;
    if (held) headers[HEADER_ROUTES_VERSION] = held;
    if (send) headers["Content-Type"] = "application/json";
    try {
      let resp: Response;
      let body: string;
      try {
        resp = await fetch(e.base + path, { headers, signal: timeout.signal, method: send?.method, body: send ? JSON.stringify(send.body) : undefined });
        body = await resp.text();
      } catch (cause) {
        if (this.closed) throw new ClosedError();
        const why = timeout.signal.aborted ? `no answer within ${this.s.requestTimeoutMs}ms (requestTimeoutMs)` : transportWhy(cause);
        throw new UnavailableError(`${e.base}: ${why}`, [], { endpoint: e.base, cause });
      }
      const seen = resp.headers.get(HEADER_ROUTES_VERSION);
      if (resp.status < 200 || resp.status > 299) {
        let code: string | undefined;
        let message = body.slice(0, 200);
        try {
          const eb = JSON.parse(body).error;
          if (typeof eb.code === "string") [code, message] = [eb.code, String(eb.message)];
        } catch {
          // not the API's error body: the status alone
        }
        const ra = Number(resp.headers.get("Retry-After"));
        const err = errorAnswer(e.base, resp.status, code, message, Number.isInteger(ra) && ra > 0 ? ra * 1000 : undefined);
        err.routesVersion = seen ?? undefined;
        throw err;
      }
      if (body.length > MAX_BODY) throw malformed(e, "an answer over 1 MiB");
      try {
        // Ids are strings in the API's JSON; a bare number (sequence
        // current) is read as a bigint.
        return { value: /^\d+$/.test(body.trim()) ? BigInt(body.trim()) : JSON.parse(body), seen };
      } catch {
        throw malformed(e, "not JSON");
      }
    } finally {
      clearTimeout(timer!);
      this.aborter.signal.removeEventListener("abort", onClose);
    }
  }

  /**
   * Asks the endpoints in turn for path, skipping those backing off; one that
   * gives no usable answer is left out for a while and the next is asked. An
   * answer another server would give as well (a 4xx) is thrown at once.
   */
  private async get<T>(op: string, path: string, check: (e: Endpoint, v: unknown) => T, held?: string, send?: { method: string; body: unknown }): Promise<{ value: T; seen: string | null }> {
    const n = this.eps.length;
    const first = ++this.turn % n;
    for (let i = 0; i < n; i++) {
      const e = this.eps[(first + i) % n];
      if (!e.usable(now())) continue;
      if (this.closed) throw new ClosedError();
      try {
        const a = await this.try(e, path, held, send);
        const value = check(e, a.value);
        e.answered();
        return { value, seen: a.seen };
      } catch (err) {
        if (!(err instanceof LeafError) || err.code === "closed") throw err;
        if (!failsOver(err)) {
          e.answered();
          throw err;
        }
        e.failed(err, now(), this.s.backoffMinMs, this.s.backoffMaxMs);
      }
    }
    const errs = this.eps.map((e) => e.last);
    const text = errs.filter((x) => x).map((x) => x!.message).join("; ");
    throw new UnavailableError(`leaf client: ${op}: no endpoint available${text ? ": " + text : ""}`, errs);
  }

  /** How long until some endpoint's back-off ends, at least backoffMinMs. */
  private retryIn(): number {
    const t = now();
    let d = this.s.backoffMaxMs;
    for (const e of this.eps) d = Math.min(d, e.until - t);
    return Math.max(d, this.s.backoffMinMs);
  }

  // --- segment ids --------------------------------------------------------

  /**
   * The next id of tag. It comes from a range buffered in the client; the
   * call waits for a server only when the tag has no range left. Rejects
   * with a LeafError: unknown_tag, not_numeric (a formatted or opaque tag),
   * invalid_request (an ordered tag), unavailable, closed, ...
   */
  nextId(tag: string): Promise<bigint> {
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
  tryNextId(tag: string): bigint | undefined {
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
  source(tag: string): IdSource {
    if (typeof tag !== "string" || tag === "") throw new LeafError("invalid_tag", `leaf client: tag ${JSON.stringify(tag)}: want a non-empty string`);
    return new IdSource(this, tag);
  }

  /** @internal The span in use of tag, for a Source; undefined before its first range. */
  spanOf(tag: string): Span | undefined {
    return this.spans.get(tag);
  }

  /** The next id of b's span in use, past its limit; undefined at its end. */
  private take(b: TagBuffer): bigint | undefined {
    const s = b.cur;
    const id = s.next;
    if (id >= s.end) return undefined;
    s.next = id + 1n;
    if (id >= s.trigger) {
      s.limit = s.end; // the trigger is taken: from now on, only the end
      if (id === s.trigger) this.prefetch(b, s);
    }
    this.useSpan(b);
    return id;
  }

  /** Makes the hot path find b's span in use, once b has had a range and while the client is open. */
  private useSpan(b: TagBuffer): void {
    if (!this.closed && this.tags.get(b.tag) === b && this.spans.get(b.tag) !== b.cur) this.spans.set(b.tag, b.cur);
  }

  private async nextSlow(tag: string): Promise<bigint> {
    const b = this.buffer(tag);
    for (;;) {
      const id = this.take(b);
      if (id !== undefined) return id;
      await this.advance(b, b.cur);
    }
  }

  /**
   * n ids of tag (0 ≤ n ≤ 1,000,000), increasing. They may come from several
   * ranges, so they are not always consecutive.
   */
  async nextIds(tag: string, n: number): Promise<bigint[]> {
    if (!Number.isInteger(n) || n < 0 || n > MAX_N) {
      throw new LeafError("invalid_count", `leaf client: ${n} ids asked for, want 0 to ${MAX_N}`);
    }
    const b = this.buffer(tag);
    const ids: bigint[] = [];
    while (ids.length < n) {
      const s = b.cur;
      if (s.next < s.end) {
        const take = Math.min(n - ids.length, Number(s.end - s.next));
        const from = s.next;
        s.next += BigInt(take);
        for (let i = 0; i < take; i++) ids.push(from + BigInt(i));
        if (s.trigger < s.next) s.limit = s.end;
        if (from <= s.trigger && s.trigger < s.next) this.prefetch(b, s);
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

  private buffer(tag: string): TagBuffer {
    if (typeof tag !== "string" || tag === "") throw new LeafError("invalid_tag", `leaf client: tag ${JSON.stringify(tag)}: want a non-empty string`);
    if (this.closed) throw new ClosedError();
    let b = this.tags.get(tag) ?? this.pending.get(tag);
    if (b === undefined) {
      b = new TagBuffer(tag, this.s.minRange);
      this.pending.set(tag, b);
    }
    return b;
  }

  private prefetch(b: TagBuffer, s: Span): void {
    if (b.cur === s && b.next === undefined && !b.running) {
      this.startLoad(b, Math.max(1, Math.floor(s.size / PREFETCH_QUARTER)));
    }
  }

  /** Makes the range after s current, waiting for its load if need be. */
  private async advance(b: TagBuffer, s: Span): Promise<void> {
    for (;;) {
      if (b.cur !== s) return;
      if (b.next !== undefined) {
        b.taken += s.size;
        b.cur = b.next;
        b.next = undefined;
        this.useSpan(b);
        return;
      }
      if (this.closed) throw new ClosedError();
      if (s.size > 0) b.short = true;
      if (!b.running) {
        if (!this.startLoad(b, s.size)) throw new ClosedError();
      } else {
        b.kick?.();
      }
      await Promise.race([b.round.done, this.closing]);
      if (this.closed) throw new ClosedError();
      if (b.cur === s && b.next === undefined && b.err !== undefined) throw b.err;
    }
  }

  private startLoad(b: TagBuffer, used: number): boolean {
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
  private plan(b: TagBuffer, used: number, t: number): number {
    const total = b.taken + used;
    let size = b.size;
    if (b.since !== undefined) {
      const took = total - b.takenThen;
      const d = t - b.since;
      if (took > 0 && d > 0) {
        const want = (took / d) * this.s.refillIntervalMs;
        size = Math.floor(Math.min(Math.max(want, b.size / 4), b.size * 4));
      }
      if (b.short) size = Math.max(size, 2 * b.size);
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
  private async load(b: TagBuffer, size: number): Promise<void> {
    const op = `range of ${JSON.stringify(b.tag)}`;
    const path = b.path + size;
    for (;;) {
      let err: LeafError | undefined;
      let next: Span | undefined;
      try {
        next = (await this.get(op, path, (e, v) => checkRange(e, v, b.tag, size))).value;
      } catch (e) {
        err = e instanceof LeafError ? e : new LeafError("internal", String(e));
      }
      if (next !== undefined) b.next = next;
      b.err = err;
      const round = b.round;
      b.round = new Round();
      round.end();
      const first = err === undefined && !b.published;
      if (first) b.published = true;
      const retry = err instanceof UnavailableError && b.published && !this.closed;
      if (!retry) b.running = false;
      if (first) {
        if (this.pending.get(b.tag) === b) this.pending.delete(b.tag);
        if (!this.closed && !this.tags.has(b.tag)) this.tags.set(b.tag, b);
        return;
      }
      if (err !== undefined && !b.published) {
        if (this.pending.get(b.tag) === b) this.pending.delete(b.tag);
        return;
      }
      if (!retry) return;
      await new Promise<void>((resolve) => {
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
  async _send<T>(op: string, method: string, path: string, body: unknown, check: (v: unknown) => T): Promise<T> {
    return (
      await this.get(op, path, (e, v) => {
        try {
          return check(v);
        } catch (err) {
          throw malformed(e, String((err as Error).message));
        }
      }, undefined, { method, body })
    ).value;
  }

  /**
   * Leases a worker id of the fleet's for snowflake ids made in this process
   * (POST /api/snowflake/leases), for ttlMs (3000 to 600000), renewed in the
   * background until the worker is closed.
   */
  leaseWorker(holder: string, ttlMs = 30_000): Promise<Worker> {
    return Worker.lease(this, holder, ttlMs);
  }

  /**
   * The layout of the servers' snowflake ids (GET /api/snowflake/layout): with
   * it, ids are decoded and the bounds of a span of time computed without a
   * call (SnowflakeLayout.decode, SnowflakeLayout.bounds).
   */
  async snowflakeLayout(): Promise<SnowflakeLayout> {
    return (
      await this.get("snowflake layout", "/api/snowflake/layout", (e, v) => {
        try {
          return new SnowflakeLayout(v as SnowflakeLayoutFields);
        } catch (err) {
          throw malformed(e, String((err as Error).message));
        }
      })
    ).value;
  }

  /** A snowflake id from a batch fetched ahead of time; never one older than snowflakeMaxAgeMs. */
  async snowflake(): Promise<bigint> {
    const p = this.flakes;
    const maxAge = this.s.snowflakeMaxAgeMs;
    for (;;) {
      if (this.closed) throw new ClosedError();
      const t = now();
      if (p.cur.length === 0 || t - p.curSent > maxAge) {
        [p.cur, p.curSent, p.next] = [p.next, p.nextSent, []];
        if (t - p.curSent > maxAge) p.cur = [];
      }
      if (p.cur.length > 0) {
        const id = p.cur.pop()!;
        if (p.next.length === 0 && !p.running && (2 * p.cur.length < this.s.snowflakeBatch || 2 * (t - p.curSent) > maxAge)) {
          this.fetchFlakes();
        }
        return id;
      }
      if (!p.running && !this.fetchFlakes()) throw new ClosedError();
      await Promise.race([p.round.done, this.closing]);
      if (this.closed) throw new ClosedError();
      if (p.next.length === 0 && p.err !== undefined) throw p.err;
    }
  }

  private fetchFlakes(): boolean {
    const p = this.flakes;
    p.running = true;
    const ok = this.spawn(async () => {
      const sent = now();
      let ids: bigint[] = [];
      let err: LeafError | undefined;
      try {
        ids = (await this.get("snowflake batch", `/api/snowflake/batch?count=${this.s.snowflakeBatch}`, (e, v) => checkFlakes(e, v, this.s.snowflakeBatch))).value;
        if (now() - sent > this.s.snowflakeMaxAgeMs) {
          throw new UnavailableError(`leaf client: snowflake batch: the answer took longer than snowflakeMaxAgeMs ${this.s.snowflakeMaxAgeMs}`);
        }
      } catch (e) {
        err = e instanceof LeafError ? e : new LeafError("internal", String(e));
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
    if (!ok) p.running = false;
    return ok;
  }

  // --- per-key sequences ----------------------------------------------------

  /**
   * Takes n consecutive numbers of key in the sequence space (1 ≤ n ≤ 10,000)
   * and returns the first: above every number the key was given before. One
   * request a call, to the owner of the key's section.
   */
  async sequenceNext(space: string, key: string, n = 1): Promise<bigint> {
    checkSequence(space, key);
    if (!Number.isInteger(n) || n < 1 || n > MAX_SEQUENCE_BATCH) {
      throw new LeafError("invalid_count", `leaf client: ${n} numbers, want 1 to ${MAX_SEQUENCE_BATCH}`);
    }
    const path = `/api/sequence/next/${encodeURIComponent(space)}/${encodeURIComponent(key)}?count=${n}`;
    return this.sequenceGet("sequence next", space, key, path, (e, v) => checkSeqs(e, v, n));
  }

  /** The last number issued to key, without taking one. */
  async sequenceCurrent(space: string, key: string): Promise<bigint> {
    checkSequence(space, key);
    const path = `/api/sequence/current/${encodeURIComponent(space)}/${encodeURIComponent(key)}`;
    return this.sequenceGet("sequence current", space, key, path, (e, v) => {
      if (typeof v !== "bigint") throw malformed(e, `${JSON.stringify(v)} is not a sequence number`);
      return v;
    });
  }

  private async sequenceGet(op: string, space: string, key: string, path: string, check: (e: Endpoint, v: unknown) => bigint): Promise<bigint> {
    if (this.closed) throw new ClosedError();
    if (!this.s.directSequences) return (await this.get(op, path, check)).value;
    let sr = this.routes.get(space);
    if (sr === undefined) {
      sr = { fetching: false };
      this.routes.set(space, sr);
    }
    const t = sr.table;
    if (t === undefined) this.refreshRoutes(space, sr);
    const owner = t?.owners[sectionOf(key, t.owners.length)];
    if (owner !== undefined && owner.usable(now())) {
      try {
        const a = await this.try(owner, path, t!.version);
        const v = check(owner, a.value);
        owner.answered();
        this.noteVersion(space, sr, t, a.seen);
        return v;
      } catch (err) {
        if (!(err instanceof LeafError) || err.code === "closed") throw err;
        if (!failsOver(err)) {
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
    } catch (err) {
      if (err instanceof LeafError) this.noteVersion(space, sr, t, err.routesVersion);
      throw err;
    }
  }

  private noteVersion(space: string, sr: SpaceRoutes, t: RouteTable | undefined, seen: string | null | undefined): void {
    if (t !== undefined && seen && seen !== t.version) this.refreshRoutes(space, sr);
  }

  /** Fetches the space's table in the background, unless a fetch runs or one started less than routesIntervalMs ago. */
  private refreshRoutes(space: string, sr: SpaceRoutes): void {
    const t = now();
    if (sr.fetching || (sr.last !== undefined && t - sr.last < this.s.routesIntervalMs)) return;
    sr.fetching = true;
    sr.last = t;
    const ok = this.spawn(async () => {
      try {
        const path = "/api/sequence/routes/" + encodeURIComponent(space);
        const n = this.eps.length;
        const first = ++this.turn % n;
        for (let i = 0; i < n; i++) {
          const e = this.eps[(first + i) % n];
          if (!e.usable(now()) || this.closed) continue;
          let a;
          try {
            a = await this.try(e, path);
          } catch (err) {
            if (err instanceof LeafError && failsOver(err) && err.code !== "closed") continue;
            return;
          }
          const table = routeTable(a.value, sr.table, e.base);
          if (table !== undefined) sr.table = table;
          return;
        }
      } finally {
        sr.fetching = false;
      }
    });
    if (!ok) sr.fetching = false;
  }
}

function malformed(e: Endpoint, what: string): LeafError {
  return new LeafError("internal", `${e.base}: 200: malformed answer: ${what}`, { endpoint: e.base, status: 200 });
}

function int64(s: unknown): bigint | undefined {
  if (typeof s !== "string" || !/^\d{1,19}$/.test(s)) return undefined;
  const v = BigInt(s);
  return v >= 1n && v <= MAX_INT64 ? v : undefined;
}

function checkRange(e: Endpoint, v: unknown, tag: string, asked: number): Span {
  const a = v as { tag?: unknown; start?: unknown; count?: unknown };
  const start = int64(a?.start);
  if (a?.tag !== tag) throw malformed(e, `a range of tag ${JSON.stringify(a?.tag)}, asked for ${JSON.stringify(tag)}`);
  const count = a.count;
  if (start === undefined || typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > asked || start > MAX_INT64 - BigInt(count) + 1n) {
    throw malformed(e, `a range of ${count} ids from ${a.start}, asked for ${asked}`);
  }
  return new Span(start, count);
}

function checkFlakes(e: Endpoint, v: unknown, asked: number): bigint[] {
  const list = (v as { ids?: unknown })?.ids;
  if (!Array.isArray(list) || list.length < 1 || list.length > asked) throw malformed(e, `not a batch of at most ${asked} snowflake ids`);
  return list.map((x) => {
    const id = int64(x);
    if (id === undefined) throw malformed(e, `snowflake id ${JSON.stringify(x)} is not a positive 64-bit integer`);
    return id;
  });
}

function checkSeqs(e: Endpoint, v: unknown, asked: number): bigint {
  const list = (v as { seqs?: unknown })?.seqs;
  if (!Array.isArray(list) || list.length !== asked) throw malformed(e, `not ${asked} sequence numbers`);
  const first = int64(list[0]);
  if (first === undefined || list.some((x, i) => int64(x) !== first + BigInt(i))) throw malformed(e, "sequence numbers that are not consecutive positive numbers");
  return first;
}

const LONE_SURROGATE = /\p{Surrogate}/u;
const encoder = new TextEncoder();

function checkSequence(space: string, key: string): void {
  if (typeof space !== "string" || space === "" || LONE_SURROGATE.test(space)) {
    throw new LeafError("invalid_space", `leaf client: sequence space ${JSON.stringify(space)}: want a non-empty string`);
  }
  if (typeof key !== "string" || key === "" || LONE_SURROGATE.test(key) || encoder.encode(key).length > MAX_SEQUENCE_KEY) {
    throw new LeafError("invalid_key", `leaf client: sequence key: want 1 to ${MAX_SEQUENCE_KEY} bytes of UTF-8`);
  }
}

/** The section of key: the 64-bit FNV-1a hash of its UTF-8 bytes modulo sections, as the server computes it. */
export function sectionOf(key: string, sections: number): number {
  let h = 14695981039346656037n;
  for (const c of encoder.encode(key)) h = BigInt.asUintN(64, (h ^ BigInt(c)) * 1099511628211n);
  return Number(h % BigInt(sections));
}

/**
 * The routing table of an answer, from the endpoint whose base is from: its
 * owners are called with from's scheme, so a client given https:// endpoints
 * never calls one in clear. Exported for the tests, not by the package.
 */
export function routeTable(v: unknown, old: RouteTable | undefined, from: string): RouteTable | undefined {
  const a = v as { sections?: unknown; scheme?: unknown; version?: unknown; members?: unknown; owners?: unknown };
  const sections = a?.sections;
  const members = a?.members;
  const owners = a?.owners;
  if (
    typeof sections !== "number" || !Number.isInteger(sections) || sections < 1 ||
    !Array.isArray(owners) || owners.length !== sections || !Array.isArray(members) ||
    typeof a.version !== "string" || !a.version || typeof a.scheme !== "string" ||
    owners.some((o) => !Number.isInteger(o) || o < -1 || o >= members.length)
  ) {
    return undefined;
  }
  const table: (Endpoint | undefined)[] = new Array(sections).fill(undefined);
  if (a.scheme === ROUTE_SCHEME) {
    const known = new Map<string, Endpoint>();
    for (const e of old?.owners ?? []) if (e) known.set(e.base, e);
    owners.forEach((o: number, i: number) => {
      if (o < 0) return;
      const base = from.slice(0, from.indexOf("://") + 3) + String(members[o]);
      if (!known.has(base)) known.set(base, new Endpoint(base));
      table[i] = known.get(base);
    });
  }
  return { version: a.version, owners: table };
}

/**
 * Says why fetch got no answer, in words: its TypeError ("fetch failed")
 * keeps the network's error beneath, as its cause.
 */
function transportWhy(err: unknown): string {
  const c = (err as { cause?: { code?: string; message?: string } })?.cause;
  switch (c?.code) {
    case "ECONNREFUSED":
      return "cannot connect: connection refused";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `cannot connect: unknown host (${c.code})`;
    case "ECONNRESET":
      return "the connection was reset";
  }
  const m = c?.message ?? (err as Error)?.message ?? String(err);
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
export class IdSource {
  private s: Span = NO_SPAN;

  constructor(
    private readonly client: Client,
    readonly tag: string,
  ) {}

  /** The next id if one is buffered, else undefined (then `await next()`). */
  tryNext(): bigint | undefined {
    const at = this.s.at;
    const id = at[0];
    if (id < at[1]) {
      at[0] = id + 1n;
      return id;
    }
    return this.refill(this.client.tryNextId(this.tag));
  }

  /** The next id, waiting for a range when none is buffered. */
  async next(): Promise<bigint> {
    return this.tryNext() ?? this.refill(await this.client.nextId(this.tag));
  }

  private refill<T>(id: T): T {
    this.s = this.client.spanOf(this.tag) ?? NO_SPAN;
    return id;
  }
}
