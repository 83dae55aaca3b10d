// The backoff calculator page: reads the form, keeps the numbers in the URL,
// and draws the schedule, the charts, the log comparison and the layered
// retries panel. All arithmetic is in backoff.js; nothing here talks to the
// network, and the pasted log is never written to the URL or to storage.
import * as B from "./backoff.js";
import { $, h, toast, fieldText, labelOf } from "./ui.js";
import { parseLog, observedWaits, compareWait, readableTime } from "./logparse.js";
import { bandChart, histogram, duration } from "./chart.js";

const SEEDS = 2000;
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

// Calculator inputs: element id, URL parameter, Go field name.
const CALC = [
  { id: "base", field: "baseMs" },
  { id: "multiplier", field: "multiplier" },
  { id: "cap", field: "capMs" },
  { id: "attempts", field: "attempts" },
  { id: "jitter", field: "jitter" },
  { id: "first", field: "firstWait" },
  { id: "seed", field: "seed" },
];
// Policy inputs: element id (also the URL parameter), Go field name.
const POLICY = [
  { id: "maxAttempts", field: "maxAttempts" },
  { id: "initialDelayMs", field: "initialDelayMs" },
  { id: "policyMultiplier", field: "multiplier" },
  { id: "maxDelayMs", field: "maxDelayMs" },
  { id: "jitterPercent", field: "jitterPercent" },
];

const state = {
  mode: "calc",
  // Values from the URL that a <select> or radio cannot hold, kept so the
  // page can say what is wrong with the link instead of silently changing it.
  raw: { jitter: null, first: null, preset: null },
  calc: null, // the last valid calculator result
  policy: null, // {params, schedule, hint}
  histRetry: null,
};

// ---------- small DOM helpers ----------

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    toast(`Copied ${what}.`);
  } catch {
    const ta = h("textarea", { readonly: "", class: "offscreen", "aria-hidden": "true" });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    const ok = document.execCommand("copy");
    ta.remove();
    toast(ok ? `Copied ${what}.` : `The browser did not allow copying ${what}.`);
  }
}

function radioValue(name) {
  const r = document.querySelector(`input[name="${name}"]:checked`);
  return r ? r.value : "";
}

function setRadio(name, value) {
  for (const r of document.querySelectorAll(`input[name="${name}"]`)) r.checked = r.value === value;
}

// showErrors puts each message beside its field (in the page's words, see
// fieldText) and lists the fields to fix above the results, each a link to
// its field, so no message is printed twice.
function showErrors(box, ids, errors, fieldToId) {
  const byId = new Map();
  for (const e of errors) {
    const id = fieldToId(e.field);
    if (!byId.has(id)) byId.set(id, []);
    byId.get(id).push(fieldText(e.field, e.message));
  }
  for (const id of ids) {
    const msgEl = $(id + "-error");
    const input = $(id) || document.querySelector(`input[name="${id}"]`);
    const msgs = byId.get(id);
    if (msgEl) {
      msgEl.hidden = !msgs;
      msgEl.textContent = msgs ? msgs.join(" ") : "";
    }
    if (input) {
      if (msgs) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
  }
  const list = box.querySelector("ul");
  list.replaceChildren(...[...byId.keys()].map((id) => {
    const hasField = !!$(id + "-error");
    if (!hasField) return h("li", { text: byId.get(id).join(" ") });
    const a = h("a", { href: "#" + id, text: labelOf(id) });
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      const target = $(id) || document.querySelector(`input[name="${id}"]`);
      if (target) target.focus();
    });
    return h("li", {}, a);
  }));
  box.hidden = errors.length === 0;
}

function ms(micro) {
  return B.formatMicro(micro) + " ms";
}

