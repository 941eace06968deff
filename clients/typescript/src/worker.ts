import type { Client } from "./client";
import { ClosedError, LeafError } from "./errors";
import { SnowflakeLayout, SnowflakeLayoutFields } from "./layout";

const UNIT_MS: Record<string, number> = { ms: 1, "10ms": 10, s: 1000 };

interface LeaseAnswer {
  worker_id: number;
  lease: string;
  floor_ms: number;
  reserve_ms: number;
  layout: SnowflakeLayoutFields;
}

function checkLease(v: unknown): LeaseAnswer {
  const a = v as LeaseAnswer;
  if (typeof a?.lease !== "string" || !Number.isSafeInteger(a?.worker_id) || !Number.isSafeInteger(a?.reserve_ms)) {
    throw new TypeError("not a worker lease");
  }
  new SnowflakeLayout(a.layout);
  return a;
}

/**
 * A worker id of the fleet's (`client.leaseWorker`), from the pool the servers
 * lease their own from: no other generator of the fleet makes ids with it
 * meanwhile. `next()` makes snowflake ids of the fleet's layout in memory. The
 * lease is renewed every third of the TTL, each renewal recording a reserve
 * (now plus the TTL less a fifth of it) before ids are made up to it; no id
 * is made once a renewal was refused (code lease_lost) or none succeeded
 * within the TTL less the margin. `close()` releases it.
 */
export class Worker {
  readonly workerId: number;
  readonly layout: SnowflakeLayout;
  /** The last Unix millisecond an earlier holder of the id may have used. */
  readonly floorMs: number;
  private readonly unitMs: number;
  private reserve: number;
  private until: number;
  private lost?: LeafError;
  private last: number;
  private seq: number;
  private timer?: ReturnType<typeof setTimeout>;

  private constructor(
    private readonly client: Client,
    private readonly token: string,
    private readonly ttlMs: number,
    a: LeaseAnswer,
    start: number,
  ) {
    this.workerId = a.worker_id;
    this.layout = new SnowflakeLayout(a.layout);
    this.floorMs = a.floor_ms;
    this.reserve = a.reserve_ms;
    this.until = start + ttlMs - ttlMs / 5;
    this.unitMs = UNIT_MS[this.layout.timeUnit];
    this.last = this.unitOf(a.floor_ms);
    this.seq = 2 ** this.layout.sequenceBits; // the floor's unit is spent
  }

  /** @internal */
  static async lease(client: Client, holder: string, ttlMs: number): Promise<Worker> {
    const start = Date.now();
    const reserve = Math.floor(start + ttlMs - ttlMs / 5);
    const a = await client._send("lease a worker id", "POST", "/api/snowflake/leases", { holder, ttl_ms: ttlMs, reserve_ms: reserve }, checkLease);
    const w = new Worker(client, a.lease, ttlMs, a, start);
    w.schedule(ttlMs / 3);
    return w;
  }

  private unitOf(ms: number): number {
    return Math.floor((ms - this.layout.epochMs) / this.unitMs);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => void this.renew(), ms);
    this.timer.unref?.();
  }

  private async renew(): Promise<void> {
    const start = Date.now();
    const reserve = Math.floor(start + this.ttlMs - this.ttlMs / 5);
    try {
      const a = await this.client._send("renew a worker lease", "PUT", `/api/snowflake/leases/${this.workerId}`,
        { lease: this.token, ttl_ms: this.ttlMs, reserve_ms: reserve }, checkLease);
      this.reserve = Math.max(this.reserve, a.reserve_ms);
      this.until = start + this.ttlMs - this.ttlMs / 5;
    } catch (e) {
      if (e instanceof LeafError && (e.code === "lease_lost" || e.code === "closed")) {
        this.lost ??= e;
        return;
      }
      if (this.lost === undefined) this.schedule(Math.min(this.ttlMs / 3, 1000)); // try again soon
      return;
    }
    if (this.lost === undefined) this.schedule(this.ttlMs / 3);
  }

  /** Throws unless the lease lets this process make ids now. */
  valid(): void {
    if (this.lost !== undefined) throw this.lost;
    if (Date.now() >= this.until) throw new LeafError("unavailable", "leaf client: worker lease not renewed in time");
  }

  /**
   * A snowflake id of the fleet's layout with this worker id: above every one
   * it made, after the floor, within the reserve. When the current unit of
   * time has no sequence number left it waits for the next.
   */
  async next(): Promise<bigint> {
    for (;;) {
      this.valid();
      const now = Date.now();
      const unit = this.unitOf(now);
      if (unit > this.unitOf(this.reserve)) throw new LeafError("unavailable", "leaf client: worker lease not renewed in time");
      if (unit > this.last) [this.last, this.seq] = [unit, 0];
      if (this.seq < 2 ** this.layout.sequenceBits) return this.compose(this.last, this.seq++);
      const wait = this.layout.epochMs + (this.last + 1) * this.unitMs - now;
      if (wait > 1000) throw new LeafError("unavailable", `leaf client: the clock is ${wait} ms behind the worker's last id or floor`);
      await new Promise((r) => setTimeout(r, Math.max(wait, 0)));
    }
  }

  private compose(unit: number, seq: number): bigint {
    const [w, s] = [BigInt(this.layout.workerBits), BigInt(this.layout.sequenceBits)];
    const u = BigInt(unit) << (w + s);
    if (this.layout.order === "time,sequence,worker") return u | (BigInt(seq) << w) | BigInt(this.workerId);
    return u | (BigInt(this.workerId) << s) | BigInt(seq);
  }

  /** Stops renewing and releases the lease; no id is made after it. */
  async close(): Promise<void> {
    if (this.lost !== undefined) return;
    clearTimeout(this.timer);
    this.lost = new ClosedError();
    const last = Math.max(this.layout.epochMs + (this.last + 1) * this.unitMs - 1, this.floorMs);
    await this.client._send("release a worker lease", "DELETE", `/api/snowflake/leases/${this.workerId}`,
      { lease: this.token, last_ms: last }, (v) => v);
  }
}
