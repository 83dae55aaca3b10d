// The operator controls through the SDK against the real ratchet binary:
// pause holds a due job (no attempt spent) with heldBy paused naming who,
// when and why; resume releases it; a circuit opened by hand holds and
// closed by hand releases; run-now; every action is in the audit log; a
// producer key is refused (403) on the owner actions.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../dist/index.js";
import { fastEndpoint, ownerKey, startServer } from "./support/server.mjs";

test("operator controls: pause, resume, circuits, held jobs, run-now and the audit log", async (t) => {
  const srv = await startServer();
  t.after(() => srv.stop());
  const owner = new Client(srv.url, ownerKey);
  await owner.createEndpoint(fastEndpoint("payments"));
  await owner.publishTool({ name: "pay", version: "1", endpoint: "payments" });
  const pk = await owner.createKey({ name: "producer", scope: "producer" });
  const producer = new Client(srv.url, pk.key);
  const { job } = await owner.enqueue({ tool: "pay@1", payload: {} });

  for (const [name, call] of [
    ["pauseEndpoint", () => producer.pauseEndpoint("payments", "x")],
    ["resumeEndpoint", () => producer.resumeEndpoint("payments")],
    ["closeCircuit", () => producer.closeCircuit("payments")],
    ["openCircuit", () => producer.openCircuit("payments")],
    ["runNow", () => producer.runNow(job.id)],
    ["audit", () => producer.audit()],
  ]) {
    const err = await call().catch((e) => e);
    assert.equal(err.status, 403, `${name} with a producer key`);
  }

  const ep = await owner.pauseEndpoint("payments", "provider incident #12");
  assert.equal(ep.paused.by, "bootstrap owner");
  assert.equal(ep.paused.reason, "provider incident #12");
  assert.deepEqual(await owner.claim({ workerId: "w", tools: ["pay@1"], max: 5 }), []);
  const j = await producer.getJob(job.id);
  assert.equal(j.attempt, 0);
  assert.equal(j.heldBy.gate, "paused");
  assert.equal(j.heldBy.detail, `endpoint payments was paused by bootstrap owner at ${ep.paused.at}: provider incident #12`);
  const held = await producer.heldJobs("payments");
  assert.deepEqual(held.jobs.map((x) => x.id), [job.id]);
  assert.equal(held.jobs[0].heldBy.gate, "paused");
  assert.equal((await owner.resumeEndpoint("payments")).paused, null);
  assert.deepEqual((await producer.heldJobs("payments", { limit: 10 })).jobs, []);
  const keys = await producer.flowKeys("payments", { limit: 5 });
  assert.deepEqual([keys.endpoint, keys.keyed, keys.keys], ["payments", false, []]);
  await assert.rejects(producer.flowKeys("payments", { limit: 101 }), (e) => e.status === 400 && /limit/.test(e.message));

  const open = await owner.openCircuit("payments");
  assert.equal(open.circuit.state, "open");
  assert.equal(open.circuit.openedBy, "bootstrap owner");
  assert.equal((await producer.heldJobs("payments")).jobs[0].heldBy.gate, "circuit");
  assert.equal((await owner.closeCircuit("payments")).circuit.state, "closed");

  const later = (await owner.enqueue({ tool: "pay@1", runAt: new Date(Date.now() + 3600_000).toISOString() })).job;
  const ran = await owner.runNow(later.id);
  assert.ok(Date.parse(ran.dueAt) < Date.parse(later.dueAt));
  assert.equal(ran.attempt, 0);
  const claimed = await owner.claim({ workerId: "w", tools: ["pay@1"], max: 5 });
  assert.equal(claimed.length, 2);
  const conflict = await owner.runNow(later.id).catch((e) => e);
  assert.equal(conflict.status, 409);
  assert.match(conflict.message, /running/);
  const bulk = await owner.bulkJobIds("run_now", [job.id]);
  assert.equal(bulk.count, 0);
  assert.equal(bulk.failed[0].id, job.id);

  const audit = await owner.audit({ target: "endpoint:payments" });
  assert.deepEqual(audit.entries.map((e) => e.action), ["circuit.close", "circuit.open", "endpoint.resume", "endpoint.pause"]);
  assert.ok(audit.entries.every((e) => e.actor === "bootstrap owner" && e.keyPrefix && e.at));
  const first = await owner.audit({ limit: 1 });
  assert.equal(first.entries[0].action, "bulk.run_now");
  assert.ok(first.nextCursor);
  const next = await owner.audit({ limit: 1, cursor: first.nextCursor });
  assert.equal(next.entries[0].action, "job.run_now");
});
