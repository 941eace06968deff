// Ids per second of leaf-client in-process, beside a baseline in the same
// run: a bigint counter behind the same promise-returning shape (and a bare
// one for the synchronous tryNextId). On two threads: a worker_thread each,
// each with its own Client. Needs a leaf server with the tag:
//
//   node clients/typescript/bench/bench.mjs http://127.0.0.1:8080 orders
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { Client } from "../dist/index.js";

const N = 5_000_000;

async function measure({ endpoint, tag }) {
  const c = new Client({ endpoints: [endpoint], minRange: 1_000_000 });
  for (let i = 0; i < N; i++) await c.nextId(tag); // warm up
  let n = 0n;
  const counter = () => Promise.resolve(++n);
  const out = {};
  const time = async (name, f) => {
    const t = performance.now();
    await f();
    out[name] = N / ((performance.now() - t) / 1000);
  };
  await time("counter (await)", async () => { for (let i = 0; i < N; i++) await counter(); });
  await time("nextId (await)", async () => { for (let i = 0; i < N; i++) await c.nextId(tag); });
  let m = 0n;
  await time("counter (sync)", () => { for (let i = 0; i < N; i++) m++; });
  await time("tryNextId (sync)", async () => {
    for (let i = 0; i < N; i++) if (c.tryNextId(tag) === undefined) await c.nextId(tag);
  });
  await c.close();
  return out;
}

if (isMainThread) {
  const [endpoint, tag] = process.argv.slice(2);
  console.log(`Node.js ${process.version}, ${N.toLocaleString("en")} ids a thread`);
  const one = await measure({ endpoint, tag });
  const run = () => new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: { endpoint, tag } });
    w.once("message", resolve);
    w.once("error", reject);
  });
  const two = await Promise.all([run(), run()]);
  for (const k of Object.keys(one)) {
    const sum = two[0][k] + two[1][k];
    console.log(`${k.padEnd(18)} 1 thread ${(one[k] / 1e6).toFixed(1)} M/s   2 workers ${(sum / 1e6).toFixed(1)} M/s`);
  }
} else {
  parentPort.postMessage(await measure(workerData));
}
