// One endpoint: its policy editor, operator controls, outage timeline,
// failures and flow keys.

import * as B from "./backoff.js";
import { badge, circuitBadge, heading, link, morphChildren, orList, ready, relative, setTitle, setView, state, toast, GATE_NAMES } from "./console-kit.js";
import { keyLimitsLine, meter } from "./view-overview.js";
import { $, fieldText, h } from "./ui.js";
import { api, query } from "./dashboard-api.js";
import { num, plainTimes, when } from "./dashboard-format.js";
import { CUSTOM_PLANS, ENDPOINT_SETTINGS } from "./limits.js";
import { operatorControls } from "./dashboard-ops.js";
import { failuresCard } from "./dashboard-failures.js";
import { outageCard } from "./outage-timeline.js";

// ---------- endpoint policy editor ----------

const POLICY_INPUTS = [
  { key: "maxAttempts", label: "Max attempts", unit: "1–10" },
  { key: "initialDelayMs", label: "Initial delay", unit: "ms" },
  { key: "multiplier", label: "Multiplier", unit: "1–4" },
  { key: "maxDelayMs", label: "Max delay", unit: "ms" },
  { key: "jitterPercent", label: "Jitter", unit: "± %" },
];
// range gives an endpoint setting the server's bounds (limits.js, generated
// from the Go constants) and its message (engine.ParseEndpointPolicy), so a
// rejection reads the same here and there.
function range(bound, unit, nullable) {
  const { min, max } = B.LIMITS[bound];
  const allowed = `${nullable ? "must be null (no limit) or" : "must be"} an integer from ${min} through ${max}${unit}`;
  return { lo: min, hi: max, allowed };
}

// The other endpoint settings, built from ENDPOINT_SETTINGS (limits.js,
// generated from wire.EndpointSettings' tags) so a new setting gets its
// field without an edit here: the endpoint's own integers (an "int" must
// be given; a "limit" may be empty for none), the limits per flow key
// (group KeyLimits, docs/flow-control.md) and their switches, held as
// "true" or "false" among the form's text values. The API keeps a limit
// per key an update leaves out; the form always sends all of them.
// A "text" setting (a time zone, a quiet window) is sent as typed and
// checked by the server, whose field error the form shows.
const settingInput = (f) => f.kind === "text"
  ? { key: f.key, label: f.label, unit: f.units, help: f.help, text: true, allowed: f.allowed }
  : { key: f.key, label: f.label, unit: f.units, help: f.help, ...range(f.bound, f.unit, f.kind === "limit"), nullable: f.kind === "limit" };
const LIMIT_INPUTS = ENDPOINT_SETTINGS.filter((f) => f.kind !== "bool" && f.group !== "KeyLimits").map(settingInput);
const KEY_INPUTS = ENDPOINT_SETTINGS.filter((f) => f.kind !== "bool" && f.group === "KeyLimits").map(settingInput);
// The switches: all are limits per flow key today; one of the endpoint's
// own would show among them until the form gives it a place.
const KEY_FLAGS = ENDPOINT_SETTINGS.filter((f) => f.kind === "bool").map((f) => ({ key: f.key, label: f.label, help: f.help }));
// NUMBER_INPUTS are the settings typed as integers, TEXT_INPUTS the texts.
const NUMBER_INPUTS = [...LIMIT_INPUTS, ...KEY_INPUTS].filter((f) => !f.text);
const TEXT_INPUTS = [...LIMIT_INPUTS, ...KEY_INPUTS].filter((f) => f.text);
const FIELD_LABELS = Object.fromEntries([["preset", "Retry preset"], ...[...POLICY_INPUTS, ...NUMBER_INPUTS, ...TEXT_INPUTS, ...KEY_FLAGS].map((f) => [f.key, f.label])]);
const ALL_KEYS = ["preset", ...[...POLICY_INPUTS, ...NUMBER_INPUTS, ...TEXT_INPUTS, ...KEY_FLAGS].map((f) => f.key)];
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

