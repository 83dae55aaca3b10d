// Workers and history through the TypeScript client, against the real
// ratchet binary on 127.0.0.1 (with --dev-clock to close the minute).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, RatchetError } from "../dist/index.js";
import { fastEndpoint, ownerKey, startServer, waitFor } from "./support/server.mjs";

test("workers lists who claimed and what it holds; history counts the minute's attempts", async (t) => {
  const srv = await startServer();
  t.after(() => srv.stop());
  const owner = new Client(srv.url, ownerKey);
  await owner.createEndpoint(fastEndpoint("provider"));
  await owner.publishTool({ name: "call", version: "1", endpoint: "provider" });
  for (let i = 0; i < 3; i++) await owner.enqueue({ tool: "call@1" });
  const held = await owner.claim({ workerId: "ts-a", tools: ["call@1"], max: 2 });
  assert.equal(held.length, 2);
  const [done] = await owner.claim({ workerId: "ts-b", tools: ["call@1"], max: 1 });
  await owner.report({ jobId: done.id, leaseToken: done.leaseToken, success: true });

  const { workers } = await owner.workers();
  assert.deepEqual(workers.map((w) => [w.workerId, w.holding]), [["ts-b", 0], ["ts-a", 2]]);
  assert.deepEqual([...workers[1].jobs].sort(), held.map((c) => c.id).sort());
  assert.ok(workers[0].lastReportAt && workers[0].lastClaimAt && workers[0].lastHeartbeatAt === null);

  await owner.advanceClock(120_000);
  const h = await waitFor("the minute rolled up", async () => {
    const h = await owner.history({ endpoint: "provider", hours: 1 });
    return h.series[0].points.length > 0 ? h : false;
  });
  assert.equal(h.minuteMs, 60000);
  const sum = (k) => h.series[0].points.reduce((n, p) => n + p[k], 0);
  assert.equal(sum("claims"), 3);
  assert.equal(sum("succeeded"), 1);
  assert.equal(sum("failed") + sum("timedOut"), 0);

  const bad = await owner.history({ hours: 49 }).catch((e) => e);
  assert.ok(bad instanceof RatchetError);
  assert.equal(bad.status, 400);
  assert.equal(bad.fields[0].field, "hours");
});
