// The simulator's recovery scenario: a provider comes back after an
// outage and the backlog the circuit held is released at once or by the
// ramp. The page reads the form, keeps it in the URL, asks this server to
// simulate (POST /api/simulate/recovery, the scenario of `ratchet simulate
// --scenario recovery`) and shows the figures and a chart per strategy.
// The server validates; its errors name the field and land beside it.
import { PRESETS } from "./backoff.js";
import { $, h, fieldText, labelOf, toast } from "./ui.js";
import { BUSY_TRIES, INTEGER, intFmt, message } from "./simulator-form.js";
import { wait } from "./simulator-run.js";
import { SHORT, drawRecovery } from "./simulator-recovery-chart.js";

// Text fields: element id (after "rec-"), config path, default, integer?
const FIELDS = [
  { id: "backlog", path: "backlog", def: "5000", int: true },
  { id: "capacityPerS", path: "capacityPerS", def: "100", int: true },
  { id: "retryAfterS", path: "retryAfterS", def: "1", int: true },
  { id: "maxConcurrent", path: "maxConcurrent", def: "50", int: true },
  { id: "ramp-limitPerS", path: "ramp.limitPerS", def: "200" },
  { id: "ramp-startPercent", path: "ramp.startPercent", def: "10" },
  { id: "ramp-slowStartFactor", path: "ramp.slowStartFactor", def: "2" },
  { id: "ramp-increasePercent", path: "ramp.increasePercent", def: "10" },
  { id: "ramp-decreaseFactor", path: "ramp.decreaseFactor", def: "0.7" },
  { id: "ramp-stepMs", path: "ramp.stepMs", def: "1000" },
  { id: "seed", path: "seed", def: "1", int: true },
];
const RAMP_IDS = FIELDS.filter((f) => f.id.startsWith("ramp-")).map((f) => "rec-" + f.id);
const INPUTS = FIELDS.map((f) => "rec-" + f.id).concat(["rec-preset"]);
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

const rec = { result: null, controller: null };

// readForm turns the form into a scenario for the server. Only the syntax
// of numbers is checked here; the ranges are the server's
// (simulate.ParseRecovery), so the page and the CLI never disagree.
function readForm() {
  const errors = [], cfg = { ramp: {} };
  for (const f of FIELDS) {
    const raw = $("rec-" + f.id).value, t = raw.trim();
    if (!(f.int ? INTEGER : DECIMAL).test(t)) {
      errors.push({ field: f.path, value: t === "" ? "(missing)" : JSON.stringify(raw), allowed: f.int ? "must be an integer" : "must be a number" });
      continue;
    }
    const [a, b] = f.path.split(".");
    if (b) cfg[a][b] = Number(t); else cfg[a] = Number(t);
  }
  cfg.policy = { ...PRESETS[$("rec-preset").value] };
  cfg.throttleSpendsAttempt = $("rec-throttleSpendsAttempt").checked;
  cfg.strategies = ["at-once", "ramp"].concat($("rec-learned").checked ? ["learned"] : []);
  return { cfg, errors };
}

// fieldId maps a field the server names to the input that holds it.
function fieldId(field) {
  if (field === "policy" || field.startsWith("policy.")) return "rec-preset";
  const id = "rec-" + field.replace(".", "-");
  return INPUTS.includes(id) ? id : null;
}

// showErrors lists the problems above the figures and puts each beside its
// field; an empty list clears them.
function showErrors(errors, title) {
  const byId = new Map();
  for (const e of errors) {
    const id = fieldId(e.field);
    if (id) byId.set(id, (byId.get(id) || []).concat(fieldText(e.field, message(e))));
  }
  for (const id of INPUTS) {
    const msgs = byId.get(id);
    $(id + "-error").hidden = !msgs;
    $(id + "-error").textContent = msgs ? msgs.join(" ") : "";
    if (msgs) $(id).setAttribute("aria-invalid", "true"); else $(id).removeAttribute("aria-invalid");
  }
  if (RAMP_IDS.some((id) => byId.has(id))) $("rec-ramp-settings").open = true;
  const box = $("rec-errors");
  if (title) box.querySelector(".alert-title").textContent = title;
  const seen = new Set();
  box.querySelector("ul").replaceChildren(...errors.filter((e) => {
    const id = fieldId(e.field);
    if (id && seen.has(id)) return false;
    seen.add(id);
    return true;
  }).map((e) => {
    const id = fieldId(e.field);
    if (!id) return h("li", { text: message(e) });
    const a = h("a", { href: "#" + id, text: labelOf(id) });
    a.addEventListener("click", (ev) => { ev.preventDefault(); $(id).focus(); });
    return h("li", {}, a);
  }));
  box.hidden = errors.length === 0;
}

