// The dashboard's Alerts view (docs/alerts.md): the project's alert sinks
// (GET /v1/alerts/sinks) with Send test and Delete, a form that adds one
// (a webhook sink's secret shown once), the thresholds (PUT
// /v1/alerts/settings, field errors beside their inputs) and the latest
// deliveries (GET /v1/alerts), refreshed every 5 s while current. Owner
// keys only: the routes are, so another key reads why.
import { h, toast, fieldText } from "./ui.js";
import { api } from "./dashboard-api.js";
import { timeEl } from "./dashboard-format.js";
import { ALERT_SINK_KINDS } from "./limits.js";
import { alertBox, confirmDialog, every, failBox, heading, link, ready, setView, state, watchTables } from "./console-kit.js";
import { colHeads } from "./dashboard-schedules.js";

const KIND_NAMES = { webhook: "Webhook (Standard Webhooks signed)", slack: "Slack incoming webhook", teams: "Microsoft Teams incoming webhook" };

// THRESHOLDS are the settings' inputs; minutes are the unit people think
// in, milliseconds the API's.
const THRESHOLDS = [
  { key: "pausedAfterMs", label: "Alert on a pause longer than", unit: "minutes", scale: 60000 },
  { key: "windowMs", label: "Window", unit: "minutes", scale: 60000 },
  { key: "maxPerWindow", label: "Alerts per endpoint and window at most", unit: "alerts", scale: 1 },
  { key: "failureRatePercent", label: "Failure rate at or over", unit: "%", scale: 1 },
  { key: "failureRateMin", label: "Of at least", unit: "attempts in a window", scale: 1 },
];

// field is a labelled input with its error line below.
function field(id, label, unit, input) {
  return h("div", { class: "field" },
    h("label", { for: id }, label, " ", h("span", { class: "unit", text: unit || "" })),
    input,
    h("p", { class: "field-error", id: id + "-error", hidden: true }));
}

// showFieldErrors puts each of an API error's field messages beside its
// input (ids by field name); those without an input go in box.
function showFieldErrors(form, e, ids, box) {
  for (const p of form.querySelectorAll(".field-error")) { p.hidden = true; p.textContent = ""; }
  const rest = [];
  for (const f of (e.fields || [])) {
    const p = ids[f.field] && document.getElementById(ids[f.field] + "-error");
    if (p) { p.textContent = fieldText(f.field, f.message); p.hidden = false; } else rest.push(f.message);
  }
  box.replaceChildren(e.message && (rest.length || !(e.fields || []).length) ? alertBox(e.message, rest) : "");
}

function sinkRow(k, act) {
  const test = h("button", { type: "button", class: "button small", "data-action": "test", text: "Send test" });
  const del = h("button", { type: "button", class: "button small danger", "data-action": "delete", text: "Delete" });
  test.addEventListener("click", () => act(k.name, "test", test));
  del.addEventListener("click", () => act(k.name, "delete", del));
  return h("tr", { "data-sink": k.name },
    h("th", { scope: "row", class: "mono", text: k.name }),
    h("td", { "data-label": "Kind", text: k.kind }),
    h("td", { "data-label": "URL", class: "mono url", text: k.url }),
    h("td", { "data-label": "Added" }, timeEl(k.createdAt)),
    h("td", { "data-label": "Actions" }, h("span", { class: "actions" }, test, del)));
}

function sinksCard(sinks, act) {
  const table = sinks.length
    ? h("div", { class: "table-wrap" }, h("table", { class: "data alerts", id: "sinks-table" },
      h("caption", { class: "visually-hidden", text: "Alert sinks" }),
      colHeads([["Sink"], ["Kind"], ["URL"], ["Added"], ["Actions", true]]),
      h("tbody", {}, sinks.map((k) => sinkRow(k, act)))))
    : h("p", { class: "empty", id: "sinks-empty", text: "No sinks yet: alerts go nowhere. Add one below." });
  return h("section", { class: "card", "aria-labelledby": "sinks-title" }, h("h2", { id: "sinks-title", text: "Sinks" }), table);
}

// addForm adds a sink; a webhook sink's secret is shown once, in secretBox.
function addForm(reload, secretBox) {
  const errors = h("div", { id: "sink-form-errors" });
  const kind = h("select", { id: "sink-kind", name: "kind", "aria-describedby": "sink-kind-error" },
    ALERT_SINK_KINDS.map((k) => h("option", { value: k, text: KIND_NAMES[k] || k })));
  const form = h("form", { id: "sink-form", class: "card", novalidate: true, autocomplete: "off", "aria-labelledby": "sink-form-title" },
    h("h2", { id: "sink-form-title", text: "Add a sink" }),
    field("sink-name", "Name", "", h("input", { id: "sink-name", name: "name", type: "text", spellcheck: "false", placeholder: "oncall", "aria-describedby": "sink-name-error" })),
    field("sink-kind", "Kind", "", kind),
    field("sink-url", "Incoming-webhook URL", "", h("input", { id: "sink-url", name: "url", type: "text", inputmode: "url", spellcheck: "false", placeholder: "https://hooks.slack.com/services/…", "aria-describedby": "sink-url-error" })),
    errors,
    h("div", { class: "button-row" }, h("button", { type: "submit", id: "sink-add", class: "button primary", text: "Add sink" })));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { name: form.elements.name.value.trim(), kind: form.elements.kind.value, url: form.elements.url.value.trim() };
    try {
      const k = await api("POST", "/v1/alerts/sinks", body);
      showFieldErrors(form, {}, {}, errors);
      form.reset();
      secretBox.replaceChildren(k.secret ? h("div", { class: "callout callout-warn", id: "sink-secret", role: "status" },
        h("p", {}, h("strong", { text: `Signing secret of ${k.name}` }), ": shown this once. Verify deliveries with it (Standard Webhooks)."),
        h("pre", { class: "json", text: k.secret })) : "");
      toast(`Added sink ${k.name}.`);
      await reload();
    } catch (e) {
      showFieldErrors(form, e, { name: "sink-name", kind: "sink-kind", url: "sink-url" }, errors);
    }
  });
  return form;
}

