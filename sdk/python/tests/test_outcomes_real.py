"""The outcome helpers with the real client libraries workers use:
requests and httpx (Debian's python3-requests and python3-httpx), against
real servers on 127.0.0.1. The SDK itself imports neither.

Without the libraries these tests skip, unless RATCHET_REQUIRE_PY_CLIENTS=1
(set by scripts/test), which makes a missing library a failure."""

from __future__ import annotations

import http.server
import os
import socket
import threading
import time
import unittest
from typing import Any

import ratchet

try:
    import httpx
    import requests

    MISSING = ""
except ImportError as e:  # pragma: no cover - depends on the machine
    MISSING = f"{e} (apt-get install python3-requests python3-httpx, and run /usr/bin/python3)"

REQUIRED = os.environ.get("RATCHET_REQUIRE_PY_CLIENTS") == "1"


def refusing_url() -> str:
    """A loopback port nothing listens on: bound, then closed."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/"


class Silent:
    """Accepts connections and never answers: a read timeout."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/"

    def close(self) -> None:
        self.sock.close()


class Unavailable:
    """Answers every request 503 with Retry-After: 7."""

    def __init__(self) -> None:
        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(503)
                self.send_header("Retry-After", "7")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class RealClients(unittest.TestCase):
    def setUp(self) -> None:
        if MISSING:
            if REQUIRED:
                self.fail(f"RATCHET_REQUIRE_PY_CLIENTS=1 but a client library is missing: {MISSING}")
            self.skipTest(MISSING)

    def caught(self, fn: Any) -> BaseException:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the point is what was raised
            return e
        self.fail("no exception")

    def test_refused_connection_is_connect_not_timeout(self) -> None:
        url = refusing_url()
        e = self.caught(lambda: requests.get(url, timeout=5))
        self.assertIsInstance(e, requests.ConnectionError)
        self.assertEqual(ratchet.error_kind(e), "connect", repr(e))
        self.assertEqual(ratchet.outcome_of(e).error_kind, "connect")
        e = self.caught(lambda: httpx.get(url, timeout=5))
        self.assertIsInstance(e, httpx.ConnectError)
        self.assertEqual(ratchet.error_kind(e), "connect", repr(e))

    def test_read_timeout_is_timeout(self) -> None:
        s = Silent()
        self.addCleanup(s.close)
        e = self.caught(lambda: requests.get(s.url, timeout=(5, 0.2)))
        self.assertIsInstance(e, requests.ReadTimeout)
        self.assertEqual(ratchet.error_kind(e), "timeout", repr(e))
        e = self.caught(lambda: httpx.get(s.url, timeout=httpx.Timeout(5, read=0.2)))
        self.assertIsInstance(e, httpx.ReadTimeout)
        self.assertEqual(ratchet.error_kind(e), "timeout", repr(e))

    def test_pool_timeout_is_timeout(self) -> None:
        s = Silent()
        self.addCleanup(s.close)
        with httpx.Client(limits=httpx.Limits(max_connections=1), timeout=httpx.Timeout(5, read=2, pool=0.1)) as c:
            t = threading.Thread(target=lambda: self.caught(lambda: c.get(s.url)))
            t.start()
            # Wait until the first request holds the only connection.
            pool = c._transport._pool  # httpcore's pool: its connections are public
            deadline = time.monotonic() + 10
            while not pool.connections and time.monotonic() < deadline:
                time.sleep(0.01)
            self.assertTrue(pool.connections, "the first request never took a connection")
            e = self.caught(lambda: c.get(s.url))
            t.join()
        self.assertIsInstance(e, httpx.PoolTimeout)
        self.assertEqual(ratchet.error_kind(e), "timeout", repr(e))

    def test_http_errors_carry_status_and_retry_after(self) -> None:
        u = Unavailable()
        self.addCleanup(u.close)
        e = self.caught(lambda: requests.get(u.url, timeout=5).raise_for_status())
        self.assertIsInstance(e, requests.HTTPError)
        o = ratchet.outcome_of(e)
        self.assertEqual((o.http_status, o.headers.get("Retry-After"), o.error_kind), (503, "7", ""))
        e = self.caught(lambda: httpx.get(u.url, timeout=5).raise_for_status())
        self.assertIsInstance(e, httpx.HTTPStatusError)
        o = ratchet.outcome_of(e)
        self.assertEqual((o.http_status, o.headers.get("Retry-After"), o.error_kind), (503, "7", ""))
        o = ratchet.outcome_of(requests.get(u.url, timeout=5))
        self.assertEqual((o.success, o.http_status), (False, 503))
        o = ratchet.outcome_of(httpx.get(u.url, timeout=5))
        self.assertEqual((o.success, o.http_status), (False, 503))

    def test_server_closing_without_an_answer_is_reset(self) -> None:
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(4)
        self.addCleanup(srv.close)

        def serve() -> None:
            for _ in range(2):
                conn, _ = srv.accept()
                conn.recv(65536)
                conn.close()  # no answer at all

        threading.Thread(target=serve, daemon=True).start()
        url = f"http://127.0.0.1:{srv.getsockname()[1]}/"
        e = self.caught(lambda: requests.get(url, timeout=5))
        self.assertEqual(ratchet.error_kind(e), "reset", repr(e))
        e = self.caught(lambda: httpx.get(url, timeout=5))
        self.assertEqual(ratchet.error_kind(e), "reset", repr(e))


if __name__ == "__main__":
    unittest.main()
