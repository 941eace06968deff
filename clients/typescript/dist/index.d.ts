/**
 * leaf-client: the TypeScript and JavaScript client of leaf, the distributed
 * ID service. It leases ranges of ids from leaf servers and hands them out
 * in-process, failing over between servers:
 *
 * ```ts
 * import { Client } from "leaf-client";
 *
 * const client = new Client({ endpoints: ["http://leaf-1:8080", "http://leaf-2:8080"] });
 * const id = await client.nextId("orders"); // a bigint
 * await client.close();
 * ```
 *
 * No runtime dependency: Node.js 20's fetch.
 */
export { Client, IdSource, MAX_N, MAX_RANGE, MAX_SEQUENCE_BATCH, MAX_SEQUENCE_KEY, MAX_SNOWFLAKE_BATCH, sectionOf } from "./client";
export type { ClientOptions } from "./client";
export { SnowflakeLayout } from "./layout";
export { Worker } from "./worker";
export type { SnowflakeLayoutFields, SnowflakeParts } from "./layout";
export { ClosedError, ERROR_CODES, LeafError, UnavailableError } from "./errors";
export type { ErrorCode, ErrorDetails } from "./errors";
