"""Tests of leaf_client against a fake leaf server in the same process.

The behaviour against real servers (failover, kills, routing tables, every
error code) is the conformance suite's (clients/conformance).
"""

import datetime
import json
import os
import pickle
import sys
import tempfile
import threading
import time
import unittest
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

import leaf_client as lc  # noqa: E402


class FakeLeaf:
    """A leaf server that hands out ranges of one counter per tag, snowflake
    batches, and canned error answers on demand."""

    def __init__(self):
        self.lock = threading.Lock()
        self.next = {}  # tag -> next id
        self.requests = []
        self.error = None  # (status, body) answered to every id request
        self.token = None  # when set, the bearer token asked of every request (leaf serve --id-token)
        self.next_worker, self.leases, self.released = 0, {}, {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *a):
                pass

            def lease_call(self):
                # Worker leases: ids 0, 1, ... in turn; a renewal or release
                # of a lease not held is lease_lost.
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                layout = {"time_unit": "ms", "time_bits": 41, "worker_bits": 10, "sequence_bits": 12,
                          "order": "time,worker,sequence", "epoch_ms": 1288834974657, "epoch": "2010-11-04T01:42:54.657Z"}
                with fake.lock:
                    fake.requests.append(self.command + " " + self.path)
                    if self.command == "POST":
                        wid = fake.next_worker
                        fake.next_worker += 1
                        fake.leases[wid] = "t%d" % wid
                        return self.answer(201, {"worker_id": wid, "lease": fake.leases[wid], "floor_ms": 0,
                                                 "reserve_ms": body["reserve_ms"], "expires": "x", "expires_ms": 0, "layout": layout})
                    wid = int(self.path.rsplit("/", 1)[1])
                    if fake.leases.get(wid) != body.get("lease"):
                        return self.answer(409, {"error": {"code": "lease_lost", "message": "not this lease's"}})
                    if self.command == "DELETE":
                        del fake.leases[wid]
                        fake.released[wid] = body["last_ms"]
                        return self.answer(200, {"worker_id": wid, "last_ms": body["last_ms"]})
                    return self.answer(200, {"worker_id": wid, "lease": fake.leases[wid], "floor_ms": 0,
                                             "reserve_ms": body["reserve_ms"], "expires": "x", "expires_ms": 0, "layout": layout})

            do_POST = do_PUT = do_DELETE = lease_call

            def do_GET(self):
                path, _, query = self.path.partition("?")
                count = int(query.split("count=")[1]) if "count=" in query else 1
                with fake.lock:
                    fake.requests.append(path)
                    err = fake.error
                if err:
                    return self.answer(err[0], err[1])
                if fake.token and self.headers.get("Authorization") != "Bearer " + fake.token:
                    return self.answer(401, {"error": {"code": "unauthorized", "message": "missing or wrong bearer token"}})
                if path.startswith("/api/segment/range/"):
                    tag = path.rsplit("/", 1)[1]
                    if tag == "nope":
                        return self.answer(404, {"error": {"code": "unknown_tag", "message": "no such tag"}})
                    with fake.lock:
                        start = fake.next.get(tag, 1)
                        fake.next[tag] = start + count
                    return self.answer(200, {"tag": tag, "start": str(start), "count": count})
                if path == "/api/snowflake/batch":
                    with fake.lock:
                        start = fake.next.get("~flake", 1 << 40)
                        fake.next["~flake"] = start + count
                    return self.answer(200, {"ids": [str(start + i) for i in range(count)]})
                if path == "/api/snowflake/layout":
                    return self.answer(200, {"time_unit": "ms", "time_bits": 41, "worker_bits": 10, "sequence_bits": 12,
                                             "order": "time,worker,sequence", "epoch_ms": 1288834974657,
                                             "epoch": "2010-11-04T01:42:54.657Z"})
                return self.answer(404, {"error": {"code": "not_found", "message": "no route"}})

            def answer(self, status, body):
                b = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(b)))
                self.end_headers()
                self.wfile.write(b)

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.srv.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, args=(0.05,), daemon=True).start()

    def count(self, prefix):
        with self.lock:
            return sum(1 for p in self.requests if p.startswith(prefix))

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.fake = FakeLeaf()
        self.addCleanup(self.fake.close)

    def client(self, **kw):
        c = lc.Client([self.fake.url], **kw)
        self.addCleanup(c.close)
        return c

    def test_next_id_is_an_int_and_consecutive(self):
        c = self.client(min_range=100, max_range=100)
        ids = [c.next_id("orders") for _ in range(1000)]
        self.assertIsInstance(ids[0], int)
        self.assertEqual(ids, list(range(1, 1001)))

    def test_next_range_is_prefetched_at_a_quarter(self):
        c = self.client(min_range=100, max_range=100)
        for _ in range(24):
            c.next_id("orders")
        self.assertEqual(self.fake.count("/api/segment/range/orders"), 1)
        c.next_id("orders")  # the 25th take starts the load of the next range
        for _ in range(100):
            if self.fake.count("/api/segment/range/orders") == 2:
                break
            threading.Event().wait(0.02)
        self.assertEqual(self.fake.count("/api/segment/range/orders"), 2)

    def test_next_ids(self):
        c = self.client(min_range=100, max_range=100)
        self.assertEqual(c.next_ids("orders", 5), [1, 2, 3, 4, 5])
        self.assertEqual(c.next_ids("orders", 0), [])
        self.assertEqual(c.next_ids("orders", 250), list(range(6, 256)))
        for n in (-1, lc.MAX_N + 1, 1.5):
            with self.assertRaises(lc.InvalidCountError):
                c.next_ids("orders", n)
        with self.assertRaises(ValueError):  # InvalidCountError is a ValueError too
            c.next_ids("orders", -1)

    def test_threads_never_share_an_id(self):
        c = self.client(min_range=100, max_range=1000)
        out = [[] for _ in range(4)]

        def draw(ids):
            for _ in range(20000):
                ids.append(c.next_id("orders"))

        threads = [threading.Thread(target=draw, args=(o,)) for o in out]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        every = [i for o in out for i in o]
        self.assertEqual(len(set(every)), len(every))
        for o in out:
            self.assertEqual(o, sorted(o), "one thread's ids increase")

    def test_unknown_tag(self):
        c = self.client()
        with self.assertRaises(lc.UnknownTagError) as cm:
            c.next_id("nope")
        self.assertEqual(cm.exception.status, 404)
        self.assertEqual(cm.exception.code, "unknown_tag")
        self.assertEqual(cm.exception.endpoint, self.fake.url)
        with self.assertRaises(lc.InvalidTagError):
            c.next_id("")

    def test_token_is_sent(self):
        self.fake.token = "a token of the id routes"
        c = self.client(token=self.fake.token)
        self.assertEqual(c.next_id("orders"), 1)
        self.assertIsInstance(c.snowflake(), int)
        without = self.client(backoff_min=0.01, backoff_max=0.02)
        with self.assertRaises(lc.LeafError) as cm:
            without.next_id("orders")
        self.assertEqual(cm.exception.status, 401)

    def test_error_answers(self):
        cases = [
            (503, {"error": {"code": "unavailable", "message": "m"}}, lc.UnavailableError),
            (500, {"error": {"code": "tag_misconfigured", "message": "m"}}, lc.TagMisconfiguredError),
            (410, {"error": {"code": "tag_exhausted", "message": "m"}}, lc.TagExhaustedError),
            (409, {"error": {"code": "not_numeric", "message": "m"}}, lc.NotNumericError),
            (502, "<html>bad gateway</html>", lc.UnavailableError),
            (404, "", lc.NotFoundError),
            (200, "not json", lc.UnavailableError),
        ]
        for status, body, cls in cases:
            with self.subTest(status=status, body=body):
                self.fake.error = (status, body)
                c = self.client(backoff_min=0.01, backoff_max=0.02)
                with self.assertRaises(cls):
                    c.next_id("orders")

    def test_failover_and_unavailable(self):
        dead = "http://127.0.0.1:9"  # discard: nothing answers HTTP there
        c = lc.Client([dead, self.fake.url], backoff_min=0.05, backoff_max=0.1)
        self.addCleanup(c.close)
        self.assertEqual(c.next_id("orders"), 1)
        d = lc.Client([dead], backoff_min=0.05, backoff_max=0.1)
        self.addCleanup(d.close)
        with self.assertRaises(lc.UnavailableError) as cm:
            d.next_id("orders")
        self.assertEqual(len(cm.exception.errors), 1)

    def test_snowflake(self):
        c = self.client(snowflake_batch=10)
        ids = [c.snowflake() for _ in range(55)]
        self.assertEqual(len(set(ids)), 55)
        self.assertEqual(ids, sorted(ids))
        self.assertGreaterEqual(self.fake.count("/api/snowflake/batch"), 6)

    def test_snowflake_layout(self):
        layout = self.client().snowflake_layout()
        self.assertEqual((layout.time_bits, layout.worker_bits, layout.sequence_bits, layout.epoch_ms),
                         (41, 10, 12, 1288834974657))
        made = datetime.datetime(2026, 12, 7, 10, 0, tzinfo=datetime.timezone.utc)
        lo, hi = layout.bounds(made, made + datetime.timedelta(hours=1))
        self.assertEqual(layout.decode(lo).time, made)
        self.assertEqual(layout.decode(hi).time_ms, int(made.timestamp() * 1000) + 3_600_000)
        with self.assertRaises(lc.InvalidRequestError):
            layout.bounds(made, made - datetime.timedelta(seconds=1))

    def test_worker(self):
        c = self.client()
        with c.lease_worker("proc-a", ttl=3.0) as w, c.lease_worker("proc-b", ttl=3.0) as w2:
            self.assertNotEqual(w.worker_id, w2.worker_id)
            ids = [w.next() for _ in range(20000)]
            self.assertEqual(ids, sorted(ids))
            self.assertEqual(len(set(ids)), 20000)
            parts = w.layout.decode(ids[0])
            self.assertEqual(parts.worker_id, w.worker_id)
            self.assertLess(abs(parts.time_ms - time.time() * 1000), 60_000)
            self.assertFalse(set(ids) & {w2.next() for _ in range(1000)})
            time.sleep(1.2)  # a renewal, every third of the TTL
            self.assertGreaterEqual(sum(r.startswith("PUT ") for r in self.fake.requests), 2)
            w.next()
        self.assertIn(w.worker_id, self.fake.released)
        with self.assertRaises(lc.ClientClosedError):
            w.next()

    def test_worker_lost(self):
        c = self.client()
        w = c.lease_worker("proc", ttl=3.0)
        with self.fake.lock:
            self.fake.leases[w.worker_id] = "taken by another"
        time.sleep(1.3)
        with self.assertRaises(lc.LeaseLostError):
            w.next()

    @unittest.skipUnless(hasattr(os, "fork"), "no os.fork here")
    def test_worker_forked(self):
        # The child of a fork makes no id with the parent's worker id.
        c = self.client()
        with c.lease_worker("parent", ttl=30.0) as w:
            w.next()
            r, wr = os.pipe()
            pid = os.fork()
            if pid == 0:
                try:
                    w.next()
                    os.write(wr, b"made an id")
                except lc.ClientClosedError:
                    os.write(wr, b"refused")
                os._exit(0)
            os.waitpid(pid, 0)
            self.assertEqual(os.read(r, 100), b"refused")
            w.next()  # the parent's goes on

    def test_layout_vectors(self):
        # The bounds and decodings of layouts.json, the server's.
        path = os.path.join(os.path.dirname(__file__), "..", "..", "conformance", "layouts.json")
        with open(path) as f:
            vectors = json.load(f)
        for v in vectors:
            layout = lc.SnowflakeLayout(**v["layout"])
            for b in v["bounds"]:
                if "lowest" in b:
                    self.assertEqual(layout.bounds(b["from_ms"], b["to_ms"]), (int(b["lowest"]), int(b["highest"])), (v["layout"], b))
                else:
                    with self.assertRaises(lc.InvalidRequestError):
                        layout.bounds(b["from_ms"], b["to_ms"])
            for d in v["decode"]:
                p = layout.decode(int(d["id"]))
                self.assertEqual((p.time_ms, p.worker_id, p.sequence), (d["time_ms"], d["worker_id"], d["sequence"]))

    def test_close(self):
        c = self.client()
        c.next_id("orders")
        c.snowflake()
        c.close()
        for call in (lambda: c.next_id("orders"), lambda: c.next_ids("orders", 2), c.snowflake,
                     lambda: c.sequence_next("inbox", "k")):
            with self.assertRaises(lc.ClientClosedError):
                call()
        c.close()  # a second close does nothing
        with lc.Client([self.fake.url]) as c2:
            c2.next_id("orders")
        with self.assertRaises(lc.ClientClosedError):
            c2.next_id("orders")

    @unittest.skipUnless(hasattr(os, "fork"), "no os.fork here")
    def test_a_forked_child_draws_its_own_ids(self):
        # A warm client: a range of 1,000 in use, snowflake ids buffered.
        c = self.client(min_range=1000, max_range=1000, snowflake_batch=100)
        before = [c.next_id("orders") for _ in range(10)] + [c.snowflake() for _ in range(5)]
        children = []
        for _ in range(3):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: draw, write the ids, leave without cleanup
                os.close(r)
                try:
                    ids = [c.next_id("orders") for _ in range(200)] + [c.snowflake() for _ in range(50)]
                    os.write(w, json.dumps(ids).encode())
                finally:
                    os._exit(0)
            os.close(w)
            children.append((pid, r))
        mine = [c.next_id("orders") for _ in range(200)] + [c.snowflake() for _ in range(50)]
        every = before + mine
        for pid, r in children:
            with os.fdopen(r, "rb") as f:
                got = json.loads(f.read() or b"[]")
            os.waitpid(pid, 0)
            self.assertEqual(len(got), 250, "a child drew nothing")
            every += got
        self.assertEqual(len(set(every)), len(every), "an id was drawn by two processes")
        self.assertEqual(self.fake.count("/api/segment/range/orders"), 4, "one range per process")

    def test_a_client_is_not_pickled(self):
        c = self.client()
        with self.assertRaisesRegex(TypeError, "make one in each process"):
            pickle.dumps(c)

    def test_config_is_checked(self):
        for kw in ({"min_range": 0}, {"max_range": lc.MAX_RANGE + 1}, {"min_range": 10, "max_range": 5},
                   {"request_timeout": 0}, {"backoff_min": 2, "backoff_max": 1}, {"snowflake_batch": 10001}):
            with self.subTest(kw=kw), self.assertRaises(ValueError):
                lc.Client([self.fake.url], **kw)
        for eps in ([], ["ftp://x"], ["http://"], ["http://x/?q=1"]):
            with self.subTest(eps=eps), self.assertRaises(ValueError):
                lc.Client(eps)

    def test_sequence_arguments_are_checked_without_a_request(self):
        c = self.client()
        for space, key, n, cls in (("", "k", 1, lc.InvalidSpaceError), ("s", "", 1, lc.InvalidKeyError),
                                   ("s", "k" * 257, 1, lc.InvalidKeyError), ("s", "\ud800", 1, lc.InvalidKeyError),
                                   ("s", "k", 0, lc.InvalidCountError), ("s", "k", 10001, lc.InvalidCountError)):
            with self.subTest(space=space, key=key[:5], n=n), self.assertRaises(cls):
                c.sequence_next(space, key, n)
        self.assertEqual(self.fake.count("/api/sequence/"), 0)

    def test_section_of_is_the_servers(self):
        # Values of the Go client's SectionOf, itself held to the server's.
        for key, s64, s7 in (("u42", 26, 0), ("k0", 14, 4), ("ключ/☃ 1", 30, 2), ("a", 12, 5)):
            self.assertEqual(lc.section_of(key, 64), s64, key)
            self.assertEqual(lc.section_of(key, 7), s7, key)

    def test_owners_keep_the_scheme_of_the_endpoint(self):
        from leaf_client._http import Endpoint
        from leaf_client.client import _routes_table
        answer = {"sections": 2, "scheme": "fnv1a64-mod", "version": "v1",
                  "members": ["10.0.0.7:8443", "10.0.0.8:8443"], "owners": [0, 1]}
        for base, want in (("https://leaf.example:8443/api", "https://10.0.0.7:8443"),
                           ("http://lb:8080", "http://10.0.0.7:8443")):
            with self.subTest(base=base):
                table = _routes_table(Endpoint(base), answer, None)
                self.assertIsNotNone(table)
                assert table is not None
                owner = table.owners[0]
                assert owner is not None
                self.assertEqual(owner.base, want)

    def test_every_code_has_a_class(self):
        for code, cls in lc.BY_CODE.items():
            self.assertTrue(issubclass(cls, lc.LeafError))
            self.assertEqual(cls.kind, code)


class BuildTest(unittest.TestCase):
    def test_wheel_holds_the_package(self):
        sys.path.insert(0, os.path.join(HERE, "..", "build_backend"))
        import leaf_build

        with tempfile.TemporaryDirectory() as d:
            name = leaf_build.build_wheel(d)
            with zipfile.ZipFile(os.path.join(d, name)) as z:
                names = z.namelist()
        self.assertTrue(name.startswith("leaf_client-") and name.endswith("-py3-none-any.whl"), name)
        for want in ("leaf_client/__init__.py", "leaf_client/client.py", "leaf_client/py.typed",
                     "leaf_client-%s.dist-info/licenses/LICENSE" % lc.__version__):
            self.assertIn(want, names)
        self.assertTrue(any(n.endswith(".dist-info/RECORD") for n in names))


if __name__ == "__main__":
    unittest.main()
