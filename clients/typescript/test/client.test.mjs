// Tests of leaf-client against a fake leaf server in the same process. The
// behaviour against real servers is the conformance suite's
// (clients/conformance).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { Client, SnowflakeLayout, LeafError, UnavailableError, ClosedError, ERROR_CODES, sectionOf, MAX_N } from "../dist/index.js";
import { routeTable } from "../dist/client.js";

async function fakeLeaf() {
  const next = new Map();
  const requests = [];
  const fake = { requests, error: undefined, token: undefined, nextWorker: 0, leases: new Map(), released: new Map() };
  const srv = createServer((req, res) => {
    const u = new URL(req.url, "http://x");
    requests.push(u.pathname);
    const count = Number(u.searchParams.get("count") ?? 1);
    const answer = (status, body) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
    };
    if (fake.error) return answer(...fake.error);
    if (fake.token && req.headers.authorization !== `Bearer ${fake.token}`) {
      return answer(401, { error: { code: "unauthorized", message: "missing or wrong bearer token" } });
    }
    if (u.pathname.startsWith("/api/segment/range/")) {
      const tag = decodeURIComponent(u.pathname.split("/").pop());
      if (tag === "nope") return answer(404, { error: { code: "unknown_tag", message: "no such tag" } });
      const start = next.get(tag) ?? (tag === "top" ? 2n ** 63n - 200n : 1n);
      next.set(tag, start + BigInt(count));
      return answer(200, { tag, start: String(start), count });
    }
    if (u.pathname === "/api/snowflake/batch") {
      const start = next.get("~flake") ?? 2 ** 40;
      next.set("~flake", start + count);
      return answer(200, { ids: Array.from({ length: count }, (_, i) => String(start + i)) });
    }
    if (u.pathname.startsWith("/api/snowflake/leases")) {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => {
        const body = JSON.parse(raw || "{}");
        const layout = { time_unit: "ms", time_bits: 41, worker_bits: 10, sequence_bits: 12, order: "time,worker,sequence", epoch_ms: 1288834974657, epoch: "2010-11-04T01:42:54.657Z" };
        if (req.method === "POST") {
          const id = fake.nextWorker++;
          fake.leases.set(id, "t" + id);
          return answer(201, { worker_id: id, lease: "t" + id, floor_ms: 0, reserve_ms: body.reserve_ms, expires: "x", expires_ms: 0, layout });
        }
        const id = Number(u.pathname.split("/").pop());
        if (fake.leases.get(id) !== body.lease) return answer(409, { error: { code: "lease_lost", message: "not this lease's" } });
        if (req.method === "DELETE") {
          fake.leases.delete(id);
          fake.released.set(id, body.last_ms);
          return answer(200, { worker_id: id, last_ms: body.last_ms });
        }
        answer(200, { worker_id: id, lease: "t" + id, floor_ms: 0, reserve_ms: body.reserve_ms, expires: "x", expires_ms: 0, layout });
      });
      return;
    }
    if (u.pathname === "/api/snowflake/layout") {
      return answer(200, { time_unit: "ms", time_bits: 41, worker_bits: 10, sequence_bits: 12, order: "time,worker,sequence", epoch_ms: 1288834974657, epoch: "2010-11-04T01:42:54.657Z" });
    }
    answer(404, { error: { code: "not_found", message: "no route" } });
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  fake.url = `http://127.0.0.1:${srv.address().port}`;
  fake.count = (prefix) => requests.filter((p) => p.startsWith(prefix)).length;
  fake.close = () => new Promise((r) => { srv.closeAllConnections(); srv.close(r); });
  return fake;
}

async function withFake(t, f) {
  const fake = await fakeLeaf();
  t.after(() => fake.close());
  return f(fake);
}

test("nextId resolves to consecutive bigints", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url], minRange: 100, maxRange: 100 });
  t.after(() => c.close());
  const ids = [];
  for (let i = 0; i < 1000; i++) ids.push(await c.nextId("orders"));
  assert.equal(typeof ids[0], "bigint");
  assert.deepEqual(ids, Array.from({ length: 1000 }, (_, i) => BigInt(i + 1)));
}));

