// Unit tests: no ratchet server; local fakes on 127.0.0.1 only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import {
  Client,
  MAX_HEADER_VALUE_LENGTH,
  RatchetError,
  ResponseError,
  apiBackoff,
  checkResponse,
  errorKind,
  parseRetryAfter,
  permanent,
  reportFromResponse,
  retryAfter,
  toOutcome,
} from "../dist/index.js";

/** fake serves answer(n, req, body) on 127.0.0.1 and records each request's time. */
async function fake(answer) {
  const seen = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ at: Date.now(), method: req.method, url: req.url, headers: req.headers, body });
      const a = answer(seen.length, req, body);
      res.writeHead(a.status, { "Content-Type": "application/json", ...a.headers });
      res.end(a.body === undefined ? "" : typeof a.body === "string" ? a.body : JSON.stringify(a.body));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}

const unavailable = { status: 503, headers: { "Retry-After": "1" }, body: { error: { code: "unavailable", message: "busy" } } };

test("a 503 with Retry-After: 1 is retried after at least the hint, with the answer decoded", async () => {
  const f = await fake((n) => (n === 1 ? unavailable : { status: 200, body: { project: { id: 1, name: "p", plan: "PRO" }, key: { id: 2, scope: "owner", tools: [] } } }));
  try {
    const c = new Client(f.url, "rk_x");
    const me = await c.me();
    assert.equal(me.project.name, "p");
    assert.equal(f.seen.length, 2);
    const gap = f.seen[1].at - f.seen[0].at;
    assert.ok(gap >= 950, `retried after ${gap} ms, before the 1 s Retry-After`);
    assert.equal(f.seen[0].headers.authorization, "Bearer rk_x");
  } finally {
    await f.close();
  }
});

test("readyz returns a 503 as the typed answer it is, at once and unretried; other calls' 503s stay errors", async () => {
  const f = await fake(() => ({ status: 503, body: { status: "unavailable", store: "postgres" } }));
  try {
    const c = new Client(f.url);
    assert.deepEqual(await c.readyz(), { status: "unavailable", store: "postgres" });
    assert.equal(f.seen.length, 1, "readyz retried its 503");
    const err = await c.healthz({ retry: false }).catch((e) => e);
    assert.ok(err instanceof RatchetError && err.status === 503, `healthz on a 503: ${err}`);
  } finally {
    await f.close();
  }
});

test("429 and network errors are retried for safe calls; the waits are full-jitter and bounded", async () => {
  const f = await fake((n) => (n <= 2 ? { status: 429, body: { error: { code: "unavailable", message: "slow down" } } } : { status: 200, body: { jobs: [] } }));
  try {
    const c = new Client(f.url, "k");
    assert.deepEqual(await c.claim({ workerId: "w" }), []);
    assert.equal(f.seen.length, 3);
  } finally {
    await f.close();
  }
  // Nothing listens on the port any more: a network error, retried maxRetries times.
  const c = new Client(f.url, "k", { maxRetries: 2 });
  const t0 = Date.now();
  const err = await c.getJob(1).catch((e) => e);
  assert.ok(err instanceof RatchetError, String(err));
  assert.equal(err.status, 0);
  assert.equal(err.code, "network");
  assert.match(err.message, /ECONNREFUSED/);
  assert.ok(Date.now() - t0 < 2000);
  for (let n = 0; n < 20; n++) {
    const d = apiBackoff(n);
    assert.ok(d >= 0 && d <= Math.min(5000, 100 * 2 ** n), `wait ${d} before retry ${n}`);
  }
  assert.equal(apiBackoff(0, new RatchetError({ status: 503, code: "unavailable", message: "", retryAfterMs: 1500 })), 1500);
  // Full jitter: the draws differ.
  assert.ok(new Set(Array.from({ length: 20 }, () => apiBackoff(5))).size > 5);
});

