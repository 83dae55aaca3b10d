"""Reports built from provider responses, exceptions and network errors."""

from __future__ import annotations

import errno
import http.client
import socket
import ssl
import unittest
import urllib.error
import urllib.request
from email.message import Message
from typing import Any

from .support import Provider

import ratchet


class FakeRequestsResponse:
    """Shaped like a requests.Response: status_code, reason, a mapping of headers."""

    def __init__(self, status: int, headers: dict[str, str]) -> None:
        self.status_code = status
        self.reason = "Service Unavailable" if status == 503 else "OK"
        self.headers = _CaseInsensitive(headers)


class _CaseInsensitive(dict):
    def get(self, key: Any, default: Any = None) -> Any:
        for k, v in self.items():
            if k.lower() == str(key).lower():
                return v
        return default


class FakeHttpxHeaders:
    """Shaped like httpx.Headers: repeated headers through get_list."""

    def __init__(self, items: list[tuple[str, str]]) -> None:
        self._items = items

    def get_list(self, name: str) -> list[str]:
        return [v for k, v in self._items if k.lower() == name.lower()]

    def items(self) -> list[tuple[str, str]]:
        return list(self._items)


class FakeHttpxResponse:
    def __init__(self, status: int, items: list[tuple[str, str]]) -> None:
        self.status_code = status
        self.reason_phrase = "Too Many Requests"
        self.headers = FakeHttpxHeaders(items)


class FakeHTTPStatusError(Exception):
    """Shaped like requests.HTTPError / httpx.HTTPStatusError: it carries .response."""

    def __init__(self, response: Any) -> None:
        super().__init__("HTTP error")
        self.response = response


# Exceptions named like those of requests, urllib3 and httpx, which are not
# imported: the classification goes by type name and wrapped causes.
class ConnectTimeout(Exception):
    pass


class NameResolutionError(Exception):
    pass


class ConnectError(Exception):
    pass


class RemoteProtocolError(Exception):
    pass


