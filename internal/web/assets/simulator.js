// The contention simulator page: reads the form, keeps the settings in the
// URL, asks this server to run the sweep (POST /api/simulate, the config of
// `ratchet simulate`), and draws the result: two line charts with spread
// bands, a table, and CSV/JSON downloads. The server validates the config;
// its errors name the field, and the page puts each beside its input.
import { PRESETS } from "./backoff.js";
import { SIM_LIMITS } from "./limits.js";
import { $, h, toast, fieldText, labelOf } from "./ui.js";

const NS = "http://www.w3.org/2000/svg";

// The modes in the study's order, then Ratchet's. Colours are the
// Okabe–Ito palette, which stays distinct under the common colour-vision
// deficiencies (one lighter variant per colour for the dark theme), and
// each mode has its own dash pattern as well, so two lines are told apart
// without colour and a dashed line drawn over a solid one lets it show
// through. Solid lines are drawn first, patterned ones over them.
const MODES = [
  { id: "none", label: "No backoff", short: "None", color: "light-dark(#5f5f5f, #bdbdbd)", dash: "2 4" },
  { id: "exponential", label: "Exponential, no jitter", short: "Exponential", color: "light-dark(#d55e00, #ff8c42)", dash: "" },
  { id: "full", label: "Full jitter", short: "Full", color: "light-dark(#0072b2, #56b4e9)", dash: "" },
  { id: "equal", label: "Equal jitter", short: "Equal", color: "light-dark(#e69f00, #f0c050)", dash: "9 5" },
  { id: "decorrelated", label: "Decorrelated jitter", short: "Decorrelated", color: "light-dark(#009e73, #3fd0a0)", dash: "12 4 2 4" },
  { id: "policy", label: "Ratchet policy", short: "Policy", color: "light-dark(#cc79a7, #e7a3c9)", dash: "5 3" },
  { id: "calc", label: "Calculator setting", short: "Calculator", color: "light-dark(#000000, #ffffff)", dash: "1 3 6 3" },
];
const MODE = Object.fromEntries(MODES.map((m) => [m.id, m]));
const STUDY_MODES = ["none", "exponential", "full", "equal", "decorrelated"];

// Text fields: element id, config path, default (the study's), integer?
const FIELDS = [
  { id: "from", path: "from", def: "10", int: true },
  { id: "to", path: "to", def: "190", int: true },
  { id: "step", path: "step", def: "10", int: true },
  { id: "runs", path: "runs", def: "100", int: true },
  { id: "seed", path: "seed", def: "1", int: true },
  { id: "baseMs", path: "baseMs", def: "5" },
  { id: "capMs", path: "capMs", def: "2000" },
  { id: "latencyMeanMs", path: "latencyMeanMs", def: "10" },
  { id: "latencySdMs", path: "latencySdMs", def: "2" },
];
const POLICY_FIELDS = [
  { id: "policy-maxAttempts", key: "maxAttempts", int: true },
  { id: "policy-initialDelayMs", key: "initialDelayMs", int: true },
  { id: "policy-multiplier", key: "multiplier" },
  { id: "policy-maxDelayMs", key: "maxDelayMs", int: true },
  { id: "policy-jitterPercent", key: "jitterPercent" },
];
const CALC_FIELDS = [
  { id: "calc-baseMs", key: "baseMs", def: "5" },
  { id: "calc-multiplier", key: "multiplier", def: "2" },
  { id: "calc-capMs", key: "capMs", def: "2000" },
  { id: "calc-attempts", key: "attempts", def: "15", int: true },
];
const CALC_SELECTS = [
  { id: "calc-jitter", key: "jitter", def: "full" },
  { id: "calc-firstWait", key: "firstWait", def: "multiplied" },
];
const BUDGET_FIELDS = [
  { id: "budget-capacity", key: "capacity", def: "500", int: true },
  { id: "budget-retryCost", key: "retryCost", def: "5", int: true },
  { id: "budget-successRefund", key: "successRefund", def: "1", int: true },
];
const RETRY_AFTER_FIELDS = [
  { id: "retryAfter-ms", key: "ms", def: "100" },
  { id: "retryAfter-overload", key: "overload", def: "20", int: true },
  { id: "retryAfter-windowMs", key: "windowMs", def: "100" },
];
const ALL_INPUTS = [...FIELDS, ...POLICY_FIELDS, ...CALC_FIELDS, ...CALC_SELECTS, ...BUDGET_FIELDS, ...RETRY_AFTER_FIELDS].map((f) => f.id)
  .concat(["modes", "preset"]);

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;
// A busy server answers 503: try again this many times, with full jitter
// over the Retry-After floor, as Ratchet itself retries.
const BUSY_TRIES = 6;