test("an enqueue without an idempotency key is not retried; with one it is", async () => {
  const job = { id: 7, state: "scheduled" };
  let f = await fake((n) => (n === 1 ? unavailable : { status: 201, body: job }));
  try {
    const c = new Client(f.url, "k");
    const err = await c.enqueue({ tool: "t@1" }).catch((e) => e);
    assert.ok(err instanceof RatchetError);
    assert.equal(err.status, 503);
    assert.equal(err.retryAfterMs, 1000);
    assert.equal(f.seen.length, 1, "an enqueue without a key was repeated");
  } finally {
    await f.close();
  }
  f = await fake((n) => (n === 1 ? unavailable : { status: 201, body: job }));
  try {
    const c = new Client(f.url, "k");
    const r = await c.enqueue({ tool: "t@1", idempotencyKey: "order-1" });
    assert.equal(r.created, true);
    assert.equal(r.job.id, 7);
    assert.equal(f.seen.length, 2);
    assert.equal(JSON.parse(f.seen[1].body).idempotencyKey, "order-1");
  } finally {
    await f.close();
  }
});

test("error answers become RatchetError with status, code, message, fields; other shapes keep their text", async () => {
  const fields = [{ field: "version", value: '"x y"', allowed: "must be ...", message: "version: bad" }];
  const f = await fake((n) =>
    n === 1
      ? { status: 400, body: { error: { code: "invalid_request", message: "invalid request: version", fields } } }
      : { status: 502, headers: { "Content-Type": "text/html" }, body: "<html>bad gateway</html>" },
  );
  try {
    const c = new Client(f.url, "k", { maxRetries: 0 });
    const e1 = await c.publishTool({ name: "a", version: "x y", endpoint: "e" }).catch((e) => e);
    assert.ok(e1 instanceof RatchetError);
    assert.deepEqual([e1.status, e1.code, e1.message], [400, "invalid_request", "invalid request: version"]);
    assert.deepEqual(e1.fields, fields);
    assert.equal(e1.retryAfterMs, undefined);
    const e2 = await c.listTools().catch((e) => e);
    assert.deepEqual([e2.status, e2.code, e2.message], [502, "http_502", "<html>bad gateway</html>"]);
  } finally {
    await f.close();
  }
});

test("an AbortSignal cancels a call in flight and a backoff wait", async () => {
  const f = await fake(() => unavailable);
  try {
    const c = new Client(f.url, "k");
    const ac = new AbortController();
    const p = c.getJob(1, { signal: ac.signal });
    setTimeout(() => ac.abort(new Error("user gave up")), 200);
    const t0 = Date.now();
    const err = await p.catch((e) => e);
    assert.equal(err.message, "user gave up");
    assert.ok(Date.now() - t0 < 900, "the retry wait was not interrupted");
    await assert.rejects(c.getJob(1, { signal: AbortSignal.abort(new Error("already")) }), /already/);
  } finally {
    await f.close();
  }
  // A timeout of the call itself is a RatchetError "timeout".
  const slow = createServer(() => {});
  await new Promise((r) => slow.listen(0, "127.0.0.1", r));
  try {
    const c = new Client(`http://127.0.0.1:${slow.address().port}`, "k", { maxRetries: 0 });
    const err = await c.me({ timeoutMs: 100 }).catch((e) => e);
    assert.equal(err.code, "timeout");
  } finally {
    slow.closeAllConnections();
    slow.close();
  }
});

test("a Retry-After longer than maxRetryWaitMs is not waited for", async () => {
  const f = await fake(() => ({ ...unavailable, headers: { "Retry-After": "120" } }));
  try {
    const c = new Client(f.url, "k", { maxRetryWaitMs: 1000 });
    const err = await c.me().catch((e) => e);
    assert.equal(err.retryAfterMs, 120_000);
    assert.equal(f.seen.length, 1);
  } finally {
    await f.close();
  }
});