// ---------- the URL ----------

// writeURL keeps what differs from the defaults, after scenario=recovery.
export function writeURL() {
  const q = new URLSearchParams({ scenario: "recovery" });
  for (const f of FIELDS) if ($("rec-" + f.id).value.trim() !== f.def) q.set(f.id, $("rec-" + f.id).value.trim());
  if ($("rec-preset").value !== "AGGRESSIVE") q.set("preset", $("rec-preset").value);
  if (!$("rec-throttleSpendsAttempt").checked) q.set("throttleSpendsAttempt", "0");
  if ($("rec-learned").checked) q.set("learned", "1");
  history.replaceState(null, "", "?" + q.toString());
}

export function readURL() {
  const q = new URLSearchParams(location.search);
  for (const f of FIELDS) $("rec-" + f.id).value = q.has(f.id) ? q.get(f.id) : f.def;
  const preset = q.get("preset");
  $("rec-preset").value = preset && PRESETS[preset] && preset !== "CUSTOM" ? preset : "AGGRESSIVE";
  $("rec-throttleSpendsAttempt").checked = q.get("throttleSpendsAttempt") !== "0";
  $("rec-learned").checked = q.get("learned") === "1";
}

// ---------- the figures ----------

const pct = (v) => (v < 10 ? v.toFixed(1) : intFmt.format(v)) + " %";
const times = (v) => v.toFixed(v < 10 ? 1 : 0) + " ×";

function renderTable(r) {
  const c = r.config.capacityPerS;
  $("rec-table").tBodies[0].replaceChildren(...r.runs.map((run) => h("tr", { "data-strategy": run.strategy },
    h("th", { scope: "row", text: SHORT[run.strategy] }),
    h("td", { class: "num mono", "data-figure": "refused", text: pct(run.refusedPercent), title: `${intFmt.format(run.refusals)} of ${intFmt.format(run.requests)} requests` }),
    h("td", { class: "num mono", "data-figure": "busiest", text: `${intFmt.format(run.busiestSecond)} · ${times(run.busiestSecond / c)}`, title: `second ${run.busiestAt}; capacity ${intFmt.format(c)} per second` }),
    h("td", { class: "num mono", "data-figure": "drain", text: `${run.drainS.toFixed(1)} s · ${times(run.drainRatio)}` }),
    h("td", { class: "num mono", "data-figure": "exhausted", text: intFmt.format(run.exhausted) + (run.left ? ` (${intFmt.format(run.left)} left)` : "") }))));
  $("rec-table-note").textContent = `Refused: the share of requests after the recovery answered 429. Busiest second: requests that reached the provider in one second, and that against its capacity of ${intFmt.format(c)}. ` +
    `Drain: when the last held job was done, and that against backlog ÷ capacity (${r.idealDrainS} s), the provider’s own pace. Exhausted: jobs whose policy gave up.`;
}

function headline(r) {
  const at = r.runs.find((x) => x.strategy === "at-once"), ramp = r.runs.find((x) => x.strategy === "ramp");
  const el = $("rec-headline");
  el.hidden = !(at && ramp);
  if (el.hidden) return;
  el.textContent = `Released at once, ${pct(at.refusedPercent)} of requests were refused and the busiest second brought ${intFmt.format(at.busiestSecond)} requests to a provider that serves ${intFmt.format(r.config.capacityPerS)}; ` +
    `released by the ramp, ${pct(ramp.refusedPercent)} were refused and its busiest second brought ${intFmt.format(ramp.busiestSecond)}. The ramp drained the backlog in ${ramp.drainS.toFixed(0)} s, at once took ${at.drainS.toFixed(0)} s; the provider’s own pace is ${r.idealDrainS.toFixed(0)} s.`;
}

