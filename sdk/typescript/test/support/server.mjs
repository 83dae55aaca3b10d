// Test support: the real ratchet binary on a loopback port, a scripted
// provider on 127.0.0.1, and polling with a deadline.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
export const ownerKey = "rk_ts_sdk_test_owner_key_0123456789";

/**
 * ratchetBin is RATCHET_BIN, or a binary built from this checkout with
 * `go build` (once per process; test/run.mjs builds it once for all files).
 */
export function ratchetBin() {
  if (process.env.RATCHET_BIN) return process.env.RATCHET_BIN;
  const dir = mkdtempSync(join(tmpdir(), "ratchet-bin-"));
  const bin = join(dir, "ratchet");
  execFileSync("go", ["build", "-o", bin, "./cmd/ratchet"], { cwd: repoRoot, stdio: "inherit" });
  process.env.RATCHET_BIN = bin;
  return bin;
}

const listenRE = /listening on (http:\/\/\S+)/;

/**
 * startServer runs `ratchet serve --addr 127.0.0.1:0 --bootstrap-key K
 * [--dev-clock] args...` in a new temporary directory and resolves when it
 * prints its address. stop() sends SIGTERM; kill() SIGKILL.
 */
export async function startServer({ devClock = true, args = [] } = {}) {
  const bin = ratchetBin();
  const dir = mkdtempSync(join(tmpdir(), "ratchet-ts-"));
  const argv = ["serve", "--addr", "127.0.0.1:0", "--bootstrap-key", ownerKey, ...(devClock ? ["--dev-clock"] : []), ...args];
  const child = spawn(bin, argv, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const exited = new Promise((res) => child.once("exit", res));
  const url = await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`ratchet serve did not print its address within 60 s:\n${output}`)), 60_000);
    const onData = (b) => {
      output += b.toString();
      const m = listenRE.exec(output);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (b) => (output += b.toString()));
    child.once("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`ratchet serve exited (${code}) before listening:\n${output}`));
    });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return { url, dir, stop, output: () => output };
}

/**
 * startProvider serves POST on 127.0.0.1 by script: answer(n, req) returns
 * {status, headers} for the n-th request (from 1). calls() counts them.
 */
export async function startProvider(answer) {
  let n = 0;
  const requests = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      n++;
      requests.push({ method: req.method, headers: req.headers, body });
      const a = answer(n, req) ?? { status: 200 };
      res.writeHead(a.status, a.headers ?? {});
      res.end(a.body ?? "");
    });
  });
  await new Promise((res) => server.listen(0, "127.0.0.1", res));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    calls: () => n,
    requests,
    close: () => new Promise((res) => { server.closeAllConnections(); server.close(() => res()); }),
  };
}

/** waitFor polls fn until it returns a truthy value, at most timeoutMs. */
export async function waitFor(what, fn, { timeoutMs = 30_000, everyMs = 50 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}; last: ${last instanceof Error ? last.stack : JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** fastEndpoint is an endpoint of short delays and a 30 s lease, for tests. */
export function fastEndpoint(name, over = {}) {
  return {
    name,
    preset: "CUSTOM",
    maxAttempts: 3,
    initialDelayMs: 1000,
    multiplier: 1,
    maxDelayMs: 1000,
    jitterPercent: 0,
    // A lease long enough for a loaded machine: a test that needs a lease to
    // run out says so with its own defaultTimeoutMs. (At 1 s, a provider
    // call slowed by a second copy of the suite outlived its lease and the
    // job ran a third attempt.)
    defaultTimeoutMs: 30000,
    maxConcurrent: 100,
    circuitFailureThreshold: 1000,
    ...over,
  };
}

export { existsSync };
