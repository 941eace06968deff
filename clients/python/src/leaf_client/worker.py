"""A worker id of the fleet's, leased for snowflake ids made in this process."""

from __future__ import annotations

import json
import os
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any

from .errors import ClientClosedError, LeafError, LeaseLostError, UnavailableError
from .layout import SnowflakeLayout, _UNIT_MS

if TYPE_CHECKING:
    from .client import Client


class WorkerNotRenewedError(UnavailableError):
    """No renewal of the worker lease succeeded within its TTL less the
    margin: ids resume once one does."""


_workers: weakref.WeakSet[Worker] = weakref.WeakSet()


class Worker:
    """A worker id of the fleet's (``Client.lease_worker``), from the pool the
    servers lease their own from: no other generator of the fleet makes ids
    with it meanwhile. ``next()`` makes snowflake ids of the fleet's layout in
    memory. The lease is renewed by a daemon thread every third of the TTL,
    each renewal recording a reserve (now plus the TTL less a fifth of it)
    before ids are made up to it; no id is made once a renewal was refused
    (LeaseLostError) or none succeeded within the TTL less the margin. After
    ``os.fork()`` the child's copy makes no id: the parent keeps the id, and
    the child leases its own. ``worker_id``, ``floor_ms`` and ``valid()`` give
    another library its worker id. Thread-safe."""

    def __init__(self, client: Client, holder: str, ttl: float) -> None:
        self._client = client
        self._ttl = ttl
        self._margin = ttl / 5
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pid = os.getpid()
        start = time.time()
        reserve = int((start + ttl - self._margin) * 1000)
        a = self._call("lease a worker id", "POST", "/api/snowflake/leases",
                       {"holder": holder, "ttl_ms": int(ttl * 1000), "reserve_ms": reserve})
        self.worker_id: int = a["worker_id"]
        self._token: str = a["lease"]
        self.layout = SnowflakeLayout.from_answer(a["layout"])
        self.floor_ms: int = a["floor_ms"]
        self._reserve: int = a["reserve_ms"]
        self._until = start + ttl - self._margin
        self._lost: LeafError | None = None
        self._unit_ms = _UNIT_MS[self.layout.time_unit]
        self._last = self._unit_of(self.floor_ms)
        self._seq = 1 << self.layout.sequence_bits  # the floor's unit is spent
        _workers.add(self)
        self._thread = threading.Thread(target=self._renew_loop, name="leaf-worker-renew", daemon=True)
        self._thread.start()

    def _call(self, op: str, method: str, path: str, body: dict[str, Any]) -> Any:
        v, _, _ = self._client._get(op, path, None, method, json.dumps(body).encode())
        return v

    def _unit_of(self, ms: int) -> int:
        return (ms - self.layout.epoch_ms) // self._unit_ms

    def _forget_parent(self) -> None:
        self._lost = ClientClosedError("leaf client: a worker of the parent process, not this child's")

    def valid(self) -> None:
        """Raises unless the lease lets this process make ids now."""
        with self._lock:
            self._valid_locked(time.time())

    def _valid_locked(self, now: float) -> None:
        if self._lost is not None:
            raise self._lost
        if os.getpid() != self._pid:
            raise ClientClosedError("leaf client: a worker of the parent process, not this child's")
        if now >= self._until:
            raise WorkerNotRenewedError("leaf client: worker lease not renewed in time")

    def next(self) -> int:
        """A snowflake id of the fleet's layout with this worker id: above
        every one it made, after the floor, within the reserve. Waits for the
        next unit of time when the current one has no sequence number left."""
        bits = self.layout.sequence_bits
        while True:
            with self._lock:
                now = time.time()
                self._valid_locked(now)
                ms = int(now * 1000)
                unit = self._unit_of(ms)
                if unit > self._unit_of(self._reserve):
                    raise WorkerNotRenewedError("leaf client: worker lease not renewed in time")
                if unit > self._last:
                    self._last, self._seq = unit, 0
                if self._seq < 1 << bits:
                    seq, self._seq = self._seq, self._seq + 1
                    return self._compose(self._last, seq)
                wait = (self.layout.epoch_ms + (self._last + 1) * self._unit_ms - ms) / 1000
            if wait > 1:
                raise UnavailableError(f"leaf client: the clock is {wait:.3f}s behind the worker's last id or floor")
            time.sleep(max(wait, 0))

    def _compose(self, unit: int, seq: int) -> int:
        shift = self.layout.worker_bits + self.layout.sequence_bits
        if self.layout.order == "time,sequence,worker":
            return unit << shift | seq << self.layout.worker_bits | self.worker_id
        return unit << shift | self.worker_id << self.layout.sequence_bits | seq

    def _renew_loop(self) -> None:
        every = self._ttl / 3
        wait = every
        while not self._stop.wait(wait):
            if os.getpid() != self._pid:
                return
            start = time.time()
            reserve = int((start + self._ttl - self._margin) * 1000)
            try:
                a = self._call("renew a worker lease", "PUT", f"/api/snowflake/leases/{self.worker_id}",
                               {"lease": self._token, "ttl_ms": int(self._ttl * 1000), "reserve_ms": reserve})
            except LeaseLostError as e:
                with self._lock:
                    self._lost = e
                return
            except LeafError:
                wait = min(every, 1.0)  # try again soon
                continue
            with self._lock:
                self._reserve = max(self._reserve, a["reserve_ms"])
                self._until = start + self._ttl - self._margin
            wait = every

    def close(self) -> None:
        """Stops renewing and releases the lease, recording the last time an
        id was made at; no id is made after it."""
        if os.getpid() != self._pid:
            return  # the parent's lease is the parent's to release
        self._stop.set()
        self._thread.join()
        with self._lock:
            if isinstance(self._lost, ClientClosedError):
                return
            last = max(self.layout.epoch_ms + (self._last + 1) * self._unit_ms - 1, self.floor_ms)
            self._lost = ClientClosedError("leaf client: the worker was closed")
        self._call("release a worker lease", "DELETE", f"/api/snowflake/leases/{self.worker_id}",
                   {"lease": self._token, "last_ms": last})

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _after_fork_in_child() -> None:
    for w in list(_workers):
        w._forget_parent()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
