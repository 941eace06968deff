// The conformance suite's driver of the TypeScript client (leaf-client):
// reads one JSON request a line on stdin, runs it with the client, writes one
// JSON answer a line on stdout (clients/conformance/README.md). "threads" of
// a draw are concurrent async loops on the one event loop.
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Client, LeafError } from "../../../typescript/dist/index.js";

const kindOf = (err) => (err instanceof LeafError ? err.code : "other");
const fail = (err) => ({ kind: kindOf(err), message: String(err?.message ?? err) });

function options(endpoints, c = {}) {
  const o = { endpoints };
  const map = {
    request_timeout_ms: "requestTimeoutMs", min_range: "minRange", max_range: "maxRange",
    refill_interval_ms: "refillIntervalMs", snowflake_batch: "snowflakeBatch",
    snowflake_max_age_ms: "snowflakeMaxAgeMs", backoff_min_ms: "backoffMinMs",
    backoff_max_ms: "backoffMaxMs", routes_interval_ms: "routesIntervalMs",
  };
  for (const [k, v] of Object.entries(map)) if (c[k]) o[v] = c[k];
  if (c.no_direct_sequences) o.directSequences = false;
  return o;
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

function startDraw(client, r, count) {
  const d = { stop: false, file: r.file, errors: {}, ids: [], loops: [] };
  for (let t = 0; t < Math.max(r.threads ?? 1, 1); t++) {
    const ids = [];
    d.ids.push(ids);
    d.loops.push((async () => {
      while (!d.stop && (count === 0 || ids.length < count)) {
        try {
          ids.push(await client.nextId(r.tag));
        } catch (e) {
          d.errors[kindOf(e)] = (d.errors[kindOf(e)] ?? 0) + 1;
          await pause(1);
          continue;
        }
        // Let the event loop (stdin, timers, other loops) run.
        if (r.pace && ids.length % r.pace === 0) await pause(1);
        else if (ids.length % 1000 === 0) await new Promise(setImmediate);
      }
    })());
  }
  return d;
}

async function finish(d) {
  d.stop = true;
  await Promise.all(d.loops);
  writeFileSync(d.file, d.ids.flat().map((i) => i + "\n").join(""));
  return { values: [], drawn: d.ids.reduce((n, x) => n + x.length, 0), errors: d.errors };
}

const clients = new Map();
let draw;

async function run(r) {
  const a = { values: [], error: null };
  try {
    if (r.op === "client") {
      clients.set(r.name, new Client(options(r.endpoints, r.config)));
      return a;
    }
    if (r.op === "draw_stop") return await finish(draw).finally(() => (draw = undefined));
    const c = clients.get(r.client);
    const n = r.n ?? 1;
    const calls = {
      next: () => c.nextId(r.tag),
      snowflake: () => c.snowflake(),
      seq_next: () => c.sequenceNext(r.space, r.key, n),
      seq_current: () => c.sequenceCurrent(r.space, r.key),
    };
    if (calls[r.op]) {
      for (let i = 0; i < Math.max(r.repeat ?? 1, 1); i++) a.values.push(String(await calls[r.op]()));
    } else if (r.op === "next_n") {
      a.values = (await c.nextIds(r.tag, n)).map(String);
    } else if (r.op === "worker") {
      // repeat ids made here on a worker id leased for key, then released
      const w = await c.leaseWorker(r.key ?? "conformance", 30_000);
      try {
        for (let i = 0; i < Math.max(r.repeat ?? 1, 1); i++) a.values.push(String(await w.next()));
      } finally {
        await w.close();
      }
    } else if (r.op === "close") {
      await c.close();
    } else if (r.op === "draw_start") {
      draw = startDraw(c, r, 0);
    } else if (r.op === "draw") {
      const d = startDraw(c, r, r.count);
      await Promise.all(d.loops);
      return await finish(d);
    } else {
      a.error = { kind: "driver", message: "unknown op " + r.op };
    }
  } catch (e) {
    a.error = e instanceof LeafError ? fail(e) : { kind: "driver", message: String(e?.stack ?? e) };
  }
  return a;
}

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  const r = JSON.parse(line);
  if (r.op === "exit") break;
  process.stdout.write(JSON.stringify(await run(r)) + "\n");
}
await Promise.all([...clients.values()].map((c) => c.close()));
process.exit(0);
