// The backoff calculator's policy mode: a retry policy's schedule, with the
// Retry-After hint, its chart and CSV.
import * as B from "./backoff.js";
import { $, h } from "./ui.js";
import { bandChart, duration } from "./chart.js";
import { INTEGER, POLICY, listWords, showErrors, state } from "./calculator-form.js";
import { percentile } from "./calculator-calc.js";

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

export function syncPresetFields() {
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

export function renderPolicy() {
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

export function policyCSV() {
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