const state = {
  result: null, // the last result, parsed
  controller: null, // aborts the request in flight
  csvURL: "",
  jsonURL: "",
};

// ---------- small helpers ----------

function s(name, attrs = {}, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

const intFmt = new Intl.NumberFormat("en", { maximumFractionDigits: 0 });
const oneFmt = new Intl.NumberFormat("en", { minimumFractionDigits: 1, maximumFractionDigits: 1 });

// count prints calls and clients: one decimal below 100, whole numbers above.
function count(v) {
  return Math.abs(v) < 100 ? oneFmt.format(v) : intFmt.format(v);
}

// ms prints a duration with three significant digits: "382 ms", "4.82 s",
// "48.3 s", "101 s", "7.5 min".
function ms(v) {
  if (v < 1000) return intFmt.format(v) + " ms";
  if (v < 10_000) return (v / 1000).toFixed(2) + " s";
  if (v < 100_000) return (v / 1000).toFixed(1) + " s";
  if (v < 600_000) return intFmt.format(v / 1000) + " s";
  if (v < 36_000_000) return (v / 60_000).toFixed(1) + " min";
  return (v / 3_600_000).toFixed(1) + " h";
}

function plural(n, one, many) {
  return `${intFmt.format(n)} ${n === 1 ? one : many}`;
}

function modesChecked() {
  return Array.from(document.querySelectorAll('input[name="mode"]:checked'), (c) => c.value);
}

// ---------- the form ----------

// readForm turns the form into a config for the server. Only the syntax of
// numbers is checked here; the ranges are the server's (simulate.ParseConfig),
// so the page and `ratchet simulate` can never disagree about them.
function readForm() {
  const errors = [];
  const num = (id, field, int) => {
    const raw = $(id).value, t = raw.trim();
    const ok = int ? INTEGER.test(t) : DECIMAL.test(t);
    if (!ok) {
      errors.push({ field, value: t === "" ? "(missing)" : JSON.stringify(raw), allowed: int ? "must be an integer" : "must be a number" });
      return 0;
    }
    return Number(t);
  };
  const cfg = {};
  for (const f of FIELDS) cfg[f.path] = num(f.id, f.path, f.int);
  cfg.modes = modesChecked();
  if (cfg.modes.includes("policy")) {
    const preset = $("preset").value;
    if (preset === "CUSTOM") {
      cfg.policy = {};
      for (const f of POLICY_FIELDS) cfg.policy[f.key] = num(f.id, "policy." + f.key, f.int);
    } else {
      cfg.policy = { ...PRESETS[preset] };
    }
  }
  if (cfg.modes.includes("calc")) {
    cfg.calc = {};
    for (const f of CALC_FIELDS) cfg.calc[f.key] = num(f.id, "calc." + f.key, f.int);
    for (const f of CALC_SELECTS) cfg.calc[f.key] = $(f.id).value;
  }
  if ($("budget-on").checked) {
    cfg.budget = {};
    for (const f of BUDGET_FIELDS) cfg.budget[f.key] = num(f.id, "budget." + f.key, f.int);
  }
  if ($("retryAfter-on").checked) {
    cfg.retryAfter = {};
    for (const f of RETRY_AFTER_FIELDS) cfg.retryAfter[f.key] = num(f.id, "retryAfter." + f.key, f.int);
  }
  return { cfg, errors };
}

// fieldId maps a config field named by the server to the input that holds it.
function fieldId(field) {
  if (field === "policy") return "preset";
  if (field === "calc") return "calc-baseMs";
  if (field === "budget") return "budget-capacity";
  if (field === "retryAfter") return "retryAfter-ms";
  const id = field.replace(".", "-");
  return ALL_INPUTS.includes(id) ? id : null;
}

function message(e) {
  return e.message || `${e.field}: ${e.value} is not allowed; ${e.allowed}`;
}

// showErrors lists every problem above the results and puts each beside its
// field; an empty list clears them.
function showErrors(errors, title) {
  const byId = new Map();
  for (const e of errors) {
    const id = fieldId(e.field);
    if (!id) continue;
    if (!byId.has(id)) byId.set(id, []);
    byId.get(id).push(fieldText(e.field, message(e)));
  }
  for (const id of ALL_INPUTS) {
    const msg = $(id + "-error"), input = $(id), msgs = byId.get(id);
    if (msg) {
      msg.hidden = !msgs;
      msg.textContent = msgs ? msgs.join(" ") : "";
    }
    if (input && input.tagName !== "FIELDSET") {
      if (msgs) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
  }
  // A problem inside the closed model settings must be visible.
  if (["baseMs", "capMs", "latencyMeanMs", "latencySdMs"].some((id) => byId.has(id))) $("model-settings").open = true;
  const box = $("sim-errors");
  if (title) box.querySelector(".alert-title").textContent = title;
  // Each field once, by the name the form gives it; its message is beside it.
  const seen = new Set();
  box.querySelector("ul").replaceChildren(...errors.filter((e) => {
    const id = fieldId(e.field);
    if (!id) return true;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  }).map((e) => {
    const id = fieldId(e.field);
    if (!id) return h("li", { text: message(e) });
    const a = h("a", { href: "#" + id, text: labelOf(id) });
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      const target = id === "modes" ? document.querySelector('input[name="mode"]') : $(id);
      if (target) target.focus();
    });
    return h("li", {}, a);
  }));
  box.hidden = errors.length === 0;
}

