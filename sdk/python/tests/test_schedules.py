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


if __name__ == "__main__":
    unittest.main()
