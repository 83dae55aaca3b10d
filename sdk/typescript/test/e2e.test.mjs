// End-to-end scenarios against the real ratchet binary on 127.0.0.1: each
// test starts its own server (with --dev-clock) and talks to it only
// through the SDK. Waits poll with a deadline; nothing asserts on speed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, JobAbortedError, RatchetError, Worker, permanent, reportFromResponse, sleep } from "../dist/index.js";
import { fastEndpoint, ownerKey, startProvider, startServer, waitFor } from "./support/server.mjs";

/** scenario starts a server, an owner client, an endpoint and tool "call@1", and cleans up. */
async function scenario(t, endpoint = {}) {
  const srv = await startServer();
  t.after(() => srv.stop());
  const owner = new Client(srv.url, ownerKey);
  await owner.createEndpoint(fastEndpoint("provider", endpoint));
  await owner.publishTool({ name: "call", version: "1", endpoint: "provider" });
  const wk = await owner.createKey({ name: "worker", scope: "worker", tools: ["call@1"] });
  const workerClient = new Client(srv.url, wk.key);
  const errors = [];
  const reports = [];
  const workers = [];
  const newWorker = (opts = {}) => {
    const w = new Worker(workerClient, {
      id: "ts-test",
      concurrency: 4,
      waitMs: 500,
      handleSignals: false,
      onError: (e) => errors.push(e),
      onReported: (results, rs) => reports.push(...rs.map((r, i) => ({ report: r, result: results[i] }))),
      ...opts,
    });
    workers.push(w);
    return w;
  };
  t.after(() => Promise.all(workers.map((w) => w.stop({ graceMs: 0 }))));
  const until = (id, what, ok, timeoutMs) =>
    waitFor(`job ${id} ${what}`, async () => {
      const j = await owner.getJob(id);
      return ok(j) ? j : false;
    }, { timeoutMs });
  return { srv, owner, newWorker, errors, reports, until };
}

test("1: a 503 with Retry-After from the provider is retried no sooner than the hint, then succeeds", async (t) => {
  const s = await scenario(t);
  const provider = await startProvider((n) => (n === 1 ? { status: 503, headers: { "Retry-After": "2" }, body: "busy" } : { status: 200, body: "ok" }));
  t.after(() => provider.close());
  const w = s.newWorker();
  w.handle("call@1", async (job, signal) => {
    const resp = await fetch(provider.url, { method: "POST", body: JSON.stringify(job.payload), headers: { "Idempotency-Key": job.idempotencyKey }, signal });
    await resp.arrayBuffer();
    return reportFromResponse(resp);
  });
  const run = w.run();
  const { job, created } = await s.owner.enqueue({ tool: "call@1", payload: { orderId: 42 }, idempotencyKey: "order-42" });
  assert.equal(created, true);
  const j = await s.until(job.id, "succeeded", (j) => j.state === "succeeded");
  assert.equal(j.attempts.length, 2);
  const [a1, a2] = j.attempts;
  assert.equal(a1.outcome, "failed");
  assert.equal(a1.classification, "retry_after");
  assert.equal(a1.httpStatus, 503);
  assert.equal(a1.retryAfterMs, 2000);
  assert.ok(a1.selectedDelayMs >= 2000, `selected delay ${a1.selectedDelayMs} is shorter than the hint`);
  assert.ok(Date.parse(a1.nextDueAt) - Date.parse(a1.finishedAt) >= 2000);
  assert.ok(Date.parse(a2.claimedAt) >= Date.parse(a1.nextDueAt), "attempt 2 ran before its due time");
  assert.equal(a2.outcome, "succeeded");
  assert.equal(provider.calls(), 2);
  assert.equal(provider.requests[0].headers["idempotency-key"], "order-42");
  await w.stop();
  await run;
});

// A 2 s lease, not 1 s: a heartbeat gives up after two thirds of the lease,
// and on a loaded machine (the whole suite side by side, load 30 on two
// cores) one loopback heartbeat took longer than 666 ms.
test("2: a handler outliving its 2 s lease is kept alive by heartbeats and succeeds in one attempt", async (t) => {
  const s = await scenario(t, { defaultTimeoutMs: 2000 });
  let aborted = false;
  const w = s.newWorker();
  w.handle("call@1", async (job, signal) => {
    await sleep(5000, signal).catch(() => (aborted = true));
  });
  const run = w.run();
  const { job } = await s.owner.enqueue({ tool: "call@1" });
  const j = await s.until(job.id, "succeeded", (j) => j.state === "succeeded");
  assert.equal(aborted, false, "the handler's signal fired");
  assert.equal(j.attempts.length, 1);
  assert.equal(j.attempts[0].outcome, "succeeded");
  assert.ok(j.attempts[0].durationMs >= 4900, `duration ${j.attempts[0].durationMs} ms`);
  assert.equal(s.errors.length, 0, s.errors.join("\n"));
  await w.stop();
  await run;
});

