// Scenarios 7 and 8: a worker process killed with SIGKILL while it holds
// leases, and a worker process stopped with SIGTERM or SIGINT.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, Worker } from "../dist/index.js";
import { fastEndpoint, ownerKey, startServer, waitFor } from "./support/server.mjs";

const fixture = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "worker.mjs");

async function setup(t, endpoint = {}) {
  const srv = await startServer();
  t.after(() => srv.stop());
  const owner = new Client(srv.url, ownerKey);
  await owner.createEndpoint(fastEndpoint("provider", endpoint));
  await owner.publishTool({ name: "call", version: "1", endpoint: "provider" });
  const wk = await owner.createKey({ name: "worker", scope: "worker", tools: ["call@1"] });
  return { srv, owner, key: wk.key };
}

/** spawnWorker starts the fixture; lines() is its output so far; exited resolves with [code, signal]. */
function spawnWorker(t, s, env) {
  const child = spawn(process.execPath, [fixture], {
    env: { ...process.env, RATCHET_SERVER: s.srv.url, RATCHET_KEY: s.key, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (b) => (out += b));
  child.stderr.on("data", (b) => (out += b));
  const exited = new Promise((r) => child.once("exit", (code, signal) => r([code, signal])));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    return exited;
  });
  return { child, exited, lines: () => out.split("\n"), output: () => out };
}

const started = (p, n) => waitFor(`${n} handlers started`, () => p.lines().filter((l) => l.startsWith("start ")).length >= n, { timeoutMs: 20_000 });

test("7: a worker killed with SIGKILL while holding leases: the leases expire (timed_out) and another worker finishes the jobs", async (t) => {
  const s = await setup(t, { defaultTimeoutMs: 1000 });
  const p = spawnWorker(t, s, { MODE: "hang", WORKER_ID: "victim" });
  const ids = (await s.owner.enqueueBatch([{ tool: "call@1" }, { tool: "call@1" }, { tool: "call@1" }])).map((j) => j.id);
  await started(p, 3);
  p.child.kill("SIGKILL");
  assert.deepEqual(await p.exited, [null, "SIGKILL"]);
  for (const id of ids) {
    await waitFor(`job ${id} rescued`, async () => (await s.owner.getJob(id)).attempts[0]?.outcome === "timed_out", { timeoutMs: 15_000 });
  }
  const w = new Worker(new Client(s.srv.url, s.key), { id: "rescuer", waitMs: 500, handleSignals: false });
  w.handle("call@1", async () => {});
  const run = w.run();
  t.after(() => w.stop({ graceMs: 0 }));
  for (const id of ids) {
    const j = await waitFor(`job ${id} succeeded`, async () => {
      const j = await s.owner.getJob(id);
      return j.state === "succeeded" && j;
    }, { timeoutMs: 15_000 });
    assert.deepEqual(j.attempts.map((a) => [a.workerId, a.outcome]), [["victim", "timed_out"], ["rescuer", "succeeded"]]);
  }
  await w.stop();
  await run;
});

test("8: SIGTERM stops claiming and lets running handlers finish and report before the process exits", async (t) => {
  // A 5 s lease: with 1 s, heartbeats of a loaded machine came late and the
  // slow handlers lost their leases, which is test 2's subject, not this one's.
  const s = await setup(t, { defaultTimeoutMs: 5000 });
  const p = spawnWorker(t, s, { MODE: "slow" });
  const ids = (await s.owner.enqueueBatch([{ tool: "call@1" }, { tool: "call@1" }])).map((j) => j.id);
  await started(p, 2);
  p.child.kill("SIGTERM");
  await waitFor("the signal is handled", () => p.lines().includes("signal SIGTERM"));
  // Enqueued after the worker began stopping: it must not run it.
  const late = (await s.owner.enqueue({ tool: "call@1" })).job;
  assert.deepEqual(await p.exited, [0, null], p.output());
  assert.ok(p.lines().includes("stopped"));
  for (const id of ids) {
    const j = await s.owner.getJob(id);
    assert.equal(j.state, "succeeded", p.output());
    assert.deepEqual(j.attempts.map((a) => a.outcome), ["succeeded"]);
  }
  // The worker aborts its claim long poll when the signal comes, but the
  // server may have handed the late job to that poll in the instant
  // before it saw the connection close (a loaded machine shows it): then
  // the job comes back when its lease expires, never run. Either way no
  // handler starts it.
  assert.ok(!p.lines().includes(`start ${late.id}`), p.output());
  const l = await waitFor("the late job is scheduled", async () => {
    const l = await s.owner.getJob(late.id);
    return l.state === "scheduled" && l;
  }, { timeoutMs: 15_000 });
  assert.ok(l.attempts.length === 0 || (l.attempts.length === 1 && l.attempts[0].outcome === "timed_out"),
    `the late job's attempts: ${JSON.stringify(l.attempts)}`);
});

test("8: SIGINT past the grace period aborts the handlers and releases their jobs at once (a retryable failure, not a lease expiry)", async (t) => {
  const s = await setup(t, { defaultTimeoutMs: 30_000 });
  const p = spawnWorker(t, s, { MODE: "hang", GRACE_MS: "300" });
  const { job } = await s.owner.enqueue({ tool: "call@1" });
  await started(p, 1);
  const t0 = Date.now();
  p.child.kill("SIGINT");
  assert.deepEqual(await p.exited, [0, null], p.output());
  assert.ok(Date.now() - t0 < 10_000, "the worker did not stop soon after its grace period");
  assert.ok(p.lines().includes(`end ${job.id} shutdown`), p.output());
  const j = await s.owner.getJob(job.id);
  assert.equal(j.state, "scheduled");
  assert.equal(j.attempts.length, 1);
  assert.equal(j.attempts[0].outcome, "failed");
  assert.equal(j.attempts[0].classification, "worker_retry");
  assert.match(j.attempts[0].message, /released/);
});

test("8: a handler that ignores the abort is left: heartbeats stop and its lease expires", async (t) => {
  const s = await setup(t, { defaultTimeoutMs: 1000 });
  const p = spawnWorker(t, s, { MODE: "stubborn", GRACE_MS: "200", ABORT_WAIT_MS: "200" });
  const { job } = await s.owner.enqueue({ tool: "call@1" });
  await started(p, 1);
  p.child.kill("SIGTERM");
  assert.deepEqual(await p.exited, [0, null], p.output());
  const j = await waitFor("the lease expired", async () => {
    const j = await s.owner.getJob(job.id);
    return j.attempts[0]?.outcome === "timed_out" && j;
  }, { timeoutMs: 15_000 });
  assert.equal(j.attempts[0].classification, "timed_out");
});
