"""Errors of Ratchet's API, and the backoff used to retry Ratchet itself."""

from __future__ import annotations

import email.utils
import json
import random
import time
from collections.abc import Mapping
from typing import Any

from ._types import Endpoint, FieldError

__all__ = ["RatchetError", "RatchetConnectionError", "api_backoff", "parse_retry_after"]


class RatchetError(Exception):
    """An error answer of the API, or (status 0) no answer at all.

    ``code`` is the API's error code (``invalid_request``, ``conflict``,
    ``unavailable``, ...; ``http_<status>`` when the body was not Ratchet's
    error shape, ``network`` when there was no answer). ``fields`` lists every
    rejected field of an invalid request, each with ``field``, ``value``,
    ``allowed`` and ``message``. ``current`` is the endpoint as it is now on a
    409 for a stale ``expectedVersion``. ``retry_after`` is the server's
    Retry-After in seconds (on 503 and 429), None when it sent none.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        fields: list[FieldError] | None = None,
        current: Endpoint | None = None,
        retry_after: float | None = None,
        method: str = "",
        path: str = "",
    ) -> None:
        super().__init__(status, code, message)
        self.status = status
        self.code = code
        self.message = message
        self.fields: list[FieldError] = list(fields or [])
        self.current = current
        self.retry_after = retry_after
        self.method = method
        self.path = path

    def __str__(self) -> str:
        where = f" ({self.method} {self.path})" if self.method else ""
        s = f"ratchet: {self.status} {self.code}: {self.message}{where}"
        for f in self.fields:
            s += f"\n  {f.get('field')} = {f.get('value')}: {f.get('allowed') or f.get('message')}"
        return s

    def field(self, name: str) -> FieldError | None:
        """The rejection of one field, or None."""
        for f in self.fields:
            if f.get("field") == name:
                return f
        return None

    @property
    def is_conflict(self) -> bool:
        """A 409: a stale expectedVersion or lease token, or a state that forbids the action."""
        return self.status == 409

    @property
    def is_not_found(self) -> bool:
        return self.status == 404

    @property
    def temporary(self) -> bool:
        """No answer, or an answer that says to come back later (429, 502, 503, 504)."""
        return self.status == 0 or self.status in (429, 502, 503, 504)


class RatchetConnectionError(RatchetError):
    """Ratchet could not be reached, or the connection broke (status 0).
    The original exception is ``__cause__``."""

    def __init__(self, message: str, *, method: str = "", path: str = "") -> None:
        super().__init__(0, "network", message, method=method, path=path)


def error_from_response(status: int, headers: Mapping[str, str] | Any, body: bytes, method: str = "", path: str = "") -> RatchetError:
    """Build the RatchetError of an error answer."""
    retry_after = parse_retry_after(headers.get("Retry-After"))
    detail: Any = None
    try:
        detail = json.loads(body).get("error")
    except (ValueError, AttributeError):
        pass
    if not isinstance(detail, dict) or not detail.get("code"):
        # Not Ratchet's error shape (a proxy's page, say): keep its text.
        text = body.decode("utf-8", "replace").strip()
        return RatchetError(status, f"http_{status}", text[:2000], retry_after=retry_after, method=method, path=path)
    return RatchetError(
        status,
        str(detail.get("code")),
        str(detail.get("message", "")),
        fields=detail.get("fields") or [],
        current=detail.get("current"),
        retry_after=retry_after,
        method=method,
        path=path,
    )


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP
    date), at most one hour; None when absent or unreadable."""
    if not value:
        return None
    v = value.strip()
    if v.isdigit():
        return float(min(int(v), 3600))
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    wait = when.timestamp() - (time.time() if now is None else now)
    return min(max(wait, 0.0), 3600.0)


def api_backoff(n: int, retry_after: float | None = None, *, base: float = 0.1, cap: float = 5.0, rng: random.Random | None = None) -> float:
    """Seconds to wait before retry ``n`` (from 0) of a failed call to Ratchet
    itself: full jitter, a uniform draw from 0 to min(cap, base × 2^n), so
    that workers that lost the server together do not come back together;
    and never less than the server's Retry-After."""
    ceiling = min(base * (2 ** min(n, 16)), cap)
    d = (rng or random).uniform(0.0, ceiling)
    if retry_after is not None and retry_after > d:
        d = retry_after
    return d
