// Ratchet backoff arithmetic for the browser: the calculator of seed 001 and
// the policy formula of seed 000. It mirrors the Go package backoff operation
// for operation (powers by a multiplication loop, Math.round half up, waits in
// integer thousandths of a millisecond) so both agree to the bit on every case
// of backoff/testdata/vectors.json. Pure: no DOM, no clock, no randomness but
// the seeded mulberry32.

import { LIMITS, PRESETS, PRESET_NAMES, GATES, MAX_CALC_ATTEMPTS, SAFETY_LIMIT_MS, JITTER_MODES, FIRST_WAITS } from "./limits.js";

// The limits, presets and modes come from the server's Go constants
// (limits.js is generated from them).
export { LIMITS, PRESETS, PRESET_NAMES, GATES, MAX_CALC_ATTEMPTS, SAFETY_LIMIT_MS, JITTER_MODES, FIRST_WAITS };
export const MAX_CALC_MS = 1e12;

// mulberry32 returns a generator of draws in [0, 1), exact to the widely
// copied reference and to backoff.Mulberry32. A seed is taken modulo 2^32.
export function mulberry32(seed) {
  let a = seed | 0;
  return function next() {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// pow multiplies m by itself n times: a loop, as in Go, never Math.pow or **,
// whose last bit may differ between engines.
export function pow(m, n) {
  let r = 1;
  for (let i = 0; i < n; i++) r *= m;
  return r;
}

// formatMicro prints thousandths of a millisecond (a BigInt or an integer
// Number) with no trailing zeros: 627074 → "627.074", 5470 → "5.47".
export function formatMicro(v) {
  let b = BigInt(v);
  const neg = b < 0n;
  if (neg) b = -b;
  let s = String(b / 1000n);
  const frac = b % 1000n;
  if (frac !== 0n) s += "." + String(frac + 1000n).slice(1).replace(/0+$/, "");
  return neg ? "-" + s : s;
}

// formatNumber prints a number as Go's strconv.FormatFloat(f, 'f', -1, 64):
// the shortest digits that round-trip, never in exponent form.
export function formatNumber(f) {
  if (Number.isNaN(f)) return "NaN";
  if (f === Infinity) return "+Inf";
  if (f === -Infinity) return "-Inf";
  if (Object.is(f, -0)) return "-0";
  const s = String(f);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, d0, rest = "", e] = m;
  const digits = d0 + rest;
  const exp = Number(e);
  if (exp < 0) return sign + "0." + "0".repeat(-exp - 1) + digits;
  return sign + digits + "0".repeat(Math.max(0, exp - rest.length));
}

// quote renders a string value in an error as Go's strconv.Quote does for
// printable text.
export function quote(s) {
  return JSON.stringify(String(s));
}

// fieldError formats one rejected value as backoff.FieldError does.
export function fieldError(field, value, allowed) {
  if (value === MISSING) return `${field}: missing; ${allowed}`;
  return `${field}: ${value} is not allowed; ${allowed}`;
}
export const MISSING = "(missing)";

// ---- The calculator (seed 001) ----

// SAMPLE is "Load sample": base 1000 ms, multiplier 2, cap 30000 ms, 4
// attempts, no jitter, first wait equal to the base, seed 1.
export const SAMPLE = Object.freeze({ baseMs: 1000, multiplier: 2, capMs: 30000, attempts: 4, jitter: "none", firstWait: "base", seed: 1 });

// validateCalc checks a calculator input with backoff.CalcInput.Validate's
// rules and messages. It returns a list of {field, message}.
export function validateCalc(i) {
  const errs = [];
  const add = (field, value, allowed) => errs.push({ field, message: fieldError(field, value, allowed) });
  const baseOK = i.baseMs > 0 && i.baseMs <= MAX_CALC_MS;
  if (!baseOK) add("baseMs", formatNumber(i.baseMs), "must be greater than 0 and at most 1000000000000 milliseconds");
  if (!(i.multiplier >= 1) || !Number.isFinite(i.multiplier)) add("multiplier", formatNumber(i.multiplier), "must be a finite number of at least 1");
  if (!(i.capMs > 0 && i.capMs <= MAX_CALC_MS) || (baseOK && i.capMs < i.baseMs)) {
    const lo = baseOK ? `the base delay (${formatNumber(i.baseMs)})` : "the base delay";
    add("capMs", formatNumber(i.capMs), `must be at least ${lo} and at most 1000000000000 milliseconds`);
  }
  if (!Number.isInteger(i.attempts) || i.attempts < 1 || i.attempts > MAX_CALC_ATTEMPTS) add("attempts", String(i.attempts), "must be an integer from 1 through 15");
  if (!JITTER_MODES.includes(i.jitter)) add("jitter", quote(i.jitter), "must be one of none, full, equal, decorrelated");
  if (!FIRST_WAITS.includes(i.firstWait)) add("firstWait", quote(i.firstWait), "must be one of base, multiplied");
  return errs;
}

const RANDOM = "random(min, max) is min + (max - min) * u, and u is in [0, 1) from mulberry32(seed).";

// formula is the line the page prints above the table.
export function formula(i) {
  const start = i.firstWait === "multiplied"
    ? "attempt starts at 1, so the first wait is base * factor. That matches the AWS simulator, which increments n before the first sleep."
    : "attempt starts at 0, so the first wait is the base delay when factor^0 is 1.";
  switch (i.jitter) {
    case "full": return "temp = min(cap, base * factor^attempt); wait = random(0, temp). " + start + " " + RANDOM;
    case "equal": return "temp = min(cap, base * factor^attempt); wait = temp / 2 + random(0, temp / 2). " + start + " " + RANDOM;
    case "decorrelated": return "wait = min(cap, random(base, previous * 3)), and previous starts at the base delay. The multiplier and the attempt index do not change this formula. " + RANDOM;
    default: return "wait = min(cap, base * factor^attempt). " + start + " No random draw. The seed is ignored.";
  }
}

// calculate is backoff.Calculate. Each row carries the wait in exact
// thousandths of a millisecond (a Number, below 2^53 because the base and cap
// are at most 1e12 ms) and the cumulative sum as a BigInt, which 15 waits of
// 1e12 ms would push past 2^53. lo and hi are the bounds the jitter could
// have drawn from, for the chart and the log comparison.
export function calculate(i) {
  const errors = validateCalc(i);
  if (errors.length) return { errors };
  const rnd = mulberry32(i.seed);
  const e0 = i.firstWait === "multiplied" ? 1 : 0;
  const rows = [];
  let prev = i.baseMs, cum = 0n, capped = 0;
  for (let k = 0; k < i.attempts; k++) {
    const exp = e0 + k;
    let wait, cut, lo, hi;
    if (i.jitter === "decorrelated") {
      lo = Math.min(i.capMs, i.baseMs);
      hi = Math.min(i.capMs, prev * 3);
      const w = i.baseMs + (prev * 3 - i.baseMs) * rnd();
      cut = w > i.capMs;
      wait = Math.min(i.capMs, w);
      prev = wait;
    } else {
      const raw = i.baseMs * pow(i.multiplier, exp);
      cut = raw > i.capMs;
      const temp = Math.min(i.capMs, raw);
      if (i.jitter === "full") { wait = temp * rnd(); lo = 0; hi = temp; }
      else if (i.jitter === "equal") { wait = temp / 2 + (temp / 2) * rnd(); lo = temp / 2; hi = temp; }
      else { wait = temp; lo = temp; hi = temp; }
    }
    const micro = Math.round(wait * 1000);
    cum += BigInt(micro);
    if (cut) capped++;
    rows.push({ attempt: exp, retry: k + 1, waitMicro: micro, cumulativeMicro: cum, capped: cut, lo, hi });
  }
  const notes = [];
  if (i.jitter !== "none") notes.push("Each wait is rounded to 0.001 ms. The cumulative column adds those rounded waits.");
  if (capped > 0) notes.push(`The cap cut ${capped} ${capped === 1 ? "wait" : "waits"}.`);
  const f = formula(i);
  return { errors: [], input: i, formula: f, rows, capped, notes, lines: [f, ...rows.map(rowLine), ...notes] };
}

// rowLine prints one retry as the calculator does.
export function rowLine(r) {
  return `attempt ${r.attempt}, retry ${r.retry}: ${formatMicro(r.waitMicro)} ms (cumulative ${formatMicro(r.cumulativeMicro)} ms${r.capped ? ", capped" : ""})`;
}

// waitsForSeed returns only the waits (in ms, rounded to 0.001 ms) of one seed:
// the inner loop of the chart's many-seed band, without the text.
export function waitsForSeed(i, seed) {
  const rnd = mulberry32(seed);
  const e0 = i.firstWait === "multiplied" ? 1 : 0;
  const out = new Array(i.attempts);
  let prev = i.baseMs;
  for (let k = 0; k < i.attempts; k++) {
    let wait;
    if (i.jitter === "decorrelated") {
      wait = Math.min(i.capMs, i.baseMs + (prev * 3 - i.baseMs) * rnd());
      prev = wait;
    } else {
      const temp = Math.min(i.capMs, i.baseMs * pow(i.multiplier, e0 + k));
      wait = i.jitter === "full" ? temp * rnd() : i.jitter === "equal" ? temp / 2 + (temp / 2) * rnd() : temp;
    }
    out[k] = Math.round(wait * 1000) / 1000;
  }
  return out;
}

// ---- Ratchet policies (seed 000) ----

export const POLICY_FIELDS = ["maxAttempts", "initialDelayMs", "multiplier", "maxDelayMs", "jitterPercent"];

// policyParams resolves a policy document ({preset, ...fields}) to its numbers.
export function policyParams(doc) {
  if (doc.preset === "CUSTOM") {
    const p = {};
    for (const f of POLICY_FIELDS) p[f] = doc[f];
    return p;
  }
  return PRESETS[doc.preset];
}

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

// validatePolicyText checks the five custom fields as typed into the form,
// the way backoff.ParsePolicy checks the JSON document the form stands for:
// an empty field is missing, text that is not a JSON number is quoted, a
// number out of range is shown as written. It returns {params, errors}.
export function validatePolicyText(text) {
  const errors = [];
  const add = (field, value, allowed) => errors.push({ field, message: fieldError(field, value, allowed) });
  const read = (name, lo, hi, integer, allowed) => {
    const raw = String(text[name] ?? "").trim();
    if (raw === "") { add(name, MISSING, "CUSTOM requires every field; " + allowed); return 0; }
    const f = JSON_NUMBER.test(raw) ? Number(raw) : NaN;
    if (!Number.isFinite(f) || (integer && !Number.isInteger(f)) || f < lo || f > hi) {
      add(name, JSON_NUMBER.test(raw) ? raw : quote(raw), allowed);
      return 0;
    }
    return f;
  };
  const p = {};
  const L = LIMITS;
  p.maxAttempts = read("maxAttempts", L.maxAttempts.min, L.maxAttempts.max, true, `must be an integer from ${L.maxAttempts.min} through ${L.maxAttempts.max}`);
  p.initialDelayMs = read("initialDelayMs", L.initialDelayMs.min, L.initialDelayMs.max, true, `must be an integer from ${L.initialDelayMs.min} through ${L.initialDelayMs.max} milliseconds`);
  p.multiplier = read("multiplier", L.multiplier.min, L.multiplier.max, false, `must be a number from ${L.multiplier.min} through ${L.multiplier.max}`);
  const lo = p.initialDelayMs === 0 ? L.initialDelayMs.min : p.initialDelayMs;
  p.maxDelayMs = read("maxDelayMs", lo, L.maxDelayMs.max, true, `must be an integer from the initial delay (${lo}) through ${L.maxDelayMs.max} milliseconds`);
  p.jitterPercent = read("jitterPercent", L.jitterPercent.min, L.jitterPercent.max, false, `must be a number from ${L.jitterPercent.min} through ${L.jitterPercent.max}`);
  return { params: errors.length ? null : p, errors };
}

// policyBase is Params.Base: the capped, jitter-free delay after failed attempt n.
export function policyBase(p, attempt) {
  return Math.min(p.maxDelayMs, p.initialDelayMs * pow(p.multiplier, attempt - 1));
}

// policyJitter is the ± band at sample u, in the documented order of operations.
export function policyJitter(p, base, u) {
  const lo = 1 - p.jitterPercent / 100;
  const span = 2 * p.jitterPercent / 100;
  return Math.round(base * (lo + u * span));
}

// policyDelay is Params.Delay: the decision after failed attempt n with sample
// u and an optional retry-after hint (0 for none).
export function policyDelay(p, attempt, u, retryAfterMs = 0) {
  if (attempt >= p.maxAttempts) return { attempt, exhausted: true };
  const baseDelayMs = policyBase(p, attempt);
  const minDelayMs = policyJitter(p, baseDelayMs, 0);
  const maxDelayMs = policyJitter(p, baseDelayMs, 1);
  const jitteredMs = policyJitter(p, baseDelayMs, u);
  let selectedMs = jitteredMs, hintWon = false, safetyLimit = false;
  if (retryAfterMs > selectedMs) { selectedMs = retryAfterMs; hintWon = true; }
  if (selectedMs > SAFETY_LIMIT_MS) { selectedMs = SAFETY_LIMIT_MS; safetyLimit = true; }
  return { attempt, exhausted: false, baseDelayMs, minDelayMs, maxDelayMs, jitteredMs, selectedMs, hintWon, safetyLimit, nextAttempt: attempt + 1 };
}

// policyCeiling is the longest delay the policy alone can select.
export function policyCeiling(p) {
  return Math.min(SAFETY_LIMIT_MS, policyJitter(p, p.maxDelayMs, 1));
}

// hintOutcome says, for one failed attempt, how a retry-after hint compares
// with the jittered range: "wins" (longer than every jittered delay), "loses"
// (shorter than or equal to every one), or "sometimes" (inside the range).
// selectedMin and selectedMax are the range after the hint and the 24-hour limit.
export function hintOutcome(row, hintMs) {
  const selectedMin = Math.min(SAFETY_LIMIT_MS, Math.max(row.minDelayMs, hintMs));
  const selectedMax = Math.min(SAFETY_LIMIT_MS, Math.max(row.maxDelayMs, hintMs));
  let outcome = "sometimes";
  if (hintMs > row.maxDelayMs) outcome = "wins";
  else if (hintMs <= row.minDelayMs) outcome = "loses";
  return { outcome, selectedMin, selectedMax, safetyLimit: Math.max(row.maxDelayMs, hintMs) > SAFETY_LIMIT_MS };
}

// policySchedule is Params.Schedule: one row per failed attempt, the last one
// exhausted, with the zero-jitter total of the waits.
export function policySchedule(p) {
  const rows = [];
  let waits = 0, total = 0;
  for (let n = 1; n <= p.maxAttempts; n++) {
    if (n === p.maxAttempts) { rows.push({ failedAttempt: n, exhausted: true, nextAttempt: n + 1 }); break; }
    const base = policyBase(p, n);
    rows.push({ failedAttempt: n, exhausted: false, baseDelayMs: base, minDelayMs: policyJitter(p, base, 0), maxDelayMs: policyJitter(p, base, 1), nextAttempt: n + 1 });
    waits++;
    total += Math.round(base);
  }
  return { params: p, rows, waits, zeroJitterTotalMs: total, ceilingMs: policyCeiling(p) };
}

const WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];

