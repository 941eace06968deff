import { SnowflakeLayout } from "./layout";
/**
 * A worker id of the fleet's (`client.leaseWorker`), from the pool the servers
 * lease their own from: no other generator of the fleet makes ids with it
 * meanwhile. `next()` makes snowflake ids of the fleet's layout in memory. The
 * lease is renewed every third of the TTL, each renewal recording a reserve
 * (now plus the TTL less a fifth of it) before ids are made up to it; no id
 * is made once a renewal was refused (code lease_lost) or none succeeded
 * within the TTL less the margin. `close()` releases it.
 */
export declare class Worker {
    private readonly client;
    private readonly token;
    private readonly ttlMs;
    readonly workerId: number;
    readonly layout: SnowflakeLayout;
    /** The last Unix millisecond an earlier holder of the id may have used. */
    readonly floorMs: number;
    private readonly unitMs;
    private reserve;
    private until;
    private lost?;
    private last;
    private seq;
    private timer?;
    private constructor();
    private unitOf;
    private schedule;
    private renew;
    /** Throws unless the lease lets this process make ids now. */
    valid(): void;
    /**
     * A snowflake id of the fleet's layout with this worker id: above every one
     * it made, after the floor, within the reserve. When the current unit of
     * time has no sequence number left it waits for the next.
     */
    next(): Promise<bigint>;
    private compose;
    /** Stops renewing and releases the lease; no id is made after it. */
    close(): Promise<void>;
}
