// Bench worker: burns down N due jobs of a tool with a no-op handler through
// the SDK's Worker and prints jobs/s, timed from the first claim to the last
// report acknowledged.
//
//   RATCHET_SERVER=http://127.0.0.1:8080 RATCHET_KEY=rk_... \
//     node bench/worker.mjs --tool bench@1 --jobs 20000 [--concurrency 400 --batch 100 --claimers 4]
//
// --setup creates an endpoint and tool of its own (as `ratchet bench --mode
// http` does: STANDARD policy, 300 s lease, maxConcurrent 100000) and
// --enqueue enqueues the N jobs first (batches of 1000, timed apart); without
// them, --tool names a tool whose N jobs are already enqueued and due.
import { parseArgs } from "node:util";
import { Client, Worker } from "../dist/index.js";

const { values: f } = parseArgs({
  options: {
    tool: { type: "string" },
    jobs: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "400" },
    batch: { type: "string", default: "100" },
    claimers: { type: "string", default: "4" },
    "report-batch": { type: "string", default: "100" },
    reporters: { type: "string", default: "4" },
    setup: { type: "boolean", default: false },
    enqueue: { type: "boolean", default: false },
  },
});
const int = (name, min, max) => {
  const v = Number(f[name]);
  if (!Number.isInteger(v) || v < min || v > max) {
    console.error(`--${name} ${f[name]}: must be an integer from ${min} through ${max}`);
    process.exit(2);
  }
  return v;
};
const n = int("jobs", 1, 10_000_000);
const concurrency = int("concurrency", 1, 100_000);
const batch = int("batch", 1, 1000);
const claimers = int("claimers", 1, 256);
const reportBatch = int("report-batch", 1, 1000);
const reporters = int("reporters", 1, 256);
const server = process.env.RATCHET_SERVER || "http://127.0.0.1:8080";
const c = new Client(server, process.env.RATCHET_KEY ?? "");

let tool = f.tool;
if (f.setup) {
  const name = `tsbench-${Date.now() % 1_000_000_000}`;
  await c.createEndpoint({ name, preset: "STANDARD", defaultTimeoutMs: 300_000, maxConcurrent: 100_000, rateLimitPerMinute: null });
  await c.publishTool({ name, version: "1", endpoint: name, description: "does nothing (TypeScript bench worker)" });
  tool = `${name}@1`;
}
if (!tool) {
  console.error("--tool is required (or --setup)");
  process.exit(2);
}
if (f.enqueue) {
  const t0 = performance.now();
  for (let left = n; left > 0; ) {
    const k = Math.min(left, 1000);
    await c.enqueueBatch(Array.from({ length: k }, () => ({ tool, payload: {} })));
    left -= k;
  }
  const s = (performance.now() - t0) / 1000;
  console.log(`enqueue:    ${n} jobs in ${s.toFixed(2)} s = ${Math.round(n / s)} jobs/s`);
}

let reported = 0;
let claims = 0, claimed = 0, batches = 0;
let refused = 0;
let finish;
const finished = new Promise((r) => (finish = r));
const w = new Worker(c, {
  id: "ts-bench",
  concurrency,
  batch,
  claimers,
  reportBatch,
  reporters,
  waitMs: 1000,
  handleSignals: true,
  onError: (e) => console.error(e.message),
  onClaimed: (jobs) => { claims++; claimed += jobs.length; },
  onReported: (results) => {
    batches++;
    for (const r of results) r.ok ? reported++ : refused++;
    if (reported + refused >= n) finish(performance.now());
  },
});
w.handle(tool, () => {});
console.log(`bench worker: ${server}, tool ${tool}, Node ${process.version}`);
console.log(`sizes:      N ${n} jobs, concurrency ${concurrency}, B ${batch} jobs per claim, ${claimers} claimers, ${reportBatch} reports per batch, ${reporters} reporters`);
console.log("method:     the SDK's Worker with a no-op handler; timed from the first claim sent until the report of the N-th job is acknowledged (batched reports).");
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const run = w.run();
const t1 = await finished;
const cpu = process.cpuUsage(cpu0);
await w.stop({ graceMs: 0 });
await run;
const s = (t1 - t0) / 1000;
console.log(`burn-down:  ${reported} jobs in ${s.toFixed(2)} s = ${Math.round(reported / s)} jobs/s${refused ? ` (${refused} reports refused)` : ""}`);
console.log(`client CPU: ${Math.round((cpu.user + cpu.system) / 1000)} ms (${((cpu.user + cpu.system) / reported).toFixed(0)} µs per job) in this process during the burn-down`);
console.log(`cpu split:  user ${Math.round(cpu.user / 1000)} ms, system ${Math.round(cpu.system / 1000)} ms`);
console.log(`requests:   ${claims} non-empty claims (${(claimed / Math.max(1, claims)).toFixed(1)} jobs each), ${batches} report batches (${(reported / Math.max(1, batches)).toFixed(1)} reports each)`);
if (refused > 0 || reported < n) process.exitCode = 1;