// valuesOf is an endpoint as the form's text values.
function valuesOf(ep) {
  const pol = ep.policy && ep.policy.preset ? ep.policy : { preset: "STANDARD" };
  const p = B.policyParams(pol);
  const v = { preset: pol.preset };
  for (const f of POLICY_INPUTS) v[f.key] = String(p[f.key]);
  for (const f of NUMBER_INPUTS) v[f.key] = ep[f.key] == null ? "" : String(ep[f.key]);
  for (const f of TEXT_INPUTS) v[f.key] = ep[f.key] ?? "";
  for (const f of KEY_FLAGS) v[f.key] = String(ep[f.key] === true);
  return v;
}

function sameValues(a, b) {
  return ALL_KEYS.every((k) => norm(a[k]) === norm(b[k]));
}

const norm = (s) => String(s ?? "").trim();

function validateLimits(v) {
  const errors = [];
  for (const f of NUMBER_INPUTS) {
    const raw = norm(v[f.key]);
    if (raw === "") {
      if (!f.nullable) errors.push({ field: f.key, message: B.fieldError(f.key, B.MISSING, "an update carries the full policy; " + f.allowed) });
      continue;
    }
    const n = JSON_NUMBER.test(raw) ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n < f.lo || n > f.hi) errors.push({ field: f.key, message: B.fieldError(f.key, JSON_NUMBER.test(raw) ? raw : B.quote(raw), f.allowed) });
  }
  return errors;
}

function bodyOf(v, expectedVersion) {
  const body = { expectedVersion, preset: v.preset };
  if (v.preset === "CUSTOM") for (const f of POLICY_INPUTS) body[f.key] = Number(norm(v[f.key]));
  for (const f of NUMBER_INPUTS) body[f.key] = norm(v[f.key]) === "" ? null : Number(norm(v[f.key]));
  for (const f of TEXT_INPUTS) body[f.key] = norm(v[f.key]);
  for (const f of KEY_FLAGS) body[f.key] = v[f.key] === "true";
  return body;
}

function displayValue(v, key) {
  const s = norm(v[key]);
  if (s === "" && NUMBER_INPUTS.some((f) => f.key === key && f.nullable)) return "no limit";
  if (s === "" && TEXT_INPUTS.some((f) => f.key === key)) return "none";
  if (KEY_FLAGS.some((f) => f.key === key)) return s === "true" ? "on" : "off";
  if (POLICY_INPUTS.some((f) => f.key === key) && v.preset !== "CUSTOM") return s + " (preset)";
  return s;
}

// budgetCard shows where the endpoint stands against its budgets and its
// quiet hours as the page was read (budget in GET /v1/endpoints/{name}):
// each budget's use, when it renews and, at the pace of the last hour,
// when it runs out; whether the quiet hours hold claims now. Null when
// the endpoint sets none of them.
function budgetCard(ep) {
  const b = ep.budget;
  if (!b) return null;
  const period = (p, id, label, setting) => {
    if (!p) return null;
    const pace = p.pacePerHour > 0 ? `At ${num(p.pacePerHour)} calls an hour` : "With no calls in the last hour";
    const forecast = p.used >= p.budget ? "Spent: claims wait until it renews."
      : p.runsOutAt ? `${pace} it runs out ${relative(p.runsOutAt)}, at ${when(p.runsOutAt)}.` : `${pace} it lasts until it renews.`;
    return h("div", { class: "budget", id: "budget-" + id },
      h("p", { class: "budget-line" }, h("strong", { text: label + ": " }), `${num(p.used)} of ${num(p.budget)} calls `, h("span", { class: "muted small", text: `(${setting})` })),
      meter(p.used, p.budget),
      h("p", { class: "help", text: `Renews ${relative(p.renewsAt)}, at ${when(p.renewsAt)}. ${forecast}` }));
  };
  const q = b.quietHours;
  const quiet = q && h("div", { class: "budget", id: "budget-quiet" },
    h("p", { class: "budget-line" }, h("strong", { text: "Quiet hours: " }), `${q.window} `, q.quiet ? badge("holding claims", "paused") : badge("open", "succeeded")),
    h("p", { class: "help", text: q.quiet ? `Claims resume ${relative(q.endsAt)}, at ${when(q.endsAt)}.` : `The next quiet window starts ${relative(q.startsAt)}, at ${when(q.startsAt)}.` }));
  return h("section", { class: "card", id: "budgets", "aria-labelledby": "budgets-title" },
    h("div", { class: "card-head" }, h("h2", { id: "budgets-title", text: "Budgets and quiet hours" }), h("span", { class: "muted small", text: "days and months of " + b.timeZone })),
    period(b.daily, "daily", "Today", "dailyCallBudget"), period(b.monthly, "monthly", "This month", "monthlyCallBudget"), quiet);
}