function human(msValue) {
  return msValue >= 1000 ? "≈ " + duration(msValue) : "";
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

function listWords(xs) {
  if (xs.length <= 1) return xs.join("");
  return xs.slice(0, -1).join(", ") + " and " + xs[xs.length - 1];
}

// ---------- calculator mode ----------

function readCalc() {
  const errors = [];
  const text = {};
  for (const f of ["base", "multiplier", "cap", "attempts", "seed"]) text[f] = $(f).value;
  const empty = ["base", "multiplier", "cap", "attempts"].every((k) => text[k].trim() === "");
  const num = (field, raw, allowed) => {
    const s = raw.trim();
    if (s === "") { errors.push({ field, message: B.fieldError(field, B.MISSING, allowed) }); return NaN; }
    if (!DECIMAL.test(s)) { errors.push({ field, message: B.fieldError(field, B.quote(raw), allowed) }); return NaN; }
    return Number(s);
  };
  const input = {};
  input.baseMs = num("baseMs", text.base, "must be a number of milliseconds greater than 0");
  input.multiplier = num("multiplier", text.multiplier, "must be a number of at least 1");
  input.capMs = num("capMs", text.cap, "must be a number of milliseconds, at least the base delay");
  const att = text.attempts.trim();
  if (att === "") errors.push({ field: "attempts", message: B.fieldError("attempts", B.MISSING, "must be an integer from 1 through 15") });
  else if (!INTEGER.test(att)) errors.push({ field: "attempts", message: B.fieldError("attempts", B.quote(text.attempts), "must be an integer from 1 through 15") });
  input.attempts = INTEGER.test(att) ? Number(att) : NaN;
  input.jitter = state.raw.jitter ?? $("jitter").value;
  input.firstWait = state.raw.first ?? radioValue("first");
  const seed = text.seed.trim();
  const seedNum = INTEGER.test(seed) ? Number(seed) : NaN;
  if (!(seedNum >= -2147483648 && seedNum <= 4294967295)) {
    errors.push({ field: "seed", message: B.fieldError("seed", seed === "" ? B.MISSING : B.quote(text.seed), "must be an integer from -2147483648 through 4294967295") });
    input.seed = 0;
  } else {
    input.seed = seedNum >>> 0;
  }
  // The package's own rules, for the fields that parsed.
  const seen = new Set(errors.map((e) => e.field));
  for (const e of B.validateCalc(input)) if (!seen.has(e.field)) errors.push(e);
  const order = CALC.map((c) => c.field);
  errors.sort((a, b) => order.indexOf(a.field) - order.indexOf(b.field));
  return { input, errors, empty };
}

const calcFieldToId = (field) => (CALC.find((c) => c.field === field) || { id: field }).id;

function renderCalc() {
  const { input, errors, empty } = readCalc();
  const showEmpty = empty && errors.every((e) => ["baseMs", "multiplier", "capMs", "attempts"].includes(e.field));
  $("calc-empty").hidden = !showEmpty;
  showErrors($("calc-errors"), CALC.map((c) => c.id), showEmpty ? [] : errors, calcFieldToId);
  const ok = !showEmpty && errors.length === 0;
  $("calc-output").hidden = !ok;
  $("calc-chart-card").hidden = !ok;
  state.calc = null;
  if (!ok) return;
  const r = B.calculate(input);
  state.calc = r;
  $("formula").textContent = r.formula;
  const longest = Math.max(...r.rows.map((x) => x.waitMicro), 1);
  $("calc-table").tBodies[0].replaceChildren(...r.rows.map((row) => {
    const bar = h("span", { class: "bar" + (row.capped ? " bar-capped" : "") });
    bar.style.width = ((row.waitMicro / longest) * 100).toFixed(2) + "%";
    const wait = h("td", { class: "num" }, h("span", { class: "mono", text: ms(row.waitMicro) }));
    if (row.capped) wait.append(" ", h("span", { class: "badge badge-cap", text: "capped" }));
    const hw = human(row.waitMicro / 1000);
    if (hw) wait.append(h("span", { class: "sub", text: hw }));
    return h("tr", { class: row.capped ? "capped" : "" },
      h("td", { text: String(row.retry) }),
      h("td", { text: String(row.attempt) }),
      wait,
      h("td", { class: "bar-col" }, h("span", { class: "bar-track" }, bar)),
      h("td", { class: "num mono", text: ms(row.cumulativeMicro) }));
  }));
  $("calc-notes").replaceChildren(...r.notes.map((n) => h("p", { class: n.startsWith("The cap cut") ? "note note-cap" : "note", text: n })));
  $("calc-lines").textContent = r.lines.join("\n");
  renderCalcChart(input, r);
}

function percentile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1) + 1e-9))];
}

