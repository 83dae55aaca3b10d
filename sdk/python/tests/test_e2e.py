"""The Worker and Client against the real ratchet binary on loopback."""

from __future__ import annotations

import threading
import time
import unittest
import urllib.error
import urllib.request

from .support import Provider, ServerTestCase, wait_for

import ratchet


def post(url: str, job: ratchet.ClaimedJob) -> None:
    """Call a provider as a handler would: non-2xx answers and network errors raise."""
    req = urllib.request.Request(url, data=b"{}", method="POST", headers={"Idempotency-Key": job["idempotencyKey"]})
    try:
        resp = urllib.request.urlopen(req, timeout=10)
    except urllib.error.HTTPError as err:  # a non-2xx answer
        resp = err
    with resp:
        ratchet.check_response(resp)


class WorkerScenarios(ServerTestCase):
    def test_retry_after_from_provider_is_honoured_then_succeeds(self) -> None:
        """Scenario 1: 503 with Retry-After from the provider, retried no
        sooner than the hint, then 200."""
        tool = self.tool(max_attempts=3, delay_ms=1000, timeout_ms=5000)
        provider = Provider([(503, {"Retry-After": "120"}), (200, {})])
        self.addCleanup(provider.close)
        w = self.worker()
        w.handle(tool, lambda job, cancel: post(provider.url + "/charge", job))
        w.start()
        job, created = self.owner.enqueue(tool, {"orderId": 42}, idempotency_key="order-42")
        self.assertTrue(created)
        j = self.wait_job(job["id"], "failed its first attempt", lambda j: j["state"] == "scheduled" and len(j["attempts"]) == 1 and "finishedAt" in j["attempts"][0])
        a = j["attempts"][0]
        self.assertEqual((a["outcome"], a["classification"], a["httpStatus"], a["retryAfterMs"]), ("failed", "retry_after", 503, 120_000))
        self.assertGreaterEqual(a["selectedDelayMs"], 120_000, "the policy's 1 s must not undercut the provider's 120 s")
        self.assertEqual(a["nextDueAt"], j["dueAt"])
        self.assertEqual(self.owner.explain_job(job["id"])["gate"], "due_time")
        self.assertEqual(provider.count(), 1)
        # Not claimable before the hint has passed...
        self.owner.advance_clock(110_000)
        time.sleep(0.6)  # longer than the worker's long poll: it had its chance
        self.assertEqual(self.owner.get_job(job["id"])["state"], "scheduled")
        # ...and claimed once it has.
        self.owner.advance_clock(11_000)
        j = self.wait_job(job["id"], "succeeded", lambda j: j["state"] == "succeeded")
        self.assertEqual([a["outcome"] for a in j["attempts"]], ["failed", "succeeded"])
        self.assertEqual(provider.count(), 2)
        self.assertEqual(provider.calls[0]["headers"].get("Idempotency-Key"), "order-42")
        self.assertEqual(provider.calls[1]["headers"].get("Idempotency-Key"), "order-42")

    def test_heartbeats_keep_a_long_handler_alive(self) -> None:
        """Scenario 2: a handler running 2.5 s on a 1 s lease succeeds in one attempt."""
        tool = self.tool(timeout_ms=1000)
        fired: list[bool] = []

        def slow(job: ratchet.ClaimedJob, cancel: ratchet.CancelSignal) -> None:
            fired.append(cancel.wait(2.5))

        w = self.worker()
        w.handle(tool, slow)
        w.start()
        job, _ = self.owner.enqueue(tool, {})
        j = self.wait_job(job["id"], "succeeded", lambda j: j["state"] in ("succeeded", "failed", "exhausted"))
        msg = f"{j}\n{self.context()}"
        self.assertEqual(j["state"], "succeeded", msg)
        self.assertEqual(len(j["attempts"]), 1, msg)
        self.assertEqual(j["attempts"][0]["outcome"], "succeeded", msg)
        self.assertGreaterEqual(j["attempts"][0]["durationMs"], 2400, msg)
        self.assertEqual(fired, [False], "the handler's signal fired although the lease was kept; " + msg)

    def test_cancel_is_observed_mid_handler(self) -> None:
        """Scenario 3: the producer cancels a running job; the handler's
        signal fires; the job ends cancelled."""
        tool = self.tool(timeout_ms=1000)
        started = threading.Event()
        reasons: list[str | None] = []

        def waits(job: ratchet.ClaimedJob, cancel: ratchet.CancelSignal) -> None:
            started.set()
            if cancel.wait(15):
                reasons.append(cancel.reason)
            cancel.raise_if_set()

        w = self.worker()
        w.handle(tool, waits)
        w.start()
        job, _ = self.owner.enqueue(tool, {})
        self.assertTrue(started.wait(10), "the handler never started")
        flagged = self.owner.cancel_job(job["id"])
        self.assertEqual((flagged["state"], flagged["cancelRequested"]), ("running", True))
        j = self.wait_job(job["id"], "cancelled", lambda j: j["state"] == "cancelled")
        self.assertEqual(reasons, ["cancelled"])
        self.assertEqual(len(j["attempts"]), 1)
        self.assertEqual(j["attempts"][0]["outcome"], "failed")

    def test_lost_lease_aborts_the_handler(self) -> None:
        """Scenario 4: the server's clock jumps past the lease; the job is
        rescued (timed_out); the next heartbeat gets 409; the handler's
        signal fires; nothing is reported for that lease; attempt 2 succeeds."""
        tool = self.tool(timeout_ms=1000, delay_ms=1000, max_attempts=3)
        started = threading.Event()
        reasons: list[str | None] = []

        def handler(job: ratchet.ClaimedJob, cancel: ratchet.CancelSignal) -> None:
            if job["attempt"] == 1:
                started.set()
                if cancel.wait(30):
                    reasons.append(cancel.reason)
                return None  # a success the worker must not report: the lease is gone
            return None

        reports: list[ratchet.ReportBatchItem] = []
        w = self.worker(on_report=reports.append)
        w.handle(tool, handler)
        w.start()
        job, _ = self.owner.enqueue(tool, {})
        self.assertTrue(started.wait(10), "the handler never started")

        deadline = time.monotonic() + 20
        while True:
            self.owner.advance_clock(5_000)
            try:
                wait_for(lambda: self.owner.get_job(job["id"]), lambda j: j["attempts"][0]["outcome"] == "timed_out", "rescue", timeout=0.6)
                break
            except AssertionError:
                if time.monotonic() > deadline:
                    raise
        wait_for(lambda: list(reasons), lambda r: r == ["lease_lost"], "the handler's signal", timeout=10)
        j = self.wait_job(job["id"], "succeeded at attempt 2", lambda j: j["state"] == "succeeded")
        # The server answers the report after it has committed it: the
        # worker may not have read that answer yet.
        wait_for(lambda: len(reports), lambda n: n >= 1, "the worker to read the report's answer", timeout=10)
        msg = f"{j}\n{w.stats}\n{reports}\n{self.context()}"
        self.assertEqual([(a["outcome"], a["classification"]) for a in j["attempts"]], [("timed_out", "timed_out"), ("succeeded", "success")], msg)
        self.assertEqual(w.stats.lost, 1, msg)
        self.assertEqual(w.stats.rejected, 0, "a report of the lost lease was sent; " + msg)
        self.assertEqual(len(reports), 1, "only attempt 2 is reported; " + msg)

    def test_non_retryable_failures_fail_at_once(self) -> None:
        """Scenario 5: Permanent(...) and a provider's 400 end the job failed after one attempt."""
        tool = self.tool(max_attempts=5)
        provider = Provider([(400, {})])
        self.addCleanup(provider.close)

        def handler(job: ratchet.ClaimedJob, cancel: ratchet.CancelSignal) -> None:
            if job["payload"]["kind"] == "permanent":
                raise ratchet.Permanent(ValueError("card declined"))
            post(provider.url, job)

        w = self.worker()
        w.handle(tool, handler)
        w.start()
        perm, _ = self.owner.enqueue(tool, {"kind": "permanent"})
        bad, _ = self.owner.enqueue(tool, {"kind": "400"})
        for job, classification, status in ((perm, "worker_fail", None), (bad, "client_error", 400)):
            j = self.wait_job(job["id"], "failed", lambda j: j["state"] in ("failed", "succeeded", "exhausted"))
            self.assertEqual(j["state"], "failed")
            self.assertEqual(len(j["attempts"]), 1)
            a = j["attempts"][0]
            self.assertEqual((a["classification"], a["httpStatus"]), (classification, status))
        self.assertIn("card declined", self.owner.get_job(perm["id"])["attempts"][0]["message"])

    def test_exhaustion(self) -> None:
        """Scenario 6: every attempt fails retryably (connection refused) until none is left."""
        tool = self.tool(max_attempts=3, delay_ms=1000)
        closed = Provider()
        dead_url = closed.url
        closed.close()  # nothing listens there any more

        w = self.worker()
        w.handle(tool, lambda job, cancel: post(dead_url, job))
        w.start()
        job, _ = self.owner.enqueue(tool, {})
        j = self.wait_job(job["id"], "exhausted", lambda j: j["state"] in ("exhausted", "failed", "succeeded"), timeout=30)
        self.assertEqual(j["state"], "exhausted")
        self.assertEqual([(a["outcome"], a["classification"]) for a in j["attempts"]], [("failed", "network_connect")] * 3)
        self.assertEqual([a["selectedDelayMs"] for a in j["attempts"]], [1000, 1000, None])

    def test_grace_period_then_release(self) -> None:
        """Scenario 8 (in process): stop() stops claiming; a handler that
        outlives the grace period is signalled and its job released (a
        retryable failure, not a timed-out lease), and run() returns."""
        tool = self.tool(timeout_ms=5000, delay_ms=1000)
        started = threading.Event()
        reasons: list[str | None] = []

        def stubborn(job: ratchet.ClaimedJob, cancel: ratchet.CancelSignal) -> None:
            if job["attempt"] > 1 or not job["payload"].get("stubborn"):
                return
            started.set()
            cancel.wait(30)
            reasons.append(cancel.reason)

        w = self.worker(grace=0.5, concurrency=1)
        w.handle(tool, stubborn)
        w.start()
        job, _ = self.owner.enqueue(tool, {"stubborn": True})
        self.assertTrue(started.wait(10))
        other, _ = self.owner.enqueue(tool, {})
        t0 = time.monotonic()
        self.assertTrue(w.stop(wait=True, timeout=10), "the worker did not stop")
        self.assertLess(time.monotonic() - t0, 5)
        self.assertEqual(reasons, ["stopping"])
        j = self.owner.get_job(job["id"])
        self.assertEqual(j["state"], "scheduled")
        self.assertEqual((j["attempts"][0]["outcome"], j["attempts"][0]["classification"]), ("failed", "worker_retry"))
        self.assertEqual(w.stats.released, 1)
        self.assertEqual(self.owner.get_job(other["id"])["attempt"], 0, "a job was claimed after stop()")
        # Another worker finishes it.
        w2 = self.worker()
        w2.handle(tool, stubborn)
        w2.start()
        self.wait_job(job["id"], "succeeded", lambda j: j["state"] == "succeeded")
        self.wait_job(other["id"], "succeeded", lambda j: j["state"] == "succeeded")

    def test_stop_ends_a_long_poll_at_once(self) -> None:
        tool = self.tool()
        w = self.worker(wait=20)
        w.handle(tool, lambda job, cancel: None)
        w.start()
        wait_for(lambda: w.stats.first_claim_at, lambda t: t is not None, "the first claim")
        time.sleep(0.2)  # the claim is in its long poll
        t0 = time.monotonic()
        self.assertTrue(w.stop(wait=True, timeout=5))
        self.assertLess(time.monotonic() - t0, 2)

    def test_many_jobs_bounded_concurrency(self) -> None:
        """Batches of claims and reports from two claim loops and two report
        senders; never more handlers at once than concurrency."""
        tool = self.tool(timeout_ms=5000)
        lock = threading.Lock()
        running = 0
        peak = 0

        def handler(job: ratchet.ClaimedJob, cancel: ratchet.CancelSignal) -> None:
            nonlocal running, peak
            with lock:
                running += 1
                peak = max(peak, running)
            time.sleep(0.01)
            with lock:
                running -= 1

        w = self.worker(concurrency=5, claimers=2, reporters=2)
        w.handle(tool, handler)
        w.start()
        self.owner.enqueue_batch([{"tool": tool, "payload": {"i": i}} for i in range(200)])
        wait_for(lambda: self.owner.count_jobs(tool=tool, state="succeeded"), lambda n: n == 200, "200 jobs succeeded", timeout=30)
        self.assertLessEqual(peak, 5)
        self.assertGreater(peak, 1)
        wait_for(lambda: w.stats.reported, lambda n: n == 200, "the worker to read every report's answer", timeout=10)