// settingsForm edits the thresholds.
function settingsForm(settings) {
  const errors = h("div", { id: "settings-errors" });
  const ids = Object.fromEntries(THRESHOLDS.map((t) => [t.key, "set-" + t.key]));
  const form = h("form", { id: "settings-form", class: "card", novalidate: true, autocomplete: "off", "aria-labelledby": "settings-title" },
    h("h2", { id: "settings-title", text: "Thresholds" }),
    h("div", { class: "field-grid" }, THRESHOLDS.map((t) => field(ids[t.key], t.label, t.unit,
      h("input", { id: ids[t.key], name: t.key, type: "text", inputmode: "decimal", value: String(settings[t.key] / t.scale), "aria-describedby": ids[t.key] + "-error" })))),
    h("p", { class: "help", text: "After the cap, an endpoint's alerts of the window are counted in one summary sent when the window ends; its event log keeps every change." }),
    errors,
    h("div", { class: "button-row" }, h("button", { type: "submit", id: "settings-save", class: "button primary", text: "Save thresholds" })));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = Object.fromEntries(THRESHOLDS.map((t) => [t.key, Math.round(Number(form.elements[t.key].value) * t.scale)]));
    try {
      await api("PUT", "/v1/alerts/settings", body);
      showFieldErrors(form, {}, {}, errors);
      toast("Saved the thresholds.");
    } catch (e) {
      showFieldErrors(form, e, ids, errors);
    }
  });
  return form;
}

function deliveryRow(d) {
  const a = d.alert;
  return h("tr", { "data-delivery": d.id },
    h("td", { "data-label": "Due" }, timeEl(d.dueAt)),
    h("td", { "data-label": "Sink", class: "mono", text: d.sink }),
    h("td", { "data-label": "State" }, h("span", { class: "status status-alert-" + d.state, text: d.state }), d.attempts > 1 ? h("span", { class: "sub small", text: `${d.attempts} attempts` }) : null),
    h("td", { "data-label": "Alert" }, h("span", { class: "mono small", text: a.kind }), h("span", { class: "sub", text: a.summary + (a.count ? ` (${a.count})` : "") })),
    h("td", { "data-label": "Endpoint" }, a.endpoint ? link("/endpoints/" + encodeURIComponent(a.endpoint), a.endpoint) : h("span", { class: "muted", text: "—" })),
    h("td", { "data-label": "Last answer", class: "small answer" }, d.lastError ? d.lastError : d.lastStatus ? "HTTP " + d.lastStatus : "—"));
}

function deliveriesCard(deliveries) {
  return h("section", { class: "card", "aria-labelledby": "deliveries-title" },
    h("h2", { id: "deliveries-title", text: "Latest alerts" }),
    deliveries.length ? h("div", { class: "table-wrap" }, h("table", { class: "data alerts", id: "deliveries-table" },
      h("caption", { class: "visually-hidden", text: "Latest alert deliveries" }),
      colHeads([["Due"], ["Sink"], ["State"], ["Alert"], ["Endpoint"], ["Last answer"]]),
      h("tbody", {}, deliveries.map(deliveryRow))))
      : h("p", { class: "empty", id: "deliveries-empty", text: "No alerts yet." }));
}

export async function view(_, stale) {
  document.title = "Alerts · Ratchet";
  const head = heading("Alerts", "Circuit changes, long pauses, exhausted jobs and failure rates, pushed to a signed webhook, Slack or Teams as they happen, at most a few per endpoint and window.");
  if (state.me && state.me.key.scope !== "owner") {
    setView(head, h("p", { class: "card empty", id: "alerts-owner-only", text: "Alerts are configured with an owner key; this key is a " + state.me.key.scope + " key." }));
    ready();
    return;
  }
  const problem = h("div", { id: "alerts-error" });
  const secretBox = h("div", { id: "sink-secret-box" });
  const sinksBox = h("div", { id: "sinks" });
  const deliveriesBox = h("div", { id: "deliveries" });
  const load = async () => {
    const [{ sinks }, { deliveries }] = await Promise.all([api("GET", "/v1/alerts/sinks"), api("GET", "/v1/alerts?limit=20")]);
    if (stale()) return;
    sinksBox.replaceChildren(sinksCard(sinks, act));
    deliveriesBox.replaceChildren(deliveriesCard(deliveries));
    watchTables(sinksBox);
    watchTables(deliveriesBox);
  };
  const act = async (name, action, button) => {
    if (action === "delete" && !await confirmDialog(`Delete sink ${name}?`, "Its alerts not sent yet are dropped; its past deliveries stay listed until they are pruned.", "Delete sink")) return;
    button.disabled = true;
    try {
      await api(action === "delete" ? "DELETE" : "POST", `/v1/alerts/sinks/${encodeURIComponent(name)}${action === "test" ? "/test" : ""}`);
      toast(action === "test" ? `Test alert queued for ${name}.` : `Deleted sink ${name}.`);
      await load();
    } catch (e) {
      button.disabled = false;
      problem.replaceChildren(failBox(e));
    }
  };
  const { settings } = await api("GET", "/v1/alerts/sinks");
  if (stale()) return;
  setView(head, problem, secretBox, sinksBox, h("div", { class: "split" }, addForm(load, secretBox), settingsForm(settings)), deliveriesBox);
  await every(stale, problem, load);
  ready();
}