// flowKeysCard lists the endpoint's busiest flow keys and the due jobs
// each key's own limits hold (GET /v1/endpoints/{name}/keys), re-read
// every few seconds while the page is open. Each key links to its jobs.
function flowKeysCard(name, stale) {
  const body = h("div", { id: "flow-keys-body" }, h("p", { class: "muted small", text: "Loading…" }));
  const card = h("section", { class: "card", id: "flow-keys", "aria-labelledby": "flow-keys-title" },
    h("div", { class: "card-head" }, h("h2", { id: "flow-keys-title", text: "Busiest flow keys" }), h("span", { class: "muted small", id: "flow-keys-note" })),
    body);
  const heldCell = (k) => {
    if (!k.heldBy) return h("td", { class: "held-col", text: k.held ? num(k.held) : "—" });
    return h("td", { class: "held-col", title: plainTimes(k.heldBy.detail) }, h("strong", { text: num(k.held) }), " by " + (GATE_NAMES[k.heldBy.gate] || k.heldBy.gate));
  };
  const show = (l) => {
    $("flow-keys-note").textContent = l.keyed ? "limits per key apply" : "no limits per key";
    if (!l.keys.length) {
      morphChildren(body, [h("p", { class: "empty", id: "flow-keys-empty", text: "No job of this endpoint in flight or queued has a flow key." })]);
      return;
    }
    morphChildren(body, [
      h("div", { class: "table-wrap" }, h("table", { class: "data", id: "flow-keys-table" },
        h("thead", {}, h("tr", {}, ["Key", "In flight", "Queued", "Due", "Held"].map((t) => h("th", { text: t })))),
        h("tbody", {}, l.keys.map((k) => h("tr", { "data-key": "k:" + k.key, "data-flow-key": k.key },
          h("td", {}, link("/jobs" + query({ endpoint: name, flowKey: k.key }), k.key)),
          h("td", { text: num(k.running) }), h("td", { text: num(k.scheduled) }), h("td", { text: num(k.due) }), heldCell(k)))))),
      l.capped ? h("p", { class: "help", text: "Counted from the first 200,000 keyed jobs in flight and the first 200,000 queued." }) : null,
    ].filter(Boolean));
  };
  const load = async () => {
    try {
      const l = await api("GET", `/v1/endpoints/${encodeURIComponent(name)}/keys?limit=10`);
      if (!stale()) show(l);
    } catch (e) {
      if (!stale()) morphChildren(body, [h("p", { class: "callout", text: "Could not read the flow keys: " + e.message })]);
    }
  };
  load();
  const timer = setInterval(() => (stale() ? clearInterval(timer) : load()), 5000);
  return card;
}

