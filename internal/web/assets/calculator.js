// The backoff calculator page: reads the form, keeps the numbers in the URL,
// and draws the schedule, the charts, the log comparison and the layered
// retries panel. All arithmetic is in backoff.js; nothing here talks to the
// network, and the pasted log is never written to the URL or to storage.
import * as B from "./backoff.js";
import { $, toast } from "./ui.js";
import { POLICY, copy, plural, radioValue, setRadio, state } from "./calculator-form.js";
import { calcCSV, fillSample, loadSample, renderCalc } from "./calculator-calc.js";
import { policyCSV, renderPolicy, syncPresetFields } from "./calculator-policy.js";
import { exampleLog, renderLayers, renderLog } from "./calculator-log.js";

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

export function update() {
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
