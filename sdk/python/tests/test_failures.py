"""Failure groups and replay by filter through the Client against the real ratchet binary."""

from __future__ import annotations

import datetime as _dt
import unittest

from .support import ServerTestCase

import ratchet


class Failures(ServerTestCase):
    def test_groups_preview_replay_and_audit(self) -> None:
        """Failures whose messages differ only in numbers and ids group
        together; a preview counts and changes nothing; a replay with a
        stale count is a 409; the confirmed replay makes new jobs and an
        audit entry; a bad filter is a 400 naming the field."""
        tool = self.tool(max_attempts=1)
        ep = tool.split("@")[0]
        for msg in ["timeout after 3012ms on req 8f3a", "timeout after 2990ms on req 77b1", "card '4242' declined"]:
            self.owner.enqueue(tool, {})
            (j,) = self.owner.claim("w", [tool], max=1)
            self.owner.report({"jobId": j["id"], "leaseToken": j["leaseToken"], "httpStatus": 503, "message": msg})

        since = _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(hours=1)
        groups = self.owner.failures(ep, since=since, buckets=6)
        self.assertEqual(len(groups["groups"]), 2)
        g = groups["groups"][0]
        self.assertEqual((g["count"], g["classification"], g["fingerprint"]), (2, "server_error", "timeout after <n>ms on req <hex>"))
        self.assertEqual((len(g["sparkline"]), sum(g["sparkline"])), (6, 2))
        self.assertFalse(groups["capped"])

        pre = self.owner.preview_replay_failures(endpoint=ep, group=g["group"])
        self.assertEqual((pre["preview"], pre["count"], pre["replayed"]), (True, 2, 0))
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.replay_failures(1, endpoint=ep, group=g["group"])
        self.assertEqual(cm.exception.status, 409)
        res = self.owner.replay_failures(2, endpoint=ep, group=g["group"], since=since)
        self.assertEqual((res["replayed"], len(res["jobs"])), (2, 2))
        entry = self.owner.audit(target="endpoint:" + ep)["entries"][0]
        self.assertEqual(entry["action"], "failures.replay")
        self.assertTrue(entry["detail"].startswith("replayed 2 of 2 failed jobs"), entry["detail"])
        self.assertEqual(self.owner.preview_replay_failures(endpoint=ep, group=g["group"])["skipped"], 2)

        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.preview_replay_failures(state="running")
        self.assertEqual((cm.exception.status, cm.exception.fields[0]["field"]), (400, "state"))
        with self.assertRaises(TypeError):
            self.owner.preview_replay_failures(colour="red")


if __name__ == "__main__":
    unittest.main()
