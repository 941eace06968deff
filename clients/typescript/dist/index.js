"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.UnavailableError = exports.LeafError = exports.ERROR_CODES = exports.ClosedError = exports.Worker = exports.SnowflakeLayout = exports.sectionOf = exports.MAX_SNOWFLAKE_BATCH = exports.MAX_SEQUENCE_KEY = exports.MAX_SEQUENCE_BATCH = exports.MAX_RANGE = exports.MAX_N = exports.IdSource = exports.Client = void 0;
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
var client_1 = require("./client");
Object.defineProperty(exports, "Client", { enumerable: true, get: function () { return client_1.Client; } });
Object.defineProperty(exports, "IdSource", { enumerable: true, get: function () { return client_1.IdSource; } });
Object.defineProperty(exports, "MAX_N", { enumerable: true, get: function () { return client_1.MAX_N; } });
Object.defineProperty(exports, "MAX_RANGE", { enumerable: true, get: function () { return client_1.MAX_RANGE; } });
Object.defineProperty(exports, "MAX_SEQUENCE_BATCH", { enumerable: true, get: function () { return client_1.MAX_SEQUENCE_BATCH; } });
Object.defineProperty(exports, "MAX_SEQUENCE_KEY", { enumerable: true, get: function () { return client_1.MAX_SEQUENCE_KEY; } });
Object.defineProperty(exports, "MAX_SNOWFLAKE_BATCH", { enumerable: true, get: function () { return client_1.MAX_SNOWFLAKE_BATCH; } });
Object.defineProperty(exports, "sectionOf", { enumerable: true, get: function () { return client_1.sectionOf; } });
var layout_1 = require("./layout");
Object.defineProperty(exports, "SnowflakeLayout", { enumerable: true, get: function () { return layout_1.SnowflakeLayout; } });
var worker_1 = require("./worker");
Object.defineProperty(exports, "Worker", { enumerable: true, get: function () { return worker_1.Worker; } });
var errors_1 = require("./errors");
Object.defineProperty(exports, "ClosedError", { enumerable: true, get: function () { return errors_1.ClosedError; } });
Object.defineProperty(exports, "ERROR_CODES", { enumerable: true, get: function () { return errors_1.ERROR_CODES; } });
Object.defineProperty(exports, "LeafError", { enumerable: true, get: function () { return errors_1.LeafError; } });
Object.defineProperty(exports, "UnavailableError", { enumerable: true, get: function () { return errors_1.UnavailableError; } });