test("parseRetryAfter reads delta-seconds and HTTP dates", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(parseRetryAfter("120", now), 120_000);
  assert.equal(parseRetryAfter(" 2 ", now), 2000);
  assert.equal(parseRetryAfter("999999", now), 3_600_000);
  assert.equal(parseRetryAfter("Thu, 01 Jan 2026 00:00:30 GMT", now), 30_000);
  assert.equal(parseRetryAfter("1.5", now), undefined);
  assert.equal(parseRetryAfter(null, now), undefined);
});

function codeErr(code, message = code) {
  return Object.assign(new Error(message), { code });
}

test("errorKind maps Node's network error codes through fetch's causes", async () => {
  const wrap = (e) => new TypeError("fetch failed", { cause: e });
  const cases = [
    [codeErr("ENOTFOUND"), "dns"],
    [codeErr("EAI_AGAIN"), "dns"],
    [codeErr("ECONNREFUSED"), "connect"],
    [codeErr("EHOSTUNREACH"), "connect"],
    [codeErr("ETIMEDOUT"), "timeout"],
    [codeErr("UND_ERR_CONNECT_TIMEOUT"), "timeout"],
    [codeErr("UND_ERR_HEADERS_TIMEOUT"), "timeout"],
    [codeErr("UND_ERR_BODY_TIMEOUT"), "timeout"],
    [codeErr("ECONNRESET"), "reset"],
    [codeErr("EPIPE"), "reset"],
    [codeErr("UND_ERR_SOCKET"), "reset"],
    [codeErr("CERT_HAS_EXPIRED"), "tls"],
    [codeErr("DEPTH_ZERO_SELF_SIGNED_CERT"), "tls"],
    [codeErr("UNABLE_TO_VERIFY_LEAF_SIGNATURE"), "tls"],
    [codeErr("ERR_TLS_CERT_ALTNAME_INVALID"), "tls"],
    [codeErr("ERR_SSL_WRONG_VERSION_NUMBER"), "tls"],
    [new AggregateError([codeErr("ECONNREFUSED"), codeErr("ECONNREFUSED")]), "connect"],
    [new DOMException("The operation was aborted due to timeout", "TimeoutError"), "timeout"],
    [new DOMException("This operation was aborted", "AbortError"), "other"],
    [new Error("something else"), "other"],
  ];
  for (const [e, want] of cases) {
    assert.equal(errorKind(e), want, `${e.code ?? e.name}`);
    assert.equal(errorKind(wrap(e)), want, `wrapped ${e.code ?? e.name}`);
  }
  // The real thing: fetch to a closed port.
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const port = s.address().port;
  await new Promise((r) => s.close(r));
  const err = await fetch(`http://127.0.0.1:${port}/`).catch((e) => e);
  assert.equal(errorKind(err), "connect");
  assert.equal(toOutcome(err).errorKind, "connect");
  // And a real timeout.
  const hang = createServer(() => {});
  await new Promise((r) => hang.listen(0, "127.0.0.1", r));
  const terr = await fetch(`http://127.0.0.1:${hang.address().port}/`, { signal: AbortSignal.timeout(100) }).catch((e) => e);
  hang.closeAllConnections();
  hang.close();
  assert.equal(errorKind(terr), "timeout");
});

test("reportFromResponse, checkResponse, permanent and retryAfter build the outcomes Ratchet classifies", () => {
  const r503 = new Response("busy", { status: 503, statusText: "Service Unavailable", headers: { "Retry-After": "120", "Stripe-Should-Retry": "true", "X-Other": "no" } });
  assert.deepEqual(reportFromResponse(r503), {
    message: "provider answered 503 Service Unavailable",
    httpStatus: 503,
    headers: { "Retry-After": "120", "Stripe-Should-Retry": "true" },
  });
  const all = reportFromResponse(new Response("", { status: 429, headers: { "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT", "x-request-id": "r1", "set-cookie": "a=b" } }), { headers: "all" });
  assert.deepEqual(all.headers, { "content-type": "text/plain;charset=UTF-8", "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT", "x-request-id": "r1" });
  assert.deepEqual(reportFromResponse(new Response("ok", { status: 201 })), { success: true, httpStatus: 201 });

  const ok = new Response("", { status: 200 });
  assert.equal(checkResponse(ok), ok);
  assert.throws(() => checkResponse(new Response("", { status: 400 })), (e) => e instanceof ResponseError && e.status === 400);

  assert.deepEqual(toOutcome(permanent(new Error("card declined"))), { message: "card declined", retryable: false, errorKind: "other" });
  assert.deepEqual(toOutcome(retryAfter(new Error("quota"), 60_000)), { message: "quota", retryAfterMs: 60_000, errorKind: "other" });
  assert.deepEqual(toOutcome(permanent(new ResponseError(422, {}, "unprocessable"))), { message: "unprocessable", retryable: false, httpStatus: 422 });
  assert.equal(toOutcome(new Error("x".repeat(5000))).message.length, 1000);
  assert.equal(toOutcome("a string").message, "a string");
});