test("3: a cancel requested mid-handler aborts the handler's signal and the job ends cancelled", async (t) => {
  const s = await scenario(t, { defaultTimeoutMs: 1500 });
  let started;
  const startedP = new Promise((r) => (started = r));
  let reason;
  const w = s.newWorker();
  w.handle("call@1", async (job, signal) => {
    started();
    await sleep(30_000, signal).catch((e) => (reason = e));
    throw reason;
  });
  const run = w.run();
  const { job } = await s.owner.enqueue({ tool: "call@1" });
  await startedP;
  const c = await s.owner.cancelJob(job.id);
  assert.equal(c.cancelRequested, true);
  const j = await s.until(job.id, "cancelled", (j) => j.state === "cancelled");
  assert.ok(reason instanceof JobAbortedError, String(reason));
  assert.equal(reason.kind, "cancel_requested");
  assert.equal(j.attempts.length, 1);
  await w.stop();
  await run;
});

test("4: a lost lease (rescued after the clock passed it) aborts the handler, and that lease is not reported", async (t) => {
  // A 9 s lease: heartbeats every 3 s, so the server's rescue (every 250 ms)
  // comes between the clock jump and the next heartbeat.
  const s = await scenario(t, { defaultTimeoutMs: 9000 });
  let started;
  const startedP = new Promise((r) => (started = r));
  const reasons = [];
  const w = s.newWorker();
  w.handle("call@1", async (job, signal) => {
    if (job.attempt === 1) {
      started();
      await sleep(60_000, signal).catch((e) => reasons.push(e));
      return; // "success" after the lease is gone: must not be reported
    }
  });
  const run = w.run();
  const { job } = await s.owner.enqueue({ tool: "call@1" });
  await startedP;
  await s.owner.advanceClock(20_000);
  await s.until(job.id, "rescued", (j) => j.attempts[0]?.outcome === "timed_out", 10_000);
  const j = await s.until(job.id, "succeeded", (j) => j.state === "succeeded");
  // The next heartbeat of the first lease (≤ 3 s after the jump) gets 409.
  await waitFor("the first handler is aborted", () => reasons.length === 1, { timeoutMs: 10_000 });
  await sleep(200); // let the aborted handler return: its result must not be reported
  assert.ok(reasons[0] instanceof JobAbortedError);
  assert.equal(reasons[0].kind, "lease_lost");
  assert.deepEqual(j.attempts.map((a) => [a.outcome, a.classification]), [["timed_out", "timed_out"], ["succeeded", "success"]]);
  assert.equal(s.reports.length, 1, `reports sent: ${JSON.stringify(s.reports)}`);
  assert.equal(s.reports[0].result.ok, true);
  await w.stop();
  await run;
});

test("5: a non-retryable failure (permanent, or a 400 from the provider) fails the job after one attempt", async (t) => {
  const s = await scenario(t);
  const provider = await startProvider(() => ({ status: 400, body: "bad request" }));
  t.after(() => provider.close());
  const w = s.newWorker();
  w.handle("call@1", async (job, signal) => {
    if (job.payload.kind === "permanent") throw permanent(new Error("card declined"));
    return reportFromResponse(await fetch(provider.url, { method: "POST", signal }));
  });
  const run = w.run();
  const a = (await s.owner.enqueue({ tool: "call@1", payload: { kind: "permanent" } })).job;
  const b = (await s.owner.enqueue({ tool: "call@1", payload: { kind: "http" } })).job;
  const ja = await s.until(a.id, "failed", (j) => j.state === "failed");
  const jb = await s.until(b.id, "failed", (j) => j.state === "failed");
  assert.deepEqual(ja.attempts.map((x) => [x.outcome, x.classification, x.message]), [["failed", "worker_fail", "card declined"]]);
  assert.deepEqual(jb.attempts.map((x) => [x.outcome, x.classification, x.httpStatus]), [["failed", "client_error", 400]]);
  await w.stop();
  await run;
});