function syncSections() {
  const modes = modesChecked();
  $("policy-fields").hidden = !modes.includes("policy");
  $("calc-fields").hidden = !modes.includes("calc");
  $("budget-fields").hidden = !$("budget-on").checked;
  $("retryAfter-fields").hidden = !$("retryAfter-on").checked;
  const custom = $("preset").value === "CUSTOM";
  for (const f of POLICY_FIELDS) {
    $(f.id).disabled = !custom;
    if (!custom) $(f.id).value = String(PRESETS[$("preset").value][f.key]);
  }
  $("customise").hidden = custom;
}

// ---------- the URL ----------

// The URL carries what differs from the study's defaults, so a link
// reproduces the page and the page's own address stays short.
function writeURL() {
  const q = new URLSearchParams();
  for (const f of FIELDS) if ($(f.id).value.trim() !== f.def) q.set(f.id, $(f.id).value.trim());
  const modes = modesChecked();
  if (modes.join(",") !== STUDY_MODES.join(",")) q.set("modes", modes.join(","));
  if (modes.includes("policy")) {
    q.set("preset", $("preset").value);
    if ($("preset").value === "CUSTOM") for (const f of POLICY_FIELDS) q.set(f.id, $(f.id).value.trim());
  }
  if (modes.includes("calc")) {
    for (const f of CALC_FIELDS) if ($(f.id).value.trim() !== f.def) q.set(f.id, $(f.id).value.trim());
    for (const f of CALC_SELECTS) if ($(f.id).value !== f.def) q.set(f.id, $(f.id).value);
  }
  if ($("budget-on").checked) q.set("budget", BUDGET_FIELDS.map((f) => $(f.id).value.trim()).join(":"));
  if ($("retryAfter-on").checked) q.set("retryAfter", RETRY_AFTER_FIELDS.map((f) => $(f.id).value.trim()).join(":"));
  if ($("calls-log").checked) q.set("callsLog", "1");
  if ($("time-log").checked) q.set("timeLog", "1");
  if ($("measure").value !== "calls") q.set("show", $("measure").value);
  const str = q.toString();
  history.replaceState(null, "", str ? "?" + str : location.pathname);
}

function readURL() {
  const q = new URLSearchParams(location.search);
  for (const f of FIELDS) $(f.id).value = q.has(f.id) ? q.get(f.id) : f.def;
  const modes = q.has("modes") ? q.get("modes").split(",") : STUDY_MODES;
  for (const c of document.querySelectorAll('input[name="mode"]')) c.checked = modes.includes(c.value);
  const preset = q.get("preset");
  if (preset && (preset === "CUSTOM" || PRESETS[preset])) $("preset").value = preset;
  syncSections();
  for (const f of [...POLICY_FIELDS, ...CALC_FIELDS]) if (q.has(f.id)) $(f.id).value = q.get(f.id);
  for (const f of CALC_SELECTS) if (q.has(f.id)) $(f.id).value = q.get(f.id);
  for (const [param, fields, box] of [["budget", BUDGET_FIELDS, "budget-on"], ["retryAfter", RETRY_AFTER_FIELDS, "retryAfter-on"]]) {
    $(box).checked = q.has(param);
    if (q.has(param)) q.get(param).split(":").forEach((v, i) => { if (fields[i]) $(fields[i].id).value = v; });
  }
  $("calls-log").checked = q.get("callsLog") === "1";
  $("time-log").checked = q.get("timeLog") === "1";
  if (q.has("show") && Array.from($("measure").options).some((o) => o.value === q.get("show"))) $("measure").value = q.get("show");
  syncSections();
}

function studyDefaults() {
  history.replaceState(null, "", location.pathname);
  for (const f of [...CALC_FIELDS, ...BUDGET_FIELDS, ...RETRY_AFTER_FIELDS]) $(f.id).value = f.def;
  for (const f of CALC_SELECTS) $(f.id).value = f.def;
  $("preset").value = "STANDARD";
  readURL();
}

