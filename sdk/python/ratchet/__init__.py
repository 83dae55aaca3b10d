"""Ratchet's Python SDK: a client for every route of the HTTP API and a
threaded Worker. Standard library only.

    import ratchet

    c = ratchet.Client("http://127.0.0.1:8080", key)
    job, created = c.enqueue("charge@1", {"orderId": 42}, idempotency_key="order-42")

    w = ratchet.Worker(c, concurrency=8)

    @w.handle("charge@1")
    def charge(job, cancel):
        ...                      # call the provider; return its response, or raise
    w.run()                      # until SIGTERM/SIGINT, then drains

Types (``ratchet.Job``, ``ratchet.ClaimedJob``, ...) are TypedDicts
generated from openapi.json; the answers of the API are plain dicts of
those shapes.
"""

from ._types import *  # noqa: F401,F403
from ._types import __all__ as _types_all
from .client import OPERATIONS, Abort, Client, __version__
from .errors import RatchetConnectionError, RatchetError, api_backoff, parse_http_date, parse_retry_after
from .sse import MAX_EVENT_BYTES, EventStreamParser, ServerEvent
from .outcomes import (
    HEADERS_OF_INTEREST,
    MAX_HEADER_VALUE_LENGTH,
    RATE_LIMIT_HEADERS,
    Cancelled,
    Outcome,
    Permanent,
    ProviderError,
    RetryAfter,
    check_response,
    error_kind,
    from_response,
    outcome_of,
)
from .worker import CancelSignal, Handler, Worker, WorkerStats

__all__ = [
    "Client",
    "Abort",
    "OPERATIONS",
    "RatchetError",
    "RatchetConnectionError",
    "api_backoff",
    "parse_http_date",
    "parse_retry_after",
    "EventStreamParser",
    "ServerEvent",
    "MAX_EVENT_BYTES",
    "Worker",
    "WorkerStats",
    "CancelSignal",
    "Handler",
    "Outcome",
    "ProviderError",
    "Permanent",
    "RetryAfter",
    "Cancelled",
    "from_response",
    "check_response",
    "outcome_of",
    "error_kind",
    "HEADERS_OF_INTEREST",
    "MAX_HEADER_VALUE_LENGTH",
    "RATE_LIMIT_HEADERS",
    "__version__",
    *_types_all,
]