function renderCalcChart(input, r) {
  const n = input.attempts;
  const cols = Array.from({ length: n }, () => new Float64Array(SEEDS));
  for (let s = 0; s < SEEDS; s++) {
    const w = B.waitsForSeed(input, s + 1);
    for (let k = 0; k < n; k++) cols[k][s] = w[k];
  }
  for (const c of cols) c.sort();
  const pick = (q) => cols.map((c) => percentile(c, q));
  const seedWaits = r.rows.map((x) => x.waitMicro / 1000);
  const jittered = input.jitter !== "none";
  bandChart($("calc-chart"), {
    count: n,
    title: "Waits per retry",
    desc: `Waits for retries 1 to ${n}; the bands show seeds 1 to ${SEEDS}.`,
    xLabel: "retry",
    xTick: (i) => String(i + 1),
    bands: jittered ? [
      { lo: pick(0), hi: pick(1), cls: "band-range", label: "min–max" },
      { lo: pick(0.1), hi: pick(0.9), cls: "band-mid", label: "10th–90th percentile" },
    ] : [],
    lines: [
      ...(jittered ? [{ values: pick(0.5), cls: "line-median", label: "median" }] : []),
      { values: seedWaits, cls: "line-seed", label: jittered ? `seed ${input.seed}` : "wait", dots: true },
    ],
    rules: [{ y: input.capMs, cls: "rule-cap", label: "cap " + duration(input.capMs), scale: input.capMs <= Math.max(...seedWaits, ...pick(1)) * 1.6 }],
  });
  $("calc-chart-caption").textContent = jittered
    ? `Each column is one retry. The bands show where the waits of seeds 1–${SEEDS.toLocaleString("en")} fall; the dots are seed ${input.seed}.`
    : "No jitter: every seed waits the same, so there is no band, only the capped exponential.";

  const sel = $("hist-retry");
  if (state.histRetry === null || state.histRetry > n) state.histRetry = n;
  sel.replaceChildren(...Array.from({ length: n }, (_, i) => h("option", { value: String(i + 1), text: String(i + 1) })));
  sel.value = String(state.histRetry);
  const k = state.histRetry - 1;
  const values = Array.from(cols[k]);
  const atCap = values.filter((v) => v === input.capMs).length;
  histogram($("calc-hist"), {
    title: `Waits of retry ${k + 1}`,
    desc: `Share of ${SEEDS} seeds per wait for retry ${k + 1}, over the range of waits that occur, with the waits exactly at the cap drawn apart.`,
    values, atCap: true, cap: input.capMs, bins: 24, xLabel: `wait before retry ${k + 1}`,
  });
  // Without jitter every seed waits the same: one bar says nothing the note
  // does not.
  $("calc-hist").toggleAttribute("hidden", !jittered); // SVG elements have no .hidden property
  const share = ((atCap / SEEDS) * 100).toFixed(1);
  const note = $("spike-note");
  note.classList.toggle("callout-warn", input.jitter === "decorrelated" && atCap > 0);
  if (!jittered) {
    note.textContent = `No jitter: every seed waits ${B.formatMicro(r.rows[k].waitMicro)} ms before retry ${k + 1}${r.rows[k].capped ? ", the cap" : ""}.`;
  } else if (input.jitter === "decorrelated") {
    note.textContent = atCap > 0
      ? `At retry ${k + 1}, ${share}% of ${SEEDS.toLocaleString("en")} seeds wait exactly the cap (${B.formatNumber(input.capMs)} ms). Decorrelated jitter draws up to three times the previous wait and then cuts at the cap, so once waits near the cap most draws overshoot and pile up on it: clients that fail together retry together again.`
      : `At retry ${k + 1}, no seed reaches the cap yet. Raise the attempts or lower the cap to see decorrelated jitter pile waits up at the cap.`;
  } else {
    note.textContent = `At retry ${k + 1}, ${atCap === 0 ? "no seed waits" : share + "% of seeds wait"} exactly the cap: ${input.jitter} jitter draws inside the capped value, so the cap does not pile waits up.`;
  }
}

function calcCSV() {
  const r = state.calc;
  if (!r) return null;
  const lines = ["retry,attempt,wait_ms,cumulative_ms,capped"];
  for (const x of r.rows) lines.push([x.retry, x.attempt, B.formatMicro(x.waitMicro), B.formatMicro(x.cumulativeMicro), x.capped].join(","));
  return lines.join("\n") + "\n";
}

// fillSample puts seed 001's sample into the calculator's fields. A fresh
// page opens with it, computed: grey placeholders looked like values beside
// an empty schedule.
function fillSample() {
  const s = B.SAMPLE;
  $("base").value = String(s.baseMs);
  $("multiplier").value = String(s.multiplier);
  $("cap").value = String(s.capMs);
  $("attempts").value = String(s.attempts);
  $("jitter").value = s.jitter;
  setRadio("first", s.firstWait);
  $("seed").value = String(s.seed);
  state.raw.jitter = state.raw.first = null;
}

function loadSample() {
  fillSample();
  update();
}

// ---------- policy mode ----------

const policyFieldToId = (field) => {
  if (field === "multiplier") return "policyMultiplier";
  return field;
};