export async function view([name], stale) {
  setTitle(name + " policy");
  const ep = await api("GET", "/v1/endpoints/" + encodeURIComponent(name));
  if (stale()) return;
  const plan = state.me.project.plan;
  const canWrite = state.me.key.scope === "owner";
  // serverError is the last refused save other than a conflict; it stays on
  // screen until the form is edited or saved again.
  const ed = { base: ep, conflict: null, serverError: null };

  const { form, presetSel, planNote } = policyForm(plan);
  const preview = previewCard();
  const conflictBox = h("section", { id: "conflict", class: "card conflict", hidden: true, "aria-live": "assertive" });
  const headBox = h("div", { id: "endpoint-head" });
  setView(
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, link("/", "Overview"), " / ", h("span", { text: ep.name })),
    headBox, conflictBox,
    h("div", { class: "split editor" }, form, h("div", { class: "stack" }, budgetCard(ep), preview, flowKeysCard(ep.name, stale), h("section", { class: "card" }, h("h2", { text: "Saved policy as JSON" }), h("pre", { class: "json", id: "saved-json" })))));
  headBox.after(operatorControls(ep, canWrite, stale), outageCard(ep, stale), failuresCard(ep, canWrite || state.me.key.scope === "producer", stale));

  const input = (k) => $("f-" + k);
  // A checkbox's value is "true" or "false", like valuesOf writes it.
  const valueOf = (e) => (e.type === "checkbox" ? String(e.checked) : e.value);
  const read = () => Object.fromEntries(ALL_KEYS.map((k) => [k, valueOf(input(k))]));
  // fill loads values into the form; a preset change the user makes
  // afterwards is what update() treats as leaving or returning to CUSTOM.
  const fill = (v) => {
    for (const k of ALL_KEYS) { const e = input(k); if (e.type === "checkbox") e.checked = v[k] === "true"; else e.value = v[k]; }
    ed.lastPreset = v.preset;
  };

  const renderHead = () => {
    const b = ed.base;
    headBox.replaceChildren(heading(b.name, null, circuitBadge(b.circuit)),
      h("p", { class: "muted small", id: "version-line" }, `Version ${b.version} · saved ${when(b.updatedAt)} · `, link("/jobs" + query({ endpoint: b.name }), "jobs of this endpoint")),
      ...[keyLimitsLine(b, "key-limits small", "key-limits")].filter(Boolean));
    $("saved-json").textContent = JSON.stringify(savedDoc(b), null, 2);
  };

  const c = { ed, plan, canWrite, presetSel, planNote, conflictBox, input, read, fill, renderHead, stale };
  const update = () => updateForm(c);
  const save = () => saveForm(c);
  fill(valuesOf(ep));
  renderHead();
  update();
  const edited = () => { ed.serverError = null; update(); };
  form.addEventListener("input", edited);
  form.addEventListener("change", edited);
  form.addEventListener("submit", (ev) => { ev.preventDefault(); if (!$("save").disabled) save(); });
  $("revert").addEventListener("click", () => { fill(valuesOf(ed.base)); edited(); });
  ready();
}