test("the next range is prefetched at a quarter", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url], minRange: 100, maxRange: 100 });
  t.after(() => c.close());
  for (let i = 0; i < 24; i++) await c.nextId("orders");
  assert.equal(fake.count("/api/segment/range/orders"), 1);
  await c.nextId("orders");
  for (let i = 0; i < 100 && fake.count("/api/segment/range/orders") < 2; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(fake.count("/api/segment/range/orders"), 2);
}));

test("concurrent calls share one request and never share an id", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url], minRange: 100, maxRange: 1000 });
  t.after(() => c.close());
  const ids = await Promise.all(Array.from({ length: 5000 }, () => c.nextId("orders")));
  assert.equal(new Set(ids).size, ids.length);
  assert.ok(fake.count("/api/segment/range/orders") < 20, `${fake.count("/api/segment/range/orders")} range requests`);
}));

test("tryNextId hands out buffered ids without a promise", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url], minRange: 100, maxRange: 100 });
  t.after(() => c.close());
  assert.equal(c.tryNextId("orders"), undefined);
  assert.equal(await c.nextId("orders"), 1n);
  assert.equal(c.tryNextId("orders"), 2n);
}));

test("a source takes from the client's ranges, prefetches, and follows close", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url], minRange: 100, maxRange: 100 });
  const src = c.source("orders");
  assert.equal(src.tryNext(), undefined); // no range yet
  const ids = [await src.next()];
  for (let i = 0; i < 1000; i++) {
    ids.push(i % 3 === 0 ? await c.nextId("orders") : (src.tryNext() ?? (await src.next())));
  }
  assert.deepEqual(ids, Array.from({ length: 1001 }, (_, i) => BigInt(i + 1)), "one sequence, none twice");
  assert.ok(fake.count("/api/segment/range/orders") >= 10, "ranges fetched as the source used them");
  await c.close();
  assert.equal(src.tryNext(), undefined);
  await assert.rejects(src.next(), ClosedError);
}));

test("ids at the top of the number space are exact, to 2^63-1", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url], minRange: 100, maxRange: 100 });
  t.after(() => c.close());
  const src = c.source("top");
  const ids = [];
  for (let i = 0; i < 200; i++) ids.push(i % 3 ? src.tryNext() ?? (await src.next()) : await c.nextId("top"));
  const want = Array.from({ length: 200 }, (_, i) => 2n ** 63n - 200n + BigInt(i));
  assert.deepEqual([...ids].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)), want);
}));

test("nextIds", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url], minRange: 100, maxRange: 100 });
  t.after(() => c.close());
  assert.deepEqual(await c.nextIds("orders", 5), [1n, 2n, 3n, 4n, 5n]);
  assert.deepEqual(await c.nextIds("orders", 0), []);
  const many = await c.nextIds("orders", 250);
  assert.deepEqual(many, Array.from({ length: 250 }, (_, i) => BigInt(i + 6)));
  for (const n of [-1, MAX_N + 1, 1.5]) {
    await assert.rejects(c.nextIds("orders", n), (e) => e instanceof LeafError && e.code === "invalid_count");
  }
}));

test("error answers", (t) => withFake(t, async (fake) => {
  const cases = [
    [503, { error: { code: "unavailable", message: "m" } }, "unavailable"],
    [500, { error: { code: "tag_misconfigured", message: "m" } }, "tag_misconfigured"],
    [410, { error: { code: "tag_exhausted", message: "m" } }, "tag_exhausted"],
    [409, { error: { code: "not_numeric", message: "m" } }, "not_numeric"],
    [502, "<html>bad gateway</html>", "unavailable"],
    [404, "", "not_found"],
    [200, "not json", "unavailable"],
  ];
  for (const [status, body, code] of cases) {
    fake.error = [status, body];
    const c = new Client({ endpoints: [fake.url], backoffMinMs: 10, backoffMaxMs: 20 });
    await assert.rejects(c.nextId("orders"), (e) => e instanceof LeafError && e.code === code, `${status} ${JSON.stringify(body)}`);
    await c.close();
  }
  fake.error = undefined;
  const c = new Client({ endpoints: [fake.url] });
  t.after(() => c.close());
  await assert.rejects(c.nextId("nope"), (e) => e.code === "unknown_tag" && e.status === 404 && e.endpoint === fake.url);
  await assert.rejects(c.nextId(""), (e) => e.code === "invalid_tag");
}));