// ---------- running ----------

const wait = (msec, signal) => new Promise((resolve, reject) => {
  const t = setTimeout(resolve, msec);
  signal.addEventListener("abort", () => { clearTimeout(t); reject(new DOMException("aborted", "AbortError")); }, { once: true });
});

function setBusy(busy) {
  $("run").disabled = busy;
  $("run").textContent = busy ? "Running…" : "Run simulation";
  for (const id of ["chart-calls", "chart-time", "sim-table"]) {
    $(id).setAttribute("aria-busy", String(busy));
    $(id).style.opacity = busy && state.result ? "0.45" : "";
  }
}

// done records how the last sweep ended on the document: data-sim is
// "done" or "error", and data-sim-count counts the sweeps that ended.
function done(how) {
  const d = document.documentElement.dataset;
  d.sim = how;
  d.simCount = String(Number(d.simCount || 0) + 1);
}

function status(text) {
  $("sim-status").textContent = text;
}

// sweepHelp states the server's limits (limits.js, from simulate's
// constants) and what the sweep in the form asks for, so a sweep the
// server would refuse is visibly over a limit before it is run.
function sweepHelp() {
  const L = SIM_LIMITS;
  const int = (id) => (INTEGER.test($(id).value.trim()) ? Number($(id).value.trim()) : NaN);
  const from = int("from"), to = int("to"), step = int("step"), runs = int("runs");
  const modes = modesChecked().length;
  let mine = "";
  if (from >= 1 && to >= from && step >= 1 && runs >= 1 && modes) {
    const points = Math.floor((to - from) / step) + 1;
    let clients = 0;
    for (let i = 0; i < Math.min(points, L.points + 1); i++) clients += from + i * step;
    const total = clients * runs * modes;
    mine = ` This sweep: ${plural(points, "point", "points")}, ${intFmt.format(clients)} clients over them × ${plural(runs, "run", "runs")} × ${plural(modes, "mode", "modes")} = ${intFmt.format(total)} client runs${total > L.clientRuns || points > L.points ? " — over the limit" : ""}.`;
  }
  $("sweep-help").textContent = `The study: 10 to 190 clients in steps of 10, 100 runs per point. Limits: at most ${intFmt.format(L.clients)} clients, ${intFmt.format(L.points)} points, ${intFmt.format(L.runs)} runs per point, and ${intFmt.format(L.clientRuns)} client runs in one sweep (the clients of every point × runs × modes; the study's sweep is 950,000).` + mine;
}

// staleResult greys the charts and the table out and says why when the
// last sweep failed: they show an older sweep, not the settings in the
// form. Downloads are off until a sweep succeeds.
function staleResult(stale) {
  document.documentElement.dataset.simStale = String(stale);
  for (const el of document.querySelectorAll(".sim-out")) el.classList.toggle("stale-result", stale);
  for (const id of ["download-csv", "download-json"]) $(id).disabled = stale || !state.result;
  $("sim-stale").hidden = !stale || !state.result;
  if (stale) $("sim-headline").hidden = true;
}

// failed shows a refused or failed sweep: the errors in the result card,
// the old results greyed out, and, when the person pressed Run, focus on
// the errors (scrolled into view: on a phone the result card is below the
// form).
function failed(userRun) {
  staleResult(true);
  done("error");
  if (!userRun) return;
  const box = $("sim-errors");
  box.tabIndex = -1;
  box.focus({ preventScroll: true });
  box.scrollIntoView({ block: "center", behavior: "instant" });
}

// FIRST_LOOK_RUNS is the runs per point of the quick sweep a page opened
// on a larger sweep shows first: the study's sweep takes seconds of the
// server's CPU, and the page sat on "Running…" with empty charts until it
// came. The quick one takes a tenth of it and is replaced when the full
// sweep arrives.
const FIRST_LOOK_RUNS = 10;