class Responses(unittest.TestCase):
    def setUp(self) -> None:
        self.p = Provider([(503, {"Retry-After": "120", "Stripe-Should-Retry": "true", "X-Other": "no"}), (200, {})])
        self.addCleanup(self.p.close)

    def test_http_client_response(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", int(self.p.url.rsplit(":", 1)[1]), timeout=5)
        self.addCleanup(conn.close)
        conn.request("POST", "/", body=b"{}")
        resp = conn.getresponse()
        resp.read()
        o = ratchet.from_response(resp)
        self.assertEqual((o.success, o.http_status), (False, 503))
        self.assertEqual(dict(o.headers), {"Retry-After": "120", "Stripe-Should-Retry": "true"})
        self.assertEqual(o.message, "provider answered 503 Service Unavailable")
        with self.assertRaises(ratchet.ProviderError) as cm:
            ratchet.check_response(resp)
        self.assertEqual(cm.exception.status, 503)
        conn.request("POST", "/", body=b"{}")
        ok = conn.getresponse()
        ok.read()
        self.assertTrue(ratchet.from_response(ok).success)
        self.assertIsNone(ratchet.check_response(ok))

    def test_urllib_http_error(self) -> None:
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(urllib.request.Request(self.p.url, data=b"{}"), timeout=5)
        err = cm.exception
        self.addCleanup(err.close)
        o = ratchet.from_response(err)
        self.assertEqual((o.http_status, o.headers.get("Retry-After")), (503, "120"))
        # Raised from a handler as it is, or wrapped, it is reported the same.
        r = ratchet.outcome_of(err).report(1, "lease")
        self.assertEqual((r["httpStatus"], r["headers"]["Retry-After"]), (503, "120"))
        self.assertNotIn("errorKind", r)
        r = ratchet.outcome_of(ratchet.Permanent(err)).report(1, "lease")
        self.assertEqual((r["httpStatus"], r["retryable"]), (503, False))

    def test_duck_typed_requests_and_httpx(self) -> None:
        o = ratchet.from_response(FakeRequestsResponse(503, {"retry-after": "7", "webhook-delivery": "abort-message"}))
        self.assertEqual((o.http_status, dict(o.headers)), (503, {"Retry-After": "7", "webhook-delivery": "abort-message"}))
        self.assertEqual(o.message, "provider answered 503 Service Unavailable")
        o = ratchet.from_response(FakeHttpxResponse(429, [("Retry-After", "3"), ("RateLimit-Reset", "1"), ("ratelimit-reset", "2")]))
        self.assertEqual((o.http_status, dict(o.headers)), (429, {"Retry-After": "3", "RateLimit-Reset": "1, 2"}))
        self.assertEqual(o.message, "provider answered 429 Too Many Requests")
        self.assertTrue(ratchet.from_response(FakeRequestsResponse(200, {})).success)
        # raise_for_status() style exceptions carry the response.
        r = ratchet.outcome_of(FakeHTTPStatusError(FakeHttpxResponse(429, [("Retry-After", "3")]))).report(2, "l")
        self.assertEqual((r["httpStatus"], r["headers"]), (429, {"Retry-After": "3"}))
        # A handler may also return the response itself.
        self.assertEqual(ratchet.outcome_of(FakeRequestsResponse(503, {})).http_status, 503)
        self.assertTrue(ratchet.outcome_of(FakeRequestsResponse(204, {})).success)

    def test_email_message_headers_repeat(self) -> None:
        m = Message()
        m["Retry-After"] = "5"
        m["Retry-After"] = "6"

        class R:
            status = 503
            headers = m

        self.assertEqual(ratchet.from_response(R()).headers, {"Retry-After": "5, 6"})


class Reports(unittest.TestCase):
    def test_success_and_explicit_decisions(self) -> None:
        self.assertEqual(ratchet.outcome_of(None).report(1, "l"), {"jobId": 1, "leaseToken": "l", "success": True})
        r = ratchet.outcome_of(ratchet.Permanent(ValueError("card declined"))).report(1, "l")
        self.assertEqual((r["retryable"], r["message"], r["errorKind"]), (False, "card declined", "other"))
        r = ratchet.outcome_of(ratchet.RetryAfter(ratchet.ProviderError(409, {"Retry-After": "1"}), 90_000)).report(1, "l")
        self.assertEqual((r["retryAfterMs"], r["httpStatus"], r["headers"]), (90_000, 409, {"Retry-After": "1"}))
        self.assertNotIn("retryable", r)
        r = ratchet.Outcome.failure("quota", http_status=429, headers={"Retry-After": "2"}, retry_after_ms=5000).report(3, "l")
        self.assertEqual(r, {"jobId": 3, "leaseToken": "l", "httpStatus": 429, "headers": {"Retry-After": "2"}, "retryAfterMs": 5000, "message": "quota"})
        # An explicit cause (raise ... from) is followed; Permanent anywhere on it counts.
        try:
            try:
                raise ratchet.ProviderError(503, {"Retry-After": "9"})
            except ratchet.ProviderError as e:
                raise RuntimeError("charge failed") from e
        except RuntimeError as e:
            r = ratchet.outcome_of(e).report(1, "l")
        self.assertEqual((r["httpStatus"], r["message"]), (503, "charge failed"))
        self.assertEqual(len(ratchet.outcome_of(ValueError("x" * 5000)).report(1, "l")["message"]), 1000)

    def test_cancelled(self) -> None:
        r = ratchet.outcome_of(ratchet.Cancelled("cancelled")).report(1, "l")
        self.assertEqual((r["errorKind"], r["message"]), ("other", "stopped: cancelled"))


class ErrorKinds(unittest.TestCase):
    def test_standard_library_errors(self) -> None:
        cases: list[tuple[BaseException, str]] = [
            (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "dns"),
            (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), "connect"),
            (OSError(errno.EHOSTUNREACH, "no route"), "connect"),
            (TimeoutError("timed out"), "timeout"),
            (socket.timeout("timed out"), "timeout"),
            (ConnectionResetError(errno.ECONNRESET, "reset by peer"), "reset"),
            (BrokenPipeError(errno.EPIPE, "broken pipe"), "reset"),
            (http.client.RemoteDisconnected("closed"), "reset"),
            (ssl.SSLError(1, "bad record mac"), "tls"),
            (ssl.SSLCertVerificationError(1, "certificate verify failed"), "tls"),
            (urllib.error.URLError(socket.gaierror(-2, "Name or service not known")), "dns"),
            (urllib.error.URLError(ConnectionRefusedError(111, "refused")), "connect"),
            (urllib.error.URLError(TimeoutError("timed out")), "timeout"),
            (ValueError("nope"), "other"),
            (RuntimeError("boom"), "other"),
        ]
        for exc, kind in cases:
            with self.subTest(exc=repr(exc)):
                self.assertEqual(ratchet.error_kind(exc), kind)
                self.assertEqual(ratchet.outcome_of(exc).error_kind, kind)

    def test_third_party_errors_by_name_and_cause(self) -> None:
        self.assertEqual(ratchet.error_kind(ConnectTimeout("connect timed out")), "timeout")
        self.assertEqual(ratchet.error_kind(ConnectError("All connection attempts failed")), "connect")
        self.assertEqual(ratchet.error_kind(RemoteProtocolError("Server disconnected")), "reset")
        # requests.ConnectionError(MaxRetryError(reason=NameResolutionError(...)))
        inner = NameResolutionError("Failed to resolve 'nowhere.invalid'")

        class MaxRetryError(Exception):
            def __init__(self, reason: BaseException) -> None:
                super().__init__("max retries")
                self.reason = reason

        class ConnectionError_(Exception):  # requests.ConnectionError is not the builtin
            pass

        self.assertEqual(ratchet.error_kind(ConnectionError_(MaxRetryError(inner))), "dns")
        try:
            try:
                raise ConnectionResetError(errno.ECONNRESET, "reset")
            except OSError as e:
                raise RuntimeError("protocol error") from e
        except RuntimeError as e:
            self.assertEqual(ratchet.error_kind(e), "reset")

    def test_real_network_errors(self) -> None:
        closed = Provider()
        url = closed.url
        closed.close()
        with self.assertRaises(urllib.error.URLError) as cm:
            urllib.request.urlopen(url, timeout=5)
        self.assertEqual(ratchet.error_kind(cm.exception), "connect")
        # A server that accepts and never answers: a read timeout.
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        self.addCleanup(srv.close)
        with self.assertRaises(OSError) as cm2:
            urllib.request.urlopen(f"http://127.0.0.1:{srv.getsockname()[1]}/", timeout=0.2)
        self.assertEqual(ratchet.error_kind(cm2.exception), "timeout")


