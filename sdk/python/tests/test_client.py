"""The Client against a local fake of Ratchet: retries with full-jitter
backoff that honour 503/Retry-After, only for requests safe to repeat;
error shapes; keep-alive; aborting a long poll; and the route table."""

from __future__ import annotations

import http.server
import json
import random
import threading
import time
import unittest
from email.utils import formatdate
from typing import Any

from .support import ROOT, wait_for

import ratchet
from ratchet.errors import parse_retry_after

UNAVAILABLE = json.dumps({"error": {"code": "unavailable", "message": "the database is busy"}}).encode()
ME = json.dumps({"project": {"id": 1, "name": "p", "plan": "PRO"}, "key": {"id": 1, "scope": "owner", "tools": []}}).encode()
JOB = json.dumps({"id": 7, "state": "scheduled"}).encode()

Answer = tuple[int, dict[str, str], bytes]  # status 0: close the connection without answering


class Fake:
    """Answers each (method, path) from a script, the last answer repeating."""

    def __init__(self, script: dict[tuple[str, str], list[Answer]]) -> None:
        self.script = script
        self.requests: list[tuple[str, str, float, dict[str, Any]]] = []
        self.connections = 0
        self.lock = threading.Lock()
        fake = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with fake.lock:
                    fake.connections += 1

            def answer(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n)) if n else {}
                key = (self.command, self.path.split("?")[0])
                with fake.lock:
                    seen = sum(1 for r in fake.requests if (r[0], r[1]) == key)
                    fake.requests.append((self.command, self.path.split("?")[0], time.monotonic(), body))
                    answers = fake.script.get(key, [(404, {}, b'{"error":{"code":"not_found","message":"no"}}')])
                    status, headers, out = answers[min(seen, len(answers) - 1)]
                if status == 0:
                    self.close_connection = True
                    return
                if status == -1:  # never answer (a long poll)
                    time.sleep(30)
                    return
                self.send_response(status)
                for k, v in headers.items():
                    if k == "X-Then-Close":  # close after answering, without saying so
                        self.close_connection = True
                        continue
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
                if self.close_connection:
                    self.wfile.flush()

            do_GET = do_POST = do_PUT = do_DELETE = answer

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def count(self, method: str, path: str) -> int:
        with self.lock:
            return sum(1 for r in self.requests if (r[0], r[1]) == (method, path))

    def times(self, method: str, path: str) -> list[float]:
        with self.lock:
            return [r[2] for r in self.requests if (r[0], r[1]) == (method, path)]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class ClientRetries(unittest.TestCase):
    def fake(self, script: dict[tuple[str, str], list[Answer]]) -> tuple[Fake, ratchet.Client]:
        f = Fake(script)
        self.addCleanup(f.close)
        c = ratchet.Client(f.url, "rk_test", timeout=5)
        self.addCleanup(c.close)
        return f, c

    def test_503_with_retry_after_is_retried_after_the_hint(self) -> None:
        """Scenario 10: a GET that gets 503 + Retry-After: 1 once is sent
        again no sooner than 1 s later, and succeeds."""
        f, c = self.fake({("GET", "/v1/me"): [(503, {"Retry-After": "1"}, UNAVAILABLE), (200, {}, ME)]})
        t0 = time.monotonic()
        me = c.me()
        self.assertEqual(me["project"]["plan"], "PRO")
        t = f.times("GET", "/v1/me")
        self.assertEqual(len(t), 2)
        self.assertGreaterEqual(t[1] - t[0], 1.0)
        self.assertLess(time.monotonic() - t0, 5)

    def test_readyz_returns_a_503_as_its_answer(self) -> None:
        """readyz gives a 503 back as the typed answer it is, at once and
        unretried; healthz's 503 stays an error."""
        down = json.dumps({"status": "unavailable", "store": "postgres"}).encode()
        f, c = self.fake({("GET", "/readyz"): [(503, {}, down)], ("GET", "/healthz"): [(503, {}, UNAVAILABLE)]})
        self.assertEqual(c.readyz(), {"status": "unavailable", "store": "postgres"})
        self.assertEqual(f.count("GET", "/readyz"), 1)
        c.retries = 0
        with self.assertRaises(ratchet.RatchetError) as cm:
            c.healthz()
        self.assertEqual(cm.exception.status, 503)

    def test_claims_heartbeats_and_reports_are_retried(self) -> None:
        f, c = self.fake(
            {
                ("POST", "/v1/claims"): [(503, {"Retry-After": "0"}, UNAVAILABLE), (200, {}, b'{"jobs":[]}')],
                ("POST", "/v1/jobs/3/heartbeat"): [(429, {}, b"{}"), (200, {}, b'{"leaseExpiresAt":"x","cancelRequested":true}')],
                ("POST", "/v1/reports"): [(0, {}, b""), (200, {}, b'{"results":[]}')],
                ("POST", "/v1/jobs/3/report"): [(502, {}, b"bad gateway"), (200, {}, b'{"duplicate":false}')],
            }
        )
        self.assertEqual(c.claim("w", ["a@1"], max=5), [])
        self.assertTrue(c.heartbeat(3, "lease")["cancelRequested"])
        self.assertEqual(c.report_batch([{"jobId": 3, "leaseToken": "l", "success": True}]), [])
        self.assertFalse(c.report({"jobId": 3, "leaseToken": "l", "success": True})["duplicate"])
        for path in ("/v1/claims", "/v1/jobs/3/heartbeat", "/v1/reports", "/v1/jobs/3/report"):
            self.assertEqual(f.count("POST", path), 2, path)

    def test_enqueue_without_idempotency_key_is_not_retried(self) -> None:
        f, c = self.fake({("POST", "/v1/jobs"): [(503, {"Retry-After": "1"}, UNAVAILABLE), (201, {}, JOB)]})
        with self.assertRaises(ratchet.RatchetError) as cm:
            c.enqueue("a@1", {"x": 1})
        e = cm.exception
        self.assertEqual((e.status, e.code, e.message, e.retry_after), (503, "unavailable", "the database is busy", 1.0))
        self.assertTrue(e.temporary)
        self.assertEqual(f.count("POST", "/v1/jobs"), 1)

    def test_enqueue_with_idempotency_key_is_retried(self) -> None:
        f, c = self.fake({("POST", "/v1/jobs"): [(503, {"Retry-After": "0"}, UNAVAILABLE), (201, {}, JOB)]})
        job, created = c.enqueue("a@1", {"x": 1}, idempotency_key="order-1")
        self.assertEqual((job["id"], created), (7, True))
        self.assertEqual(f.count("POST", "/v1/jobs"), 2)
        body = f.requests[-1][3]
        self.assertEqual(body, {"tool": "a@1", "payload": {"x": 1}, "idempotencyKey": "order-1"})

    def test_network_errors_are_retried_only_when_safe(self) -> None:
        f, c = self.fake(
            {
                ("GET", "/v1/jobs/1"): [(0, {}, b""), (200, {}, JOB)],
                ("POST", "/v1/endpoints"): [(0, {}, b""), (201, {}, b"{}")],
                ("POST", "/v1/jobs/1/replay"): [(0, {}, b""), (201, {}, JOB)],
            }
        )
        self.assertEqual(c.get_job(1)["id"], 7)
        self.assertEqual(f.count("GET", "/v1/jobs/1"), 2)
        with self.assertRaises(ratchet.RatchetConnectionError) as cm:
            c.create_endpoint({"name": "x"})
        self.assertEqual((cm.exception.status, cm.exception.code), (0, "network"))
        self.assertIsInstance(cm.exception.__cause__, ConnectionError)
        self.assertEqual(f.count("POST", "/v1/endpoints"), 1)
        with self.assertRaises(ratchet.RatchetConnectionError):
            c.replay_job(1)
        self.assertEqual(f.count("POST", "/v1/jobs/1/replay"), 1)

    def test_gives_up_after_its_retries(self) -> None:
        f, c = self.fake({("GET", "/v1/me"): [(503, {}, UNAVAILABLE)]})
        c.retries = 2
        with self.assertRaises(ratchet.RatchetError) as cm:
            c.me()
        self.assertEqual(cm.exception.status, 503)
        self.assertIsNone(cm.exception.retry_after)
        self.assertEqual(f.count("GET", "/v1/me"), 3)

    def test_a_retry_after_longer_than_max_retry_wait_is_raised(self) -> None:
        f, c = self.fake({("GET", "/v1/me"): [(503, {"Retry-After": "3600"}, UNAVAILABLE), (200, {}, ME)]})
        t0 = time.monotonic()
        with self.assertRaises(ratchet.RatchetError) as cm:
            c.me()
        self.assertEqual(cm.exception.retry_after, 3600.0)
        self.assertLess(time.monotonic() - t0, 1)
        self.assertEqual(f.count("GET", "/v1/me"), 1)

    def test_errors_that_are_not_ratchets_keep_their_text(self) -> None:
        f, c = self.fake({("POST", "/v1/runs"): [(502, {"Content-Type": "text/html"}, b"<h1>bad gateway</h1>")]})
        with self.assertRaises(ratchet.RatchetError) as cm:
            c.start_run("x")
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.message), (502, "http_502", "<h1>bad gateway</h1>"))
        self.assertEqual(f.count("POST", "/v1/runs"), 1)

    def test_connections_are_kept_alive(self) -> None:
        f, c = self.fake({("GET", "/v1/me"): [(200, {}, ME)]})
        for _ in range(5):
            c.me()
        self.assertEqual(f.count("GET", "/v1/me"), 5)
        self.assertEqual(f.connections, 1)

    def test_a_connection_the_server_closed_is_not_reused(self) -> None:
        """A pooled connection the server closed while idle is noticed
        before use: a POST that is not safe to repeat goes out once, on a
        new connection."""
        f, c = self.fake({("GET", "/v1/me"): [(200, {"X-Then-Close": "1"}, ME)], ("POST", "/v1/runs"): [(201, {}, b'{"id":1}')]})
        c.me()
        self.assertEqual(len(c._idle), 1, "the client should believe the connection is alive")
        wait_for(lambda: c._idle[0].sock is not None and not ratchet.client._usable(c._idle[0]), bool, "the server's close to arrive", timeout=5)
        self.assertEqual(c.start_run("x")["id"], 1)
        self.assertEqual(f.count("POST", "/v1/runs"), 1)
        self.assertEqual(f.connections, 2)

    def test_abort_ends_a_long_poll(self) -> None:
        f, c = self.fake({("POST", "/v1/claims"): [(-1, {}, b"")]})
        abort = ratchet.Abort()
        threading.Timer(0.3, abort.cancel).start()
        t0 = time.monotonic()
        with self.assertRaises(ratchet.RatchetConnectionError):
            c.claim("w", ["a@1"], wait_ms=20000, abort=abort)
        self.assertLess(time.monotonic() - t0, 2)