async function run(userRun = false) {
  writeURL();
  const { cfg, errors } = readForm();
  if (errors.length) {
    showErrors(errors, "Fix these settings to run the sweep:");
    status("Not run: the settings above need fixing.");
    failed(userRun);
    return;
  }
  if (state.controller) state.controller.abort();
  const controller = new AbortController();
  state.controller = controller;
  setBusy(true);
  document.documentElement.dataset.sim = "running";
  const points = cfg.to >= cfg.from && cfg.step > 0 ? Math.floor((cfg.to - cfg.from) / cfg.step) + 1 : 0;
  const sweepOf = (c) => `${plural(points, "point", "points")} × ${plural(c.runs, "run", "runs")} × ${plural(c.modes.length, "mode", "modes")}`;
  const what = sweepOf(cfg);
  // The page's own first sweep, when it is large, is preceded by a quick
  // one of FIRST_LOOK_RUNS runs per point (a person's Run is run as asked).
  let first = !userRun && !state.result && cfg.runs > FIRST_LOOK_RUNS ? { ...cfg, runs: FIRST_LOOK_RUNS } : null;
  status(first ? `Running a first look, ${sweepOf(first)}, on the server…` : `Running ${what} on the server…`);
  const started = performance.now();
  try {
    for (let attempt = 1; ; attempt++) {
      const resp = await fetch("/api/simulate", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(first || cfg),
        signal: controller.signal,
      });
      const text = await resp.text();
      if (resp.ok && first) {
        state.result = JSON.parse(text);
        staleResult(false);
        render();
        status(`A first look from ${plural(first.runs, "run", "runs")} per point; running the full sweep, ${what}, on the server…`);
        first = null;
        attempt = 0;
        continue;
      }
      if (resp.ok) {
        showErrors([]);
        const timing = resp.headers.get("Server-Timing") || "";
        const dur = /dur=([\d.]+)/.exec(timing);
        const where = timing.startsWith("cache") ? "from the server's cache (the same settings give the same numbers)"
          : dur ? `in ${ms(Number(dur[1]))} on the server` : `in ${ms(performance.now() - started)}`;
        state.result = JSON.parse(text);
        staleResult(false);
        render();
        status(`Simulated ${what} ${where}.`);
        done("done");
        return;
      }
      let err = null;
      try { err = JSON.parse(text).error; } catch { /* not the API's shape */ }
      if (resp.status === 503 && attempt < BUSY_TRIES) {
        const floor = Number(resp.headers.get("Retry-After")) * 1000 || 1000;
        const delay = Math.max(floor, Math.random() * Math.min(8000, 500 * 2 ** attempt));
        status(`The server is running another simulation; trying again in ${ms(delay)} (attempt ${attempt + 1} of ${BUSY_TRIES}).`);
        await wait(delay, controller.signal);
        continue;
      }
      if (err && err.fields) {
        showErrors(err.fields, "The server did not run the sweep:");
        status("Not run: the settings above need fixing.");
        failed(userRun);
      } else {
        showErrors([{ field: "server", message: err ? err.message : `the server answered ${resp.status}` }], "The server did not run the sweep:");
        status("Not run.");
        failed(userRun);
      }
      return;
    }
  } catch (e) {
    if (e.name === "AbortError") return;
    showErrors([{ field: "server", message: "the server could not be reached: " + e.message }], "The sweep did not run:");
    status("Not run.");
    failed(userRun);
  } finally {
    if (state.controller === controller) {
      state.controller = null;
      setBusy(false);
    }
  }
}

// ---------- charts ----------

// Round tick steps: 1-2-2.5-5 for counts; for durations the same below a
// second, then steps that read as seconds and minutes.
const DURATION_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2.5e3, 5e3, 10e3, 15e3, 20e3, 30e3,
  60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 10800e3, 21600e3, 43200e3, 86400e3];

function niceStep(max, n, durations) {
  const raw = max / n;
  if (durations && raw <= DURATION_STEPS[DURATION_STEPS.length - 1]) return DURATION_STEPS.find((st) => st >= raw);
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

// Log-axis tick candidates: 1-2-5 for counts; for durations the same below
// a second, then steps that read as seconds, minutes and hours.
const LOG_COUNTS = [];
for (let d = 0; d <= 9; d++) for (const m of [1, 2, 5]) LOG_COUNTS.push(m * 10 ** d);
const LOG_DURATIONS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 10e3, 20e3, 30e3, 60e3, 120e3, 300e3, 600e3,
  1200e3, 1800e3, 3600e3, 7200e3, 18000e3, 36000e3, 86400e3, 172800e3, 432000e3, 864000e3];

const ROUND_COUNTS = new Set(LOG_COUNTS.filter((v) => String(v).replace(/0+$/, "") === "1"));
const ROUND_DURATIONS = new Set([1, 10, 100, 1e3, 10e3, 60e3, 600e3, 3600e3, 36000e3, 86400e3, 864000e3]);

// tickDuration labels a time axis: "500 ms", "2.5 s", "80 s", "5 min", "2 h".
function tickDuration(v) {
  const r = (x) => String(Math.round(x * 10) / 10);
  if (v === 0) return "0";
  if (v < 1000) return r(v) + " ms";
  if (v < 120_000) return r(v / 1000) + " s";
  if (v < 7_200_000) return r(v / 60_000) + " min";
  return r(v / 3_600_000) + " h";
}