// command is `ratchet simulate --scenario recovery` for the same scenario.
function command(r) {
  const c = r.config, flags = ["ratchet simulate --scenario recovery"];
  const flag = { backlog: "--backlog", capacityPerS: "--capacity", retryAfterS: "--retry-after-s", maxConcurrent: "--max-concurrent", seed: "--seed",
    "ramp-limitPerS": "--ramp-limit", "ramp-startPercent": "--ramp-start", "ramp-slowStartFactor": "--ramp-slow-start",
    "ramp-increasePercent": "--ramp-increase", "ramp-decreaseFactor": "--ramp-decrease", "ramp-stepMs": "--ramp-step" };
  for (const f of FIELDS) {
    const [a, b] = f.path.split(".");
    const v = b ? c[a][b] : c[a];
    if (String(v) !== f.def) flags.push(`${flag[f.id]} ${v}`);
  }
  if ($("rec-preset").value !== "AGGRESSIVE") flags.push("--policy-preset " + $("rec-preset").value);
  if (!c.throttleSpendsAttempt) flags.push("--throttle-spends-attempt false");
  flags.push("--strategies " + c.strategies.join(","));
  $("rec-command").textContent = flags.join(" \\\n    ");
}

function render(r) {
  renderTable(r);
  headline(r);
  drawRecovery(r);
  command(r);
}

export function redraw() {
  if (rec.result) drawRecovery(rec.result);
}

// ---------- running ----------

function finished(how, text) {
  $("rec-status").textContent = text;
  const d = document.documentElement.dataset;
  d.rec = how;
  d.recCount = String(Number(d.recCount || 0) + 1);
  for (const el of document.querySelectorAll(".rec-out")) el.classList.toggle("stale-result", how !== "done");
  if (how !== "done") $("rec-headline").hidden = true;
}

// failure shows the server's refusal, or a failure to reach it.
async function failure(resp, text, userRun) {
  let err = null;
  try { err = JSON.parse(text).error; } catch { /* not the API's shape */ }
  if (err && err.fields) showErrors(err.fields, "The server did not run the scenario:");
  else showErrors([{ field: "server", message: err ? err.message : `the server answered ${resp.status}` }], "The server did not run the scenario:");
  finished("error", "Not run: the settings above need fixing.");
  if (userRun) $("rec-errors").focus();
}

export async function runRecovery(userRun = false) {
  writeURL();
  const { cfg, errors } = readForm();
  if (errors.length) {
    showErrors(errors, "Fix these settings to run the scenario:");
    finished("error", "Not run: the settings above need fixing.");
    if (userRun) $("rec-errors").focus();
    return;
  }
  if (rec.controller) rec.controller.abort();
  const controller = new AbortController();
  rec.controller = controller;
  $("rec-run").disabled = true;
  document.documentElement.dataset.rec = "running";
  $("rec-status").textContent = `Simulating ${intFmt.format(cfg.backlog)} held jobs on the server…`;
  try {
    for (let attempt = 1; ; attempt++) {
      const resp = await fetch("/api/simulate/recovery", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(cfg), signal: controller.signal,
      });
      const text = await resp.text();
      if (resp.ok) {
        showErrors([]);
        rec.result = JSON.parse(text);
        render(rec.result);
        finished("done", `Simulated ${intFmt.format(cfg.backlog)} held jobs, ${cfg.strategies.length} ways of releasing them.`);
        return;
      }
      if (resp.status === 503 && attempt < BUSY_TRIES) {
        const floor = Number(resp.headers.get("Retry-After")) * 1000 || 1000;
        await wait(Math.max(floor, Math.random() * Math.min(8000, 500 * 2 ** attempt)), controller.signal);
        continue;
      }
      await failure(resp, text, userRun);
      return;
    }
  } catch (e) {
    if (e.name === "AbortError") return;
    showErrors([{ field: "server", message: "the server could not be reached: " + e.message }], "The scenario did not run:");
    finished("error", "Not run.");
  } finally {
    if (rec.controller === controller) {
      rec.controller = null;
      $("rec-run").disabled = false;
    }
  }
}

// initRecovery wires the form; the scenario runs when its tab is shown.
export function initRecovery() {
  readURL();
  $("rec-errors").tabIndex = -1;
  const form = $("rec-form");
  form.addEventListener("submit", (ev) => { ev.preventDefault(); runRecovery(true); });
  form.addEventListener("input", writeURL);
  form.addEventListener("change", writeURL);
  $("rec-defaults").addEventListener("click", () => {
    history.replaceState(null, "", "?scenario=recovery");
    readURL();
    runRecovery(true);
  });
  $("rec-copy-link").addEventListener("click", async () => {
    writeURL();
    try {
      await navigator.clipboard.writeText(location.href);
      toast("Copied the link.");
    } catch {
      toast("The browser did not allow copying the link.");
    }
  });
}

export const recoveryState = rec;
