import { LeafError } from "./errors";

const UNIT_MS: Record<string, bigint> = { ms: 1n, "10ms": 10n, s: 1000n };
const ORDERS = ["time,worker,sequence", "time,sequence,worker"];

/** A snowflake id taken apart; timeMs is the start of its unit of time, in Unix milliseconds. */
export interface SnowflakeParts {
  id: bigint;
  timeMs: number;
  workerId: bigint;
  sequence: bigint;
}

/** The fields of a layout, as GET /api/snowflake/layout answers them. */
export interface SnowflakeLayoutFields {
  time_unit: string;
  time_bits: number;
  worker_bits: number;
  sequence_bits: number;
  order: string;
  epoch_ms: number;
}

/**
 * How a server's snowflake ids are made (`client.snowflakeLayout()`): the time
 * since epochMs in timeUnit ("ms", "10ms" or "s") on top, then the worker id
 * and the sequence in order. With it, ids are decoded and the bounds of a span
 * of time computed without a call.
 */
export class SnowflakeLayout {
  readonly timeUnit: string;
  readonly timeBits: number;
  readonly workerBits: number;
  readonly sequenceBits: number;
  readonly order: string;
  readonly epochMs: number;

  constructor(f: SnowflakeLayoutFields) {
    const n = f.time_bits + f.worker_bits + f.sequence_bits;
    if (!(f.time_unit in UNIT_MS)) throw new TypeError(`time_unit ${JSON.stringify(f.time_unit)} is none of ms, 10ms, s`);
    if (![f.time_bits, f.worker_bits, f.sequence_bits].every((b) => Number.isInteger(b) && b >= 1) || (n !== 63 && n !== 53)) {
      throw new TypeError(`widths ${f.time_bits}, ${f.worker_bits}, ${f.sequence_bits} do not make 63 or 53 bits`);
    }
    if (!ORDERS.includes(f.order)) throw new TypeError(`order ${JSON.stringify(f.order)} is none of ${ORDERS.join(", ")}`);
    if (!Number.isSafeInteger(f.epoch_ms)) throw new TypeError("epoch_ms is not an integer");
    this.timeUnit = f.time_unit;
    this.timeBits = f.time_bits;
    this.workerBits = f.worker_bits;
    this.sequenceBits = f.sequence_bits;
    this.order = f.order;
    this.epochMs = f.epoch_ms;
  }

  private get shift(): bigint {
    return BigInt(this.workerBits + this.sequenceBits);
  }

  /** The largest id of the layout. */
  get maxId(): bigint {
    return (1n << (BigInt(this.timeBits) + this.shift)) - 1n;
  }

  /** Takes an id of the layout apart, as GET /api/snowflake/decode does. */
  decode(id: bigint): SnowflakeParts {
    if (id < 0n || id > this.maxId) throw new LeafError("invalid_id", `leaf client: ${id} is outside 0..${this.maxId}`);
    let [workerShift, seqShift] = [BigInt(this.sequenceBits), 0n];
    if (this.order === "time,sequence,worker") [workerShift, seqShift] = [0n, BigInt(this.workerBits)];
    return {
      id,
      timeMs: Number(BigInt(this.epochMs) + (id >> this.shift) * UNIT_MS[this.timeUnit]),
      workerId: (id >> workerShift) & ((1n << BigInt(this.workerBits)) - 1n),
      sequence: (id >> seqShift) & ((1n << BigInt(this.sequenceBits)) - 1n),
    };
  }

  /**
   * The lowest and highest id that an id made at any instant from `from` to
   * `to` (both included; Dates or Unix milliseconds) can be, as GET
   * /api/snowflake/bounds says: every id between them was made in a unit of
   * time of the interval, widened to whole units, so `id BETWEEN lo AND hi`
   * finds the rows made in it. An interval that ends before it begins, ends
   * before the epoch or begins after the layout's end throws a LeafError of
   * code invalid_request.
   */
  bounds(from: Date | number, to: Date | number): [bigint, bigint] {
    const [f, t] = [ms(from), ms(to)];
    const bad = (why: string) => new LeafError("invalid_request", `leaf client: invalid interval of time: ${why}`);
    if (t < f) throw bad(`it ends at ${t}, before it begins at ${f}`);
    const unit = UNIT_MS[this.timeUnit];
    const floorDiv = (a: bigint) => (a >= 0n ? a / unit : -((-a + unit - 1n) / unit));
    let first = floorDiv(f - BigInt(this.epochMs));
    let last = floorDiv(t - BigInt(this.epochMs));
    const maxTime = (1n << BigInt(this.timeBits)) - 1n;
    if (last < 0n) throw bad(`it ends at ${t}, before the epoch ${this.epochMs}`);
    if (first > maxTime) throw bad(`it begins at ${f}, after the layout's time runs out`);
    if (first < 0n) first = 0n;
    if (last > maxTime) last = maxTime;
    return [first << this.shift, (last << this.shift) | ((1n << this.shift) - 1n)];
  }
}

function ms(t: Date | number): bigint {
  const v = t instanceof Date ? t.getTime() : t;
  if (!Number.isSafeInteger(v)) throw new TypeError("a time is a valid Date or an integer of Unix milliseconds");
  return BigInt(v);
}
