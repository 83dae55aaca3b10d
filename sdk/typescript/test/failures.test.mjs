// Failure groups and replay by filter through the SDK against the real
// ratchet binary: failures whose messages differ only in numbers and ids
// group together; a preview counts and changes nothing; a replay with a
// stale count rejects with 409; the confirmed replay makes new jobs and an
// audit entry; a bad filter rejects with 400 naming the field.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../dist/index.js";
import { ownerKey, startServer } from "./support/server.mjs";

test("failures: groups, preview, replay by group and the audit entry", async (t) => {
  const srv = await startServer();
  t.after(() => srv.stop());
  const c = new Client(srv.url, ownerKey);
  await c.createEndpoint({ name: "payments", preset: "STANDARD", maxConcurrent: 10 });
  await c.publishTool({ name: "pay", version: "1", endpoint: "payments" });
  const fail = async (message) => {
    await c.enqueue({ tool: "pay@1", payload: {}, maxAttempts: 1 });
    const [j] = await c.claim({ workerId: "w", tools: ["pay@1"], max: 1 });
    await c.report({ jobId: j.id, leaseToken: j.leaseToken, httpStatus: 503, message });
  };
  await fail("timeout after 3012ms on req 8f3a");
  await fail("timeout after 2990ms on req 77b1");
  await fail('no route to "10.0.0.7"');

  const list = await c.failures("payments", { buckets: 6, since: new Date(Date.now() - 3600_000) });
  assert.equal(list.groups.length, 2);
  const [g] = list.groups;
  assert.deepEqual([g.count, g.exhausted, g.classification, g.fingerprint], [2, 2, "server_error", "timeout after <n>ms on req <hex>"]);
  assert.equal(g.sparkline.length, 6);
  assert.equal(g.sparkline.reduce((a, b) => a + b, 0), 2);
  assert.equal(list.capped, false);

  const pre = await c.previewReplayFailures({ endpoint: "payments", group: g.group });
  assert.deepEqual([pre.preview, pre.count, pre.replayed], [true, 2, 0]);
  await assert.rejects(c.replayFailures({ endpoint: "payments", group: g.group }, 1), (e) => e.status === 409);
  const res = await c.replayFailures({ endpoint: "payments", group: g.group }, 2);
  assert.deepEqual([res.preview, res.replayed, res.jobs.length], [false, 2, 2]);
  const audit = await c.audit({ target: "endpoint:payments" });
  assert.equal(audit.entries[0].action, "failures.replay");
  assert.match(audit.entries[0].detail, /^replayed 2 of 2 failed jobs/);
  assert.equal((await c.previewReplayFailures({ endpoint: "payments", group: g.group })).skipped, 2);

  await assert.rejects(c.previewReplayFailures({ state: "running" }), (e) => e.status === 400 && e.fields?.[0]?.field === "state");
  await assert.rejects(c.failures("payments", { buckets: 0 }), (e) => e.status === 400 && /buckets/.test(e.message));
});
