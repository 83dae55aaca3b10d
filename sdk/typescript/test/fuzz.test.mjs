// Randomised tests of the SDK's two parsers of server text — the event
// stream and Retry-After — in the manner of a fuzz test: thousands of
// inputs from a seeded generator (RATCHET_FUZZ_SEED repeats a run; the seed
// is in every failure message), checked against properties rather than
// fixed answers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { Client, EventStreamParser, MAX_EVENT_CHARS, RatchetError, parseHttpDate, parseRetryAfter } from "../dist/index.js";

const SEED = Number(process.env.RATCHET_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const ROUNDS = Number(process.env.RATCHET_FUZZ_ROUNDS ?? 4000);

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Pieces an event stream is made of, and some that are not.
const PIECES = ["\n", "\r", "\r\n", "\n\n", ":", ": ping", " ", "data", "data:", "data: ", "event", "event:", "event: job", "id: 1", "retry: 5",
  "{\"id\":1}", "é", "€", "😀", "\u0000", "x", "ab", "\ufeff", "\uffff"];

function randomText(r) {
  let s = "";
  const n = Math.floor(r() * 40);
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(r() * PIECES.length)];
  return s;
}

// The plain reading of a whole stream: cut into lines first, then read them.
function reference(text) {
  const lines = [];
  for (;;) {
    const m = /\r\n|\r|\n/.exec(text);
    if (!m) break; // an unterminated last line is not a line yet
    lines.push(text.slice(0, m.index));
    text = text.slice(m.index + m[0].length);
  }
  const out = [];
  let event = "", data = [], has = false;
  for (const l of lines) {
    if (l === "") {
      if (has) out.push({ event: event || "message", data: data.join("\n") });
      event = ""; data = []; has = false;
    } else if (!l.startsWith(":")) {
      const i = l.indexOf(":");
      const name = i < 0 ? l : l.slice(0, i);
      const value = i < 0 ? "" : l.slice(i + 1).replace(/^ /, "");
      if (name === "event") event = value;
      else if (name === "data") { data.push(value); has = true; }
    }
  }
  return out;
}

function splitAt(r, length) {
  const cuts = [];
  for (let at = 0; at < length;) {
    const n = 1 + Math.floor(r() * 9);
    cuts.push([at, Math.min(length, at + n)]);
    at += n;
  }
  return cuts;
}

test(`event stream parser: chunked text and bytes read as the whole text does (seed ${SEED})`, () => {
  const r = rng(SEED);
  for (let round = 0; round < ROUNDS; round++) {
    const text = randomText(r);
    const want = reference(text);
    const p = new EventStreamParser();
    const got = [];
    for (const [a, b] of splitAt(r, text.length)) got.push(...p.push(text.slice(a, b)));
    assert.deepEqual(got, want, `seed ${SEED} round ${round}: text chunks of ${JSON.stringify(text)}`);

    // As the client reads it: UTF-8 bytes cut anywhere, even inside a character.
    const bytes = new TextEncoder().encode(text);
    const dec = new TextDecoder();
    const q = new EventStreamParser();
    const fromBytes = [];
    for (const [a, b] of splitAt(r, bytes.length)) fromBytes.push(...q.push(dec.decode(bytes.subarray(a, b), { stream: true })));
    fromBytes.push(...q.push(dec.decode()));
    assert.deepEqual(fromBytes, reference(new TextDecoder().decode(bytes)), `seed ${SEED} round ${round}: byte chunks of ${JSON.stringify(text)}`);
  }
});

test(`event stream parser: the server's events come back as sent (seed ${SEED})`, () => {
  const r = rng(SEED + 1);
  for (let round = 0; round < ROUNDS / 4; round++) {
    const sent = [];
    let wire = "";
    const n = Math.floor(r() * 6);
    for (let i = 0; i < n; i++) {
      const data = randomText(r).replace(/[\r\n]/g, "");
      sent.push({ event: `e${i}`, data });
      wire += `: ping\n\nevent: e${i}\ndata: ${data}\n\n`;
    }
    const p = new EventStreamParser();
    const got = [];
    for (const [a, b] of splitAt(r, wire.length)) got.push(...p.push(wire.slice(a, b)));
    assert.deepEqual(got, sent, `seed ${SEED} round ${round}`);
  }
});

test("event stream parser: a line or an event over the bound throws", () => {
  assert.throws(() => new EventStreamParser().push("data: " + "x".repeat(MAX_EVENT_CHARS)), RangeError);
  const p = new EventStreamParser();
  const mb = "data: " + "x".repeat(1 << 20) + "\n";
  assert.throws(() => { for (let i = 0; i < 17; i++) p.push(mb); }, /data longer than/);
});

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const LONG_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (n) => String(n).padStart(2, "0");

