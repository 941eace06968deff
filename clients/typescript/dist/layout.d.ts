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
export declare class SnowflakeLayout {
    readonly timeUnit: string;
    readonly timeBits: number;
    readonly workerBits: number;
    readonly sequenceBits: number;
    readonly order: string;
    readonly epochMs: number;
    constructor(f: SnowflakeLayoutFields);
    private get shift();
    /** The largest id of the layout. */
    get maxId(): bigint;
    /** Takes an id of the layout apart, as GET /api/snowflake/decode does. */
    decode(id: bigint): SnowflakeParts;
    /**
     * The lowest and highest id that an id made at any instant from `from` to
     * `to` (both included; Dates or Unix milliseconds) can be, as GET
     * /api/snowflake/bounds says: every id between them was made in a unit of
     * time of the interval, widened to whole units, so `id BETWEEN lo AND hi`
     * finds the rows made in it. An interval that ends before it begins, ends
     * before the epoch or begins after the layout's end throws a LeafError of
     * code invalid_request.
     */
    bounds(from: Date | number, to: Date | number): [bigint, bigint];
}
