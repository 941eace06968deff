"""Errors of the leaf client: one class per error code of the server.

Every error the client raises is a :class:`LeafError`. Each error code of the
server's table (docs/http-api.md, "Errors") has its subclass, so that a caller
catches what it can handle::

    try:
        client.next_id("orders")
    except leaf_client.UnknownTagError:
        ...                       # the tag does not exist: no retry helps
    except leaf_client.UnavailableError:
        ...                       # no server answered: retrying later may help

An error answer carries the endpoint, the HTTP status, the server's code and
its message. Arguments the client refuses before any request (an empty tag, a
count out of bounds) raise the same classes, which are also ValueErrors.
"""

from __future__ import annotations

from collections.abc import Iterable


class LeafError(Exception):
    """An error of the leaf client.

    ``kind`` is the error code the class stands for ("unknown_tag", ...);
    ``code`` is the code the server sent, if any, ``status`` its HTTP
    status (None when no answer came), ``endpoint`` the server asked, and
    ``retry_after`` its Retry-After in seconds, if it sent one.
    """

    kind = "leaf_error"

    def __init__(self, message: str, *, endpoint: str | None = None, status: int | None = None,
                 code: str | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.endpoint = endpoint
        self.status = status
        self.code = code
        self.retry_after = retry_after
        self.routes_version: str | None = None  # the Leaf-Routes-Version answered with it


class InvalidTagError(LeafError, ValueError):
    kind = "invalid_tag"


class InvalidIdError(LeafError, ValueError):
    kind = "invalid_id"


class InvalidCountError(LeafError, ValueError):
    kind = "invalid_count"


class InvalidRequestError(LeafError, ValueError):
    kind = "invalid_request"


class UnauthorizedError(LeafError):
    kind = "unauthorized"


class UnknownTagError(LeafError, LookupError):
    kind = "unknown_tag"


class NotFoundError(LeafError, LookupError):
    kind = "not_found"


class MethodNotAllowedError(LeafError):
    kind = "method_not_allowed"


class TagExistsError(LeafError):
    kind = "tag_exists"


class TagExhaustedError(LeafError):
    """The tag has issued its last id (its max_id is the int64 maximum)."""

    kind = "tag_exhausted"


class TagBoundReachedError(LeafError):
    """The tag has issued the last id of the bound it declared (its max)."""

    kind = "tag_bound_reached"


class LeaseLostError(LeafError):
    """The worker lease renewed or released is no longer the holder's: stop
    making ids with it and acquire another."""

    kind = "lease_lost"


class TagMisconfiguredError(LeafError):
    """The tag's row has a step below 1: an operator must fix it."""

    kind = "tag_misconfigured"


class InternalError(LeafError):
    """A server's bug, or an answer that is not what the API promises."""

    kind = "internal"


class InvalidFormatError(LeafError, ValueError):
    kind = "invalid_format"


class FormatFixedError(LeafError):
    kind = "format_fixed"


class NotNumericError(LeafError):
    """Ranges of a formatted or opaque tag: its ids come one at a time from the server."""

    kind = "not_numeric"


class PeriodClosedError(LeafError):
    kind = "period_closed"


class SequenceFullError(LeafError):
    kind = "sequence_full"


class InvalidSpaceError(LeafError, ValueError):
    kind = "invalid_space"


class InvalidKeyError(LeafError, ValueError):
    kind = "invalid_key"


class UnknownSpaceError(LeafError, LookupError):
    kind = "unknown_space"


class SpaceExistsError(LeafError):
    kind = "space_exists"


class SequenceExhaustedError(LeafError):
    kind = "sequence_exhausted"


class UnavailableError(LeafError):
    """No server could serve the call: retrying later may succeed.

    It is the code ``unavailable``, and every failure to reach a server.
    Raised by a call that no endpoint answered usably, ``errors`` holds the
    last error of each endpoint (None for one that never failed), in the
    order configured.
    """

    kind = "unavailable"

    def __init__(self, message: str, *, errors: Iterable[LeafError | None] = (), endpoint: str | None = None,
                 status: int | None = None, code: str | None = None, retry_after: float | None = None) -> None:
        super().__init__(message, endpoint=endpoint, status=status, code=code, retry_after=retry_after)
        self.errors = list(errors)


class StoreNotDurableError(UnavailableError):
    """The server takes numbers only from a database that keeps every commit
    it acknowledged (``leaf serve --require-durable``), and its database's
    settings say it can forget one; the message names the setting. Another
    server, on another store, may answer, so it is also an UnavailableError."""

    kind = "store_not_durable"


class ClientClosedError(LeafError):
    """The client was closed."""

    kind = "closed"


_CLASSES: tuple[type[LeafError], ...] = (
    InvalidTagError, InvalidIdError, InvalidCountError, InvalidRequestError, UnauthorizedError,
    UnknownTagError, NotFoundError, MethodNotAllowedError, TagExistsError, TagExhaustedError, TagBoundReachedError, LeaseLostError,
    TagMisconfiguredError, UnavailableError, StoreNotDurableError, InternalError, InvalidFormatError,
    FormatFixedError, NotNumericError, PeriodClosedError, SequenceFullError, InvalidSpaceError,
    InvalidKeyError, UnknownSpaceError, SpaceExistsError, SequenceExhaustedError,
)
BY_CODE: dict[str, type[LeafError]] = {cls.kind: cls for cls in _CLASSES}
"""The class of each error code of the server."""


def error_answer(endpoint: str, status: int, code: str | None, message: str,
                 retry_after: float | None = None) -> LeafError:
    """The error of an error answer: by its code when the server sent a
    known one, else by its status (a proxy's 502 is unavailable)."""
    cls = BY_CODE.get(code) if code else None
    if cls is None:
        if 200 <= status < 300:
            cls = InternalError
        elif status == 429 or status >= 500:
            cls = UnavailableError
        elif status == 404:
            cls = NotFoundError
        elif status in (401, 403):
            cls = UnauthorizedError
        else:
            cls = InvalidRequestError
    text = f"{endpoint}: {status} {code}: {message}" if code else f"{endpoint}: {status} {message}".rstrip()
    return cls(text, endpoint=endpoint, status=status, code=code, retry_after=retry_after)


def fails_over(err: LeafError) -> bool:
    """Whether another endpoint may answer where this one failed: no
    answer, a 429, an unreadable 200, or a 5xx other than
    tag_misconfigured, which every server reading the same row gives."""
    s = err.status
    if s is None or s == 429 or s < 300:
        return True
    if s >= 500:
        return err.code != "tag_misconfigured"
    return False
