"""What a handler's attempt came to, in the terms Ratchet classifies.

A handler returns None (success), an Outcome, or a provider response; or it
raises. ``outcome_of`` maps any of these to an Outcome, and
``Outcome.report`` to the API's Report:

- a provider response (``http.client.HTTPResponse``, ``urllib.error.HTTPError``,
  or anything with ``.status_code``/``.status`` and ``.headers``, such as a
  ``requests`` or ``httpx`` response, which are never imported) gives its
  status and the headers Ratchet reads (Retry-After, Stripe-Should-Retry,
  webhook-delivery, ...): ``from_response`` builds the Outcome,
  ``check_response`` raises ProviderError unless it is 2xx;
- an exception carrying a response (HTTPError, ``requests.HTTPError``,
  ``httpx.HTTPStatusError``) is reported like that response;
- a network error is reported with its kind: dns, connect, timeout, reset,
  tls or other (``error_kind``);
- ``Permanent(exc)`` fails the job at once; ``RetryAfter(exc, ms)`` asks for
  no attempt sooner than ms milliseconds.
"""

from __future__ import annotations

import errno
import http
import http.client
import socket
import ssl
import urllib.error
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._types import ErrorKind, Report

__all__ = [
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
    "RATE_LIMIT_HEADERS",
    "MAX_HEADER_VALUE_LENGTH",
]

# Passed to Ratchet: what its classification reads (the first three) and the
# rate-limit headers it learns a provider's limit from (docs/errors.md,
# "Rate-limit headers Ratchet reads"), as the Go and TypeScript SDKs do.
RATE_LIMIT_HEADERS = (
    "RateLimit",
    "RateLimit-Policy",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "X-RateLimit-Reset-After",
    "X-Rate-Limit-Limit",
    "X-Rate-Limit-Remaining",
    "X-Rate-Limit-Reset",
)
HEADERS_OF_INTEREST = ("Retry-After", "Stripe-Should-Retry", "webhook-delivery", *RATE_LIMIT_HEADERS)

# The longest header value passed on: one character over the 8 KiB Ratchet
# reads, so a longer value is refused there as too large rather than read
# cut short.
MAX_HEADER_VALUE_LENGTH = 8192 + 1

MAX_MESSAGE = 1000


@dataclass(frozen=True)
class Outcome:
    """One attempt's result as Ratchet takes it (the fields of a Report
    without the job and lease)."""

    success: bool = False
    http_status: int = 0
    headers: Mapping[str, str] = field(default_factory=dict)
    error_kind: ErrorKind = ""
    retryable: bool | None = None
    retry_after_ms: int | None = None
    message: str = ""

    @classmethod
    def ok(cls, http_status: int = 0, message: str = "") -> Outcome:
        return cls(success=True, http_status=http_status, message=message)

    @classmethod
    def failure(
        cls,
        message: str = "",
        *,
        http_status: int = 0,
        headers: Mapping[str, str] | None = None,
        error_kind: ErrorKind = "",
        retryable: bool | None = None,
        retry_after_ms: int | None = None,
    ) -> Outcome:
        """A failed attempt: the provider's status and headers, or an error
        kind; ``retryable=False`` fails the job at once; ``retry_after_ms``
        asks for no attempt sooner than that."""
        return cls(False, http_status, dict(headers or {}), error_kind, retryable, retry_after_ms, message)

    def report(self, job_id: int, lease_token: str) -> Report:
        """The API's Report of this outcome for one lease."""
        r: Report = {"jobId": job_id, "leaseToken": lease_token}
        if self.success:
            r["success"] = True
        if self.http_status:
            r["httpStatus"] = self.http_status
        if self.headers:
            r["headers"] = dict(self.headers)
        if self.error_kind:
            r["errorKind"] = self.error_kind
        if self.retryable is not None:
            r["retryable"] = self.retryable
        if self.retry_after_ms is not None:
            r["retryAfterMs"] = max(0, int(self.retry_after_ms))
        if self.message:
            r["message"] = self.message[:MAX_MESSAGE]
        return r


class ProviderError(Exception):
    """A provider's failed answer, with what Ratchet needs to classify it."""

    def __init__(self, status: int, headers: Mapping[str, str] | None = None, message: str = "") -> None:
        self.status = status
        self.headers = dict(headers or {})
        self.message = message or _phrase(status)
        super().__init__(f"provider answered {status} {self.message}".rstrip())

    @property
    def outcome(self) -> Outcome:
        return Outcome.failure(str(self), http_status=self.status, headers=self.headers)


