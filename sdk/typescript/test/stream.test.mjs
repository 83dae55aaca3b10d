// GET /v1/stream through the TypeScript client, against the real ratchet
// binary on 127.0.0.1.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, RatchetError } from "../dist/index.js";
import { fastEndpoint, ownerKey, startServer } from "./support/server.mjs";

test("stream follows a job to its report and counts a jobs view; bad queries name the field", async (t) => {
  const srv = await startServer();
  t.after(() => srv.stop());
  const owner = new Client(srv.url, ownerKey);
  await owner.createEndpoint({ ...fastEndpoint("provider"), defaultTimeoutMs: 60000 });
  await owner.publishTool({ name: "call", version: "1", endpoint: "provider" });
  const { job } = await owner.enqueue({ tool: "call@1" });

  const ac = new AbortController();
  const events = owner.stream({ job: job.id }, { signal: ac.signal });
  const first = await events.next();
  assert.equal(first.value.event, "job");
  assert.equal(first.value.data.id, job.id);
  assert.equal(first.value.data.state, "scheduled");
  const [claimed] = await owner.claim({ workerId: "ts-stream", tools: ["call@1"], max: 1 });
  await owner.report({ jobId: claimed.id, leaseToken: claimed.leaseToken, success: true });
  let last;
  for await (const e of events) {
    assert.equal(e.event, "job");
    last = e.data;
    if (last.state === "succeeded") break;
  }
  assert.equal(last.state, "succeeded");
  assert.equal(last.attempts.length, 1);

  const jobs = owner.stream({ view: "jobs", endpoint: "provider" });
  const j = await jobs.next();
  assert.equal(j.value.event, "jobs");
  assert.equal(j.value.data.counts.succeeded, 1);
  assert.equal(j.value.data.total, 1);
  await jobs.return();

  const bad = await owner.stream({ view: "bogus" }).next().catch((e) => e);
  assert.ok(bad instanceof RatchetError);
  assert.equal(bad.status, 400);
  assert.equal(bad.fields[0].field, "view");
});