function readPolicy() {
  const errors = [];
  const presetRaw = state.raw.preset ?? $("preset").value;
  if (!B.PRESET_NAMES.includes(presetRaw)) {
    errors.push({ field: "preset", message: B.fieldError("preset", B.quote(presetRaw), "must be one of STANDARD, AGGRESSIVE, RELAXED, CUSTOM") });
  }
  let params = null;
  if (presetRaw === "CUSTOM") {
    const text = {};
    for (const p of POLICY) text[p.field] = $(p.id).value;
    const v = B.validatePolicyText(text);
    errors.push(...v.errors);
    params = v.params;
  } else if (B.PRESETS[presetRaw]) {
    params = B.PRESETS[presetRaw];
  }
  const rawHint = $("retryAfterMs").value.trim();
  let hint = 0;
  if (rawHint !== "") {
    if (!INTEGER.test(rawHint) || Math.abs(Number(rawHint)) > Number.MAX_SAFE_INTEGER) {
      errors.push({ field: "retryAfterMs", message: B.fieldError("retryAfterMs", B.quote($("retryAfterMs").value), "must be an integer of 0 or more milliseconds") });
    } else if (Number(rawHint) < 0) {
      errors.push({ field: "retryAfterMs", message: B.fieldError("retryAfterMs", String(Number(rawHint)), "must be 0 (no hint) or more milliseconds") });
    } else {
      hint = Number(rawHint);
    }
  }
  return { preset: presetRaw, params, hint, errors };
}

function syncPresetFields() {
  const preset = $("preset").value;
  const custom = preset === "CUSTOM";
  for (const p of POLICY) {
    const input = $(p.id);
    input.disabled = !custom;
    if (!custom) input.value = String(B.PRESETS[preset][p.field]);
  }
  $("customise").hidden = custom;
}

function hintCell(row, hint) {
  if (row.exhausted) return "No retry";
  const o = B.hintOutcome(row, hint);
  const range = o.selectedMin === o.selectedMax ? B.seconds(o.selectedMin) : B.secondsNumber(o.selectedMin) + "–" + B.seconds(o.selectedMax);
  const limit = o.safetyLimit ? " (24-hour limit)" : "";
  if (o.outcome === "wins") return { text: `Hint wins: ${range}${limit}`, cls: "win" };
  if (o.outcome === "loses") return { text: `Hint loses: ${range}`, cls: "lose" };
  return { text: `Hint wins over shorter draws: ${range}${limit}`, cls: "some" };
}

function renderPolicy() {
  const { preset, params, hint, errors } = readPolicy();
  showErrors($("policy-errors"), ["preset", ...POLICY.map((p) => p.id), "retryAfterMs"], errors, policyFieldToId);
  const ok = errors.length === 0 && params;
  $("policy-output").hidden = !ok;
  $("policy-chart-card").hidden = !ok;
  state.policy = null;
  if (!ok) return;
  const s = B.policySchedule(params);
  state.policy = { preset, params, schedule: s, hint };
  const showHint = hint > 0;
  $("policy-table").classList.toggle("with-hint", showHint);
  $("policy-table").tBodies[0].replaceChildren(...s.rows.map((row) => {
    const cells = B.policyTableCells(row).map((c, i) => h("td", { text: c, class: i === 3 && row.exhausted ? "exhausted" : "" }));
    const tr = h("tr", { class: row.exhausted ? "exhausted-row" : "" }, ...cells);
    if (showHint) {
      const c = hintCell(row, hint);
      tr.append(typeof c === "string" ? h("td", { class: "hint-col", text: c }) : h("td", { class: "hint-col hint-" + c.cls, text: c.text }));
    }
    return tr;
  }));
  $("policy-total").textContent = B.totalSentence(s);
  const summary = $("policy-hint-summary");
  summary.hidden = !showHint || s.waits === 0;
  if (showHint && s.waits > 0) {
    const groups = { wins: [], loses: [], sometimes: [] };
    for (const row of s.rows) if (!row.exhausted) groups[B.hintOutcome(row, hint).outcome].push(String(row.failedAttempt));
    const after = (xs) => `after attempt${xs.length === 1 ? "" : "s"} ${listWords(xs)}`;
    const parts = [];
    if (groups.wins.length) parts.push(`wins ${after(groups.wins)}, where it is longer than every jittered delay.`);
    if (groups.sometimes.length) parts.push(`falls inside the jitter range ${after(groups.sometimes)}, so it wins only over shorter draws.`);
    if (groups.loses.length) parts.push(`loses ${after(groups.loses)} to the normal delay.`);
    summary.textContent = `A ${B.secondsNumber(hint)}-second hint ` + parts.join(" It ") + " The hint is a floor: it is never jittered down.";
  }
  const ceil = s.ceilingMs;
  $("policy-ceiling").textContent = params.jitterPercent > 0
    ? `The cap applies before jitter: the longest delay this policy alone can select is ${B.seconds(ceil)} (cap ${B.seconds(params.maxDelayMs)} plus ${B.formatNumber(params.jitterPercent)}%).`
    : `No jitter: the longest delay this policy alone can select is the cap, ${B.seconds(ceil)}.`;
  const doc = preset === "CUSTOM" ? { preset, ...params } : { preset };
  $("policy-json").textContent = JSON.stringify(doc, null, 2);
  $("policy-text").textContent = B.policyText(s);
  renderPolicyChart(params, s, hint);
}

