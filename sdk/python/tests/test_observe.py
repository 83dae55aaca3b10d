"""Workers and history through the Python client, against the real ratchet
binary on loopback (with --dev-clock to close the minute)."""

from __future__ import annotations

import unittest

from .support import ServerTestCase, wait_for

import ratchet


class ObserveTest(ServerTestCase):
    def test_workers_and_history(self) -> None:
        tool = self.tool(timeout_ms=60_000)
        endpoint = tool.split("@")[0]
        for _ in range(3):
            self.owner.enqueue(tool)
        held = self.owner.claim("py-a", [tool], max=2)
        self.assertEqual(len(held), 2)
        [done] = self.owner.claim("py-b", [tool], max=1)
        self.owner.report({"jobId": done["id"], "leaseToken": done["leaseToken"], "success": True})

        workers = {w["workerId"]: w for w in self.owner.workers()["workers"]}
        self.assertEqual(workers["py-a"]["holding"], 2)
        self.assertEqual(sorted(workers["py-a"]["jobs"]), sorted(c["id"] for c in held))
        self.assertIsNone(workers["py-a"]["lastReportAt"])
        self.assertEqual(workers["py-b"]["holding"], 0)
        self.assertIsNotNone(workers["py-b"]["lastReportAt"])

        self.owner.advance_clock(120_000)
        h = wait_for(lambda: self.owner.history(endpoint=endpoint, hours=1), lambda h: len(h["series"][0]["points"]) > 0, "the minute rolled up")
        points = h["series"][0]["points"]
        self.assertEqual(h["minuteMs"], 60000)
        self.assertEqual(sum(p["claims"] for p in points), 3)
        self.assertEqual(sum(p["succeeded"] for p in points), 1)

        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.history(hours=0)
        self.assertEqual(cm.exception.status, 400)
        self.assertEqual(cm.exception.fields[0]["field"], "hours")


if __name__ == "__main__":
    unittest.main()