// policyForm builds the policy editor's form for a project on plan.
function policyForm(plan) {
  const form = h("form", { id: "policy-form", class: "card inputs policy-form", novalidate: true, autocomplete: "off" });
  const presetSel = h("select", { id: "f-preset", name: "preset", "aria-describedby": "f-preset-error" },
    B.PRESET_NAMES.map((p) => h("option", { value: p, text: p === "CUSTOM" && !CUSTOM_PLANS.includes(plan) ? `CUSTOM (needs ${orList(CUSTOM_PLANS)})` : p })));
  const field = (f, input) => h("div", { class: "field" },
    h("label", { for: "f-" + f.key }, f.label, " ", h("span", { class: "unit", text: f.unit || "" })),
    input,
    f.help ? h("p", { class: "help", text: f.help }) : null,
    h("p", { class: "field-error", id: "f-" + f.key + "-error", hidden: true }));
  const textInput = (key) => h("input", { id: "f-" + key, name: key, type: "text", inputmode: TEXT_INPUTS.some((f) => f.key === key) ? "text" : "decimal", spellcheck: "false", "aria-describedby": "f-" + key + "-error" });
  const checkField = (f) => h("div", { class: "field field-check" },
    h("label", { for: "f-" + f.key }, h("input", { id: "f-" + f.key, name: f.key, type: "checkbox", "aria-describedby": `f-${f.key}-help f-${f.key}-error` }), f.label),
    h("p", { class: "help", id: `f-${f.key}-help`, text: f.help }),
    h("p", { class: "field-error", id: "f-" + f.key + "-error", hidden: true }));
  const planNote = h("p", { id: "plan-note", class: "callout callout-warn small", hidden: true },
    `This project is on the ${plan} plan, which cannot save a CUSTOM retry policy. Choose a preset, or move the project to ${orList(CUSTOM_PLANS)}.`);
  form.append(
    h("h2", { text: "Retry policy" }),
    field({ key: "preset", label: "Preset" }, presetSel),
    planNote,
    h("div", { class: "field-grid" }, POLICY_INPUTS.map((f) => field(f, textInput(f.key)))),
    h("h2", { class: "form-sub", text: "Gates" }),
    h("div", { class: "field-grid" }, LIMIT_INPUTS.map((f) => field(f, textInput(f.key)))),
    h("h2", { class: "form-sub", id: "key-limits-title", text: "Limits per flow key" }),
    h("p", { class: "help form-lede", text: "For the jobs of each flow key, within the endpoint's gates above. Jobs without a key are not limited by these." }),
    h("div", { class: "field-grid", role: "group", "aria-labelledby": "key-limits-title" }, KEY_INPUTS.map((f) => field(f, textInput(f.key))), KEY_FLAGS.map(checkField)),
    h("div", { id: "form-errors", class: "alert", hidden: true }, h("p", { class: "alert-title", text: "Fix these to save:" }), h("ul")),
    h("div", { class: "button-row" },
      h("button", { type: "submit", id: "save", class: "button primary", text: "Save policy" }),
      h("button", { type: "button", id: "revert", class: "button", text: "Revert" })),
    h("p", { id: "save-state", class: "help", role: "status" }));
  return { form, presetSel, planNote };
}

// previewCard is the retry schedule of what the form holds.
function previewCard() {
  return h("section", { class: "card", "aria-labelledby": "preview-title" },
    h("div", { class: "card-head" }, h("h2", { id: "preview-title", text: "Retry schedule" }), h("span", { class: "muted small", id: "preview-policy" })),
    h("p", { class: "help" }, "What jobs enqueued after you save will do. Jobs already queued keep the policy they were enqueued with."),
    h("div", { id: "preview-empty", class: "empty", hidden: true, text: "Fix the policy fields to see the schedule." }),
    h("div", { id: "preview-out" },
      h("div", { class: "table-wrap" }, h("table", { class: "data", id: "preview-table" },
        h("thead", {}, h("tr", {}, ["Failed attempt", "Base delay", "Jitter range", "Next execution"].map((t) => h("th", { text: t })))), h("tbody"))),
      h("p", { class: "total", id: "preview-total" }),
      h("p", { class: "note", id: "preview-ceiling" })));
}