function renderPolicyChart(p, s, hint) {
  const rows = s.rows.filter((r) => !r.exhausted);
  const svg = $("policy-chart");
  svg.toggleAttribute("hidden", rows.length === 0);
  $("policy-chart-caption").textContent = rows.length === 0
    ? "A single attempt: there is no wait to draw."
    : `Each column is the delay after one failed attempt. The band is the jitter range (u from 0 through 1); the middle band is the 10th–90th percentile of a uniform draw.`;
  if (!rows.length) return;
  bandChart(svg, {
    count: rows.length,
    title: "Delay per failed attempt",
    desc: `Base delay and jitter range after failed attempts 1 to ${rows.length}.`,
    xLabel: "failed attempt",
    xTick: (i) => String(i + 1),
    bands: [
      { lo: rows.map((r) => r.minDelayMs), hi: rows.map((r) => r.maxDelayMs), cls: "band-range", label: "jitter range" },
      { lo: rows.map((r) => B.policyJitter(p, r.baseDelayMs, 0.1)), hi: rows.map((r) => B.policyJitter(p, r.baseDelayMs, 0.9)), cls: "band-mid", label: "10th–90th percentile" },
    ],
    lines: [{ values: rows.map((r) => r.baseDelayMs), cls: "line-seed", label: "base", dots: true }],
    rules: [
      { y: p.maxDelayMs, cls: "rule-cap", label: "cap " + duration(p.maxDelayMs), scale: p.maxDelayMs <= Math.max(...rows.map((r) => r.maxDelayMs)) * 1.6 },
      ...(hint > 0 ? [{ y: Math.min(hint, B.SAFETY_LIMIT_MS), cls: "rule-hint", label: "Retry-After " + duration(hint), scale: true }] : []),
    ],
  });
}

function policyCSV() {
  const st = state.policy;
  if (!st) return null;
  const lines = ["failed_attempt,base_delay_ms,min_delay_ms,max_delay_ms,next_execution" + (st.hint > 0 ? ",selected_min_ms,selected_max_ms,hint" : "")];
  for (const r of st.schedule.rows) {
    if (r.exhausted) { lines.push(`${r.failedAttempt},,,,exhausted` + (st.hint > 0 ? ",,," : "")); continue; }
    let line = `${r.failedAttempt},${B.formatNumber(r.baseDelayMs)},${r.minDelayMs},${r.maxDelayMs},attempt ${r.nextAttempt}`;
    if (st.hint > 0) {
      const o = B.hintOutcome(r, st.hint);
      line += `,${o.selectedMin},${o.selectedMax},${o.outcome}`;
    }
    lines.push(line);
  }
  return lines.join("\n") + "\n";
}

// ---------- pasted log ----------

// expected returns, for retry k (from 1), the configured wait and the range
// [lo, hi] in thousandths of a millisecond, or null when no retry k exists.
function expected(k, prevObservedMs) {
  if (state.mode === "calc") {
    const r = state.calc;
    if (!r || k > r.rows.length) return null;
    const row = r.rows[k - 1];
    const i = r.input;
    let lo = row.lo, hi = row.hi;
    if (i.jitter === "decorrelated") {
      const prev = k === 1 ? i.baseMs : prevObservedMs;
      lo = Math.min(i.capMs, i.baseMs);
      hi = Math.min(i.capMs, prev * 3);
    }
    return { configured: ms(row.waitMicro) + (i.jitter === "none" ? "" : ` (seed ${i.seed})`), lo: Math.round(lo * 1000), hi: Math.round(hi * 1000) };
  }
  const st = state.policy;
  if (!st) return null;
  const row = st.schedule.rows[k - 1];
  if (!row || row.exhausted) return null;
  const o = B.hintOutcome(row, st.hint);
  const lo = st.hint > 0 ? o.selectedMin : row.minDelayMs, hi = st.hint > 0 ? o.selectedMax : row.maxDelayMs;
  return { configured: "base " + B.formatNumber(row.baseDelayMs) + " ms", lo: lo * 1000, hi: hi * 1000 };
}

