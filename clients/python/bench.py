"""Ids per second of leaf_client in-process, beside the bare counters of
Python in the same run: next() of an itertools.count and x += 1, each in the
same loop as the client's call. Needs a leaf server with the tag (ranges of
up to 1,000,000 ids, so that requests do not count):

    python3 clients/python/bench.py http://127.0.0.1:8080 orders

Five rounds, interleaved; the median of each is printed, with the ratios.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/src")
import leaf_client  # noqa: E402

N = 2_000_000
ROUNDS = 5


def next_id(c: leaf_client.Client, tag: str) -> float:
    nxt = c.next_id
    t0 = time.perf_counter()
    for _ in range(N):
        nxt(tag)
    return N / (time.perf_counter() - t0)


def count() -> float:
    c = itertools.count()
    t0 = time.perf_counter()
    for _ in range(N):
        next(c)
    return N / (time.perf_counter() - t0)


def add() -> float:
    x = 0
    t0 = time.perf_counter()
    for _ in range(N):
        x += 1
    return N / (time.perf_counter() - t0)


def main() -> None:
    endpoint, tag = sys.argv[1], sys.argv[2]
    with leaf_client.Client([endpoint], min_range=1_000_000, max_range=1_000_000) as c:
        next_id(c, tag)  # warm up: the first ranges are fetched
        got: dict[str, list[float]] = {"next_id": [], "count": [], "add": []}
        for _ in range(ROUNDS):
            got["next_id"].append(next_id(c, tag))
            got["count"].append(count())
            got["add"].append(add())
    m = {k: statistics.median(v) for k, v in got.items()}
    print(f"Python {sys.version.split()[0]}, {N:,} a round, median of {ROUNDS}: "
          f"leaf_client.next_id {m['next_id'] / 1e6:.2f} M/s; next(itertools.count()) {m['count'] / 1e6:.2f} M/s "
          f"(ratio {m['next_id'] / m['count']:.2f}); x += 1 {m['add'] / 1e6:.2f} M/s (ratio {m['next_id'] / m['add']:.2f})")


if __name__ == "__main__":
    main()