// updateForm checks the form, shows its errors, enables what may be done
// and draws the retry schedule of what it holds.
function updateForm(c) {
  const v = c.read();
  const custom = v.preset === "CUSTOM";
  // Choosing a preset shows its numbers; the custom numbers typed before
  // are kept and come back when CUSTOM is chosen again.
  if (c.ed.lastPreset === "CUSTOM" && !custom) c.ed.customDraft = Object.fromEntries(POLICY_INPUTS.map((f) => [f.key, v[f.key]]));
  if (c.ed.lastPreset !== "CUSTOM" && custom && c.ed.customDraft) for (const f of POLICY_INPUTS) c.input(f.key).value = c.ed.customDraft[f.key];
  c.ed.lastPreset = v.preset;
  // Only an owner key may save, so other keys see the form read-only.
  c.presetSel.disabled = !c.canWrite;
  for (const f of [...NUMBER_INPUTS, ...TEXT_INPUTS, ...KEY_FLAGS]) c.input(f.key).disabled = !c.canWrite;
  for (const f of POLICY_INPUTS) {
    c.input(f.key).disabled = !custom || !c.canWrite;
    if (!custom && B.PRESETS[v.preset]) c.input(f.key).value = String(B.PRESETS[v.preset][f.key]);
  }
  const v2 = c.read();
  const errors = [];
  let params = null;
  if (custom) {
    const r = B.validatePolicyText(Object.fromEntries(POLICY_INPUTS.map((f) => [f.key, v2[f.key]])));
    errors.push(...r.errors);
    params = r.params;
  } else params = B.PRESETS[v2.preset];
  errors.push(...validateLimits(v2));
  for (const k of ALL_KEYS) {
    const fe = errors.filter((e) => e.field === k);
    const p = $("f-" + k + "-error");
    p.hidden = fe.length === 0;
    p.textContent = fe.map((e) => fieldText(e.field, e.message)).join("\n");
    c.input(k).setAttribute("aria-invalid", fe.length ? "true" : "false");
  }
  const box = $("form-errors");
  const se = errors.length === 0 ? c.ed.serverError : null;
  box.hidden = errors.length === 0 && !se;
  box.querySelector(".alert-title").textContent = se ? "The server did not save the policy: " + se.message : "Fix these to save:";
  // The form's own errors sit beside their fields: the box names the
  // fields to fix (each a link to it). A refusal from the server is shown
  // here in full, with the fields by their labels.
  const items = se
    ? (se.fields || []).map((f) => h("li", { text: (FIELD_LABELS[f.field] || f.field) + ": " + fieldText(f.field, f.message || `${f.field}: ${f.value} is not allowed; ${f.allowed}`) }))
    : [...new Set(errors.map((e) => e.field))].map((k) => h("li", {}, h("a", { href: "#f-" + k, text: FIELD_LABELS[k] || k, onclick: (ev) => { ev.preventDefault(); c.input(k).focus(); } })));
  box.querySelector("ul").replaceChildren(...items);
  const planBlocked = custom && !CUSTOM_PLANS.includes(c.plan);
  c.planNote.hidden = !planBlocked;
  const dirty = !sameValues(v2, valuesOf(c.ed.base));
  $("save").disabled = !c.canWrite || errors.length > 0 || planBlocked || !dirty;
  $("revert").disabled = !dirty || !c.canWrite;
  $("save-state").textContent = !c.canWrite ? "Only an owner key can change the policy." : planBlocked ? `The ${c.plan} plan cannot save CUSTOM.` : errors.length ? "" : dirty ? "Unsaved changes." : "No changes.";
  // Preview.
  $("preview-empty").hidden = !!params;
  $("preview-out").hidden = !params;
  $("preview-policy").textContent = v2.preset;
  if (params) {
    const s = B.policySchedule(params);
    $("preview-table").tBodies[0].replaceChildren(...s.rows.map((row) =>
      h("tr", { class: row.exhausted ? "exhausted-row" : "" }, B.policyTableCells(row).map((c) => h("td", { text: c })))));
    $("preview-total").textContent = B.totalSentence(s);
    $("preview-ceiling").textContent = params.jitterPercent > 0
      ? `The cap applies before jitter: the longest delay this policy alone can select is ${B.seconds(s.ceilingMs)}.`
      : `No jitter: the longest delay this policy alone can select is the cap, ${B.seconds(s.ceilingMs)}.`;
  }
}

// saveForm saves the form as the next version; a conflict shows both.
async function saveForm(c) {
  const v = c.read();
  $("save").disabled = true;
  $("save-state").textContent = "Saving…";
  try {
    const saved = await api("PUT", `/v1/endpoints/${encodeURIComponent(c.ed.base.name)}/policy`, bodyOf(v, c.ed.base.version));
    if (c.stale()) return;
    c.ed.base = saved;
    c.ed.conflict = null;
    c.ed.serverError = null;
    c.conflictBox.hidden = true;
    c.renderHead();
    c.fill(valuesOf(saved));
    updateForm(c);
    $("save-state").textContent = `Saved as version ${saved.version}.`;
    toast(`Saved ${saved.name} as version ${saved.version}.`);
  } catch (e) {
    if (c.stale()) return;
    c.ed.serverError = null;
    if (e.status === 409 && e.current) {
      showConflict(c, e.current, v);
    } else {
      c.ed.serverError = e;
    }
    updateForm(c);
    $("save-state").textContent = e.status === 409 ? "Not saved: someone else saved first." : "Not saved: the server refused it (see above).";
  }
}

