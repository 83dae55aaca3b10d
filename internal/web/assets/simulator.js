// The contention simulator page: reads the form, keeps the settings in the
// URL, asks this server to run the sweep (POST /api/simulate, the config of
// `ratchet simulate`), and draws the result: two line charts with spread
// bands, a table, and CSV/JSON downloads. The server validates the config;
// its errors name the field, and the page puts each beside its input.
import { PRESETS } from "./backoff.js";
import { $, h, toast } from "./ui.js";
import { MODE, POLICY_FIELDS, STUDY_MODES, count, intFmt, ms, readURL, s, state, studyDefaults, syncSections, writeURL } from "./simulator-form.js";
import { done, failed, run, staleResult, sweepHelp, wait } from "./simulator-run.js";
import { drawCharts, lineKey } from "./simulator-chart.js";
import { initRecovery, recoveryState, redraw as redrawRecovery, runRecovery, writeURL as writeRecoveryURL } from "./simulator-recovery.js";

// ---------- table ----------

const MEASURES = {
  calls: { caption: "Mean writes per run; below, the standard deviation over runs. Bold is the fewest in the row.", stat: true, f: count, best: true },
  timeMs: { caption: "Mean time until the last client finished; below, the standard deviation over runs. Bold is the soonest in the row.", stat: true, f: ms, best: true },
  clientCalls: { caption: "Writes of one client: the 50th, 90th and 99th percentile within a run, averaged over runs.", pct: true, f: count },
  clientTimeMs: { caption: "When one client finished: the 50th, 90th and 99th percentile within a run, averaged over runs.", pct: true, f: ms },
  failed: { caption: "Clients per run that gave up: a retry the budget refused, an exhausted policy, or a calculator schedule used up.", stat: true, f: count },
  refused: { caption: "Retries per run that the retry budget refused (mean).", f: count },
  hinted: { caption: "Conflict answers per run that carried a Retry-After hint (mean).", f: count },
};

function renderTable() {
  const r = state.result;
  if (!r) return;
  const key = $("measure").value, m = MEASURES[key];
  $("table-caption").textContent = m.caption;
  $("sim-table").tHead.replaceChildren(h("tr", {},
    h("th", { scope: "col", text: "Clients" }),
    ...r.series.map((ser) => {
      const k = h("span", { class: "key" });
      k.style.background = MODE[ser.mode].color;
      k.style.marginRight = "6px";
      return h("th", { scope: "col", class: "num", "data-mode": ser.mode, title: MODE[ser.mode].label }, k, MODE[ser.mode].short);
    })));
  const rows = r.clients.map((n, i) => {
    const vals = r.series.map((ser) => ser.points[i][key]);
    const means = vals.map((v) => (typeof v === "number" ? v : v.mean ?? v.p50));
    const best = m.best ? Math.min(...means) : null;
    return h("tr", { "data-clients": String(n) },
      h("th", { scope: "row", class: "mono", text: intFmt.format(n) }),
      ...r.series.map((ser, j) => {
        const v = vals[j];
        const td = h("td", { class: "num mono", "data-mode": ser.mode });
        if (m.pct) {
          td.textContent = `${m.f(v.p50)} / ${m.f(v.p90)} / ${m.f(v.p99)}`;
        } else if (m.stat) {
          const main = means[j] === best && r.series.length > 1 ? h("strong", { text: m.f(v.mean) }) : document.createTextNode(m.f(v.mean));
          td.append(main, h("span", { class: "sub", text: "± " + m.f(v.sd) }));
          td.title = `5th–95th percentile: ${m.f(v.p5)} – ${m.f(v.p95)}`;
        } else {
          td.textContent = m.f(v);
        }
        return td;
      }));
  });
  $("sim-table").tBodies[0].replaceChildren(...rows);
}

// ---------- headline, downloads, command ----------

export function headline() {
  const r = state.result;
  const last = r.clients.length - 1, n = r.clients[last];
  const at = (mode) => r.series.find((x) => x.mode === mode)?.points[last];
  const parts = [];
  const exp = at("exponential"), full = at("full");
  if (exp && full) {
    const fewer = Math.round((1 - full.calls.mean / exp.calls.mean) * 100);
    parts.push(`At ${intFmt.format(n)} clients, exponential backoff without jitter made ${count(exp.calls.mean)} calls and its last client finished after ${ms(exp.timeMs.mean)}; full jitter made ${count(full.calls.mean)} calls (${fewer}% ${fewer >= 0 ? "fewer" : "more"}) and finished after ${ms(full.timeMs.mean)}.`);
  }
  if (r.series.length > 1) {
    const by = (f) => r.series.reduce((a, b) => (f(b.points[last]) < f(a.points[last]) ? b : a));
    const leastWork = by((p) => p.calls.mean), soonest = by((p) => p.timeMs.mean);
    parts.push(`Least work at ${intFmt.format(n)} clients: ${MODE[leastWork.mode].label.toLowerCase()} (${count(leastWork.points[last].calls.mean)} calls). Soonest done: ${MODE[soonest.mode].label.toLowerCase()} (${ms(soonest.points[last].timeMs.mean)}).`);
  }
  const failed = r.series.filter((x) => x.points[last].failed.mean > 0);
  if (failed.length) {
    parts.push(`Some clients gave up: ${failed.map((x) => `${MODE[x.mode].label.toLowerCase()} ${count(x.points[last].failed.mean)}`).join(", ")} of ${intFmt.format(n)} per run.`);
  }
  $("sim-headline").textContent = parts.join(" ");
  $("sim-headline").hidden = parts.length === 0;
}