test("the Worker retries a batch report after a 503 with Retry-After, and reads a returned Response as its outcome", async () => {
  const { Worker } = await import("../dist/index.js");
  const job = { id: 5, tool: "t", version: "1", endpoint: "e", attempt: 1, maxAttempts: 3, payload: {}, idempotencyKey: "ratchet-job-5", leaseToken: "L5", leaseExpiresAt: new Date(Date.now() + 30000).toISOString(), timeoutMs: 30000 };
  let claims = 0;
  const reportCalls = [];
  const f = await fake((n, req, body) => {
    if (req.url === "/v1/claims") {
      claims++;
      return { status: 200, body: { jobs: claims === 1 ? [job] : [] } };
    }
    if (req.url === "/v1/reports") {
      reportCalls.push({ at: Date.now(), body: JSON.parse(body) });
      if (reportCalls.length === 1) return unavailable;
      return { status: 200, body: { results: [{ jobId: 5, ok: true, state: "scheduled", classification: "retry_after" }] } };
    }
    return { status: 404, body: { error: { code: "not_found", message: req.url } } };
  });
  try {
    const errors = [];
    let acked;
    const done = new Promise((r) => (acked = r));
    const w = new Worker(new Client(f.url, "k"), { waitMs: 0, handleSignals: false, onError: (e) => errors.push(e.message), onReported: acked });
    w.handle("t@1", async () => new Response("busy", { status: 429, headers: { "Retry-After": "7" } }));
    const run = w.run();
    await done;
    await w.stop();
    await run;
    assert.equal(reportCalls.length, 2);
    assert.ok(reportCalls[1].at - reportCalls[0].at >= 950, "the report was retried before the 1 s Retry-After");
    assert.deepEqual(reportCalls[1].body, { reports: [{ jobId: 5, leaseToken: "L5", httpStatus: 429, headers: { "Retry-After": "7" }, message: "provider answered 429" }] });
    assert.deepEqual(reportCalls[0].body, reportCalls[1].body);
    assert.match(errors[0], /^report: busy/);
  } finally {
    await f.close();
  }
});