// showConflict puts three versions side by side: the one the user started
// from, the one someone else saved, and the user's unsaved edit.
function showConflict(c, current, mine) {
  const from = valuesOf(c.ed.base), theirs = valuesOf(current);
  c.ed.conflict = { current, mine };
  const rows = ALL_KEYS.filter((k) => norm(from[k]) !== norm(theirs[k]) || norm(from[k]) !== norm(mine[k])).map((k) => {
    const theyChanged = norm(from[k]) !== norm(theirs[k]);
    const iChanged = norm(from[k]) !== norm(mine[k]);
    return h("tr", { "data-field": k },
      h("th", { scope: "row", text: FIELD_LABELS[k] }),
      h("td", { class: "mono", text: displayValue(from, k) }),
      h("td", { class: "mono theirs" + (theyChanged ? " changed" : ""), text: displayValue(theirs, k) }),
      h("td", { class: "mono mine" + (iChanged ? " changed" : ""), text: displayValue(mine, k) + (theyChanged && iChanged && norm(theirs[k]) !== norm(mine[k]) ? " (both changed)" : "") }));
  });
  c.conflictBox.hidden = false;
  c.conflictBox.replaceChildren(
    h("div", { class: "card-head" }, h("h2", { text: "Someone else saved this endpoint first" }), badge("version conflict", "conflict")),
    h("p", { id: "conflict-summary" }, `You edited version ${c.ed.base.version}, but version ${current.version} was saved at ${when(current.updatedAt)}. Your change was not saved. Here is their change next to yours:`),
    h("div", { class: "table-wrap" }, h("table", { class: "data diff", id: "conflict-table" },
      h("thead", {}, h("tr", {}, h("th", { text: "Setting" }), h("th", { text: `Version ${c.ed.base.version} (you started here)` }),
        h("th", { text: `Version ${current.version} (saved by someone else)` }), h("th", { text: "Yours (not saved)" }))),
      h("tbody", {}, rows))),
    h("p", { class: "help" }, "Reapplying puts your edits on top of their version: the settings you changed take your values, the rest keep theirs. Review the form, then save again."),
    h("div", { class: "button-row" },
      h("button", { type: "button", id: "reapply", class: "button primary", text: `Reapply my changes onto version ${current.version}`, onclick: () => reapply(c, true) }),
      h("button", { type: "button", id: "discard", class: "button", text: `Discard mine and load version ${current.version}`, onclick: () => reapply(c, false) })));
  c.conflictBox.scrollIntoView({ block: "nearest" });
}

// reapply puts the user's edits onto the version someone else saved
// (keepMine), or loads that version.
function reapply(c, keepMine) {
  const { current, mine } = c.ed.conflict;
  const from = valuesOf(c.ed.base), theirs = valuesOf(current);
  const merged = {};
  for (const k of ALL_KEYS) merged[k] = keepMine && norm(mine[k]) !== norm(from[k]) ? mine[k] : theirs[k];
  // A preset decides the five numbers; keep them consistent with it.
  if (merged.preset !== "CUSTOM" && B.PRESETS[merged.preset]) for (const f of POLICY_INPUTS) merged[f.key] = String(B.PRESETS[merged.preset][f.key]);
  c.ed.base = current;
  c.ed.conflict = null;
  c.conflictBox.hidden = true;
  c.renderHead();
  c.fill(merged);
  updateForm(c);
  $("save-state").textContent = keepMine ? `Your changes are applied onto version ${current.version}. Review and save.` : `Loaded version ${current.version}.`;
  if (keepMine) $("save").focus();
}

function savedDoc(ep) {
  const d = { ...ep.policy };
  for (const f of [...NUMBER_INPUTS, ...TEXT_INPUTS, ...KEY_FLAGS]) d[f.key] = ep[f.key];
  return d;
}
