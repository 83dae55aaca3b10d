"""GET /v1/stream through the Python client, against the real ratchet binary
on loopback."""

from __future__ import annotations

import unittest

from .support import ServerTestCase

import ratchet


class StreamTest(ServerTestCase):
    def test_job_stream_follows_a_report(self) -> None:
        tool = self.tool(timeout_ms=60_000)
        job, _ = self.owner.enqueue(tool)
        events = self.owner.stream(job=job["id"])
        try:
            event, data = next(events)
            self.assertEqual(event, "job")
            self.assertEqual(data["id"], job["id"])
            self.assertEqual(data["state"], "scheduled")
            [claimed] = self.owner.claim("py-stream-worker", [tool], max=1)
            self.assertEqual(claimed["id"], job["id"])
            self.owner.report({"jobId": claimed["id"], "leaseToken": claimed["leaseToken"], "success": True})
            # The stream sends the job again when it changed: running (if
            # the claim was seen apart), then succeeded.
            states = []
            for event, data in events:
                self.assertEqual(event, "job")
                states.append(data["state"])
                if data["state"] == "succeeded":
                    break
            self.assertEqual(states[-1], "succeeded")
            self.assertEqual(len(data["attempts"]), 1)
        finally:
            events.close()

    def test_jobs_view_counts_and_bad_queries(self) -> None:
        tool = self.tool()
        endpoint = tool.split("@")[0]
        self.owner.enqueue(tool)
        events = self.owner.stream(view="jobs", endpoint=endpoint)
        try:
            event, data = next(events)
            self.assertEqual(event, "jobs")
            self.assertEqual(data["counts"]["scheduled"], 1)
            self.assertEqual(data["total"], 1)
        finally:
            events.close()
        with self.assertRaises(ratchet.RatchetError) as cm:
            next(self.owner.stream(view="bogus"))
        self.assertEqual(cm.exception.status, 400)
        self.assertIn("view", [f["field"] for f in cm.exception.fields])
        with self.assertRaises(TypeError):
            next(self.owner.stream(view="jobs", colour="red"))


if __name__ == "__main__":
    unittest.main()
