"""Schedules through the Client against the real ratchet binary."""

from __future__ import annotations

import datetime as _dt
import unittest

from .support import ServerTestCase

import ratchet


def _ms(s: str) -> int:
    return int(_dt.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() * 1000)


class Schedules(ServerTestCase):
    def test_create_list_preview_pause_resume_delete(self) -> None:
        """A schedule is created, listed, previewed with its spread offset,
        paused, resumed and deleted; bad input is a 400 naming the field."""
        tool = self.tool()
        s = self.owner.create_schedule({"name": "nightly", "cron": "30 2 * * *", "timeZone": "Europe/London", "tool": tool,
                                        "payload": {"at": "{{tickAt}}"}, "spreadMs": 60000})
        self.assertEqual((s["overlap"], s["catchUp"]), ("skip", "latest"))
        self.assertEqual(_ms(s["nextFireAt"]) - _ms(s["nextTickAt"]), s["spreadOffsetMs"])
        self.assertEqual([x["name"] for x in self.owner.schedules()], ["nightly"])
        fires = self.owner.preview_schedule("nightly", count=3)
        self.assertEqual(len(fires), 3)
        for f in fires:
            self.assertEqual(_ms(f["fireAt"]) - _ms(f["tickAt"]), s["spreadOffsetMs"])
        self.assertTrue(self.owner.pause_schedule("nightly")["paused"])
        self.assertFalse(self.owner.resume_schedule("nightly")["paused"])
        self.assertEqual(self.owner.get_schedule("nightly")["lastTicks"], [])
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.create_schedule({"name": "moon", "cron": "@hourly", "timeZone": "Moon/Base", "tool": tool})
        self.assertEqual((cm.exception.status, cm.exception.fields[0]["field"]), (400, "timeZone"))
        self.owner.delete_schedule("nightly")
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.get_schedule("nightly")
        self.assertEqual(cm.exception.status, 404)

    def test_pages_fire_now_and_ticks(self) -> None:
        """The list comes a page at a time and schedules() reads every page;
        an owner fires a paused schedule now and its tick is in the
        history and the 24 h counts."""
        tool = self.tool()
        for name in ["c", "a", "b"]:
            self.owner.create_schedule({"name": name, "cron": "0 2 * * *", "tool": tool, "paused": True})
        first = self.owner.schedule_page(limit=2)
        self.assertEqual(([x["name"] for x in first["schedules"]], first["nextCursor"]), (["a", "b"], "b"))
        second = self.owner.schedule_page(cursor=first["nextCursor"], limit=2)
        self.assertEqual(([x["name"] for x in second["schedules"]], second["nextCursor"]), (["c"], None))
        self.assertEqual([x["name"] for x in self.owner.schedules()], ["a", "b", "c"])
        tick = self.owner.fire_schedule("a")
        self.assertEqual(tick["outcome"], "enqueued")
        ticks = self.owner.schedule_ticks("a", limit=10)
        self.assertEqual(([x["jobId"] for x in ticks["ticks"]], ticks["nextCursor"]), ([tick["jobId"]], None))
        self.assertEqual(self.owner.get_schedule("a")["last24h"]["enqueued"], 1)


if __name__ == "__main__":
    unittest.main()
