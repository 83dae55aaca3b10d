// The backoff calculator's calculator mode: the delays of one formula, their
// table and chart and CSV, and the sample.
import * as B from "./backoff.js";
import { $, h } from "./ui.js";
import { bandChart, histogram, duration } from "./chart.js";
import { CALC, DECIMAL, INTEGER, SEEDS, human, ms, radioValue, setRadio, showErrors, state } from "./calculator-form.js";
import { update } from "./calculator.js";

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

export function renderCalc() {
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

export function percentile(sorted, q) {
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

export function calcCSV() {
  const r = state.calc;
  if (!r) return null;
  const lines = ["retry,attempt,wait_ms,cumulative_ms,capped"];
  for (const x of r.rows) lines.push([x.retry, x.attempt, B.formatMicro(x.waitMicro), B.formatMicro(x.cumulativeMicro), x.capped].join(","));
  return lines.join("\n") + "\n";
}

// fillSample puts seed 001's sample into the calculator's fields. A fresh
// page opens with it, computed: grey placeholders looked like values beside
// an empty schedule.
export function fillSample() {
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

export function loadSample() {
  fillSample();
  update();
}
