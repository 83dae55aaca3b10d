// Unit tests of the Worker's abort signals: no ratchet server, a fake
// client in the process. The Worker reuses the abort controller of a
// finished job for a later one (Node builds an AbortSignal slowly), but
// only one whose signal never aborted and that nobody listens to any more.
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

test("a finished job's signal is reused only when it never aborted and has no listener left", async () => {
  // Job 4's lease is lost at its first heartbeat (100 ms: a third of 300 ms).
  const f = fakeClient([job(1), job(2), job(3), job(4, 300), job(5)], (id) => {
    if (id === 4) throw new RatchetError({ status: 409, code: "conflict", message: "lease lost" });
    return { cancelRequested: false };
  });
  const signals = new Map();
  let finished;
  const allDone = new Promise((r) => (finished = r));
  const w = new Worker(f.client, { concurrency: 1, handleSignals: false, onReported: () => f.reports.length === 4 && finished() });
  w.handle("t@1", async (j, signal) => {
    signals.set(j.id, signal);
    if (j.id === 1) signal.addEventListener("abort", () => {}); // left listening
    if (j.id === 4) await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
  });
  const run = w.run();
  await allDone;
  await w.stop();
  f.wake();
  await run;
  assert.notEqual(signals.get(2), signals.get(1), "job 1's signal, still listened to, went to job 2");
  assert.equal(signals.get(3), signals.get(2), "job 2's clean signal was not reused for job 3");
  assert.equal(signals.get(4), signals.get(2), "the clean signal was not reused for job 4");
  assert.ok(signals.get(4).aborted, "job 4's signal did not abort on its lost lease");
  assert.notEqual(signals.get(5), signals.get(4), "job 4's aborted signal went to job 5");
  assert.equal(signals.get(5).aborted, false);
  // Job 4's lease was lost: not reported; every other job once.
  assert.deepEqual(f.reports.map((r) => r.jobId).sort(), [1, 2, 3, 5]);
  for (const r of f.reports) assert.equal(r.leaseToken, `L${r.jobId}`);
});