class ClientAgainstServer(ServerTestCase):
    def test_field_errors_are_typed(self) -> None:
        """Scenario 9: the API's field errors surface with the fields."""
        self.owner.create_endpoint({"name": "fields"})
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.publish_tool({"name": "charge", "version": "1 0", "endpoint": "fields"})
        e = cm.exception
        self.assertEqual((e.status, e.code), (400, "invalid_request"))
        f = e.field("version")
        self.assertIsNotNone(f)
        assert f is not None
        self.assertEqual(f["value"], '"1 0"')
        self.assertIn("1–32 characters", f["allowed"])
        self.assertIn("version", str(e))

        self.owner.publish_tool({"name": "charge", "version": "1", "endpoint": "fields"})
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.enqueue("charge@1", {}, max_attempts=11)
        self.assertEqual([(f["field"], f["value"]) for f in cm.exception.fields], [("maxAttempts", "11")])

        # A stale expectedVersion: 409 with the endpoint as it is now.
        ep = self.owner.get_endpoint("fields")
        upd: ratchet.EndpointPolicyUpdate = {"expectedVersion": ep["version"], "preset": "AGGRESSIVE", "defaultTimeoutMs": 20000, "maxConcurrent": 3, "rateLimitPerMinute": None}
        ep2 = self.owner.update_endpoint_policy("fields", upd)
        self.assertEqual(ep2["version"], ep["version"] + 1)
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.update_endpoint_policy("fields", upd)
        self.assertTrue(cm.exception.is_conflict)
        self.assertIsNotNone(cm.exception.current)
        assert cm.exception.current is not None
        self.assertEqual(cm.exception.current["version"], ep2["version"])

        with self.assertRaises(ratchet.RatchetError) as cm:
            with self.server.client("rk_not_a_key") as stranger:
                stranger.me()
        self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthenticated"))

    def test_flow_keys(self) -> None:
        """A flow key given at enqueue, or taken from the payload by the
        tool's flowKeyFrom, is on the job and selects it in lists, counts
        and streams; a bad key is a field error naming flowKey."""
        self.owner.create_endpoint({"name": "flows"})
        tool = self.owner.publish_tool({"name": "refund", "version": "1", "endpoint": "flows", "flowKeyFrom": "/customer/id"})
        self.assertEqual(tool["flowKeyFrom"], "/customer/id")
        keyed, _ = self.owner.enqueue("refund@1", {"customer": {"id": "c1"}}, flow_key="acct_42")
        from_payload, _ = self.owner.enqueue("refund@1", {"customer": {"id": 7}})
        self.assertEqual((keyed["flowKey"], from_payload["flowKey"]), ("acct_42", "7"))
        self.assertEqual([j["id"] for j in self.owner.list_jobs(flow_key="acct_42")["jobs"]], [keyed["id"]])
        self.assertEqual(self.owner.count_jobs(flow_key="7"), 1)
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.enqueue("refund@1", {"customer": {"id": "c1"}}, flow_key=" acct")
        self.assertEqual([f["field"] for f in cm.exception.fields], ["flowKey"])
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.enqueue("refund@1", {"customer": {}})
        self.assertEqual([(f["field"], f["value"]) for f in cm.exception.fields], [("payload.customer.id", "(missing)")])

    def test_sort(self) -> None:
        """list_jobs takes a sort; its nextCursor continues that order; a
        finished order without a failed or exhausted state filter is a field
        error naming sort."""
        self.owner.create_endpoint({"name": "sorted"})
        self.owner.publish_tool({"name": "ordered", "version": "1", "endpoint": "sorted"})
        ids = [self.owner.enqueue("ordered@1", {"i": i})[0]["id"] for i in range(3)]
        first = self.owner.list_jobs(tool="ordered", sort="id_asc", limit=2)
        cursor = first["nextCursor"]
        assert cursor is not None
        rest = self.owner.list_jobs(tool="ordered", sort="id_asc", limit=2, cursor=cursor)
        self.assertEqual([j["id"] for j in first["jobs"] + rest["jobs"]], ids)
        self.assertEqual(self.owner.list_jobs(state=["failed", "exhausted"], sort="finished_desc")["jobs"], [])
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.list_jobs(sort="finished_desc")
        self.assertEqual([f["field"] for f in cm.exception.fields], ["sort"])

    def test_traceparent(self) -> None:
        """A traceparent given at enqueue is kept on the job and handed to
        the worker in the claim (the server runs without OTEL_* variables,
        so unchanged); a malformed one is a field error naming it."""
        tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        self.owner.create_endpoint({"name": "traced"})
        self.owner.publish_tool({"name": "traced", "version": "1", "endpoint": "traced"})
        job, _ = self.owner.enqueue("traced@1", {}, traceparent=tp, tracestate="rojo=1")
        self.assertEqual((job.get("traceparent"), job.get("tracestate")), (tp, "rojo=1"))
        claimed = self.owner.claim("w-trace", tools=["traced@1"])
        self.assertEqual([(j["id"], j.get("traceparent")) for j in claimed], [(job["id"], tp)])
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.enqueue("traced@1", {}, traceparent=tp.upper())
        self.assertEqual([f["field"] for f in cm.exception.fields], ["traceparent"])

    def test_every_route(self) -> None:
        """One call of each Client method against the server."""
        c = self.owner
        self.assertEqual(c.me()["key"]["scope"], "owner")
        self.assertEqual(c.healthz(), {"status": "ok", "version": c.openapi()["info"]["version"]})
        self.assertEqual(c.readyz(), {"status": "ready", "store": "sqlite"})
        self.assertEqual(c.openapi()["openapi"], "3.1.0")
        ep = c.create_endpoint({"name": "routes", "preset": "STANDARD", "maxConcurrent": 5})
        self.assertEqual(ep["maxConcurrent"], 5)
        self.assertIn("routes", [e["name"] for e in c.list_endpoints()])
        self.assertEqual(c.get_endpoint("routes")["name"], "routes")
        c.publish_tool({"name": "route", "version": "2", "endpoint": "routes", "payloadSchema": {"type": "object"}})
        self.assertEqual(c.get_tool("route", "2")["endpoint"], "routes")
        self.assertIn("route", [t["name"] for t in c.list_tools()])
        k = c.create_key("w", "worker", ["route@2"])
        self.assertTrue(k["key"].startswith("rk_"))
        self.assertIn(k["id"], [x["id"] for x in c.list_keys()])
        worker = self.server.client(k["key"])
        self.addCleanup(worker.close)
        self.assertEqual(worker.me()["key"]["tools"], ["route@2"])
        run = c.start_run("nightly")
        job, created = c.enqueue("route@2", {"n": 1}, idempotency_key="r-1", run_id=run["id"])
        self.assertTrue(created)
        again, created = c.enqueue("route@2", {"n": 1}, idempotency_key="r-1")
        self.assertEqual((again["id"], created), (job["id"], False))
        items = c.enqueue_batch([{"tool": "route@2", "payload": {"n": i}} for i in range(3)])
        self.assertEqual(len(items), 3)
        self.assertEqual(c.get_run(run["id"])["steps"][0]["id"], job["id"])
        self.assertEqual(c.finish_run(run["id"])["state"], "finished")
        self.assertIn((run["id"], "finished"), [(r["id"], r["state"]) for r in c.list_runs()["runs"]])
        self.assertEqual(c.count_jobs(tool="route@2"), 4)
        page = c.list_jobs(tool="route@2", limit=2)
        self.assertEqual(len(page["jobs"]), 2)
        self.assertIsNotNone(page["nextCursor"])
        self.assertEqual(len(list(c.iter_jobs(tool="route@2", limit=2))), 4)
        self.assertEqual(c.explain_job(job["id"])["gate"], "none")
        claimed = worker.claim("w1", max=10, wait_ms=1000)
        self.assertEqual(len(claimed), 4)
        mine = next(x for x in claimed if x["id"] == job["id"])
        self.assertEqual(mine["idempotencyKey"], "r-1")
        hb = worker.heartbeat(mine["id"], mine["leaseToken"])
        self.assertFalse(hb["cancelRequested"])
        res = worker.report({"jobId": mine["id"], "leaseToken": mine["leaseToken"], "httpStatus": 503, "headers": {"Retry-After": "60"}})
        self.assertEqual((res["decision"]["outcome"], res["decision"]["classification"]), ("retry", "retry_after"))
        with self.assertRaises(ratchet.RatchetError) as cm:
            worker.heartbeat(mine["id"], mine["leaseToken"])
        self.assertTrue(cm.exception.is_conflict)
        others = [x for x in claimed if x["id"] != job["id"]]
        results = worker.report_batch([ratchet.Outcome.ok().report(x["id"], x["leaseToken"]) for x in others])
        self.assertEqual([r["state"] for r in results], ["succeeded"] * 3)
        cancelled = c.cancel_job(job["id"])
        self.assertEqual(cancelled["state"], "cancelled")
        replay = c.replay_job(job["id"])
        self.assertEqual(replay["replayOf"], job["id"])
        n = c.count_jobs(tool="route@2", state=["scheduled"])
        self.assertEqual(n, 1)
        bulk = c.bulk("cancel", n, tool="route@2", state="scheduled")
        self.assertEqual((bulk["action"], bulk["count"]), ("cancel", 1))
        self.assertIn("routes", [e["name"] for e in c.overview()["endpoints"]])
        before = c.advance_clock(1)["now"]
        self.assertTrue(before)
        res = c.simulate({"from": 10, "to": 10, "step": 10, "runs": 1})
        self.assertIn("series", res)
        rec = c.simulate_recovery({"backlog": 200, "capacityPerS": 20, "strategies": ["at-once", "ramp"]})
        self.assertEqual([r["strategy"] for r in rec["runs"]], ["at-once", "ramp"])
        c.revoke_key(k["id"])
        with self.assertRaises(ratchet.RatchetError) as cm:
            worker.me()
        self.assertEqual(cm.exception.status, 401)


if __name__ == "__main__":
    unittest.main()
