// Schedules through the SDK against the real ratchet binary: create,
// list, read, preview (fire = tick + the spread offset), pause, resume,
// delete; bad input is a 400 naming the field, a producer key may read
// but not create.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../dist/index.js";
import { fastEndpoint, ownerKey, startServer } from "./support/server.mjs";

test("schedules: create, list, preview, pause, resume, delete", async (t) => {
  const srv = await startServer();
  t.after(() => srv.stop());
  const owner = new Client(srv.url, ownerKey);
  await owner.createEndpoint(fastEndpoint("partners"));
  await owner.publishTool({ name: "sync", version: "1", endpoint: "partners" });
  const s = await owner.createSchedule({ name: "nightly", cron: "30 2 * * *", timeZone: "America/New_York", tool: "sync@1", payload: { at: "{{tickAt}}" }, spreadMs: 60000, overlap: "cancel_previous" });
  assert.equal(s.overlap, "cancel_previous");
  assert.equal(s.catchUp, "latest");
  assert.ok(s.spreadOffsetMs >= 0 && s.spreadOffsetMs < 60000);
  assert.equal(Date.parse(s.nextFireAt) - Date.parse(s.nextTickAt), s.spreadOffsetMs);
  assert.deepEqual((await owner.schedules()).map((x) => x.name), ["nightly"]);
  const fires = await owner.previewSchedule("nightly", { count: 3 });
  assert.equal(fires.length, 3);
  for (const f of fires) assert.equal(Date.parse(f.fireAt) - Date.parse(f.tickAt), s.spreadOffsetMs);
  assert.equal((await owner.pauseSchedule("nightly")).paused, true);
  assert.equal((await owner.resumeSchedule("nightly")).paused, false);
  assert.deepEqual((await owner.getSchedule("nightly")).lastTicks, []);
  await assert.rejects(owner.createSchedule({ name: "fast", cron: "@every 1s", tool: "sync@1" }), (e) => e.status === 400 && e.fields[0].field === "cron");
  const pk = await owner.createKey({ name: "producer", scope: "producer" });
  const producer = new Client(srv.url, pk.key);
  assert.equal((await producer.getSchedule("nightly")).name, "nightly");
  await assert.rejects(producer.createSchedule({ name: "x", cron: "@hourly", tool: "sync@1" }), (e) => e.status === 403);
  await owner.deleteSchedule("nightly");
  await assert.rejects(owner.getSchedule("nightly"), (e) => e.status === 404);
});

test("schedules: the list comes a page at a time; schedules() reads them all; fire now and the tick history", async (t) => {
  const srv = await startServer();
  t.after(() => srv.stop());
  const owner = new Client(srv.url, ownerKey);
  await owner.createEndpoint(fastEndpoint("partners"));
  await owner.publishTool({ name: "sync", version: "1", endpoint: "partners" });
  for (const name of ["c", "a", "b"]) await owner.createSchedule({ name, cron: "0 2 * * *", tool: "sync@1", paused: true });
  const first = await owner.schedulePage({ limit: 2 });
  assert.deepEqual(first.schedules.map((x) => x.name), ["a", "b"]);
  assert.equal(first.nextCursor, "b");
  const second = await owner.schedulePage({ cursor: first.nextCursor, limit: 2 });
  assert.deepEqual(second.schedules.map((x) => x.name), ["c"]);
  assert.equal(second.nextCursor, null);
  assert.deepEqual((await owner.schedules()).map((x) => x.name), ["a", "b", "c"]);
  const tick = await owner.fireSchedule("a");
  assert.equal(tick.outcome, "enqueued");
  assert.ok(tick.jobId > 0);
  const ticks = await owner.scheduleTicks("a", { limit: 10 });
  assert.deepEqual(ticks.ticks.map((x) => x.jobId), [tick.jobId]);
  assert.equal(ticks.nextCursor, null);
  assert.equal((await owner.getSchedule("a")).last24h.enqueued, 1);
  const pk = await owner.createKey({ name: "producer", scope: "producer" });
  await assert.rejects(new Client(srv.url, pk.key).fireSchedule("a"), (e) => e.status === 403);
});