class Backoff(unittest.TestCase):
    def test_full_jitter_within_the_ceiling(self) -> None:
        rng = random.Random(1)
        for n in range(20):
            ceiling = min(0.1 * 2**n, 5.0)
            draws = [ratchet.api_backoff(n, rng=rng) for _ in range(200)]
            self.assertTrue(all(0 <= d <= ceiling for d in draws), n)
            self.assertGreater(max(draws) - min(draws), ceiling / 2, "no jitter")
        self.assertLessEqual(ratchet.api_backoff(1000), 5.0)

    def test_retry_after_is_a_floor(self) -> None:
        for n in range(5):
            self.assertGreaterEqual(ratchet.api_backoff(n, 2.0), 2.0)
        self.assertEqual(ratchet.api_backoff(0, 7.0), 7.0)

    def test_parse_retry_after(self) -> None:
        self.assertEqual(parse_retry_after("1"), 1.0)
        self.assertEqual(parse_retry_after(" 120 "), 120.0)
        self.assertEqual(parse_retry_after("99999"), 3600.0)
        self.assertIsNone(parse_retry_after(None))
        self.assertIsNone(parse_retry_after("soon"))
        now = time.time()
        d = parse_retry_after(formatdate(now + 30, usegmt=True), now)
        assert d is not None
        self.assertAlmostEqual(d, 30, delta=1)
        self.assertEqual(parse_retry_after(formatdate(now - 30, usegmt=True), now), 0.0)


class Routes(unittest.TestCase):
    def test_every_operation_has_a_method(self) -> None:
        with open(ROOT / "openapi.json", encoding="utf-8") as f:
            doc = json.load(f)
        ops = {op["operationId"] for item in doc["paths"].values() for op in item.values() if isinstance(op, dict) and "operationId" in op}
        self.assertEqual(ops - set(ratchet.OPERATIONS), set(), "routes of openapi.json without a Client method: add them to client.py")
        self.assertEqual(set(ratchet.OPERATIONS) - ops, set(), "methods of routes openapi.json no longer has")
        for op, method in ratchet.OPERATIONS.items():
            self.assertTrue(callable(getattr(ratchet.Client, method, None)), f"{op}: Client.{method} is missing")


if __name__ == "__main__":
    unittest.main()
