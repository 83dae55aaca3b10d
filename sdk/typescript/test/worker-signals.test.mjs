// Unit tests of the Worker's abort signals: no ratchet server, a fake
// client in the process. Each job has a signal of its own: a signal handed
// on to work that outlives the handler (AbortSignal.any keeps no listener
// that getEventListeners would show) is never aborted by a later job.
import { test } from "node:test";
import assert from "node:assert/strict";
import { RatchetError, Worker } from "../dist/index.js";

/** fakeClient hands out one job per claim from jobs, records reports, and answers heartbeats with heartbeat(jobId). */
function fakeClient(jobs, heartbeat = () => ({ cancelRequested: false })) {
  const reports = [];
  let waiting;
  const client = {
    async claim(req, o) {
      const j = jobs.shift();
      if (j) return [j];
      // Nothing left: wait as a long poll would, until the worker stops.
      await new Promise((resolve) => {
        waiting = resolve;
        o?.signal?.addEventListener("abort", resolve, { once: true });
      });
      return [];
    },
    async reportBatch(rs) {
      reports.push(...rs);
      return rs.map((r) => ({ jobId: r.jobId, ok: true, state: "succeeded", classification: "success" }));
    },
    async heartbeat(jobId) {
      return heartbeat(jobId);
    },
  };
  return { client, reports, wake: () => waiting?.() };
}

const job = (id, timeoutMs = 30000) => ({ id, tool: "t", version: "1", endpoint: "e", attempt: 1, maxAttempts: 3, payload: {}, idempotencyKey: `k${id}`, leaseToken: `L${id}`, leaseExpiresAt: new Date(Date.now() + timeoutMs).toISOString(), timeoutMs });

test("each job has a signal of its own, and a later job's lost lease aborts nothing of an earlier job's", async () => {
  // Job 4's lease is lost at its first heartbeat (100 ms: a third of 300 ms).
  const f = fakeClient([job(1), job(2), job(3), job(4, 300), job(5)], (id) => {
    if (id === 4) throw new RatchetError({ status: 409, code: "conflict", message: "lease lost" });
    return { cancelRequested: false };
  });
  const signals = new Map();
  let finished;
  const allDone = new Promise((r) => (finished = r));
  // Job 2 hands its signal on to work that outlives the handler.
  let outlived;
  const w = new Worker(f.client, { concurrency: 1, handleSignals: false, onReported: () => f.reports.length === 4 && finished() });
  w.handle("t@1", async (j, signal) => {
    signals.set(j.id, signal);
    if (j.id === 2) outlived = AbortSignal.any([signal]);
    if (j.id === 4) await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
  });
  const run = w.run();
  await allDone;
  await w.stop();
  f.wake();
  await run;
  assert.equal(new Set(signals.values()).size, 5, "a signal went to two jobs");
  assert.ok(signals.get(4).aborted, "job 4's signal did not abort on its lost lease");
  assert.equal(outlived.aborted, false, "job 4's lost lease aborted work job 2 handed its signal to");
  for (const id of [1, 2, 3, 5]) assert.equal(signals.get(id).aborted, false, `job ${id}'s signal aborted`);
  // Job 4's lease was lost: not reported; every other job once.
  assert.deepEqual(f.reports.map((r) => r.jobId).sort(), [1, 2, 3, 5]);
  for (const r of f.reports) assert.equal(r.leaseToken, `L${r.jobId}`);
});
