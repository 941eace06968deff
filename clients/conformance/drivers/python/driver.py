"""The conformance suite's driver of the Python client (leaf_client).

Reads one JSON request a line on stdin, runs it with the client, writes one
JSON answer a line on stdout (clients/conformance/README.md).
"""

import json
import os
import sys
import threading
import time

import leaf_client as lc

# The suite's error kinds, from the client's exception classes, most
# specific first.
KINDS = [(lc.ClientClosedError, "closed"), (lc.UnavailableError, "unavailable")] + [
    (cls, code) for code, cls in lc.BY_CODE.items() if code != "unavailable"
]


def kind_of(err):
    for cls, kind in KINDS:
        if isinstance(err, cls):
            return kind
    return "other"


def fail(err):
    return {"kind": kind_of(err), "message": str(err)}


def config(c):
    kw = {}
    for ms, name in (("request_timeout_ms", "request_timeout"), ("refill_interval_ms", "refill_interval"),
                     ("snowflake_max_age_ms", "snowflake_max_age"), ("backoff_min_ms", "backoff_min"),
                     ("backoff_max_ms", "backoff_max"), ("routes_interval_ms", "routes_interval")):
        if c.get(ms):
            kw[name] = c[ms] / 1000
    for name in ("min_range", "max_range", "snowflake_batch"):
        if c.get(name):
            kw[name] = c[name]
    if c.get("no_direct_sequences"):
        kw["direct_sequences"] = False
    return kw


class Draw:
    def __init__(self, client, r, count):
        self.stop = threading.Event()
        self.file = r["file"]
        self.errors = {}
        self.lock = threading.Lock()
        threads = max(r.get("threads", 1), 1)
        self.ids = [[] for _ in range(threads)]
        pace = r.get("pace", 0)
        tag = r["tag"]

        def run(ids):
            while count == 0 or len(ids) < count:
                if self.stop.is_set():
                    return
                try:
                    ids.append(client.next_id(tag))
                except lc.LeafError as e:
                    with self.lock:
                        k = kind_of(e)
                        self.errors[k] = self.errors.get(k, 0) + 1
                    time.sleep(0.001)
                    continue
                if pace and len(ids) % pace == 0:
                    time.sleep(0.001)

        self.threads = [threading.Thread(target=run, args=(ids,)) for ids in self.ids]
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join()
        with open(self.file, "w") as f:
            for ids in self.ids:
                f.writelines(f"{i}\n" for i in ids)
        return {"values": [], "drawn": sum(map(len, self.ids)), "errors": self.errors}


def fork_draw(take, children, n):
    """Forks children that each take n values while this process takes
    n too; returns every value of them all, or a child's error."""
    running = []
    for _ in range(children):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: no answer of its own on stdout, no cleanup
            os.close(r)
            try:
                try:
                    out = {"values": [str(take()) for _ in range(n)], "error": None}
                except lc.LeafError as e:
                    out = {"values": [], "error": fail(e)}
                os.write(w, json.dumps(out).encode())
            finally:
                os._exit(0)
        os.close(w)
        running.append((pid, r))
    a = {"values": [str(take()) for _ in range(n)], "error": None}
    for pid, r in running:
        with os.fdopen(r, "rb") as f:
            got = f.read()
        os.waitpid(pid, 0)
        child = json.loads(got) if got else {"values": [], "error": {"kind": "driver", "message": "a child died"}}
        a["values"] += child["values"]
        a["error"] = a["error"] or child["error"]
    return a


def main():
    clients = {}
    draw = None
    for line in sys.stdin:
        r = json.loads(line)
        op = r["op"]
        if op == "exit":
            break
        a = {"values": [], "error": None}
        try:
            if op == "client":
                clients[r["name"]] = lc.Client(r["endpoints"], **config(r.get("config") or {}))
            elif op == "draw_stop":
                a, draw = draw.finish(), None
            else:
                c = clients[r["client"]]
                n = r.get("n", 1)
                calls = {
                    "next": lambda: c.next_id(r["tag"]),
                    "snowflake": c.snowflake,
                    "seq_next": lambda: c.sequence_next(r["space"], r["key"], n),
                    "seq_current": lambda: c.sequence_current(r["space"], r["key"]),
                }
                if op in calls:
                    for _ in range(max(r.get("repeat", 1), 1)):
                        a["values"].append(str(calls[op]()))
                elif op == "next_ids" or op == "next_n":
                    a["values"] = [str(i) for i in c.next_ids(r["tag"], n)]
                elif op == "fork":
                    take = (lambda: c.next_id(r["tag"])) if r.get("tag") else c.snowflake
                    a = fork_draw(take, r["children"], max(r.get("repeat", 1), 1))
                elif op == "worker":
                    # repeat ids made here on a worker id leased for key, then released
                    with c.lease_worker(r.get("key") or "conformance", ttl=30.0) as w:
                        a["values"] = [str(w.next()) for _ in range(max(r.get("repeat", 1), 1))]
                elif op == "close":
                    c.close()
                elif op == "draw_start":
                    draw = Draw(c, r, 0)
                elif op == "draw":
                    draw = Draw(c, r, r["count"])
                    for t in draw.threads:
                        t.join()
                    a, draw = draw.finish(), None
                else:
                    a["error"] = {"kind": "driver", "message": "unknown op " + op}
        except lc.LeafError as e:
            a["error"] = fail(e)
        except Exception as e:  # a bug of the driver or the client
            a["error"] = {"kind": "driver", "message": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(a) + "\n")
        sys.stdout.flush()
    for c in clients.values():
        c.close()


if __name__ == "__main__":
    main()