class Permanent(Exception):
    """Wraps an error that must not be retried: the job fails at once.

        raise ratchet.Permanent(ValueError("no such card"))
    """

    def __init__(self, exc: BaseException | str) -> None:
        self.exc = exc if isinstance(exc, BaseException) else Exception(exc)
        super().__init__(str(self.exc))
        self.__cause__ = self.exc


class RetryAfter(Exception):
    """Wraps an error and asks for the next attempt no sooner than ``ms``
    milliseconds (the policy's delay still applies when it is longer)."""

    def __init__(self, exc: BaseException | str, ms: int | float) -> None:
        self.exc = exc if isinstance(exc, BaseException) else Exception(exc)
        self.ms = max(0, int(ms))
        super().__init__(str(self.exc))
        self.__cause__ = self.exc


class Cancelled(Exception):
    """Raised by ``CancelSignal.raise_if_set()``: the job was cancelled, its
    lease was lost or the worker is stopping (``reason``)."""

    def __init__(self, reason: str | None) -> None:
        self.reason = reason
        super().__init__(f"stopped: {reason}")


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def _status(resp: Any) -> int | None:
    for attr in ("status_code", "status", "code"):
        v = getattr(resp, attr, None)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def _is_response(x: Any) -> bool:
    return _status(x) is not None and hasattr(x, "headers")


def response_headers(headers: Any) -> dict[str, str]:
    """The headers of interest from any header container: email.message
    (http.client, urllib), httpx.Headers, a requests CaseInsensitiveDict or a
    plain mapping; repeated headers joined with ", ", each value cut at
    MAX_HEADER_VALUE_LENGTH. Only those names, so their count is bounded."""
    out: dict[str, str] = {}
    if headers is None:
        return out
    for name in HEADERS_OF_INTEREST:
        vals: list[str] | None = None
        for getter in ("get_all", "get_list", "getall"):
            fn = getattr(headers, getter, None)
            if callable(fn):
                try:
                    got = fn(name)
                except (KeyError, TypeError):
                    got = None
                vals = [str(v) for v in got] if got else []
                break
        if vals is None:
            items = headers.items() if hasattr(headers, "items") else headers
            low = name.lower()
            vals = [str(v) for k, v in items if str(k).lower() == low]
        if vals:
            out[name] = ", ".join(vals)[:MAX_HEADER_VALUE_LENGTH]
    return out


def from_response(resp: Any, message: str | None = None) -> Outcome:
    """The Outcome of a provider's answer, with its status and the headers
    of interest: success for 2xx (the headers too, so Ratchet learns the
    provider's rate limit from successes), otherwise a failure. The body is
    not read."""
    status = _status(resp)
    if status is None:
        raise TypeError(f"not a response: {type(resp).__name__} has no status_code or status")
    reason = getattr(resp, "reason_phrase", None) or getattr(resp, "reason", None)
    if not isinstance(reason, str) or not reason:
        reason = _phrase(status)
    headers = response_headers(getattr(resp, "headers", None))
    if 200 <= status <= 299:
        return Outcome(success=True, http_status=status, headers=headers)
    msg = message if message is not None else f"provider answered {status} {reason}".rstrip()
    return Outcome.failure(msg, http_status=status, headers=headers)


def check_response(resp: Any) -> None:
    """Return for a 2xx answer; raise ProviderError (status and headers for
    Ratchet) otherwise."""
    o = from_response(resp)
    if not o.success:
        raise ProviderError(o.http_status, o.headers, o.message.removeprefix(f"provider answered {o.http_status} "))


