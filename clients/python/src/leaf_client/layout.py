"""Snowflake layouts: decoding ids and the ids of a span of time, without a call."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from .errors import InvalidIdError, InvalidRequestError

_UNIT_MS = {"ms": 1, "10ms": 10, "s": 1000}
_ORDERS = ("time,worker,sequence", "time,sequence,worker")


@dataclass(frozen=True)
class SnowflakeParts:
    """A snowflake id taken apart; ``time_ms`` is the start of its unit of
    time, in Unix milliseconds."""

    id: int
    time_ms: int
    worker_id: int
    sequence: int

    @property
    def time(self) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self.time_ms / 1000, tz=datetime.timezone.utc)


@dataclass(frozen=True)
class SnowflakeLayout:
    """How a server's snowflake ids are made (``Client.snowflake_layout()``,
    GET /api/snowflake/layout): the time since ``epoch_ms`` in ``time_unit``
    ("ms", "10ms" or "s") on top, then the worker id and the sequence in
    ``order``."""

    time_unit: str
    time_bits: int
    worker_bits: int
    sequence_bits: int
    order: str
    epoch_ms: int

    def __post_init__(self) -> None:
        n = self.time_bits + self.worker_bits + self.sequence_bits
        if self.time_unit not in _UNIT_MS:
            raise ValueError(f"time_unit {self.time_unit!r} is none of ms, 10ms, s")
        if min(self.time_bits, self.worker_bits, self.sequence_bits) < 1 or n not in (53, 63):
            raise ValueError(f"widths {self.time_bits}, {self.worker_bits}, {self.sequence_bits} do not make 63 or 53 bits")
        if self.order not in _ORDERS:
            raise ValueError(f"order {self.order!r} is none of {', '.join(_ORDERS)}")

    @classmethod
    def from_answer(cls, v: object) -> SnowflakeLayout:
        """The layout from the answer of GET /api/snowflake/layout."""
        if not isinstance(v, dict):
            raise ValueError("not an object")
        return cls(time_unit=_str(v, "time_unit"), time_bits=_int(v, "time_bits"), worker_bits=_int(v, "worker_bits"),
                   sequence_bits=_int(v, "sequence_bits"), order=_str(v, "order"), epoch_ms=_int(v, "epoch_ms"))

    @property
    def _shift(self) -> int:
        return self.worker_bits + self.sequence_bits

    @property
    def max_id(self) -> int:
        return (1 << (self.time_bits + self._shift)) - 1

    def decode(self, id: int) -> SnowflakeParts:
        """Takes an id of the layout apart, as GET /api/snowflake/decode does."""
        if not 0 <= id <= self.max_id:
            raise InvalidIdError(f"{id} is outside 0..{self.max_id}", code="invalid_id")
        worker_shift, seq_shift = self.sequence_bits, 0
        if self.order == "time,sequence,worker":
            worker_shift, seq_shift = 0, self.worker_bits
        return SnowflakeParts(
            id=id,
            time_ms=self.epoch_ms + (id >> self._shift) * _UNIT_MS[self.time_unit],
            worker_id=(id >> worker_shift) & ((1 << self.worker_bits) - 1),
            sequence=(id >> seq_shift) & ((1 << self.sequence_bits) - 1),
        )

    def bounds(self, start: datetime.datetime | int, end: datetime.datetime | int) -> tuple[int, int]:
        """The lowest and highest id that an id made at any instant from
        ``start`` to ``end`` (both included; aware datetimes or Unix
        milliseconds) can be, as GET /api/snowflake/bounds says: every id
        between them was made in a unit of time of the interval, widened to
        whole units, so ``id BETWEEN lo AND hi`` finds the rows made in it.
        An interval that ends before it begins, ends before the epoch or
        begins after the layout's end raises InvalidRequestError."""
        first_ms, last_ms = _ms(start), _ms(end)
        if last_ms < first_ms:
            raise InvalidRequestError(f"invalid interval of time: it ends at {last_ms}, before it begins at {first_ms}",
                                      code="invalid_request")
        unit = _UNIT_MS[self.time_unit]
        first, last = (first_ms - self.epoch_ms) // unit, (last_ms - self.epoch_ms) // unit
        max_time = (1 << self.time_bits) - 1
        if last < 0:
            raise InvalidRequestError(f"invalid interval of time: it ends at {last_ms}, before the epoch {self.epoch_ms}",
                                      code="invalid_request")
        if first > max_time:
            raise InvalidRequestError(f"invalid interval of time: it begins at {first_ms}, after the layout's time runs out",
                                      code="invalid_request")
        first, last = max(first, 0), min(last, max_time)
        return first << self._shift, (last << self._shift) | ((1 << self._shift) - 1)


def _ms(t: datetime.datetime | int) -> int:
    if isinstance(t, datetime.datetime):
        if t.tzinfo is None:
            raise ValueError("a naive datetime: give one with a time zone, or Unix milliseconds")
        delta = t - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        return (delta.days * 86_400_000_000 + delta.seconds * 1_000_000 + delta.microseconds) // 1000
    if isinstance(t, bool) or not isinstance(t, int):
        raise TypeError("a time is an aware datetime or an int of Unix milliseconds")
    return t


def _int(v: dict[str, object], k: str) -> int:
    x = v.get(k)
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError(f"{k} is not an integer")
    return x


def _str(v: dict[str, object], k: str) -> str:
    x = v.get(k)
    if not isinstance(x, str):
        raise ValueError(f"{k} is not a string")
    return x
