"""leaf_client: the Python client of leaf, the distributed ID service.

It leases ranges of ids from leaf servers and hands them out in-process, so
that an id costs a fifth of a microsecond instead of an HTTP round trip::

    import leaf_client

    client = leaf_client.Client(["http://leaf-1:8080", "http://leaf-2:8080"])
    order_id = client.next_id("orders")          # an int
    ids = client.next_ids("orders", 100)         # a list of ints, increasing
    flake = client.snowflake()                   # a snowflake id
    seq = client.sequence_next("inbox", "u42")   # a per-key sequence number
    client.close()

Standard library only; thread-safe. The behaviour is the Go client's (the
leaf repository's docs/go-client.md and docs/clients.md).
"""

from .layout import SnowflakeLayout, SnowflakeParts
from .worker import Worker, WorkerNotRenewedError
from .client import MAX_N, MAX_RANGE, MAX_SEQUENCE_BATCH, MAX_SEQUENCE_KEY, Client, section_of
from .errors import (
    BY_CODE,
    ClientClosedError,
    FormatFixedError,
    InternalError,
    InvalidCountError,
    InvalidFormatError,
    InvalidIdError,
    InvalidKeyError,
    InvalidRequestError,
    InvalidSpaceError,
    InvalidTagError,
    LeafError,
    LeaseLostError,
    MethodNotAllowedError,
    NotFoundError,
    NotNumericError,
    PeriodClosedError,
    SequenceExhaustedError,
    SequenceFullError,
    SpaceExistsError,
    StoreNotDurableError,
    TagBoundReachedError,
    TagExhaustedError,
    TagExistsError,
    TagMisconfiguredError,
    UnauthorizedError,
    UnavailableError,
    UnknownSpaceError,
    UnknownTagError,
)

__version__ = "0.1.0"

__all__ = [
    "BY_CODE", "MAX_N", "MAX_RANGE", "MAX_SEQUENCE_BATCH", "MAX_SEQUENCE_KEY", "Client",
    "ClientClosedError", "FormatFixedError", "InternalError", "InvalidCountError", "InvalidFormatError",
    "InvalidIdError", "InvalidKeyError", "InvalidRequestError", "InvalidSpaceError", "InvalidTagError",
    "LeafError", "LeaseLostError", "MethodNotAllowedError", "NotFoundError", "NotNumericError", "PeriodClosedError",
    "SequenceExhaustedError", "SequenceFullError", "SnowflakeLayout", "SnowflakeParts", "SpaceExistsError", "StoreNotDurableError", "TagBoundReachedError", "TagExhaustedError",
    "TagExistsError", "TagMisconfiguredError", "UnauthorizedError", "UnavailableError",
    "UnknownSpaceError", "UnknownTagError", "Worker", "WorkerNotRenewedError", "section_of",
]
