"""The leaf client: ids from ranges leased from leaf servers, in-process.

The behaviour is the Go client's (package client in the leaf repository;
docs/go-client.md), held to it by the conformance suite in
clients/conformance.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import urllib.parse
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from ._http import Endpoint, malformed, now, parse_endpoint
from .layout import SnowflakeLayout

if TYPE_CHECKING:
    from .worker import Worker
from .errors import (
    ClientClosedError,
    InvalidCountError,
    InvalidKeyError,
    InvalidSpaceError,
    InvalidTagError,
    LeafError,
    UnavailableError,
    fails_over,
)

MAX_RANGE = 1_000_000
"""The largest range a server hands out in one answer."""
MAX_SNOWFLAKE_BATCH = 10_000
MAX_N = 1_000_000
"""The largest n of next_ids."""
MAX_SEQUENCE_KEY = 256
MAX_SEQUENCE_BATCH = 10_000
MAX_INT64 = (1 << 63) - 1

# The load of the next range starts when a quarter of the current one is
# used, leaving three quarters of refill_interval for a request that may
# have to fail over.
_PREFETCH_QUARTER = 4

# With the GIL, next() of an itertools.count is one step that no other
# thread interleaves: the hot path needs no lock. A build without the GIL
# (3.13t) gets a counter under a lock.
_FREE_THREADED = hasattr(sys, "_is_gil_enabled") and not sys._is_gil_enabled()


class _LockedCount:
    __slots__ = ("_n", "_lock")

    def __init__(self, start: int) -> None:
        self._n, self._lock = start, threading.Lock()

    def __iter__(self) -> _LockedCount:
        return self

    def __next__(self) -> int:
        with self._lock:
            n = self._n
            self._n = n + 1
            return n


_count: Callable[[int], Iterator[int]] = _LockedCount if _FREE_THREADED else itertools.count


class _Span:
    """A range being handed out: ids start … end-1, taken from counter;
    trigger is the id whose take starts loading the next range. An id below
    limit needs nothing but its take: limit is trigger until the trigger
    is taken, then end; buf is the tag's buffer, once the span is one's."""

    __slots__ = ("counter", "start", "end", "size", "trigger", "limit", "buf")

    def __init__(self, start: int, size: int) -> None:
        self.counter = _count(start)
        self.start, self.size, self.end = start, size, start + size
        self.trigger = start + max(1, size // _PREFETCH_QUARTER) - 1 if size else -1
        self.limit = self.trigger
        self.buf: _TagBuffer | None = None


_EMPTY = _Span(0, 0)


class _TagBuffer:
    """One tag's double buffer: the current span, which the hot path reads,
    and the next one, loaded in the background before the current one runs
    out."""

    __slots__ = ("cur", "tag", "path", "cond", "next", "since", "taken", "taken_then", "size",
                 "short", "published", "running", "err", "round", "kick")

    def __init__(self, tag: str, size: int) -> None:
        self.cur = _EMPTY
        self.tag = tag
        self.path = "/api/segment/range/" + urllib.parse.quote(tag, safe="") + "?count="
        self.cond = threading.Condition()  # guards the fields below
        self.next: _Span | None = None
        self.since: float | None = None  # when the last load was planned
        self.taken = 0  # ids taken from spans no longer current
        self.taken_then = 0  # ids taken in all at the last plan
        self.size = size  # the size asked for last
        self.short = False  # a caller found no range since the last plan
        self.published = False  # in Client._tags
        self.running = False  # a load thread runs
        self.err: LeafError | None = None  # the last load round's error
        self.round = 0  # counts load rounds
        self.kick = threading.Event()  # a waiting caller asks a backing-off load to try now


class Client:
    """Hands out segment-mode ids of leaf from ranges it leases from the
    servers at ``endpoints``, and snowflake ids it fetches in batches.

    One client per process, shared by every thread: it is thread-safe.
    ``next_id(tag)`` costs about one ``next()`` of an ``itertools.count``;
    it waits for a server only on a tag's first call and when ranges run
    out faster than they are fetched. Close it (or use it as a context
    manager) to stop its background threads.

    Times are in seconds. ``min_range``/``max_range`` bound the ids asked
    for in one range, sized to last about ``refill_interval``; a failing
    endpoint is left out ``backoff_min`` doubling up to ``backoff_max``.
    ``direct_sequences=False`` sends every sequence call to ``endpoints``
    instead of the owners the routing tables name. ``token`` is the bearer
    token of the servers' id routes (``leaf serve --id-token``), sent with
    every request.
    """

    def __init__(self, endpoints: str | Sequence[str], *, request_timeout: float = 2.0,
                 min_range: int | None = None, max_range: int = MAX_RANGE, refill_interval: float = 1.0,
                 snowflake_batch: int = 100, snowflake_max_age: float = 1.0, backoff_min: float = 0.1,
                 backoff_max: float = 5.0, routes_interval: float = 2.0, direct_sequences: bool = True,
                 token: str | None = None) -> None:
        if isinstance(endpoints, str):
            endpoints = [endpoints]
        bases = [parse_endpoint(e) for e in endpoints]
        if not bases:
            raise ValueError("leaf client: no endpoints")
        if min_range is None:
            min_range = min(100, max_range)
        for name, v in (("request_timeout", request_timeout), ("refill_interval", refill_interval),
                        ("snowflake_max_age", snowflake_max_age), ("backoff_min", backoff_min),
                        ("backoff_max", backoff_max), ("routes_interval", routes_interval)):
            if not v > 0:
                raise ValueError(f"leaf client: {name} {v!r}: want a number of seconds above 0")
        for name, v, hi in (("min_range", min_range, MAX_RANGE), ("max_range", max_range, MAX_RANGE),
                            ("snowflake_batch", snowflake_batch, MAX_SNOWFLAKE_BATCH)):
            if not isinstance(v, int) or not 1 <= v <= hi:
                raise ValueError(f"leaf client: {name} {v!r}: want 1 to {hi}")
        if min_range > max_range:
            raise ValueError(f"leaf client: min_range {min_range} is above max_range {max_range}")
        if backoff_min > backoff_max:
            raise ValueError(f"leaf client: backoff_min {backoff_min} is above backoff_max {backoff_max}")
        self.request_timeout = request_timeout
        self.min_range, self.max_range = min_range, max_range
        self.refill_interval = refill_interval
        self.snowflake_batch, self.snowflake_max_age = snowflake_batch, snowflake_max_age
        self.backoff_min, self.backoff_max = backoff_min, backoff_max
        self.routes_interval = routes_interval
        self.direct_sequences = direct_sequences

        self._eps = [Endpoint(e, token) for e in bases]
        self._turn = itertools.count(1)  # round robin over _eps
        self._closed = False
        self._fresh(closed=False)
        _clients.add(self)

    def _fresh(self, *, closed: bool) -> None:
        """Sets the client's state with no range, snowflake id, thread or
        lock: when it is made, and in the child of a fork."""
        # Tags that have had a range, and their buffers; replaced whole when
        # one is added, and by {} at close.
        self._tags: dict[str, _TagBuffer] = {}
        # The hot path's map from tag to the span in use, kept by _set_span.
        self._spans: dict[str, _Span] = {}
        self._lock = threading.Lock()  # guards the fields below, and writes to _tags and _spans
        self._pending: dict[str, _TagBuffer] = {}  # tags waiting for their first range
        self._threads: set[threading.Thread] = set()
        self._closing = threading.Event()
        if closed:
            self._closing.set()
        self._flakes = _FlakePool()
        self._routes: dict[str, _SpaceRoutes] = {}

    def __reduce__(self) -> NoReturn:
        raise TypeError("leaf client: a Client cannot be pickled or sent to another process: "
                        "make one in each process")

    def _forget_parent(self) -> None:
        """Runs in the child of os.fork(): the ranges, snowflake ids and
        connections copied from the parent stay the parent's. The child
        starts with none, and leases ranges of its own on its first call;
        its locks are new, since a thread of the parent may have held one
        at the fork, and the parent's threads do not exist here."""
        self._fresh(closed=self._closing.is_set())
        eps = self._eps
        self._eps = [Endpoint(e.base, e.token) for e in eps]
        for e in eps:
            e.forget()

    # --- life -------------------------------------------------------------

    def close(self) -> None:
        """Stops the client: waiting callers and later calls get
        ClientClosedError, and the background threads end (a request in
        flight within request_timeout). The unused ids of the ranges are
        not handed back; they are lost, which costs only numbers."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            bufs = list(self._pending.values()) + list(self._tags.values())
            self._tags = {}
            self._spans = {}
            self._pending = {}
            threads = list(self._threads)
        self._closing.set()
        for b in bufs:
            b.kick.set()
            with b.cond:
                b.cond.notify_all()
        with self._flakes.cond:
            self._flakes.cond.notify_all()
        for t in threads:
            t.join(self.request_timeout * len(self._eps) + 1)
        for e in self._eps:
            e.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _spawn(self, f: Callable[..., None], *args: Any) -> bool:
        """Runs f in a thread of the client's own, unless it is closed."""
        with self._lock:
            if self._closed:
                return False
            t = threading.Thread(target=self._run, args=(f, args), daemon=True, name="leaf-client")
            self._threads.add(t)
        t.start()
        return True

    def _run(self, f: Callable[..., None], args: tuple[Any, ...]) -> None:
        try:
            f(*args)
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    # --- requests ---------------------------------------------------------

    def _get(self, op: str, path: str, held_version: str | None = None,
             method: str = "GET", payload: bytes | None = None) -> tuple[Any, str | None, Endpoint]:
        """Asks the endpoints in turn for path, starting at the next one in
        the rotation and skipping those backing off; an endpoint that gives
        no usable answer is left out for a while and the next one asked. An
        answer another server would give as well (a 4xx) is raised at once.
        Returns the decoded answer, the version answered and the endpoint."""
        eps = self._eps
        n = len(eps)
        first = next(self._turn) % n
        for i in range(n):
            e = eps[(first + i) % n]
            if not e.usable(now()):
                continue
            if self._closing.is_set():
                raise ClientClosedError("leaf client: closed")
            try:
                v, seen = e.get(path, self.request_timeout, held_version, method, payload)
            except LeafError as err:
                if not fails_over(err):
                    e.answered()
                    raise
                e.failed(err, now(), self.backoff_min, self.backoff_max)
                continue
            e.answered()
            return v, seen, e
        errs = [e.last_error() for e in eps]
        text = "; ".join(str(x) for x in errs if x is not None)
        raise UnavailableError(f"leaf client: {op}: no endpoint available" + (": " + text if text else ""),
                               errors=errs)

    def _retry_in(self) -> float:
        """How long until some endpoint's back-off ends, at least backoff_min."""
        t = now()
        d = self.backoff_max
        for e in self._eps:
            d = min(d, e.until - t)
        return max(d, self.backoff_min)

    # --- segment ids --------------------------------------------------------

    def next_id(self, tag: str) -> int:
        """Returns the next id of tag, an int.

        Ids come from a range buffered in the client: the call waits for a
        server only when the tag has no range left. Raises a LeafError:
        UnknownTagError, NotNumericError (a formatted or opaque tag),
        InvalidRequestError (an ordered tag), UnavailableError, ...
        """
        try:
            s = self._spans[tag]
        except KeyError:
            return self._next_slow(tag, None, 0)
        i = next(s.counter)
        if i < s.limit:
            return i
        return self._next_slow(tag, s, i)

    def _next_slow(self, tag: str, s: _Span | None, i: int) -> int:
        b = (s.buf if s is not None else None) or self._tags.get(tag) or self._buffer(tag)
        while True:
            if s is None:
                s = b.cur
                i = next(s.counter)
            if i < s.end:
                if i >= s.trigger:
                    # The trigger is taken: from now on, only the end.
                    s.limit = s.end
                    if i == s.trigger:
                        self._prefetch(b, s)
                if s is not b.cur or self._spans.get(tag) is not s:
                    self._set_span(b)
                return i
            self._advance(b, s)
            s = None

    def _set_span(self, b: _TagBuffer) -> None:
        """Makes the hot path find b's span in use, once b is published and
        while the client is open."""
        with self._lock:
            if b.published and not self._closed and self._tags.get(b.tag) is b:
                self._spans[b.tag] = b.cur

    def next_ids(self, tag: str, n: int) -> list[int]:
        """Returns a list of n ids of tag (0 <= n <= 1,000,000), increasing.
        They may come from several ranges, so they are not always
        consecutive."""
        if not isinstance(n, int) or not 0 <= n <= MAX_N:
            raise InvalidCountError(f"leaf client: {n!r} ids asked for, want 0 to {MAX_N}")
        b = self._tags.get(tag) or self._buffer(tag)
        ids: list[int] = []
        while len(ids) < n:
            s = b.cur
            first = next(s.counter)
            if first < s.end:
                want = min(n - len(ids), s.end - first)
                got = [first]
                got.extend(itertools.islice(s.counter, want - 1))
                ids.extend(x for x in got if x < s.end)
                if first <= s.trigger <= got[-1] and s.trigger in got:
                    self._prefetch(b, s)
                continue
            self._advance(b, s)
        if any(ids[i] > ids[i + 1] for i in range(len(ids) - 1)):
            ids.sort()
        return ids

    def _buffer(self, tag: str) -> _TagBuffer:
        """The tag's buffer, created unpublished when it has none."""
        if not isinstance(tag, str) or not tag:
            raise InvalidTagError(f"leaf client: tag {tag!r}: want a non-empty str")
        with self._lock:
            if self._closed:
                raise ClientClosedError("leaf client: closed")
            b = self._tags.get(tag) or self._pending.get(tag)
            if b is None:
                b = self._pending[tag] = _TagBuffer(tag, self.min_range)
            return b

    def _publish(self, b: _TagBuffer) -> None:
        with self._lock:
            if self._pending.get(b.tag) is b:
                del self._pending[b.tag]
            if self._closed or b.tag in self._tags:
                return
            self._tags = {**self._tags, b.tag: b}
            self._spans[b.tag] = b.cur

    def _unpend(self, b: _TagBuffer) -> None:
        with self._lock:
            if self._pending.get(b.tag) is b:
                del self._pending[b.tag]

    def _prefetch(self, b: _TagBuffer, s: _Span) -> None:
        with b.cond:
            if b.cur is s and b.next is None and not b.running:
                self._start_load(b, s.trigger - s.start + 1)

    def _advance(self, b: _TagBuffer, s: _Span) -> None:
        """Called by a take that found s used up: makes the next range
        current, waiting for its load if need be."""
        with b.cond:
            while True:
                if b.cur is not s:
                    return
                if b.next is not None:
                    b.taken += s.size
                    b.cur, b.next = b.next, None
                    self._set_span(b)
                    return
                if self._closing.is_set():
                    raise ClientClosedError("leaf client: closed")
                if s.size:
                    b.short = True
                if not b.running:
                    if not self._start_load(b, s.size):
                        raise ClientClosedError("leaf client: closed")
                else:
                    b.kick.set()
                rnd = b.round
                while b.round == rnd and not self._closing.is_set():
                    b.cond.wait(0.5)
                if self._closing.is_set():
                    raise ClientClosedError("leaf client: closed")
                if b.cur is s and b.next is None and b.err is not None:
                    raise b.err

    def _start_load(self, b: _TagBuffer, used: int) -> bool:
        """Plans the next range's size and starts the thread that loads it;
        called with b.cond held. False once the client is closed."""
        size = self._plan(b, used, now())
        b.running = True
        if not self._spawn(self._load, b, size):
            b.running = False
            return False
        return True

    def _plan(self, b: _TagBuffer, used: int, t: float) -> int:
        """Sizes the next range to last about refill_interval at the tag's
        recent rate, changing by a factor of 4 at most; a caller that had
        to wait doubles it at least."""
        total = b.taken + used
        size = b.size
        if b.since is not None:
            took, d = total - b.taken_then, t - b.since
            if took > 0 and d > 0:
                want = took / d * self.refill_interval
                size = int(min(max(want, b.size / 4), b.size * 4))
            if b.short:
                size = max(size, 2 * b.size)
        b.short = False
        b.since, b.taken_then = t, total
        b.size = min(max(size, self.min_range), self.max_range)
        return b.size

    def _load(self, b: _TagBuffer, size: int) -> None:
        """Loads b's next range; after a failed round it tries again when an
        endpoint's back-off ends, or at once when a caller waits, as long as
        the tag has a range in use."""
        op = f"range of {b.tag!r}"
        path = b.path + str(size)
        while True:
            b.kick.clear()
            err = None
            try:
                a, _, ep = self._get(op, path)
                span = _check_range(ep, a, b.tag, size)
            except LeafError as e:
                err = e
            with b.cond:
                if err is None:
                    span.buf = b
                    b.next = span
                b.err = err
                b.round += 1
                b.cond.notify_all()
                first = err is None and not b.published
                if first:
                    b.published = True
                retry = (err is not None and b.published and isinstance(err, UnavailableError)
                         and not self._closing.is_set())
                if not retry:
                    b.running = False
                published = b.published
            if first:
                self._publish(b)
                return
            if err is not None and not published:
                self._unpend(b)
                return
            if not retry:
                return
            b.kick.wait(self._retry_in())
            if self._closing.is_set():
                with b.cond:
                    b.running = False
                return

    # --- snowflake ids ------------------------------------------------------

    def snowflake_layout(self) -> SnowflakeLayout:
        """The layout of the servers' snowflake ids (GET /api/snowflake/layout):
        with it, ids are decoded and the bounds of a span of time computed
        without a call (SnowflakeLayout.decode, SnowflakeLayout.bounds)."""
        v, _, ep = self._get("snowflake layout", "/api/snowflake/layout")
        try:
            return SnowflakeLayout.from_answer(v)
        except ValueError as e:
            raise malformed(ep, str(e)) from None

    def lease_worker(self, holder: str, ttl: float = 30.0) -> Worker:
        """Leases a worker id of the fleet's for snowflake ids made in this
        process (POST /api/snowflake/leases) for ttl seconds (3 to 600),
        renewed in the background until ``close()``."""
        from .worker import Worker
        return Worker(self, holder, ttl)

    def snowflake(self) -> int:
        """Returns a snowflake id, an int, from a batch fetched ahead of
        time; never one older than snowflake_max_age."""
        p = self._flakes
        max_age = self.snowflake_max_age
        with p.cond:
            while True:
                if self._closing.is_set():
                    raise ClientClosedError("leaf client: closed")
                t = now()
                if not p.cur or t - p.cur_sent > max_age:
                    p.cur, p.cur_sent, p.next = p.next, p.next_sent, []
                    if t - p.cur_sent > max_age:
                        p.cur = []
                if p.cur:
                    id_ = p.cur.pop()
                    if not p.next and not p.running and (
                            2 * len(p.cur) < self.snowflake_batch or 2 * (t - p.cur_sent) > max_age):
                        self._fetch_flakes()
                    return id_
                if not p.running and not self._fetch_flakes():
                    raise ClientClosedError("leaf client: closed")
                rnd = p.round
                while p.round == rnd and not self._closing.is_set():
                    p.cond.wait(0.5)
                if self._closing.is_set():
                    raise ClientClosedError("leaf client: closed")
                if not p.next and p.err is not None:
                    raise p.err

    def _fetch_flakes(self) -> bool:
        p = self._flakes
        p.running = True
        if not self._spawn(self._fetch_flakes_run):
            p.running = False
            return False
        return True

    def _fetch_flakes_run(self) -> None:
        p = self._flakes
        sent = now()
        ids: list[int] = []
        err: LeafError | None = None
        try:
            a, _, ep = self._get("snowflake batch", f"/api/snowflake/batch?count={self.snowflake_batch}")
            ids = _check_flakes(ep, a, self.snowflake_batch)
            if now() - sent > self.snowflake_max_age:
                raise UnavailableError(f"leaf client: snowflake batch: the answer took longer than "
                                       f"snowflake_max_age {self.snowflake_max_age}s")
        except LeafError as e:
            err = e
        with p.cond:
            if err is None:
                ids.reverse()  # handed out with pop()
                p.next, p.next_sent = ids, sent
            p.err = err
            p.running = False
            p.round += 1
            p.cond.notify_all()

    # --- per-key sequences ----------------------------------------------------

    def sequence_next(self, space: str, key: str, n: int = 1) -> int:
        """Takes n consecutive numbers of key in the sequence space (1 <= n
        <= 10,000) and returns the first: they are first … first+n-1, above
        every number the key was given before. One request a call, to the
        owner of the key's section."""
        _check_sequence(space, key)
        if not isinstance(n, int) or not 1 <= n <= MAX_SEQUENCE_BATCH:
            raise InvalidCountError(f"leaf client: {n!r} numbers: want 1 to {MAX_SEQUENCE_BATCH}")
        path = (f"/api/sequence/next/{urllib.parse.quote(space, safe='')}/"
                f"{urllib.parse.quote(key, safe='')}?count={n}")
        a, ep = self._sequence_get("sequence next", space, key, path)
        return _check_seqs(ep, a, n)

    def sequence_current(self, space: str, key: str) -> int:
        """Returns the last number issued to key, without taking one."""
        _check_sequence(space, key)
        path = f"/api/sequence/current/{urllib.parse.quote(space, safe='')}/{urllib.parse.quote(key, safe='')}"
        a, ep = self._sequence_get("sequence current", space, key, path)
        if not isinstance(a, int) or isinstance(a, bool) or a < 0:
            raise malformed(ep, f"{a!r} is not a sequence number")
        return a

    def _sequence_get(self, op: str, space: str, key: str, path: str) -> tuple[Any, Endpoint]:
        if self._closing.is_set():
            raise ClientClosedError("leaf client: closed")
        if not self.direct_sequences:
            a, _, ep = self._get(op, path)
            return a, ep
        sr = self._routes.get(space)
        if sr is None:
            sr = self._routes.setdefault(space, _SpaceRoutes())
        t = sr.table
        held = None
        if t is None:
            self._refresh_routes(space, sr)
        else:
            held = t.version
        owner = t.owner_of(key) if t is not None else None
        if owner is not None and owner.usable(now()):
            try:
                a, seen = owner.get(path, self.request_timeout, held)
            except LeafError as err:
                if not fails_over(err):
                    owner.answered()
                    self._note_version(space, sr, t, getattr(err, "routes_version", None))
                    raise
                owner.failed(err, now(), self.backoff_min, self.backoff_max)
                self._refresh_routes(space, sr)
            else:
                owner.answered()
                self._note_version(space, sr, t, seen)
                return a, owner
        try:
            a, seen, ep = self._get(op, path, held)
        except LeafError as err:
            self._note_version(space, sr, t, getattr(err, "routes_version", None))
            raise
        self._note_version(space, sr, t, seen)
        return a, ep

    def _note_version(self, space: str, sr: _SpaceRoutes, t: _RouteTable | None, seen: str | None) -> None:
        if t is not None and seen and seen != t.version:
            self._refresh_routes(space, sr)

    def _refresh_routes(self, space: str, sr: _SpaceRoutes) -> None:
        """Fetches the space's table in the background, unless a fetch runs
        or one started less than routes_interval ago."""
        t = now()
        with sr.lock:
            if sr.fetching or (sr.last is not None and t - sr.last < self.routes_interval):
                return
            sr.fetching, sr.last = True, t
        if not self._spawn(self._fetch_routes, space, sr):
            with sr.lock:
                sr.fetching = False

    def _fetch_routes(self, space: str, sr: _SpaceRoutes) -> None:
        try:
            path = "/api/sequence/routes/" + urllib.parse.quote(space, safe="")
            eps = self._eps
            first = next(self._turn) % len(eps)
            for i in range(len(eps)):
                e = eps[(first + i) % len(eps)]
                if not e.usable(now()) or self._closing.is_set():
                    continue
                try:
                    a, _ = e.get(path, self.request_timeout)
                except LeafError as err:
                    if fails_over(err):
                        continue
                    return
                table = _routes_table(e, a, sr.table)
                if table is not None:
                    sr.table = table
                return
        finally:
            with sr.lock:
                sr.fetching = False