test("6: every attempt failing retryably ends the job exhausted after maxAttempts", async (t) => {
  const s = await scenario(t, { maxAttempts: 3 });
  const provider = await startProvider(() => ({ status: 503, body: "down" }));
  t.after(() => provider.close());
  const w = s.newWorker();
  // A fetch Response returned as it is counts as reportFromResponse(response).
  w.handle("call@1", (job, signal) => fetch(provider.url, { method: "POST", signal }));
  const run = w.run();
  const { job } = await s.owner.enqueue({ tool: "call@1" });
  const j = await s.until(job.id, "exhausted", (j) => j.state === "exhausted");
  assert.deepEqual(j.attempts.map((a) => [a.outcome, a.httpStatus]), [["failed", 503], ["failed", 503], ["failed", 503]]);
  assert.equal(j.attempts[2].nextDueAt, null);
  assert.equal(provider.calls(), 3);
  await w.stop();
  await run;
});

test("9: the API's field errors surface as a RatchetError with the fields", async (t) => {
  const s = await scenario(t);
  const e1 = await s.owner.publishTool({ name: "charge", version: "not a version!", endpoint: "provider" }).catch((e) => e);
  assert.ok(e1 instanceof RatchetError, String(e1));
  assert.equal(e1.status, 400);
  assert.equal(e1.code, "invalid_request");
  assert.deepEqual(e1.fields.map((f) => [f.field, f.value]), [["version", '"not a version!"']]);
  assert.match(e1.fields[0].allowed, /1–32 characters/);

  const e2 = await s.owner.enqueue({ tool: "call@1", maxAttempts: 11 }).catch((e) => e);
  assert.deepEqual(e2.fields.map((f) => [f.field, f.value]), [["maxAttempts", "11"]]);
  assert.match(e2.fields[0].allowed, /1 through 10/);

  // A stale expectedVersion: 409 with the endpoint as it is now.
  const ep = await s.owner.getEndpoint("provider");
  const upd = { expectedVersion: ep.version, preset: "AGGRESSIVE", defaultTimeoutMs: 2000, maxConcurrent: 3, rateLimitPerMinute: null };
  await s.owner.updateEndpointPolicy("provider", upd);
  const e3 = await s.owner.updateEndpointPolicy("provider", { ...upd, maxConcurrent: 9 }).catch((e) => e);
  assert.equal(e3.status, 409);
  assert.equal(e3.isConflict, true);
  assert.equal(e3.current.version, ep.version + 1);
  assert.equal(e3.current.maxConcurrent, 3);

  const e4 = await new Client(s.srv.url, "rk_wrong").me().catch((e) => e);
  assert.deepEqual([e4.status, e4.code], [401, "unauthenticated"]);
  const e5 = await s.owner.getJob(999).catch((e) => e);
  assert.equal(e5.isNotFound, true);
});

test("flow keys: given at enqueue or taken from the payload by flowKeyFrom, shown on the job, filtered on", async (t) => {
  const s = await scenario(t);
  const tool = await s.owner.publishTool({ name: "refund", version: "1", endpoint: "provider", flowKeyFrom: "/customer/id" });
  assert.equal(tool.flowKeyFrom, "/customer/id");
  const { job: keyed } = await s.owner.enqueue({ tool: "refund@1", payload: { customer: { id: "c1" } }, flowKey: "acct_42" });
  const { job: fromPayload } = await s.owner.enqueue({ tool: "refund@1", payload: { customer: { id: 7 } } });
  assert.deepEqual([keyed.flowKey, fromPayload.flowKey], ["acct_42", "7"]);
  assert.deepEqual((await s.owner.listJobs({ flowKey: "acct_42" })).jobs.map((j) => j.id), [keyed.id]);
  assert.equal(await s.owner.countJobs({ flowKey: "7" }), 1);
  const e = await s.owner.enqueue({ tool: "refund@1", payload: { customer: {} } }).catch((x) => x);
  assert.ok(e instanceof RatchetError, String(e));
  assert.deepEqual(e.fields.map((f) => [f.field, f.value]), [["payload.customer.id", "(missing)"]]);
});

test("sort: listJobs takes an order, its cursor continues it, a bad one is a 400 naming sort", async (t) => {
  const s = await scenario(t);
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await s.owner.enqueue({ tool: "call@1", payload: { i } })).job.id);
  const asc = await s.owner.listJobs({ state: "scheduled", sort: "id_asc", limit: 2 });
  const rest = await s.owner.listJobs({ state: "scheduled", sort: "id_asc", limit: 2, cursor: asc.nextCursor });
  const all = [...asc.jobs, ...rest.jobs].map((j) => j.id);
  assert.deepEqual(all.filter((id) => ids.includes(id)), ids);
  assert.deepEqual(all, [...all].sort((a, b) => a - b));
  assert.deepEqual((await s.owner.listJobs({ state: ["failed", "exhausted"], sort: "finished_desc" })).jobs, []);
  const e = await s.owner.listJobs({ sort: "finished_desc" }).catch((x) => x);
  assert.ok(e instanceof RatchetError, String(e));
  assert.deepEqual(e.fields.map((f) => f.field), ["sort"]);
});