test("the token is sent with every request", (t) => withFake(t, async (fake) => {
  fake.token = "a token of the id routes";
  const c = new Client({ endpoints: [fake.url], token: fake.token });
  t.after(() => c.close());
  assert.equal(await c.nextId("orders"), 1n);
  assert.equal(typeof (await c.snowflake()), "bigint");
  const without = new Client({ endpoints: [fake.url], backoffMinMs: 10, backoffMaxMs: 20 });
  t.after(() => without.close());
  await assert.rejects(without.nextId("orders"), (e) => e instanceof LeafError && e.status === 401);
}));

test("failover, and unavailable with no endpoint", (t) => withFake(t, async (fake) => {
  const dead = "http://127.0.0.1:1";
  const c = new Client({ endpoints: [dead, fake.url], backoffMinMs: 50, backoffMaxMs: 100 });
  t.after(() => c.close());
  assert.equal(await c.nextId("orders"), 1n);
  const d = new Client({ endpoints: [dead], backoffMinMs: 50, backoffMaxMs: 100 });
  t.after(() => d.close());
  await assert.rejects(d.nextId("orders"), (e) => e instanceof UnavailableError && e.errors.length === 1);
}));

test("snowflake", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url], snowflakeBatch: 10 });
  t.after(() => c.close());
  const ids = [];
  for (let i = 0; i < 55; i++) ids.push(await c.snowflake());
  assert.equal(new Set(ids).size, 55);
  assert.deepEqual(ids, [...ids].sort((a, b) => (a < b ? -1 : 1)));
}));

test("snowflakeLayout, its bounds and decoding", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url] });
  t.after(() => c.close());
  const layout = await c.snowflakeLayout();
  assert.equal(layout.timeBits, 41);
  const made = new Date("2026-12-07T10:00:00Z");
  const [lo, hi] = layout.bounds(made, made.getTime() + 3_600_000);
  assert.equal(layout.decode(lo).timeMs, made.getTime());
  assert.equal(layout.decode(hi).timeMs, made.getTime() + 3_600_000);
  assert.throws(() => layout.bounds(made, made.getTime() - 1), (e) => e instanceof LeafError && e.code === "invalid_request");
}));

test("layouts.json: the server's bounds and decodings", () => {
  const vectors = JSON.parse(readFileSync(new URL("../../conformance/layouts.json", import.meta.url), "utf8"));
  for (const v of vectors) {
    const layout = new SnowflakeLayout(v.layout);
    for (const b of v.bounds) {
      if (b.lowest === undefined) {
        assert.throws(() => layout.bounds(b.from_ms, b.to_ms), (e) => e instanceof LeafError && e.code === "invalid_request");
      } else {
        assert.deepEqual(layout.bounds(b.from_ms, b.to_ms), [BigInt(b.lowest), BigInt(b.highest)], JSON.stringify([v.layout, b]));
      }
    }
    for (const d of v.decode) {
      const p = layout.decode(BigInt(d.id));
      assert.deepEqual([p.timeMs, p.workerId, p.sequence], [d.time_ms, BigInt(d.worker_id), BigInt(d.sequence)]);
    }
  }
});