_clients: weakref.WeakSet[Client] = weakref.WeakSet()
"""Every client of the process, for the child of a fork."""


def _after_fork_in_child() -> None:
    for c in list(_clients):
        c._forget_parent()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _FlakePool:
    """The snowflake ids fetched and not yet handed out: the batch in use
    and the one fetched after it, each stamped with when its request was
    sent."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.cur: list[int] = []
        self.cur_sent = 0.0
        self.next: list[int] = []
        self.next_sent = 0.0
        self.running = False
        self.err: LeafError | None = None
        self.round = 0


class _RouteTable:
    __slots__ = ("version", "owners")

    def __init__(self, version: str, owners: list[Endpoint | None]) -> None:
        self.version, self.owners = version, owners

    def owner_of(self, key: str) -> Endpoint | None:
        return self.owners[section_of(key, len(self.owners))]


class _SpaceRoutes:
    def __init__(self) -> None:
        self.table: _RouteTable | None = None
        self.lock = threading.Lock()
        self.fetching = False
        self.last: float | None = None


ROUTE_SCHEME = "fnv1a64-mod"


def section_of(key: str, sections: int) -> int:
    """The section of key: the 64-bit FNV-1a hash of its UTF-8 bytes modulo
    sections, as the server computes it."""
    h = 14695981039346656037
    for c in key.encode():
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h % sections


def _routes_table(ep: Endpoint, a: Any, old: _RouteTable | None) -> _RouteTable | None:
    try:
        sections, scheme, version = a["sections"], a["scheme"], a["version"]
        members, owners = a["members"], a["owners"]
        ok = (isinstance(sections, int) and sections >= 1 and isinstance(owners, list)
              and len(owners) == sections and version and scheme and isinstance(members, list)
              and all(isinstance(o, int) and -1 <= o < len(members) for o in owners))
    except (KeyError, TypeError):
        ok = False
    if not ok:
        return None
    table: list[Endpoint | None] = [None] * sections
    # The owners are called with the scheme of the endpoint that told the
    # table: a client given https:// endpoints never calls one in clear.
    url_scheme = ep.base.split("://", 1)[0]
    if scheme == ROUTE_SCHEME:
        known = {e.base: e for e in (old.owners if old else []) if e is not None}
        for i, o in enumerate(owners):
            if o < 0:
                continue
            base = url_scheme + "://" + members[o]
            if base not in known:
                known[base] = Endpoint(base, ep.token)
            table[i] = known[base]
    return _RouteTable(version, table)


def _check_range(ep: Endpoint, a: Any, tag: str, asked: int) -> _Span:
    try:
        start, count, got_tag = int(a["start"]), a["count"], a["tag"]
    except (KeyError, TypeError, ValueError):
        raise malformed(ep, f"{str(a)[:80]} is not a range") from None
    if got_tag != tag:
        raise malformed(ep, f"a range of tag {got_tag!r}, asked for {tag!r}")
    if not isinstance(count, int) or not 1 <= count <= asked or start < 1 or start > MAX_INT64 - count + 1:
        raise malformed(ep, f"a range of {count!r} ids from {start}, asked for {asked}")
    return _Span(start, count)


def _check_flakes(ep: Endpoint, a: Any, asked: int) -> list[int]:
    try:
        ids = [int(x) for x in a["ids"]]
    except (KeyError, TypeError, ValueError):
        raise malformed(ep, "not a batch of snowflake ids") from None
    if not 1 <= len(ids) <= asked or any(not 1 <= x <= MAX_INT64 for x in ids):
        raise malformed(ep, f"{len(ids)} snowflake ids, asked for {asked}")
    return ids


def _check_seqs(ep: Endpoint, a: Any, asked: int) -> int:
    try:
        seqs = [int(x) for x in a["seqs"]]
    except (KeyError, TypeError, ValueError):
        raise malformed(ep, "not a batch of sequence numbers") from None
    if len(seqs) != asked or seqs[0] < 1 or any(seqs[i] != seqs[0] + i for i in range(len(seqs))):
        raise malformed(ep, f"sequence numbers {seqs[:5]} are not {asked} consecutive positive numbers")
    return seqs[0]


def _check_sequence(space: str, key: object) -> None:
    if not isinstance(space, str) or not space:
        raise InvalidSpaceError(f"leaf client: sequence space {space!r}: want a non-empty str")
    try:
        size = len(key.encode()) if isinstance(key, str) else 0
    except UnicodeEncodeError:
        size = 0
    if not 1 <= size <= MAX_SEQUENCE_KEY:
        raise InvalidKeyError(f"leaf client: sequence key {key!r:.40}: want 1 to {MAX_SEQUENCE_KEY} bytes of UTF-8")


__all__ = ["Client", "MAX_N", "MAX_RANGE", "MAX_SEQUENCE_BATCH", "MAX_SEQUENCE_KEY", "section_of"]
