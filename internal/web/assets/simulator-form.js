// The contention simulator's fields, state and small helpers, its form
// (read, checked, errors beside their fields) and its URL.
import { PRESETS } from "./backoff.js";
import { $, h, fieldText, labelOf } from "./ui.js";

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
export const MODE = Object.fromEntries(MODES.map((m) => [m.id, m]));
export const STUDY_MODES = ["none", "exponential", "full", "equal", "decorrelated"];

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
export const POLICY_FIELDS = [
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
export const INTEGER = /^[+-]?\d+$/;
// A busy server answers 503: try again this many times, with full jitter
// over the Retry-After floor, as Ratchet itself retries.
export const BUSY_TRIES = 6;

export const state = {
  result: null, // the last result, parsed
  controller: null, // aborts the request in flight
  csvURL: "",
  jsonURL: "",
};

// ---------- small helpers ----------

export function s(name, attrs = {}, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

export const intFmt = new Intl.NumberFormat("en", { maximumFractionDigits: 0 });
const oneFmt = new Intl.NumberFormat("en", { minimumFractionDigits: 1, maximumFractionDigits: 1 });

// count prints calls and clients: one decimal below 100, whole numbers above.
export function count(v) {
  return Math.abs(v) < 100 ? oneFmt.format(v) : intFmt.format(v);
}

// ms prints a duration with three significant digits: "382 ms", "4.82 s",
// "48.3 s", "101 s", "7.5 min".
export function ms(v) {
  if (v < 1000) return intFmt.format(v) + " ms";
  if (v < 10_000) return (v / 1000).toFixed(2) + " s";
  if (v < 100_000) return (v / 1000).toFixed(1) + " s";
  if (v < 600_000) return intFmt.format(v / 1000) + " s";
  if (v < 36_000_000) return (v / 60_000).toFixed(1) + " min";
  return (v / 3_600_000).toFixed(1) + " h";
}

export function plural(n, one, many) {
  return `${intFmt.format(n)} ${n === 1 ? one : many}`;
}

export function modesChecked() {
  return Array.from(document.querySelectorAll('input[name="mode"]:checked'), (c) => c.value);
}

// ---------- the form ----------

// readForm turns the form into a config for the server. Only the syntax of
// numbers is checked here; the ranges are the server's (simulate.ParseConfig),
// so the page and `ratchet simulate` can never disagree about them.
export function readForm() {
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

export function message(e) {
  return e.message || `${e.field}: ${e.value} is not allowed; ${e.allowed}`;
}

// showErrors lists every problem above the results and puts each beside its
// field; an empty list clears them.
export function showErrors(errors, title) {
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

export function syncSections() {
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
export function writeURL() {
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

export function readURL() {
  // A recovery link carries the recovery's settings, not the sweep's.
  const recovery = new URLSearchParams(location.search).get("scenario") === "recovery";
  const q = new URLSearchParams(recovery ? "" : location.search);
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

export function studyDefaults() {
  history.replaceState(null, "", location.pathname);
  for (const f of [...CALC_FIELDS, ...BUDGET_FIELDS, ...RETRY_AFTER_FIELDS]) $(f.id).value = f.def;
  for (const f of CALC_SELECTS) $(f.id).value = f.def;
  $("preset").value = "STANDARD";
  readURL();
}
