// A complete Ratchet worker in TypeScript: it claims jobs of one tool, POSTs
// each job's payload to an HTTP endpoint, and lets Ratchet decide about
// retries from the answer (status and Retry-After) or the network error.
// examples/worker does the same with the Go SDK.
//
//   RATCHET_KEY=rk_... npm start --prefix examples/worker-ts -- --tool charge@1 --target http://127.0.0.1:9000/charge
import { parseArgs } from "node:util";
import { Client, Worker, reportFromResponse } from "@ratchet/sdk";

const log = (msg: string) => console.error(`${new Date().toISOString()} ${msg}`);

const { values: flags } = parseArgs({
  options: {
    server: { type: "string", default: process.env.RATCHET_SERVER || "http://127.0.0.1:8080" }, // Ratchet server URL
    tool: { type: "string", default: "charge@1" }, // the tool@version this worker runs
    target: { type: "string", default: "http://127.0.0.1:9000/charge" }, // where each job's payload is POSTed
    concurrency: { type: "string", default: "8" }, // jobs run at once
  },
});
const { server, tool, target } = flags;
const concurrency = Number(flags.concurrency);
try {
  new URL(target); // a bad target URL will not get better: refuse to start
} catch {
  log(`--target ${target} is not a URL`);
  process.exit(2);
}
if (!Number.isInteger(concurrency) || concurrency < 1) {
  log(`--concurrency ${flags.concurrency} must be a positive integer`);
  process.exit(2);
}

const client = new Client(server, process.env.RATCHET_KEY ?? "");
// On SIGTERM or Ctrl-C the worker stops claiming; running jobs finish and report.
const worker = new Worker(client, { concurrency, onError: (err) => log(err instanceof Error ? err.message : String(err)) });

worker.handle(tool, async (job, signal) => {
  const resp = await fetch(target, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      // The destination deduplicates repeated deliveries with this key.
      "Idempotency-Key": job.idempotencyKey,
    },
    body: job.payload === undefined ? undefined : JSON.stringify(job.payload),
    // Aborts when the job is cancelled or its lease is lost; 10 s at most.
    signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]),
  }); // a network error (dns, connect, timeout, reset) is thrown: Ratchet retries it
  await resp.arrayBuffer(); // the body is not needed; reading it frees the connection
  log(`job ${job.id} attempt ${job.attempt}: ${target} answered ${resp.status}`);
  return reportFromResponse(resp); // 2xx succeeds; status and Retry-After go to Ratchet
});

log(`worker for ${tool} calling ${target} (server ${server})`);
await worker.run();
log("stopped");
process.exit(0); // a handler that ignored its signal must not keep the process alive