// countAxis returns the label format of a count axis whose largest tick is
// top: one format for every tick ("0, 2k, 4k … 10k", never "8,000" beside
// "10k").
function countAxis(top) {
  const r = (x) => String(Math.round(x * 10) / 10);
  if (top >= 1e6) return (v) => (v === 0 ? "0" : r(v / 1e6) + "M");
  if (top >= 1e4) return (v) => (v === 0 ? "0" : r(v / 1e3) + "k");
  return (v) => intFmt.format(v);
}

// durationAxis does the same for time: the unit of the largest tick for
// every tick ("0, 30 s, 60 s, 90 s, 120 s", never "90 s" beside "2 min").
function durationAxis(top) {
  const r = (x) => String(Math.round(x * 100) / 100);
  if (top <= 2000) return (v) => (v === 0 ? "0" : r(v) + " ms");
  if (top <= 180_000) return (v) => (v === 0 ? "0" : r(v / 1000) + " s");
  if (top <= 10_800_000) return (v) => (v === 0 ? "0" : r(v / 60_000) + " min");
  return (v) => (v === 0 ? "0" : r(v / 3_600_000) + " h");
}

// logCountAxis labels a log count axis: thousands and millions with k
// and M from 1,000 up, the same way on every tick.
function logCountAxis(v) {
  if (v >= 1e6) return String(Math.round(v / 1e5) / 10) + "M";
  if (v >= 1e3) return String(Math.round(v / 100) / 10) + "k";
  return intFmt.format(v);
}

