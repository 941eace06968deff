// Ids per second of leaf-client in-process, beside the bare counter of the
// language in the same run: `n += 1n` on a bigint, its value used as the
// client's ids are (xor-ed into a sum), so that neither loop is optimized
// away. Five rounds, interleaved; the median of each and its ratio to the
// counter's are printed. Needs a leaf server with the tag (ranges of up to
// 1,000,000 ids, so that requests do not count):
//
//   node clients/typescript/bench/bench.mjs http://127.0.0.1:8080 orders
import { Client } from "../dist/index.js";

const N = 5_000_000;
const ROUNDS = 5;
const [endpoint, tag] = process.argv.slice(2);

const c = new Client({ endpoints: [endpoint], minRange: 1_000_000, maxRange: 1_000_000 });
const src = c.source(tag);
let sum = 0n;
const loops = {
  "n += 1n": async () => {
    let n = 0n, s = 0n;
    for (let i = 0; i < N; i++) { n += 1n; s ^= n; }
    return s;
  },
  "await nextId": async () => {
    let s = 0n;
    for (let i = 0; i < N; i++) s ^= await c.nextId(tag);
    return s;
  },
  "tryNextId ?? await nextId": async () => {
    let s = 0n;
    for (let i = 0; i < N; i++) s ^= c.tryNextId(tag) ?? (await c.nextId(tag));
    return s;
  },
  "source: tryNext ?? await next": async () => {
    let s = 0n;
    for (let i = 0; i < N; i++) s ^= src.tryNext() ?? (await src.next());
    return s;
  },
};
await loops["await nextId"](); // warm up: the JIT, and the first ranges fetched
const got = Object.fromEntries(Object.keys(loops).map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [k, f] of Object.entries(loops)) {
    const t = performance.now();
    sum ^= await f();
    got[k].push(N / ((performance.now() - t) / 1000));
  }
}
await c.close();
const median = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
const base = median(got["n += 1n"]);
console.log(`Node.js ${process.version}, ${N.toLocaleString("en")} ids a round, median of ${ROUNDS}${sum === -1n ? " " : ""}`);
for (const k of Object.keys(loops)) {
  const m = median(got[k]);
  console.log(`${k.padEnd(30)} ${(m / 1e6).toFixed(1).padStart(6)} M/s   ratio ${(m / base).toFixed(2)}`);
}
