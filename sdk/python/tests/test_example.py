"""examples/worker-py/main.py as a process against the real server: a flaky
provider, SIGKILL while it holds leases, SIGTERM and SIGINT."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
import unittest

from .support import ROOT, Provider, ServerTestCase, clean_env, wait_for

import ratchet

EXAMPLE = ROOT / "examples" / "worker-py" / "main.py"


class Proc:
    """The example worker as a child process, its output collected."""

    def __init__(self, server_url: str, key: str, *args: str) -> None:
        env = clean_env()
        env.update(RATCHET_SERVER=server_url, RATCHET_KEY=key, PYTHONUNBUFFERED="1")
        # Run from the repository root, as documented.
        self.p = subprocess.Popen([sys.executable, str(EXAMPLE), *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self._out: list[str] = []
        self._lock = threading.Lock()
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            with self._lock:
                self._out.append(line)

    def output(self) -> str:
        with self._lock:
            return "".join(self._out)

    def close(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(10)
        self._t.join(5)
        if self.p.stdout is not None:
            self.p.stdout.close()


class ExampleWorker(ServerTestCase):
    def start(self, tool: str, target: str, *extra: str, key: str | None = None) -> Proc:
        p = Proc(self.server.url, key or self.worker_key(tool), "--tool", tool, "--target", target, *extra)
        self.addCleanup(p.close)
        wait_for(p.output, lambda o: "worker for" in o or p.p.poll() is not None, "the example to start", timeout=20)
        self.assertIsNone(p.p.poll(), p.output())
        return p

    def worker_key(self, tool: str) -> str:
        return self.owner.create_key(f"example-{tool}", "worker", [tool])["key"]

    def test_retry_after_then_success(self) -> None:
        """The example retries a 503 with Retry-After: 120 no sooner than the
        hint (the dev clock skips the wait) and then succeeds."""
        self.owner.create_endpoint({"name": "provider"})
        self.owner.publish_tool({"name": "charge", "version": "1", "endpoint": "provider"})
        provider = Provider([(503, {"Retry-After": "120"}), (200, {})])
        self.addCleanup(provider.close)
        p = self.start("charge@1", provider.url + "/charge")
        job, _ = self.owner.enqueue("charge@1", {"orderId": 42}, idempotency_key="order-42")
        j = self.wait_job(job["id"], "failed its first attempt", lambda j: j["state"] == "scheduled" and len(j["attempts"]) == 1 and "finishedAt" in j["attempts"][0])
        a = j["attempts"][0]
        self.assertEqual((a["httpStatus"], a["retryAfterMs"], a["classification"]), (503, 120_000, "retry_after"), p.output())
        self.assertGreaterEqual(a["selectedDelayMs"], 120_000)
        self.owner.advance_clock(180_000)
        j = self.wait_job(job["id"], "succeeded", lambda j: j["state"] == "succeeded")
        self.assertEqual(len(j["attempts"]), 2)
        self.assertEqual(provider.count(), 2)
        self.assertEqual(provider.calls[0]["body"], b'{"orderId": 42}')
        self.assertEqual(provider.calls[1]["headers"].get("Idempotency-Key"), "order-42")
        out = p.output()
        self.assertIn(f"job {job['id']} attempt 1: {provider.url}/charge answered 503", out)
        self.assertIn(f"job {job['id']} attempt 2: {provider.url}/charge answered 200", out)

    def test_sigkill_while_holding_leases(self) -> None:
        """Scenario 7: a worker killed with SIGKILL while it holds leases;
        after the lease the jobs are rescued (timed_out) and another worker
        finishes them."""
        tool = self.tool(timeout_ms=1000, delay_ms=1000)
        provider = Provider([(200, {})])
        provider.hold = True  # every call hangs: the worker holds its leases
        self.addCleanup(provider.close)
        key = self.worker_key(tool)
        p = self.start(tool, provider.url, "--concurrency", "2", key=key)
        jobs = [self.owner.enqueue(tool, {"i": i})[0]["id"] for i in range(3)]
        wait_for(provider.count, lambda n: n == 2, "two calls in flight", timeout=20)
        time.sleep(1.5)  # past the first lease: heartbeats are keeping the leases
        held = [j for j in jobs if self.owner.get_job(j)["state"] == "running"]
        self.assertEqual(len(held), 2, p.output())
        p.p.send_signal(signal.SIGKILL)
        p.p.wait(10)
        for j in held:
            self.wait_job(j, "rescued", lambda j: j["attempts"][0]["outcome"] == "timed_out", timeout=15)
        provider.hold = False
        provider.released.set()
        self.start(tool, provider.url, "--concurrency", "2", key=key)
        for j in jobs:
            got = self.wait_job(j, "succeeded", lambda j: j["state"] == "succeeded", timeout=20)
            outcomes = [a["outcome"] for a in got["attempts"]]
            self.assertEqual(outcomes, ["timed_out", "succeeded"] if j in held else ["succeeded"], j)
            if j in held:
                self.assertEqual(got["attempts"][0]["classification"], "timed_out")

    def test_sigterm_and_sigint_drain(self) -> None:
        """Scenario 8: on SIGTERM or SIGINT the example stops claiming, lets
        the running calls finish, reports them and exits 0; the jobs it never
        claimed stay scheduled, untouched."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=sig.name):
                tool = self.tool(timeout_ms=1000)
                provider = Provider([(200, {})], delay=1.5)
                self.addCleanup(provider.close)
                p = self.start(tool, provider.url, "--concurrency", "2")
                jobs = [self.owner.enqueue(tool, {"i": i})[0]["id"] for i in range(5)]
                wait_for(provider.count, lambda n: n == 2, "two calls in flight", timeout=20)
                t0 = time.monotonic()
                p.p.send_signal(sig)
                self.assertEqual(p.p.wait(20), 0, p.output())
                self.assertLess(time.monotonic() - t0, 10)
                self.assertEqual(provider.count(), 2, "a job was claimed after the signal")
                states = [self.owner.get_job(j) for j in jobs]
                done = [j for j in states if j["state"] == "succeeded"]
                self.assertEqual(len(done), 2, p.output())
                for j in done:
                    self.assertEqual([a["outcome"] for a in j["attempts"]], ["succeeded"])
                for j in states:
                    if j not in done:
                        self.assertEqual((j["state"], j["attempt"]), ("scheduled", 0))
                out = p.output()
                self.assertIn("stopping", out)
                self.assertIn("stopped", out)

    def test_second_signal_releases_at_once(self) -> None:
        tool = self.tool(timeout_ms=5000, delay_ms=1000)
        provider = Provider([(200, {})])
        provider.hold = True
        self.addCleanup(provider.close)
        p = self.start(tool, provider.url, "--concurrency", "1")
        job = self.owner.enqueue(tool, {})[0]["id"]
        wait_for(provider.count, lambda n: n == 1, "the call in flight", timeout=20)
        p.p.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        self.assertIsNone(p.p.poll(), "the worker did not wait for its running job")
        p.p.send_signal(signal.SIGTERM)
        self.assertEqual(p.p.wait(10), 0, p.output())
        j = self.owner.get_job(job)
        self.assertEqual((j["state"], j["attempts"][0]["classification"]), ("scheduled", "worker_retry"), p.output())


if __name__ == "__main__":
    unittest.main()
