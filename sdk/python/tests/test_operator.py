"""The operator controls through the Client against the real ratchet binary."""

from __future__ import annotations

import datetime as _dt
import unittest

from .support import ServerTestCase

import ratchet


class OperatorControls(ServerTestCase):
    def test_pause_resume_circuits_run_now_and_audit(self) -> None:
        """Pause holds a due job (no attempt spent, heldBy paused naming who,
        when and why), resume releases it; a circuit opened by hand holds
        and closed by hand releases; run-now; the audit log lists every
        action; a producer key is refused (403)."""
        tool = self.tool()
        ep = tool.split("@")[0]
        job, _ = self.owner.enqueue(tool, {})
        pk = self.owner.create_key("producer", "producer")
        producer = ratchet.Client(self.server.url, pk["key"])
        self.addCleanup(producer.close)
        for name, call in [
            ("pause_endpoint", lambda: producer.pause_endpoint(ep, "x")),
            ("resume_endpoint", lambda: producer.resume_endpoint(ep)),
            ("close_circuit", lambda: producer.close_circuit(ep)),
            ("open_circuit", lambda: producer.open_circuit(ep)),
            ("run_now", lambda: producer.run_now(job["id"])),
            ("audit", lambda: producer.audit()),
        ]:
            with self.assertRaises(ratchet.RatchetError, msg=name) as cm:
                call()
            self.assertEqual(cm.exception.status, 403, name)

        paused = self.owner.pause_endpoint(ep, "provider incident #12")
        self.assertEqual((paused["paused"]["by"], paused["paused"]["reason"]), ("bootstrap owner", "provider incident #12"))
        self.assertEqual(self.owner.claim("w", [tool], max=5), [])
        j = producer.get_job(job["id"])
        self.assertEqual(j["attempt"], 0)
        self.assertEqual(j["heldBy"]["gate"], "paused")
        self.assertEqual(j["heldBy"]["detail"], f"endpoint {ep} was paused by bootstrap owner at {paused['paused']['at']}: provider incident #12")
        self.assertEqual([x["id"] for x in producer.held_jobs(ep)["jobs"]], [job["id"]])
        self.assertIsNone(self.owner.resume_endpoint(ep)["paused"])
        self.assertEqual(producer.held_jobs(ep, limit=5)["jobs"], [])
        keys = producer.flow_keys(ep, limit=5)
        self.assertEqual((keys["endpoint"], keys["keyed"], keys["keys"]), (ep, False, []))

        opened = self.owner.open_circuit(ep)
        self.assertEqual((opened["circuit"]["state"], opened["circuit"]["openedBy"]), ("open", "bootstrap owner"))
        self.assertEqual(producer.held_jobs(ep)["jobs"][0]["heldBy"]["gate"], "circuit")
        self.assertEqual(self.owner.close_circuit(ep)["circuit"]["state"], "closed")

        later, _ = self.owner.enqueue(tool, {}, run_at=_dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(hours=1))
        ran = self.owner.run_now(later["id"])
        self.assertLess(ran["dueAt"], later["dueAt"])
        self.assertEqual(len(self.owner.claim("w", [tool], max=5)), 2)
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.run_now(later["id"])
        self.assertEqual(cm.exception.status, 409)
        self.assertIn("running", str(cm.exception))

        entries = self.owner.audit(target="endpoint:" + ep)["entries"]
        self.assertEqual([e["action"] for e in entries], ["circuit.close", "circuit.open", "endpoint.resume", "endpoint.pause"])
        self.assertTrue(all(e["actor"] == "bootstrap owner" and e["keyPrefix"] for e in entries))
        first = self.owner.audit(limit=1)
        self.assertEqual(first["entries"][0]["action"], "job.run_now")
        self.assertIsNotNone(first["nextCursor"])
        nxt = self.owner.audit(limit=1, cursor=first["nextCursor"])
        self.assertLess(nxt["entries"][0]["id"], first["entries"][0]["id"])


if __name__ == "__main__":
    unittest.main()