if __name__ == "__main__":
    unittest.main()


def _quota_headers() -> dict[str, Any]:
    """The rate-limit headers Ratchet reads and the bound on a value,
    checked against the server's reader by internal/classify's
    TestQuotaHeadersFile."""
    import json
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[3] / "testdata" / "quota-headers.json"
    return json.loads(path.read_text())


class RateLimitHeaders(unittest.TestCase):
    """from_response passes every rate-limit header and Retry-After on from
    a real answer on 127.0.0.1, on a throttle and on a success, bounded."""

    def setUp(self) -> None:
        self.quota = _quota_headers()
        self.sent = {"Retry-After": "3", "X-Internal-Token": "secret"}
        for i, name in enumerate(self.quota["headers"]):
            self.sent[name] = f"v{i}"
        success = {"RateLimit": '"default";r=4;t=1', "X-RateLimit-Reset": "9" * 20_000}
        self.p = Provider([(429, self.sent), (200, success)])
        self.addCleanup(self.p.close)

    def get(self) -> Any:
        try:
            return urllib.request.urlopen(self.p.url, timeout=10)
        except urllib.error.HTTPError as e:
            return e

    def test_rate_limit_headers_pass_on(self) -> None:
        self.assertEqual(ratchet.MAX_HEADER_VALUE_LENGTH, self.quota["maxValueBytes"])
        self.assertEqual(set(ratchet.RATE_LIMIT_HEADERS), set(self.quota["headers"]))
        o = ratchet.outcome_of(self.get())
        want = {"Retry-After": "3", **{n: self.sent[n] for n in self.quota["headers"]}}
        self.assertEqual((o.success, o.http_status, dict(o.headers)), (False, 429, want))  # nothing else the provider sent

        with self.get() as resp:
            o = ratchet.from_response(resp)
        self.assertEqual((o.success, o.http_status, o.headers["RateLimit"]), (True, 200, '"default";r=4;t=1'))
        self.assertEqual(len(o.headers["X-RateLimit-Reset"]), self.quota["maxValueBytes"])
        self.assertEqual(o.report(1, "l")["headers"]["RateLimit"], '"default";r=4;t=1')
