// The backoff calculator's pasted log (compared with the policy's expected
// waits) and its layered retries panel.
import * as B from "./backoff.js";
import { $, h } from "./ui.js";
import { parseLog, observedWaits, compareWait, readableTime } from "./logparse.js";
import { INTEGER, listWords, ms, plural, state } from "./calculator-form.js";

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

export function renderLog() {
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

export function exampleLog() {
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

export function renderLayers() {
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