function renderLog() {
  const text = $("log").value;
  const summary = $("log-summary"), table = $("log-table"), skippedList = $("log-skipped");
  if (text.trim() === "") {
    summary.hidden = table.hidden = skippedList.hidden = true;
    return;
  }
  const { stamps, skipped, zoneless } = parseLog(text);
  skippedList.hidden = skipped.length === 0;
  skippedList.replaceChildren(...skipped.slice(0, 20).map((s) => h("li", { text: `Line ${s.line} has no timestamp and was skipped.` })));
  const waits = observedWaits(stamps);
  summary.hidden = false;
  const schedOK = state.mode === "calc" ? !!state.calc : !!state.policy;
  if (!schedOK) {
    table.hidden = true;
    summary.className = "callout";
    summary.textContent = "Fix the inputs above first: the log is compared with the schedule they describe.";
    return;
  }
  if (waits.length === 0) {
    table.hidden = true;
    summary.className = "callout";
    summary.textContent = `Found ${plural(stamps.length, "timestamp", "timestamps")}. Paste at least two failed attempts to see a wait.`;
    return;
  }
  table.hidden = false;
  const outside = [];
  let prevMs = null;
  const rows = waits.map((w) => {
    const exp = expected(w.retry, prevMs);
    prevMs = w.micro / 1000;
    let verdict, cls;
    if (w.micro < 0) {
      verdict = "Out of order";
      cls = "bad";
      outside.push(`retry ${w.retry} is out of order`);
    } else if (!exp) {
      verdict = "No retry expected";
      cls = "bad";
      outside.push(`retry ${w.retry} is beyond the schedule`);
    } else {
      const c = compareWait(w.micro, exp.lo, exp.hi);
      if (c.verdict === "inside") { verdict = "Inside"; cls = "good"; }
      else { verdict = `${c.verdict === "early" ? "Early" : "Late"} by ${ms(c.by)}`; cls = "bad"; outside.push(`retry ${w.retry} was ${c.verdict} by ${ms(c.by)}`); }
    }
    const range = !exp ? "—" : exp.lo === exp.hi ? ms(exp.lo) : `${B.formatMicro(exp.lo)}–${ms(exp.hi)}`;
    return h("tr", { class: cls === "bad" ? "outside" : "" },
      h("td", { text: String(w.retry) }),
      // The time as people read it; the log's own text (an epoch number,
      // another zone) is the tooltip.
      h("td", { class: "mono small" }, h("time", { title: "In the log: " + w.to.stamp, text: readableTime(w.to.micro) })),
      h("td", { class: "num mono", text: ms(w.micro) }),
      h("td", { class: "num mono", text: exp ? exp.configured : "—" }),
      h("td", { class: "num mono", text: range }),
      h("td", {}, h("span", { class: "verdict verdict-" + cls, text: verdict })));
  });
  table.tBodies[0].replaceChildren(...rows);
  const inside = waits.length - outside.length;
  let s = `${plural(stamps.length, "failure", "failures")}, ${plural(waits.length, "observed wait", "observed waits")}: ${inside} inside the expected range`;
  s += outside.length ? `, ${outside.length} outside (${listWords(outside)}).` : ".";
  s += " Each gap also holds the time the retry itself ran before it failed.";
  if (state.mode === "calc" && state.calc.input.jitter === "decorrelated") s += " Decorrelated ranges use the observed previous wait.";
  if (zoneless) s += " Times without a zone are read as UTC; only the gaps matter.";
  summary.className = "callout " + (outside.length ? "callout-warn" : "callout-good");
  summary.textContent = s;
}

function exampleLog() {
  // Timestamps of failures that follow the schedule on screen, with the third
  // wait two and a half seconds past the top of its range, to show what the
  // comparison reports.
  let t = Date.UTC(2026, 2, 4, 10, 0, 0) * 1000; // thousandths of a ms
  const waits = [];
  if (state.mode === "calc" && state.calc) for (const r of state.calc.rows) waits.push(r.waitMicro);
  else if (state.policy) for (const r of state.policy.schedule.rows) if (!r.exhausted) waits.push(Math.round(B.policyJitter(state.policy.params, r.baseDelayMs, 0.5)) * 1000);
  if (!waits.length) return "";
  const stamp = (micro) => {
    const d = new Date(Math.floor(micro / 1000));
    const frac = String(micro % 1_000_000).padStart(6, "0");
    return d.toISOString().slice(0, 19) + "." + frac + "Z";
  };
  const lines = [`${stamp(t)} ERROR job=step_42 attempt=1 provider=stripe status=503`];
  waits.slice(0, 8).forEach((w, i) => {
    const exp = expected(i + 1, i === 0 ? 0 : waits[i - 1] / 1000);
    t += i === 2 && exp ? exp.hi + 2_500_000 : w;
    lines.push(`${stamp(t)} ERROR job=step_42 attempt=${i + 2} provider=stripe status=503`);
  });
  return lines.join("\n");
}