// g10 prints a number as Go's strconv.FormatFloat(v, 'g', 10, 64) does, so
// the CSV equals `ratchet simulate --format csv` byte for byte.
export function g10(v) {
  if (v === 0) return "0";
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : v < 0 ? "-Inf" : "NaN";
  const [mant, e] = v.toExponential(9).split("e");
  const x = Number(e);
  const trim = (t) => (t.includes(".") ? t.replace(/0+$/, "").replace(/\.$/, "") : t);
  if (x < -4 || x >= 10) return trim(mant) + "e" + (x < 0 ? "-" : "+") + String(Math.abs(x)).padStart(2, "0");
  return trim(v.toFixed(9 - x));
}

// csv is the sweep in the columns of `ratchet simulate --format csv`.
export function csv(r) {
  const stat = (p) => [p + "_mean", p + "_sd", p + "_p5", p + "_p95"];
  const head = ["mode", "clients", ...stat("calls"), ...stat("time_ms"), "client_calls_p50", "client_calls_p90", "client_calls_p99",
    "client_ms_p50", "client_ms_p90", "client_ms_p99", ...stat("failed"), "refused_mean", "hinted_mean"];
  const sv = (x) => [x.mean, x.sd, x.p5, x.p95].map(g10);
  const lines = [head.join(",")];
  for (const ser of r.series) {
    for (const p of ser.points) {
      lines.push([ser.mode, String(p.clients), ...sv(p.calls), ...sv(p.timeMs),
        ...[p.clientCalls.p50, p.clientCalls.p90, p.clientCalls.p99, p.clientTimeMs.p50, p.clientTimeMs.p90, p.clientTimeMs.p99].map(g10),
        ...sv(p.failed), g10(p.refused), g10(p.hinted)].join(","));
    }
  }
  return lines.join("\n") + "\n";
}

function downloads() {
  const r = state.result;
  for (const u of [state.csvURL, state.jsonURL]) if (u) URL.revokeObjectURL(u);
  state.csvURL = URL.createObjectURL(new Blob([csv(r)], { type: "text/csv" }));
  state.jsonURL = URL.createObjectURL(new Blob([JSON.stringify(r, null, 2) + "\n"], { type: "application/json" }));
  const name = `ratchet-simulation-${r.clients[0]}-${r.clients[r.clients.length - 1]}-seed${r.config.seed}`;
  $("download-csv").dataset.filename = name + ".csv";
  $("download-json").dataset.filename = name + ".json";
}

// command is `ratchet simulate` with the flags for the same sweep.
function command() {
  const c = state.result.config;
  const args = ["ratchet simulate", `--sweep ${c.from}:${c.to}:${c.step}`, `--runs ${c.runs}`];
  if (c.modes.join(",") !== STUDY_MODES.join(",")) args.push("--modes " + c.modes.join(","));
  args.push(`--seed ${c.seed}`);
  if (c.baseMs !== 5) args.push(`--base ${c.baseMs}`);
  if (c.capMs !== 2000) args.push(`--cap ${c.capMs}`);
  let policyDoc = "";
  if (c.policy) {
    const preset = $("preset").value;
    if (preset !== "CUSTOM") args.push("--policy-preset " + preset);
    else {
      args.push("--policy-file policy.json");
      policyDoc = JSON.stringify({ preset: "CUSTOM", ...c.policy });
    }
  }
  if (c.calc) {
    args.push(`--calc-base ${c.calc.baseMs}`, `--calc-multiplier ${c.calc.multiplier}`, `--calc-cap ${c.calc.capMs}`,
      `--calc-attempts ${c.calc.attempts}`, `--calc-jitter ${c.calc.jitter}`, `--calc-first-wait ${c.calc.firstWait}`);
  }
  if (c.budget) args.push(`--budget ${c.budget.capacity}:${c.budget.retryCost}:${c.budget.successRefund}`);
  if (c.retryAfter) args.push(`--retry-after ${c.retryAfter.ms}`, `--overload ${c.retryAfter.overload}`, `--overload-window ${c.retryAfter.windowMs}`);
  args.push("--format csv");
  let text = args.join(" \\\n    ");
  if (policyDoc) text += `\n\n# policy.json\n${policyDoc}`;
  if (c.latencyMeanMs !== 10 || c.latencySdMs !== 2) text += "\n\n# The command line keeps the study's hops of |Normal(10 ms, 2 ms)|; this sweep changed them.";
  $("sim-command").textContent = text;
}

