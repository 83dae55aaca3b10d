// Runs the example as a user would — `npm start --prefix examples/worker-ts
// -- --tool charge@1 --target URL` from the repository root — against the
// real server and a local provider that answers 503 with Retry-After: 120
// once, then 200: the first attempt records the 120 s hint, and after the
// server's development clock is advanced the second attempt succeeds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Client } from "@ratchet/sdk";
import { ownerKey, repoRoot, startProvider, startServer, waitFor } from "../../../sdk/typescript/test/support/server.mjs";

test("the example worker retries a 503 with Retry-After: 120 and succeeds", async (t) => {
  const srv = await startServer();
  t.after(() => srv.stop());
  const c = new Client(srv.url, ownerKey);
  await c.createEndpoint({ name: "provider" });
  await c.publishTool({ name: "charge", version: "1", endpoint: "provider" });
  const wk = await c.createKey({ name: "example", scope: "worker", tools: ["charge@1"] });

  const provider = await startProvider((n) => (n === 1 ? { status: 503, headers: { "Retry-After": "120" }, body: "busy, come back later" } : { status: 200, body: "ok" }));
  t.after(() => provider.close());

  // Its own process group, so that SIGTERM reaches npm and the worker alike.
  const child = spawn("npm", ["start", "--prefix", "examples/worker-ts", "--", "--server", srv.url, "--tool", "charge@1", "--target", `${provider.url}/charge`], {
    cwd: repoRoot,
    env: { ...process.env, RATCHET_KEY: wk.key },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let logs = "";
  child.stdout.on("data", (b) => (logs += b));
  child.stderr.on("data", (b) => (logs += b));
  // "close": npm has exited and so has every process that held its output (the worker).
  const exited = new Promise((r) => child.once("close", (code, signal) => r([code, signal])));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid, "SIGKILL");
      await exited;
    }
  });

  // npm start compiles the example first (prestart: tsc), which took over
  // a minute on a loaded machine: the job's waits start once it runs.
  await waitFor(`the worker started; its output:\n${logs}`, () => logs.includes("worker for charge@1 calling"), { timeoutMs: 5 * 60_000 });
  const { job } = await c.enqueue({ tool: "charge@1", payload: { orderId: 42 }, idempotencyKey: "order-42" });
  const until = (what, ok) =>
    waitFor(`job ${what}; worker output:\n${logs}`, async () => {
      const j = await c.getJob(job.id);
      return ok(j) ? j : false;
    }, { timeoutMs: 60_000 });

  let j = await until("failed its first attempt", (j) => j.state === "scheduled" && j.attempts.length === 1 && j.attempts[0].finishedAt);
  const a = j.attempts[0];
  assert.equal(a.httpStatus, 503);
  assert.equal(a.retryAfterMs, 120_000);
  assert.ok(a.selectedDelayMs >= 120_000, `selected delay ${a.selectedDelayMs}`);
  assert.equal(a.classification, "retry_after");
  assert.equal(provider.requests[0].headers["idempotency-key"], "order-42");
  assert.deepEqual(JSON.parse(provider.requests[0].body), { orderId: 42 });

  await c.advanceClock(3 * 60_000);
  j = await until("succeeded", (j) => j.state === "succeeded");
  assert.equal(j.attempts.length, 2);
  assert.equal(provider.calls(), 2);
  assert.match(logs, new RegExp(`job ${job.id} attempt 2: .* answered 200`));

  // SIGTERM: the worker stops gracefully (npm itself dies of the signal it forwarded).
  process.kill(-child.pid, "SIGTERM");
  const [code, signal] = await exited;
  assert.ok(code === 0 || signal === "SIGTERM", `exit ${code} ${signal}\n${logs}`);
  assert.match(logs, / stopped\n/, logs);
});
