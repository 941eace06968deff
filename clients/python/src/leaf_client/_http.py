"""One leaf server as the client sees it: its connections and its health."""

from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
import urllib.parse
from typing import Any

from .errors import InternalError, LeafError, UnavailableError, error_answer

# Bound of what is read of an answer: a batch of 10,000 snowflake ids is
# about 240 KB of JSON.
MAX_BODY = 1 << 20

HEADER_ROUTES_VERSION = "Leaf-Routes-Version"

# Connections kept idle per endpoint.
_IDLE = 8


def parse_endpoint(s: object) -> str:
    """Checks a base URL and returns it without a trailing slash."""
    if not isinstance(s, str):
        raise TypeError(f"leaf client: endpoint {s!r}: want a str")
    u = urllib.parse.urlsplit(s)
    if u.scheme not in ("http", "https"):
        raise ValueError(f"leaf client: endpoint {s!r}: want an http:// or https:// URL")
    if not u.hostname:
        raise ValueError(f"leaf client: endpoint {s!r}: no host")
    if u.query or u.fragment or u.username or u.password:
        raise ValueError(f"leaf client: endpoint {s!r}: want a base URL without user, query or fragment")
    return s.rstrip("/")


class Endpoint:
    """A server: its base URL, a pool of keep-alive connections, and its
    health (failures in a row, and until when it is left out)."""

    def __init__(self, base: str, token: str | None = None) -> None:
        self.base = base
        self.token = token  # the bearer token of the id routes (leaf serve --id-token)
        u = urllib.parse.urlsplit(base)
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port
        self._prefix = u.path.rstrip("/")
        self._pool: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()  # protects the fields below and _pool
        self.failures = 0
        self.until = 0.0  # time.monotonic() until which it is left out
        self.last: LeafError | None = None  # its last failure

    # --- health -----------------------------------------------------------

    def usable(self, now: float) -> bool:
        with self._lock:
            return now >= self.until

    def answered(self) -> None:
        with self._lock:
            self.failures, self.until = 0, 0.0

    def failed(self, err: LeafError, now: float, lo: float, hi: float) -> None:
        """Leaves the endpoint out for a back-off that doubles with each
        failure in a row, with jitter (half to all of it), and at least the
        server's Retry-After."""
        with self._lock:
            self.failures += 1
            d = min(hi, lo * (1 << min(self.failures - 1, 32)))
            d = d / 2 + random.random() * d / 2
            if err.retry_after and err.retry_after > d:
                d = min(err.retry_after, hi)
            self.until, self.last = now + d, err

    def last_error(self) -> LeafError | None:
        with self._lock:
            return self.last

    # --- requests ---------------------------------------------------------

    def _connection(self, timeout: float) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._pool:
                conn = self._pool.pop()
                conn.timeout = timeout
                if conn.sock is not None:
                    conn.sock.settimeout(timeout)
                return conn, True
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=timeout), False

    def _release(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._pool) < _IDLE:
                self._pool.append(conn)
                return
        conn.close()

    def forget(self) -> None:
        """In the child of a fork: closes this process's copies of the
        parent's connections, which a close does without telling the
        server, and without taking the lock a parent's thread may have held
        at the fork."""
        pool, self._pool = self._pool, []
        for c in pool:
            if c.sock is not None:
                c.sock.close()

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, []
        for c in pool:
            c.close()

    def get(self, path: str, timeout: float, held_version: str | None = None,
            method: str = "GET", payload: bytes | None = None) -> tuple[Any, str | None]:
        """GETs path (or sends method with the JSON payload) and returns the
        decoded JSON (or, for a text answer, the text) and the
        Leaf-Routes-Version answered. Raises a LeafError: an error answer of
        the server, or no usable answer at all."""
        headers = {"Accept": "application/json"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if held_version:
            headers[HEADER_ROUTES_VERSION] = held_version
        for attempt in (0, 1):
            conn, reused = self._connection(timeout)
            try:
                conn.request(method, self._prefix + path, body=payload, headers=headers)
                resp = conn.getresponse()
                body = resp.read(MAX_BODY + 1)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                conn.close()
                if reused and attempt == 0:
                    continue  # the server closed an idle connection: try a new one
                raise self._transport_error(e, timeout) from e
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                raise self._transport_error(e, timeout) from e
            if resp.will_close or len(body) > MAX_BODY:
                conn.close()
            else:
                self._release(conn)
            break
        seen = resp.getheader(HEADER_ROUTES_VERSION)
        if not 200 <= resp.status < 300:
            code, message = None, body[:200].decode("utf-8", "replace")
            try:
                answer = json.loads(body)["error"]
                code, message = answer["code"], answer["message"]
            except (ValueError, KeyError, TypeError):
                pass
            retry_after = None
            ra = resp.getheader("Retry-After")
            if ra and ra.isdigit() and int(ra) > 0:
                retry_after = float(ra)
            err = error_answer(self.base, resp.status, code, message, retry_after)
            err.routes_version = seen
            raise err
        try:
            return json.loads(body), seen
        except ValueError as e:
            raise InternalError(f"{self.base}: 200: malformed answer: {e}", endpoint=self.base, status=200) from e

    def _transport_error(self, e: BaseException, timeout: float) -> UnavailableError:
        if isinstance(e, TimeoutError):
            text = f"no answer within {timeout:g}s (request_timeout)"
        elif isinstance(e, ConnectionRefusedError):
            text = "cannot connect: connection refused"
        elif isinstance(e, socket.gaierror):
            text = f"cannot connect: unknown host ({e.strerror})"
        else:
            text = str(e) or type(e).__name__
        return UnavailableError(f"{self.base}: {text}", endpoint=self.base)


def malformed(ep: Endpoint, what: str) -> InternalError:
    """An answer that is not what the API promises."""
    return InternalError(f"{ep.base}: 200: malformed answer: {what}", endpoint=ep.base, status=200)


def now() -> float:
    return time.monotonic()

