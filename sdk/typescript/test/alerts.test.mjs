// Alert sinks, thresholds and the endpoint event log through the SDK
// against the real ratchet binary: a webhook sink's secret comes once and
// is never listed; a private address and a threshold out of bounds are
// field errors; a test alert is queued and listed; a pause is in the
// endpoint's event log.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../dist/index.js";
import { fastEndpoint, ownerKey, startServer } from "./support/server.mjs";

test("alerts: sinks, thresholds, a test alert and the event log", async (t) => {
  const srv = await startServer();
  t.after(() => srv.stop());
  const c = new Client(srv.url, ownerKey);
  await c.createEndpoint(fastEndpoint("payments"));
  const k = await c.createAlertSink({ name: "pager", kind: "webhook", url: "https://hooks.example.com/ratchet" });
  assert.match(k.secret, /^whsec_/);
  const bad = await c.createAlertSink({ name: "local", kind: "slack", url: "http://10.1.2.3/hook" }).catch((e) => e);
  assert.deepEqual(bad.fields.map((f) => f.field), ["url"]);
  const listed = await c.alertSinks();
  assert.deepEqual(listed.sinks.map((s) => s.name), ["pager"]);
  assert.equal(listed.sinks[0].secret, undefined);
  const out = await c.setAlertSettings({ ...listed.settings, maxPerWindow: 101 }).catch((e) => e);
  assert.deepEqual(out.fields.map((f) => f.field), ["maxPerWindow"]);
  assert.equal((await c.setAlertSettings({ ...listed.settings, maxPerWindow: 3 })).maxPerWindow, 3);
  assert.equal((await c.testAlertSink("pager")).sink, "pager");
  assert.deepEqual((await c.alerts({ limit: 5 })).deliveries.map((d) => d.alert.kind), ["test"]);
  await c.pauseEndpoint("payments", "x");
  assert.deepEqual((await c.endpointEvents("payments")).events.map((e) => e.kind), ["paused"]);
  await c.deleteAlertSink("pager");
  assert.deepEqual((await c.alertSinks()).sinks, []);
});
