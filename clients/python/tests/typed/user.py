"""A user's typed code against leaf_client: `mypy --strict` checks it with
the package (make clients-python-types), so every call a user makes has
the types the package declares, not Any."""

from __future__ import annotations

import datetime

import leaf_client


def order_ids(client: leaf_client.Client, n: int) -> list[int]:
    first: int = client.next_id("orders")
    rest: list[int] = client.next_ids("orders", n)
    return [first, *rest]


def stamp(client: leaf_client.Client) -> tuple[int, int, int]:
    flake: int = client.snowflake()
    seq: int = client.sequence_next("inbox", "u42", 2)
    last: int = client.sequence_current("inbox", "u42")
    return flake, seq, last


def made_today(client: leaf_client.Client, day: datetime.date) -> tuple[int, int]:
    layout: leaf_client.SnowflakeLayout = client.snowflake_layout()
    start = datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.timezone.utc)
    lo, hi = layout.bounds(start, start + datetime.timedelta(days=1) - datetime.timedelta(milliseconds=1))
    parts: leaf_client.SnowflakeParts = layout.decode(lo)
    assert parts.time == start
    return lo, hi


def retryable(err: leaf_client.LeafError) -> bool:
    if isinstance(err, leaf_client.UnavailableError):
        causes: list[leaf_client.LeafError | None] = err.errors
        return all(c is None or c.status is None or c.status >= 500 for c in causes)
    status: int | None = err.status
    code: str | None = err.code
    return status == 429 and code is None


def main() -> None:
    with leaf_client.Client(["http://127.0.0.1:8080"], request_timeout=0.5, min_range=10) as client:
        try:
            print(order_ids(client, 3), stamp(client))
        except leaf_client.LeafError as err:
            print(retryable(err), err.kind, err.endpoint)