// ---------- layered retries ----------

function renderLayers() {
  const errors = [];
  const read = (id, field) => {
    const raw = $(id).value, s = raw.trim();
    const n = INTEGER.test(s) ? Number(s) : NaN;
    if (!(n >= 1 && n <= 1000)) {
      errors.push({ field, message: B.fieldError(field, s === "" ? B.MISSING : INTEGER.test(s) ? String(n) : B.quote(raw), "must be an integer from 1 through 1000") });
      return NaN;
    }
    return n;
  };
  const d = read("durable", "durableAttempts"), t = read("transport", "transportAttempts");
  for (const [id, field] of [["durable", "durableAttempts"], ["transport", "transportAttempts"]]) {
    const e = errors.find((x) => x.field === field);
    $(id + "-error").hidden = !e;
    $(id + "-error").textContent = e ? e.message : "";
    if (e) $(id).setAttribute("aria-invalid", "true");
    else $(id).removeAttribute("aria-invalid");
  }
  const out = $("layers-result"), grid = $("layers-grid");
  if (errors.length) {
    out.textContent = "";
    grid.replaceChildren();
    return;
  }
  out.replaceChildren(
    `${plural(d, "durable attempt", "durable attempts")} × ${plural(t, "transport attempt", "transport attempts")} = `,
    h("strong", { text: plural(d * t, "provider request", "provider requests") }),
    " in the worst case.");
  grid.hidden = d * t > 600;
  if (grid.hidden) { grid.replaceChildren(); return; }
  grid.style.gridTemplateColumns = `repeat(${t}, var(--cell))`;
  const cells = [];
  for (let i = 0; i < d; i++) for (let j = 0; j < t; j++) cells.push(h("span", { class: j === 0 ? "cell first" : "cell" }));
  grid.replaceChildren(...cells);
}

// ---------- URL ----------

function writeURL() {
  const q = new URLSearchParams();
  if (state.mode === "policy") q.set("mode", "policy");
  const calcEmpty = ["base", "multiplier", "cap", "attempts"].every((k) => $(k).value.trim() === "");
  if (!calcEmpty) {
    for (const id of ["base", "multiplier", "cap", "attempts"]) q.set(id, $(id).value.trim());
    q.set("jitter", state.raw.jitter ?? $("jitter").value);
    q.set("first", state.raw.first ?? radioValue("first"));
    q.set("seed", $("seed").value.trim());
  }
  const preset = state.raw.preset ?? $("preset").value;
  const hint = $("retryAfterMs").value.trim();
  if (state.mode === "policy" || preset !== "STANDARD" || hint !== "") {
    q.set("preset", preset);
    if (preset === "CUSTOM") for (const p of POLICY) q.set(p.id, $(p.id).value.trim());
    if (hint !== "") q.set("retryAfterMs", hint);
  }
  if ($("durable").value.trim() !== "6") q.set("durable", $("durable").value.trim());
  if ($("transport").value.trim() !== "5") q.set("transport", $("transport").value.trim());
  const s = q.toString();
  history.replaceState(null, "", s ? "?" + s : location.pathname);
}

function readURL() {
  const q = new URLSearchParams(location.search);
  state.mode = q.get("mode") === "policy" ? "policy" : "calc";
  // A link without the calculator's inputs opens on the sample; a link
  // with some of them shows what it carries, errors and all.
  if (!["base", "multiplier", "cap", "attempts", "jitter", "first", "seed"].some((k) => q.has(k))) fillSample();
  for (const id of ["base", "multiplier", "cap", "attempts", "seed"]) if (q.has(id)) $(id).value = q.get(id);
  if (q.has("jitter")) {
    const j = q.get("jitter");
    if (B.JITTER_MODES.includes(j)) $("jitter").value = j; else state.raw.jitter = j;
  }
  if (q.has("first")) {
    const f = q.get("first");
    if (B.FIRST_WAITS.includes(f)) setRadio("first", f); else state.raw.first = f;
  }
  if (q.has("preset")) {
    const p = q.get("preset");
    if (B.PRESET_NAMES.includes(p)) $("preset").value = p; else state.raw.preset = p;
  }
  syncPresetFields();
  if ($("preset").value === "CUSTOM") for (const p of POLICY) if (q.has(p.id)) $(p.id).value = q.get(p.id);
  if (q.has("retryAfterMs")) $("retryAfterMs").value = q.get("retryAfterMs");
  if (q.has("durable")) $("durable").value = q.get("durable");
  if (q.has("transport")) $("transport").value = q.get("transport");
}

// ---------- modes, wiring ----------