// seconds is the bare number of Seconds: milliseconds rounded, then in seconds.
export function secondsNumber(ms) { return formatNumber(Math.round(ms) / 1000); }

// Seconds renders "10 seconds", "1 second" or "1.5 seconds".
export function seconds(ms) {
  const s = secondsNumber(ms);
  return s === "1" ? "1 second" : s + " seconds";
}

// jitterRangeText is the table's range cell: "8–12 seconds", or one value
// when the jitter is zero.
export function jitterRangeText(row) {
  return row.minDelayMs === row.maxDelayMs ? seconds(row.minDelayMs) : secondsNumber(row.minDelayMs) + "–" + seconds(row.maxDelayMs);
}

// totalSentence is the line under the policy table.
export function totalSentence(s) {
  if (s.waits === 0) return "With a single attempt there is no wait.";
  if (s.waits === 1) return "With zero jitter, that one wait totals " + seconds(s.zeroJitterTotalMs) + ".";
  const n = s.waits < WORDS.length ? WORDS[s.waits] : String(s.waits);
  return `With zero jitter, those ${n} waits total ${seconds(s.zeroJitterTotalMs)}.`;
}

// policyTableCells gives the four documented cells of each row.
export function policyTableCells(row) {
  if (row.exhausted) return [String(row.failedAttempt), "None", "None", `Exhausted; no automatic attempt ${row.nextAttempt}`];
  return [String(row.failedAttempt), seconds(row.baseDelayMs), jitterRangeText(row), `Attempt ${row.nextAttempt}`];
}

// policyText is PolicySchedule.Text: the table as the documentation prints it.
export function policyText(s) {
  const lines = ["| Failed attempt | Base delay | Jitter range | Next execution |", "|---|---|---|---|"];
  for (const r of s.rows) lines.push("| " + policyTableCells(r).join(" | ") + " |");
  lines.push(totalSentence(s));
  return lines.join("\n") + "\n";
}