// lineChart draws one measure against the number of clients: per series a
// band from lo to hi and a line through the means, with a hover read-out of
// every series at the nearest point.
function lineChart(svg, spec) {
  svg.replaceChildren();
  const width = svg.clientWidth || svg.parentElement.clientWidth || 720;
  const W = Math.round(Math.min(1100, Math.max(300, width)));
  const H = W < 520 ? 250 : 320;
  const M = { l: W < 520 ? 50 : 62, r: 18, t: 14, b: 44 };
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.append(s("title", {}, spec.title), s("desc", {}, spec.desc));
  const xs = spec.xs;
  const x0 = xs[0], x1 = xs.length > 1 ? xs[xs.length - 1] : xs[0] + 1;
  const px = (v) => M.l + ((W - M.l - M.r) * (v - x0)) / (x1 - x0 || 1);
  let yMax = 0, yMin = Infinity;
  for (const ser of spec.series) {
    for (let i = 0; i < xs.length; i++) {
      yMax = Math.max(yMax, ser.hi[i], ser.mean[i]);
      for (const v of [ser.lo[i], ser.mean[i]]) if (v > 0) yMin = Math.min(yMin, v);
    }
  }
  if (!(yMax > 0)) yMax = 1;
  if (!(yMin < Infinity)) yMin = 1;
  const ticks = [];
  let py;
  const plotH = H - M.t - M.b;
  if (spec.log) {
    // Round values around the data, thinned to about seven ticks evenly
    // spread on the log axis.
    const cands = spec.durations ? LOG_DURATIONS : LOG_COUNTS;
    const lo = cands.filter((v) => v <= yMin).pop() ?? cands[0];
    const hi = cands.find((v) => v >= yMax) ?? cands[cands.length - 1];
    const span = Math.log10(hi) - Math.log10(lo) || 1;
    py = (v) => M.t + plotH * (1 - (Math.log10(Math.min(Math.max(v, lo), hi)) - Math.log10(lo)) / span);
    const inside = cands.filter((v) => v >= lo && v <= hi);
    const primary = inside.filter((v) => (spec.durations ? ROUND_DURATIONS : ROUND_COUNTS).has(v));
    // Over two decades or more, the round values alone read best (1 s,
    // 10 s, 1 min); the ends of the axis are labelled too when not crowded.
    let picked = primary.length >= 3 ? primary.slice() : inside;
    for (const end of [lo, hi]) {
      if (!picked.includes(end) && picked.every((v) => Math.abs(Math.log10(v) - Math.log10(end)) >= span / 9)) picked.push(end);
    }
    picked.sort((a, b) => a - b);
    let prev = -Infinity;
    for (const v of picked) {
      if (Math.log10(v) - prev >= span / 9) {
        ticks.push(v);
        prev = Math.log10(v);
      }
    }
  } else {
    const step = niceStep(yMax * 1.04, H < 280 ? 4 : 5, spec.durations);
    const top = Math.max(step, Math.ceil((yMax * 1.04) / step) * step);
    py = (v) => M.t + plotH * (1 - v / top);
    for (let v = 0; v <= top + step / 1e6; v += step) ticks.push(v);
  }
  // A log axis spans decades, so its labels carry their own unit; a linear
  // one uses the unit of its largest tick throughout.
  const top = ticks[ticks.length - 1];
  const fmt = spec.log ? (spec.durations ? tickDuration : logCountAxis) : spec.durations ? durationAxis(top) : countAxis(top);
  const axis = s("g", { class: "axis" });
  for (const v of ticks) {
    axis.append(s("line", { x1: M.l, x2: W - M.r, y1: py(v), y2: py(v), class: "grid" }));
    axis.append(s("text", { x: M.l - 8, y: py(v) + 4, "text-anchor": "end" }, fmt(v)));
  }
  const every = Math.ceil(xs.length / (W < 520 ? 6 : 12));
  xs.forEach((v, i) => {
    if (i % every === 0 || i === xs.length - 1 && (xs.length - 1) % every >= every / 2) {
      axis.append(s("text", { x: px(v), y: H - M.b + 18, "text-anchor": "middle" }, intFmt.format(v)));
    }
  });
  axis.append(s("text", { x: M.l + (W - M.l - M.r) / 2, y: H - 6, "text-anchor": "middle", class: "axis-title" }, "clients"));
  svg.append(axis);

  const line = (vals) => vals.map((v, i) => (i ? "L" : "M") + px(xs[i]).toFixed(2) + " " + py(v).toFixed(2)).join(" ");
  for (const ser of spec.series) {
    // Along the 95th percentiles, back along the 5th.
    const back = ser.lo.map((v, i) => "L" + px(xs[i]).toFixed(2) + " " + py(v).toFixed(2)).reverse().join(" ");
    const band = s("path", { class: "sim-band", d: line(ser.hi) + " " + back + " Z", "data-mode": ser.mode });
    band.style.fill = ser.color;
    band.style.fillOpacity = "0.13";
    band.style.stroke = "none";
    svg.append(band);
  }
  // Solid lines first, patterned ones over them: where two lines meet, the
  // gaps of the dashes show the line beneath.
  const order = [...spec.series].sort((a, b) => (a.dash ? 1 : 0) - (b.dash ? 1 : 0));
  for (const ser of order) {
    const g = s("g", { class: "series sim-series", "data-mode": ser.mode });
    const p = s("path", { d: line(ser.mean) });
    p.style.stroke = ser.color;
    p.style.strokeWidth = ser.dash ? "2.5" : "3";
    if (ser.dash) p.style.strokeDasharray = ser.dash;
    p.style.strokeLinecap = "round";
    g.append(p);
    ser.mean.forEach((v, i) => {
      const c = s("circle", { cx: px(xs[i]), cy: py(v), r: xs.length > 40 ? 2 : 3.2, "data-clients": xs[i], "data-value": v });
      c.style.fill = "var(--surface)";
      c.style.stroke = ser.color;
      c.style.strokeWidth = "2";
      c.append(s("title", {}, `${ser.label}, ${intFmt.format(xs[i])} clients: ${spec.format(v)} (5–95%: ${spec.format(ser.lo[i])} – ${spec.format(ser.hi[i])})`));
      g.append(c);
    });
    svg.append(g);
  }
  hover(svg, spec, { W, H, M, px, py });
}