function setMode(mode, focus = false) {
  state.mode = mode;
  for (const [m, tab, panel] of [["calc", "tab-calc", "panel-calc"], ["policy", "tab-policy", "panel-policy"]]) {
    const on = m === mode;
    $(tab).setAttribute("aria-selected", String(on));
    $(tab).tabIndex = on ? 0 : -1;
    $(panel).hidden = !on;
    if (on && focus) $(tab).focus();
  }
}

function update() {
  renderCalc();
  renderPolicy();
  renderLayers();
  renderLog();
  writeURL();
}

function stepInput(ev) {
  const input = ev.target;
  if (!input.dataset || !input.dataset.step || (ev.key !== "ArrowUp" && ev.key !== "ArrowDown")) return;
  const v = Number(input.value.trim());
  if (!Number.isInteger(v)) return;
  ev.preventDefault();
  input.value = String(Math.max(1, v + (ev.key === "ArrowUp" ? 1 : -1)));
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

function init() {
  readURL();
  setMode(state.mode);
  const onCalc = (ev) => {
    // A choice made in the form replaces a bad value that came with a link.
    if (ev.target.id === "jitter") state.raw.jitter = null;
    if (ev.target.name === "first") state.raw.first = null;
    update();
  };
  $("calc-form").addEventListener("input", onCalc);
  $("calc-form").addEventListener("change", onCalc);
  $("policy-form").addEventListener("input", (ev) => {
    if (ev.target.id === "preset") { state.raw.preset = null; syncPresetFields(); }
    update();
  });
  $("preset").addEventListener("change", () => { state.raw.preset = null; syncPresetFields(); update(); });
  $("customise").addEventListener("click", () => {
    const from = B.PRESETS[$("preset").value];
    $("preset").value = "CUSTOM";
    state.raw.preset = null;
    syncPresetFields();
    for (const p of POLICY) $(p.id).value = String(from[p.field]);
    update();
    $("maxAttempts").focus();
  });
  $("layers-form").addEventListener("input", update);
  for (const f of [$("calc-form"), $("policy-form"), $("layers-form")]) {
    f.addEventListener("submit", (ev) => ev.preventDefault());
    f.addEventListener("keydown", stepInput);
  }
  $("load-sample").addEventListener("click", loadSample);
  $("new-seed").addEventListener("click", () => {
    const s = Number($("seed").value.trim());
    $("seed").value = String(Number.isInteger(s) ? ((s + 1) >>> 0) : 1);
    update();
  });
  $("hist-retry").addEventListener("change", (ev) => { state.histRetry = Number(ev.target.value); renderCalc(); });
  $("log").addEventListener("input", renderLog);
  $("log-example").addEventListener("click", () => { $("log").value = exampleLog(); renderLog(); $("log").focus(); });
  $("log-clear").addEventListener("click", () => { $("log").value = ""; renderLog(); $("log").focus(); });
  for (const b of document.querySelectorAll(".copy-link")) b.addEventListener("click", () => { writeURL(); copy(location.href, "the link"); });
  $("copy-calc-csv").addEventListener("click", () => {
    const csv = calcCSV();
    if (csv) copy(csv, `${plural(state.calc.rows.length, "row", "rows")} as CSV`); else toast("There is no table to copy yet.");
  });
  $("copy-policy-csv").addEventListener("click", () => {
    const csv = policyCSV();
    if (csv) copy(csv, `${plural(state.policy.schedule.rows.length, "row", "rows")} as CSV`); else toast("There is no table to copy yet.");
  });
  const tabs = [$("tab-calc"), $("tab-policy")];
  tabs.forEach((tab, i) => {
    tab.addEventListener("click", () => { setMode(i === 0 ? "calc" : "policy"); update(); });
    tab.addEventListener("keydown", (ev) => {
      let j = null;
      if (ev.key === "ArrowRight") j = (i + 1) % tabs.length;
      else if (ev.key === "ArrowLeft") j = (i + tabs.length - 1) % tabs.length;
      else if (ev.key === "Home") j = 0;
      else if (ev.key === "End") j = tabs.length - 1;
      if (j === null) return;
      ev.preventDefault();
      setMode(j === 0 ? "calc" : "policy", true);
      update();
    });
  });
  // Charts are drawn at their shown size: redraw when the width changes.
  let lastWidth = window.innerWidth, pending = 0;
  window.addEventListener("resize", () => {
    if (window.innerWidth === lastWidth || pending) return;
    pending = requestAnimationFrame(() => { pending = 0; lastWidth = window.innerWidth; renderCalc(); renderPolicy(); });
  });
  update();
  document.documentElement.dataset.ready = "true";
}

init();