export function render() {
  // The runs per point of each result drawn, in order (a first look, then
  // the full sweep), for the page's tests.
  const d = document.documentElement.dataset;
  d.simDrawn = (d.simDrawn ? d.simDrawn + "," : "") + state.result.config.runs;
  drawCharts();
  renderTable();
  headline();
  downloads();
  command();
}

// ---------- scenarios ----------

const SCENARIOS = [["contention", "tab-contention", "panel-contention"], ["recovery", "tab-recovery", "panel-recovery"]];

// setScenario shows the tab of a scenario, keeps it in the URL, and runs
// it the first time it is shown.
function setScenario(name, focus = false) {
  document.documentElement.dataset.scenario = name;
  for (const [id, tab, panel] of SCENARIOS) {
    const on = id === name;
    $(tab).setAttribute("aria-selected", String(on));
    $(tab).tabIndex = on ? 0 : -1;
    $(panel).hidden = !on;
    if (on && focus) $(tab).focus();
  }
  if (name === "recovery") {
    writeRecoveryURL();
    if (recoveryState.result) redrawRecovery(); else runRecovery();
  } else {
    writeURL();
    if (state.result) drawCharts(); else if (!state.controller) run();
  }
}

// wireTabs makes the scenario tabs work by pointer and by keyboard (arrows,
// Home and End move between them, as the calculator's tabs do).
function wireTabs() {
  const tabs = SCENARIOS.map(([, tab]) => $(tab));
  tabs.forEach((tab, i) => {
    tab.addEventListener("click", () => setScenario(SCENARIOS[i][0]));
    tab.addEventListener("keydown", (ev) => {
      let j = null;
      if (ev.key === "ArrowRight") j = (i + 1) % tabs.length;
      else if (ev.key === "ArrowLeft") j = (i + tabs.length - 1) % tabs.length;
      else if (ev.key === "Home") j = 0;
      else if (ev.key === "End") j = tabs.length - 1;
      if (j === null) return;
      ev.preventDefault();
      setScenario(SCENARIOS[j][0], true);
    });
  });
}

// ---------- wiring ----------

function init() {
  for (const key of document.querySelectorAll("#modes .key")) {
    key.replaceWith(lineKey(key.dataset.mode));
  }
  readURL();
  const form = $("sim-form");
  form.addEventListener("submit", (ev) => { ev.preventDefault(); run(true); });
  form.addEventListener("change", (ev) => {
    if (ev.target.id === "preset" || ev.target.name === "mode" || ev.target.id.endsWith("-on")) syncSections();
    writeURL();
    sweepHelp();
  });
  form.addEventListener("input", () => { writeURL(); sweepHelp(); });
  $("customise").addEventListener("click", () => {
    const from = PRESETS[$("preset").value];
    $("preset").value = "CUSTOM";
    syncSections();
    for (const f of POLICY_FIELDS) $(f.id).value = String(from[f.key]);
    writeURL();
    $("policy-maxAttempts").focus();
  });
  $("new-seed").addEventListener("click", () => {
    const n = Number($("seed").value.trim());
    $("seed").value = String(Number.isInteger(n) && n >= 0 ? n + 1 : 1);
    run(true);
  });
  $("defaults").addEventListener("click", () => { studyDefaults(); sweepHelp(); run(true); });
  for (const id of ["calls-log", "time-log"]) $(id).addEventListener("change", () => { writeURL(); drawCharts(); });
  $("measure").addEventListener("change", () => { writeURL(); renderTable(); });
  $("copy-link").addEventListener("click", async () => {
    writeURL();
    try {
      await navigator.clipboard.writeText(location.href);
      toast("Copied the link.");
    } catch {
      toast("The browser did not allow copying the link.");
    }
  });
  for (const [id, kind] of [["download-csv", "csvURL"], ["download-json", "jsonURL"]]) {
    $(id).addEventListener("click", () => {
      if (!state.result) { toast("Run a sweep first."); return; }
      const a = h("a", { href: state[kind], download: $(id).dataset.filename, hidden: "" });
      document.body.append(a);
      a.click();
      a.remove();
    });
  }
  let lastWidth = window.innerWidth, pending = 0;
  window.addEventListener("resize", () => {
    if (window.innerWidth === lastWidth || pending) return;
    pending = requestAnimationFrame(() => { pending = 0; lastWidth = window.innerWidth; drawCharts(); redrawRecovery(); });
  });
  sweepHelp();
  staleResult(false);
  initRecovery();
  wireTabs();
  const recovery = new URLSearchParams(location.search).get("scenario") === "recovery";
  document.documentElement.dataset.ready = "true";
  setScenario(recovery ? "recovery" : "contention");
}

init();