// hover shows a guide at the nearest number of clients and a box with every
// series' value there, ordered from highest to lowest.
function hover(svg, spec, { W, H, M, px, py }) {
  const guide = s("line", { y1: M.t, y2: H - M.b, class: "grid" });
  guide.style.stroke = "var(--ink-3)";
  guide.style.strokeDasharray = "3 3";
  const tip = s("g", { class: "sim-tip" });
  const overlay = s("rect", { x: M.l, y: M.t, width: W - M.l - M.r, height: H - M.t - M.b, fill: "transparent" });
  const layer = s("g", { "aria-hidden": "true" });
  layer.style.pointerEvents = "none";
  layer.append(guide, tip);
  layer.style.display = "none";
  svg.append(overlay, layer);
  const show = (ev) => {
    const box = svg.getBoundingClientRect();
    const mx = ((ev.clientX - box.left) / box.width) * W;
    let best = 0;
    spec.xs.forEach((v, i) => { if (Math.abs(px(v) - mx) < Math.abs(px(spec.xs[best]) - mx)) best = i; });
    const gx = px(spec.xs[best]);
    guide.setAttribute("x1", gx);
    guide.setAttribute("x2", gx);
    tip.replaceChildren();
    const rows = spec.series.map((ser) => ({ ser, v: ser.mean[best] })).sort((a, b) => b.v - a.v);
    const bg = s("rect", { rx: 8 });
    bg.style.fill = "var(--surface)";
    bg.style.stroke = "var(--line)";
    tip.append(bg);
    const head = s("text", { x: 12, y: 20, class: "axis-title" }, `${intFmt.format(spec.xs[best])} clients`);
    tip.append(head);
    rows.forEach(({ ser, v }, k) => {
      const y = 40 + k * 18;
      const dot = s("circle", { cx: 16, cy: y - 4, r: 4 });
      dot.style.fill = ser.color;
      tip.append(dot, s("text", { x: 26, y }, ser.label), s("text", { x: 0, y, "text-anchor": "end", class: "sim-tip-value" }, spec.format(v)));
    });
    let wLabel = 0, wValue = 0;
    for (const t of tip.querySelectorAll("text")) {
      const len = t.getComputedTextLength();
      if (t.classList.contains("sim-tip-value")) wValue = Math.max(wValue, len);
      else if (t !== head) wLabel = Math.max(wLabel, len);
    }
    const bw = Math.max(26 + wLabel + 18 + wValue + 12, head.getComputedTextLength() + 24);
    for (const t of tip.querySelectorAll(".sim-tip-value")) t.setAttribute("x", bw - 12);
    const bh = 30 + rows.length * 18;
    bg.setAttribute("width", bw);
    bg.setAttribute("height", bh);
    const tx = gx + 14 + bw > W - M.r ? gx - 14 - bw : gx + 14;
    tip.setAttribute("transform", `translate(${tx.toFixed(1)} ${M.t + 4})`);
    layer.style.display = "";
  };
  overlay.addEventListener("pointermove", show);
  overlay.addEventListener("pointerdown", show);
  overlay.addEventListener("pointerleave", () => { layer.style.display = "none"; });
}

function seriesOf(result, pick) {
  return result.series.map((ser) => ({
    mode: ser.mode,
    label: MODE[ser.mode].label,
    color: MODE[ser.mode].color,
    dash: MODE[ser.mode].dash,
    mean: ser.points.map((p) => pick(p).mean),
    lo: ser.points.map((p) => pick(p).p5),
    hi: ser.points.map((p) => pick(p).p95),
  }));
}

function drawCharts() {
  const r = state.result;
  if (!r) return;
  const runs = r.config.runs;
  lineChart($("chart-calls"), {
    title: "Total calls against the number of clients",
    desc: `Mean writes per run over ${runs} runs for ${r.series.map((x) => MODE[x.mode].label).join(", ")}, from ${r.clients[0]} to ${r.clients[r.clients.length - 1]} clients, with the 5th to 95th percentile as a band.`,
    xs: r.clients, series: seriesOf(r, (p) => p.calls), durations: false, log: $("calls-log").checked, format: count,
  });
  lineChart($("chart-time"), {
    title: "Completion time against the number of clients",
    desc: `Mean time until the last client finished, over ${runs} runs, per mode, with the 5th to 95th percentile as a band.`,
    xs: r.clients, series: seriesOf(r, (p) => p.timeMs), durations: true, log: $("time-log").checked, format: ms,
  });
  for (const legend of document.querySelectorAll(".sim-legend")) {
    legend.replaceChildren(...r.series.map((ser) => h("li", { "data-mode": ser.mode }, lineKey(ser.mode), MODE[ser.mode].label)),
      h("li", {}, bandKey(), "5th–95th percentile of runs"),
      h("li", { class: "legend-note" }, "Dashed lines are drawn over solid ones: where lines overlap, look for the dashes."));
  }
}

// lineKey is a mode's line as the charts draw it: colour and dashes.
function lineKey(mode) {
  const svg = s("svg", { class: "line-key", width: 28, height: 10, viewBox: "0 0 28 10", "aria-hidden": "true" });
  const l = s("line", { x1: 1, x2: 27, y1: 5, y2: 5, "data-dash": MODE[mode].dash || "solid" });
  l.style.stroke = MODE[mode].color;
  l.style.strokeWidth = "2.5";
  l.style.strokeLinecap = "round";
  if (MODE[mode].dash) l.style.strokeDasharray = MODE[mode].dash;
  svg.append(l);
  return svg;
}

function bandKey() {
  const k = h("span", { class: "key" });
  k.style.background = "color-mix(in srgb, var(--ink-3) 22%, transparent)";
  return k;
}

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

function headline() {
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

function render() {
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
    pending = requestAnimationFrame(() => { pending = 0; lastWidth = window.innerWidth; drawCharts(); });
  });
  sweepHelp();
  staleResult(false);
  document.documentElement.dataset.ready = "true";
  run();
}

init();