test("the default transport keeps one connection alive across calls; a given fetch is used instead; close() only drops idle connections", async () => {
  const ports = [];
  const server = createServer((req, res) => {
    ports.push(req.socket.remotePort);
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ project: { id: 1, name: "p", plan: "PRO" }, key: { id: 2, scope: "owner", tools: [] } }));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}`;
  try {
    const c = new Client(url, "k");
    for (let i = 0; i < 5; i++) await c.me();
    assert.equal(ports.length, 5);
    assert.equal(new Set(ports).size, 1, `five calls came over ${new Set(ports).size} connections`);
    c.close();
    assert.equal((await c.me()).project.name, "p", "a call after close() opens a new connection");
    assert.notEqual(ports[5], ports[0]);
    c.close();

    const used = [];
    const viaFetch = new Client(url, "k", { fetch: (u, init) => { used.push(`${init.method} ${u}`); return fetch(u, init); } });
    assert.equal((await viaFetch.me()).key.scope, "owner");
    assert.deepEqual(used, [`GET ${url}/v1/me`]);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test("the default transport sends the body with its length and reads Retry-After and a UTF-8 answer split anywhere", async () => {
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      assert.equal(req.headers["content-length"], String(Buffer.byteLength(body)));
      const answer = Buffer.from(JSON.stringify({ error: { code: "unavailable", message: `busy ${JSON.parse(body).tool} — ☃` } }));
      res.writeHead(503, { "Content-Type": "application/json", "Retry-After": "7" });
      for (let i = 0; i < answer.length; i++) res.write(answer.subarray(i, i + 1)); // byte by byte, through the snowman
      res.end();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  try {
    const c = new Client(`http://127.0.0.1:${server.address().port}`, "k", { maxRetries: 0 });
    const err = await c.enqueue({ tool: "café@1" }).catch((e) => e);
    assert.ok(err instanceof RatchetError, String(err));
    assert.equal(err.retryAfterMs, 7000);
    assert.equal(err.message, "busy café@1 — ☃");
    c.close();
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test("over https the default transport verifies the server: a trusted certificate answers, an unknown one is a network error", async () => {
  const { createServer: createTLSServer } = await import("node:https");
  const { readFileSync } = await import("node:fs");
  const { execFile } = await import("node:child_process");
  const tls = new URL("./fixtures/tls/", import.meta.url);
  const server = createTLSServer({ key: readFileSync(new URL("key.pem", tls)), cert: readFileSync(new URL("cert.pem", tls)) }, (req, res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ project: { id: 1, name: "tls", plan: "PRO" }, key: { id: 2, scope: "owner", tools: [] } }));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `https://127.0.0.1:${server.address().port}`;
  try {
    // This process does not trust the test certificate.
    const err = await new Client(url, "k", { maxRetries: 0 }).me().catch((e) => e);
    assert.ok(err instanceof RatchetError, String(err));
    assert.equal(err.code, "network");
    assert.match(err.message, /self[- ]signed|certificate/i);
    // A process that trusts it (NODE_EXTRA_CA_CERTS, read at start) is answered.
    const script = `import { Client } from ${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)};
      const c = new Client(${JSON.stringify(url)}, "k");
      console.log((await c.me()).project.name); c.close();`;
    const out = await new Promise((resolve, reject) => {
      execFile(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, NODE_EXTRA_CA_CERTS: new URL("cert.pem", tls).pathname }, timeout: 20_000 },
        (e, stdout, stderr) => (e ? reject(new Error(`${e.message}\n${stderr}`)) : resolve(stdout.trim())));
    });
    assert.equal(out, "tls");
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

/** The rate-limit headers Ratchet reads, checked against the server's reader by internal/classify's TestQuotaHeadersFile. */
const quota = JSON.parse(readFileSync(new URL("../../../testdata/quota-headers.json", import.meta.url), "utf8"));

test("reportFromResponse passes every rate-limit header and Retry-After on, on a throttle and on a success, bounded", async () => {
  assert.equal(MAX_HEADER_VALUE_LENGTH, quota.maxValueBytes);
  const sent = { "Retry-After": "3", "X-Internal-Token": "secret" };
  quota.headers.forEach((name, i) => (sent[name] = `v${i}`));
  const provider = await fake((n) => (n === 1 ? { status: 429, headers: sent } : { status: 200, headers: { RateLimit: '"default";r=4;t=1', "X-RateLimit-Reset": "9".repeat(10_000) } }));
  try {
    const throttled = reportFromResponse(await fetch(provider.url));
    assert.equal(throttled.httpStatus, 429);
    const want = { "Retry-After": "3" };
    for (const name of quota.headers) want[name] = sent[name];
    assert.deepEqual(throttled.headers, want); // nothing else the provider sent

    const ok = reportFromResponse(await fetch(provider.url));
    assert.equal(ok.success, true);
    assert.equal(ok.headers.RateLimit, '"default";r=4;t=1');
    assert.equal(ok.headers["X-RateLimit-Reset"].length, quota.maxValueBytes);
  } finally {
    await provider.close();
  }
});
