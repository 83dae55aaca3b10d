"""Alert sinks, thresholds and the endpoint event log through the Client
against the real ratchet binary."""

from __future__ import annotations

import unittest

from .support import ServerTestCase

import ratchet


class Alerts(ServerTestCase):
    def test_sinks_settings_test_alert_and_events(self) -> None:
        """A webhook sink's secret comes once and is never listed; a private
        address and a threshold out of bounds are field errors; a test alert
        is queued and listed; a pause is in the endpoint's event log."""
        ep = self.tool().split("@")[0]
        k = self.owner.create_alert_sink("pager", "webhook", "https://hooks.example.com/ratchet")
        self.assertTrue(k["secret"].startswith("whsec_"))
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.create_alert_sink("local", "slack", "http://10.1.2.3/hook")
        self.assertEqual([f["field"] for f in cm.exception.fields], ["url"])
        listed = self.owner.alert_sinks()
        self.assertEqual([s["name"] for s in listed["sinks"]], ["pager"])
        self.assertNotIn("secret", listed["sinks"][0])
        settings = dict(listed["settings"], maxPerWindow=101)
        with self.assertRaises(ratchet.RatchetError) as cm:
            self.owner.set_alert_settings(settings)  # type: ignore[arg-type]
        self.assertEqual([f["field"] for f in cm.exception.fields], ["maxPerWindow"])
        self.assertEqual(self.owner.set_alert_settings(dict(listed["settings"], maxPerWindow=3))["maxPerWindow"], 3)  # type: ignore[arg-type]
        self.assertEqual(self.owner.test_alert_sink("pager")["sink"], "pager")
        self.assertEqual([d["alert"]["kind"] for d in self.owner.alerts(limit=5)["deliveries"]], ["test"])
        self.owner.pause_endpoint(ep, "x")
        self.assertEqual([e["kind"] for e in self.owner.endpoint_events(ep)["events"]], ["paused"])
        self.owner.delete_alert_sink("pager")
        self.assertEqual(self.owner.alert_sinks()["sinks"], [])


if __name__ == "__main__":
    unittest.main()
