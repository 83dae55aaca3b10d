"""Errors of Ratchet's API, and the backoff used to retry Ratchet itself."""

from __future__ import annotations

import datetime as _dt
import json
import random
import re
import time
from collections.abc import Mapping
from typing import Any

from ._types import Endpoint, FieldError

__all__ = ["RatchetError", "RatchetConnectionError", "api_backoff", "parse_http_date", "parse_retry_after"]


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


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_MON = "(" + "|".join(_MONTHS) + ")"
_IMF_FIXDATE = re.compile(rf"{_DAY}, (\d{{2}}) {_MON} (\d{{4}}) (\d{{2}}):(\d{{2}}):(\d{{2}}) GMT", re.ASCII)
_RFC850 = re.compile(rf"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d{{2}})-{_MON}-(\d{{2}}) (\d{{2}}):(\d{{2}}):(\d{{2}}) GMT", re.ASCII)
_ASCTIME = re.compile(rf"{_DAY} {_MON} ( \d|\d{{2}}) (\d{{2}}):(\d{{2}}):(\d{{2}}) (\d{{4}})", re.ASCII)
_SECONDS = re.compile(r"[0-9]+", re.ASCII)


def parse_http_date(value: str) -> float | None:
    """Epoch seconds of an HTTP date in the three forms RFC 9110 names
    (IMF-fixdate, RFC 850, asctime), always UTC; None for anything else."""
    if m := _IMF_FIXDATE.fullmatch(value):
        day, mon, year, h, mi, s = m.groups()
    elif m := _RFC850.fullmatch(value):
        day, mon, yy, h, mi, s = m.groups()
        year = str(2000 + int(yy) if int(yy) < 69 else 1900 + int(yy))
    elif m := _ASCTIME.fullmatch(value):
        mon, day, h, mi, s, year = m.groups()
    else:
        return None
    try:
        when = _dt.datetime(int(year), _MONTHS.index(mon) + 1, int(day), int(h), int(mi), int(s), tzinfo=_dt.timezone.utc)
    except ValueError:  # 31 Feb, hour 24, second 60, year 0
        return None
    return when.timestamp()


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP
    date in one of RFC 9110's three forms), at most one hour, 0 for a date
    in the past; None when absent or unreadable."""
    if not value:
        return None
    v = value.strip(" \t")
    if _SECONDS.fullmatch(v):
        return float(min(int(v), 3600))
    when = parse_http_date(v)
    if when is None:
        return None
    wait = when - (time.time() if now is None else now)
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