test("leaseWorker: ids made in memory on a leased worker id, renewed, released", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url] });
  t.after(() => c.close());
  const w = await c.leaseWorker("proc-a", 3000);
  const w2 = await c.leaseWorker("proc-b", 3000);
  assert.notEqual(w.workerId, w2.workerId);
  const ids = [];
  for (let i = 0; i < 20000; i++) ids.push(await w.next());
  assert.equal(new Set(ids).size, 20000);
  assert.deepEqual(ids, [...ids].sort((a, b) => (a < b ? -1 : 1)));
  assert.equal(w.layout.decode(ids[0]).workerId, BigInt(w.workerId));
  await new Promise((r) => setTimeout(r, 1200)); // a renewal, every third of the TTL
  assert.ok(fake.requests.filter((p) => p.startsWith("/api/snowflake/leases/")).length >= 2);
  await w.close();
  await w2.close();
  assert.ok(fake.released.has(w.workerId));
  await assert.rejects(w.next(), (e) => e instanceof LeafError && e.code === "closed");
}));

test("leaseWorker: a lease lost stops the worker", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url] });
  t.after(() => c.close());
  const w = await c.leaseWorker("proc", 3000);
  fake.leases.set(w.workerId, "taken by another");
  await new Promise((r) => setTimeout(r, 1300));
  await assert.rejects(w.next(), (e) => e instanceof LeafError && e.code === "lease_lost");
}));

test("close", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url] });
  await c.nextId("orders");
  await c.close();
  for (const call of [() => c.nextId("orders"), () => c.nextIds("orders", 2), () => c.snowflake(), () => c.sequenceNext("inbox", "k")]) {
    await assert.rejects(call(), (e) => e instanceof ClosedError && e.code === "closed");
  }
  await c.close();
}));

test("options are checked", (t) => withFake(t, async (fake) => {
  for (const o of [{ minRange: 0 }, { maxRange: 1_000_001 }, { minRange: 10, maxRange: 5 }, { requestTimeoutMs: 0 }, { backoffMinMs: 2, backoffMaxMs: 1 }, { snowflakeBatch: 10001 }]) {
    assert.throws(() => new Client({ endpoints: [fake.url], ...o }), RangeError, JSON.stringify(o));
  }
  for (const endpoints of [[], ["ftp://x"], ["nonsense"], ["http://x/?q=1"]]) {
    assert.throws(() => new Client({ endpoints }), TypeError, JSON.stringify(endpoints));
  }
}));

test("sequence arguments are checked without a request", (t) => withFake(t, async (fake) => {
  const c = new Client({ endpoints: [fake.url] });
  t.after(() => c.close());
  for (const [space, key, n, code] of [["", "k", 1, "invalid_space"], ["s", "", 1, "invalid_key"], ["s", "k".repeat(257), 1, "invalid_key"],
    ["s", "\ud800", 1, "invalid_key"], ["s", "k", 0, "invalid_count"], ["s", "k", 10001, "invalid_count"]]) {
    await assert.rejects(c.sequenceNext(space, key, n), (e) => e.code === code);
  }
  assert.equal(fake.count("/api/sequence/"), 0);
}));

test("sectionOf is the server's", () => {
  // Values of the Go client's SectionOf, itself held to the server's.
  for (const [key, s64, s7] of [["u42", 26, 0], ["k0", 14, 4], ["ключ/☃ 1", 30, 2], ["a", 12, 5]]) {
    assert.equal(sectionOf(key, 64), s64, key);
    assert.equal(sectionOf(key, 7), s7, key);
  }
});

test("every error code is known", () => {
  assert.ok(ERROR_CODES.includes("unknown_tag") && ERROR_CODES.includes("closed"));
});

test("the owners of a routing table keep the scheme of the endpoint that told it", () => {
  const answer = { sections: 2, scheme: "fnv1a64-mod", version: "v1", members: ["10.0.0.7:8443", "10.0.0.8:8443"], owners: [0, 1] };
  for (const [from, want] of [["https://leaf.example:8443/api", "https://10.0.0.7:8443"], ["http://lb:8080", "http://10.0.0.7:8443"]]) {
    const table = routeTable(answer, undefined, from);
    assert.equal(table?.owners[0]?.base, want, from);
  }
});
