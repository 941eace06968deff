"""Ids per second of leaf_client in-process, beside a baseline in the same
run: a counter under a threading.Lock, the cheapest thread-safe counter of
plain Python. Needs a leaf server with the tag (ranges of up to 1,000,000
ids, so that requests do not count):

    python3 clients/python/bench.py http://127.0.0.1:8080 orders
"""

import sys
import threading
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/src")
import leaf_client  # noqa: E402

N = 1_000_000


class LockedCounter:
    def __init__(self):
        self.lock = threading.Lock()
        self.n = 0

    def next(self):
        with self.lock:
            self.n += 1
            return self.n


def rate(f, threads):
    """Ids per second of f() called N times on each of threads threads."""
    def run():
        for _ in range(N):
            f()

    ts = [threading.Thread(target=run) for _ in range(threads)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return N * threads / (time.perf_counter() - t0)


def main():
    endpoint, tag = sys.argv[1], sys.argv[2]
    c = leaf_client.Client([endpoint], min_range=1_000_000)
    for _ in range(N):  # warm up: the first ranges are fetched
        c.next_id(tag)
    counter = LockedCounter()
    print(f"Python {sys.version.split()[0]}, {N:,} ids a thread")
    nxt = c.next_id
    for threads in (1, 2):
        # Interleaved, three rounds each; the median of each is reported.
        bases, gots = [], []
        for _ in range(3):
            bases.append(rate(counter.next, threads))
            gots.append(rate(lambda: nxt(tag), threads))
        base, got = sorted(bases)[1], sorted(gots)[1]
        print(f"{threads} thread(s): leaf_client.next_id {got / 1e6:.2f} M/s; "
              f"counter under a lock {base / 1e6:.2f} M/s; ratio {got / base:.2f}")
    c.close()


if __name__ == "__main__":
    main()