function httpDates(t) {
  const d = new Date(t);
  const hms = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  const mon = MONTHS[d.getUTCMonth()];
  return [
    `${DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())} ${mon} ${d.getUTCFullYear()} ${hms} GMT`,
    `${LONG_DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())}-${mon}-${two(d.getUTCFullYear() % 100)} ${hms} GMT`,
    `${DAYS[d.getUTCDay()]} ${mon} ${String(d.getUTCDate()).padStart(2, " ")} ${hms} ${d.getUTCFullYear()}`,
  ];
}

test(`Retry-After: every form of every date reads exactly; anything else is undefined or within an hour (seed ${SEED})`, () => {
  const r = rng(SEED + 2);
  const now = Date.UTC(2026, 11, 3, 8, 0, 0);
  for (let round = 0; round < ROUNDS; round++) {
    const ahead = Math.floor(r() * 7200) * 1000; // whole seconds, up to two hours
    for (const v of httpDates(now + ahead)) {
      assert.equal(parseHttpDate(v), now + ahead, `seed ${SEED}: ${v}`);
      assert.equal(parseRetryAfter(v, now), ahead === 0 ? undefined : Math.min(ahead, 3_600_000), `seed ${SEED}: ${v}`);
    }
    // Mutate a valid date and throw in arbitrary text: never outside the bounds.
    const [v] = httpDates(now + ahead);
    const i = Math.floor(r() * v.length);
    const junk = [v.slice(0, i) + PIECES[Math.floor(r() * PIECES.length)] + v.slice(i + 1), randomText(r), String(Math.floor(r() * 1e7)) + randomText(r)];
    for (const s of junk) {
      const ms = parseRetryAfter(s, now);
      assert.ok(ms === undefined || (Number.isInteger(ms) && ms >= 0 && ms <= 3_600_000), `seed ${SEED}: ${JSON.stringify(s)} gave ${ms}`);
      const t = parseHttpDate(s);
      assert.ok(t === undefined || httpDates(t).includes(s), `seed ${SEED}: ${JSON.stringify(s)} read as ${t}`);
    }
  }
  for (const lenient of ["May 5", "1 apple", "2026-12-03T08:00:30Z", "Thu, 31 Feb 2026 08:00:30 GMT", "Thu, 03 Dec 2026 24:00:00 GMT"]) {
    assert.equal(parseHttpDate(lenient), undefined, lenient);
  }
});

test("a stream that sends what is not JSON ends with a RatchetError bad_stream", async (t) => {
  const srv = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    res.write("event: job\r\ndata: {\"id\":1}\r\n\r\nevent: job\ndata: {not json\n\n");
  });
  await new Promise((ok) => srv.listen(0, "127.0.0.1", ok));
  t.after(() => { srv.closeAllConnections(); srv.close(); });
  const c = new Client(`http://127.0.0.1:${srv.address().port}`, "key");
  const got = [];
  await assert.rejects(async () => {
    for await (const e of c.stream({ job: 1 })) got.push(e);
  }, (err) => err instanceof RatchetError && err.code === "bad_stream" && /event job is not JSON/.test(err.message));
  assert.deepEqual(got, [{ event: "job", data: { id: 1 } }]);
});

test("a stream that goes quiet ends with RatchetError timeout after silenceMs; pings and a slow consumer do not", async (t) => {
  const srv = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    res.write("event: job\ndata: {\"id\":1}\n\n");
    if (!req.url.includes("view=overview")) return; // silent, left open
    let n = 0;
    const tick = setInterval(() => {
      if (++n <= 8) { res.write(": ping\n\n"); return; }
      clearInterval(tick);
      res.end("event: overview\ndata: {}\n\n");
    }, 100);
  });
  await new Promise((ok) => srv.listen(0, "127.0.0.1", ok));
  t.after(() => { srv.closeAllConnections(); srv.close(); });
  const c = new Client(`http://127.0.0.1:${srv.address().port}`, "key");
  const got = [];
  // 1.5 s of silence: at 300 ms a loaded machine's server had not yet sent
  // the first event when the silence ran out.
  const t0 = Date.now();
  await assert.rejects(async () => {
    for await (const e of c.stream({ job: 1 }, { silenceMs: 1500 })) got.push(e.event);
  }, (err) => err instanceof RatchetError && err.code === "timeout" && /nothing heard for 1500 ms/.test(err.message));
  assert.deepEqual(got, ["job"]);
  assert.ok(Date.now() - t0 >= 1490, `ended after ${Date.now() - t0} ms`);

  // Pings every 100 ms keep a stream alive; the silence here is wide (2 s)
  // so a loaded machine's late timer is not taken for a dead server, and
  // the consumer takes longer than it, which must not count as silence.
  const seen = [];
  for await (const e of c.stream({ view: "overview" }, { silenceMs: 2000 })) {
    seen.push(e.event);
    if (e.event === "job") await new Promise((ok) => setTimeout(ok, 2500)); // a slow consumer is not silence
  }
  assert.deepEqual(seen, ["job", "overview"]);
});