test("every route of the document answers through the typed client", async (t) => {
  const s = await scenario(t);
  const c = s.owner;
  assert.equal((await c.me()).key.scope, "owner");
  const pk = await c.createKey({ name: "producer", scope: "producer" });
  assert.match(pk.key, /^rk_/);
  assert.ok((await c.listKeys()).some((k) => k.id === pk.id));
  await c.revokeKey(pk.id);
  assert.ok((await c.listKeys()).find((k) => k.id === pk.id).revokedAt);
  assert.deepEqual((await c.listEndpoints()).map((e) => e.name), ["provider"]);
  assert.equal((await c.getTool("call", "1")).endpoint, "provider");
  assert.equal((await c.listTools()).length, 1);
  const run = await c.startRun({ name: "r" });
  const { job, created } = await c.enqueue({ tool: "call@1", runId: run.id, payload: { a: 1 } }, { idempotencyKey: "hdr-1" });
  assert.equal(created, true);
  assert.equal(job.idempotencyKey, "hdr-1");
  assert.equal((await c.enqueue({ tool: "call@1", idempotencyKey: "hdr-1" })).created, false);
  const batch = await c.enqueueBatch([{ tool: "call@1", idempotencyKey: "b1" }, { tool: "call@1", idempotencyKey: "b2" }, { tool: "call@1" }]);
  assert.equal(batch.length, 3);
  assert.equal((await c.getRun(run.id)).steps.length, 1);
  assert.equal((await c.finishRun(run.id)).state, "finished");
  assert.ok((await c.listRuns()).runs.some((r) => r.id === run.id && r.state === "finished"));
  assert.equal(await c.countJobs({ state: "scheduled", tool: "call@1" }), 4);
  const page = await c.listJobs({ limit: 2 });
  assert.equal(page.jobs.length, 2);
  assert.ok(page.nextCursor);
  const all = [];
  for await (const j of c.jobs({ limit: 1 })) all.push(j.id);
  assert.equal(all.length, 4);
  assert.equal((await c.explainJob(job.id)).gate, "none");

  const claimed = await c.claim({ workerId: "w", tools: ["call@1"], max: 2 });
  assert.equal(claimed.length, 2);
  const hb = await c.heartbeat(claimed[0].id, claimed[0].leaseToken);
  assert.equal(hb.cancelRequested, false);
  const one = await c.report({ jobId: claimed[0].id, leaseToken: claimed[0].leaseToken, success: true });
  assert.equal(one.job.state, "succeeded");
  const again = await c.report({ jobId: claimed[0].id, leaseToken: claimed[0].leaseToken, success: true });
  assert.equal(again.duplicate, true, "a repeated report of the same lease is a duplicate, so reports are safe to retry");
  const rb = await c.reportBatch([{ jobId: claimed[1].id, leaseToken: claimed[1].leaseToken, retryable: false, message: "no" }, { jobId: 999, leaseToken: "x", success: true }]);
  assert.equal(rb[0].ok, true);
  assert.equal(rb[0].state, "failed");
  assert.equal(rb[1].ok, false);
  assert.equal(rb[1].error.code, "not_found");

  const replayed = await c.replayJob(claimed[1].id);
  assert.equal(replayed.replayOf, claimed[1].id);
  assert.equal((await c.cancelJob(replayed.id)).state, "cancelled");
  const n = await c.countJobs({ state: ["scheduled"] });
  const bulk = await c.bulkJobs("cancel", { state: "scheduled" }, n);
  assert.equal(bulk.count, n);
  const stale = await c.bulkJobs("cancel", { state: "cancelled" }, 0).catch((e) => e);
  assert.equal(stale.status, 409);

  assert.equal((await c.overview()).endpoints[0].name, "provider");
  const clock = await c.advanceClock(1000);
  assert.ok(Date.parse(clock.now) > Date.now());
  assert.deepEqual(await c.healthz(), { status: "ok", version: (await c.openapi()).info.version });
  assert.deepEqual(await c.readyz(), { status: "ready", store: "sqlite" });
  assert.equal(String((await c.openapi()).openapi).startsWith("3.1"), true);
  const sim = await new Client(s.srv.url).simulate({ from: 1, to: 3, step: 1, runs: 1, modes: ["full"] });
  assert.ok(sim);
});