def outcome_of(result: Any) -> Outcome:
    """Map what a handler returned or raised to an Outcome (the Go SDK's
    ToReport): None is a success; an Outcome is itself; a response is judged
    by its status; an exception is a failure with its response, or its
    network error kind, and the decisions of Permanent and RetryAfter."""
    if result is None:
        return Outcome.ok()
    if isinstance(result, Outcome):
        return result
    if not isinstance(result, BaseException):
        if _is_response(result):
            return from_response(result)
        return Outcome.ok()
    retryable: bool | None = None
    retry_after_ms: int | None = None
    exc: BaseException = result
    while isinstance(exc, (Permanent, RetryAfter)):
        if isinstance(exc, Permanent):
            retryable = False
        elif retry_after_ms is None:
            retry_after_ms = exc.ms
        exc = exc.exc
    message = (str(exc) or type(exc).__name__)[:MAX_MESSAGE]
    status, headers, kind = 0, {}, ""
    # The response may be carried by exc or by what it explicitly wraps
    # (raise ... from err), never by an exception it merely happened during.
    for e in _explicit_chain(exc):
        if isinstance(e, Permanent) and retryable is None:
            retryable = False
        if isinstance(e, RetryAfter) and retry_after_ms is None:
            retry_after_ms = e.ms
        if status:
            continue
        if isinstance(e, ProviderError):
            status, headers = e.status, e.headers
        elif isinstance(e, urllib.error.HTTPError):
            o = from_response(e)
            status, headers = o.http_status, dict(o.headers)
        else:
            resp = getattr(e, "response", None)
            if resp is not None and _is_response(resp):
                o = from_response(resp)
                status, headers = o.http_status, dict(o.headers)
    if not status:
        kind = error_kind(exc)
    return Outcome(False, status, headers, kind, retryable, retry_after_ms, message)


def _explicit_chain(exc: BaseException, limit: int = 16) -> list[BaseException]:
    out = []
    e: BaseException | None = exc
    while e is not None and len(out) < limit and all(e is not o for o in out):
        out.append(e)
        e = e.exc if isinstance(e, (Permanent, RetryAfter)) else e.__cause__
    return out


def _chain(exc: BaseException, limit: int = 32) -> list[BaseException]:
    """exc and what it wraps: causes, contexts, URLError reasons, wrapped
    exceptions in args (as requests and urllib3 keep them)."""
    out: list[BaseException] = []
    seen: set[int] = set()
    todo = [exc]
    while todo and len(out) < limit:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        out.append(e)
        for nxt in (getattr(e, "exc", None), getattr(e, "reason", None), e.__cause__, e.__context__, *getattr(e, "args", ())):
            if isinstance(nxt, BaseException):
                todo.append(nxt)
    return out


_DNS_NAMES = ("NameResolution", "DNS", "gaierror")
_TLS_NAMES = ("SSL", "TLS", "Certificate")
_RESET_NAMES = ("ConnectionReset", "RemoteProtocolError", "ChunkedEncodingError", "RemoteDisconnected", "IncompleteRead")
_TIMEOUT_NAMES = ("Timeout",)
_CONNECT_NAMES = ("ConnectError", "NewConnectionError", "ConnectionError")


def _named(e: BaseException, parts: tuple[str, ...]) -> bool:
    return any(p in c.__name__ for c in type(e).__mro__ for p in parts)


def _own_name(e: BaseException, parts: tuple[str, ...]) -> bool:
    # A timeout is named by the class itself, not by its bases: urllib3's
    # NewConnectionError (a refused connection) subclasses
    # ConnectTimeoutError, so the bases would call every refusal a timeout.
    return any(p in type(e).__name__ for p in parts)


_REFUSED_ERRNOS = (errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL)


def error_kind(exc: BaseException) -> ErrorKind:
    """The kind of a network error without a response: dns, connect,
    timeout, reset, tls or other. Standard library errors are recognised by
    type and errno, third-party ones (requests, urllib3, httpx) by name."""
    chain = _chain(exc)
    if any(isinstance(e, (socket.gaierror, socket.herror)) or _named(e, _DNS_NAMES) for e in chain):
        return "dns"
    if any(isinstance(e, (ssl.SSLError, ssl.CertificateError)) or _named(e, _TLS_NAMES) for e in chain):
        return "tls"
    if any(
        isinstance(e, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, http.client.RemoteDisconnected, http.client.IncompleteRead))
        or (isinstance(e, OSError) and e.errno in (errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED))
        or _named(e, _RESET_NAMES)
        for e in chain
    ):
        return "reset"
    # The operating system's own word first: a refused or unreachable
    # connection is a connect failure whatever the library's classes say.
    if any(isinstance(e, ConnectionRefusedError) or (isinstance(e, OSError) and e.errno in _REFUSED_ERRNOS) for e in chain):
        return "connect"
    if any(isinstance(e, TimeoutError) or (isinstance(e, OSError) and e.errno == errno.ETIMEDOUT) or _own_name(e, _TIMEOUT_NAMES) for e in chain):
        return "timeout"
    if any(_named(e, _CONNECT_NAMES) for e in chain):
        return "connect"
    return "other"
