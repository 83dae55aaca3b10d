// The dashboard's Schedules page (GET /v1/schedules, docs/schedules.md):
// every schedule with its next fire time and its latest ticks, each tick
// linking to its job, and pause / resume. dashboard.js routes /schedules
// here; the view takes (args, stale) like the others, refreshes itself
// every 5 s while it is the current view and marks the page ready for tests.
import { $, h, toast } from "./ui.js";
import { api, ApiError } from "./dashboard-api.js";
import { timeEl, msText } from "./dashboard-format.js";

const REFRESH_MS = 5000;

function ready() {
  document.documentElement.dataset.ready = "true";
}

function heading(title, lede) {
  return h("section", { class: "intro view-head" }, h("div", {}, h("h1", { text: title }), h("p", { class: "lede", text: lede })));
}

function fail(e) {
  const lines = e instanceof ApiError && e.fields.length ? e.fields.map((f) => f.message) : [];
  return h("div", { class: "alert", role: "alert" }, h("p", { class: "alert-title", text: e.message }),
    lines.length ? h("ul", {}, lines.map((l) => h("li", { text: l }))) : null);
}

// tickItem is one tick: its time, its outcome's badge and its job.
function tickItem(t) {
  const job = t.jobId ? h("a", { href: "/jobs/" + t.jobId, class: "mono", text: "#" + t.jobId })
    : t.previousJobId ? h("span", { class: "muted small" }, "waited on ", h("a", { href: "/jobs/" + t.previousJobId, class: "mono", text: "#" + t.previousJobId }))
      : null;
  return h("li", { class: "tick", "data-tick": t.tickAt, title: t.error || "" },
    timeEl(t.tickAt), " ", h("span", { class: "status status-tick-" + t.outcome, text: t.outcome }), " ", job,
    t.missed ? h("span", { class: "muted small", text: ` · ${t.missed} missed before` }) : null);
}

function scheduleRow(s, act) {
  const button = h("button", { type: "button", class: "button small", "data-action": s.paused ? "resume" : "pause", text: s.paused ? "Resume" : "Pause" });
  button.addEventListener("click", () => act(s.name, s.paused ? "resume" : "pause", button));
  return h("tr", { "data-schedule": s.name },
    h("th", { scope: "row", class: "mono", text: s.name }),
    h("td", { "data-label": "Cron" }, h("span", { class: "mono", text: s.cron }), h("span", { class: "sub small", text: s.timeZone })),
    h("td", { "data-label": "Tool", class: "mono", text: s.tool }),
    h("td", { "data-label": "State" }, h("span", { class: "status status-" + (s.paused ? "cancelled" : "scheduled"), text: s.paused ? "paused" : "active" })),
    h("td", { "data-label": "Next fire" }, s.nextFireAt ? timeEl(s.nextFireAt) : h("span", { class: "muted", text: "—" }),
      s.spreadMs ? h("span", { class: "sub small", text: `tick + ${msText(s.spreadOffsetMs)} (spread ${msText(s.spreadMs)})` }) : null),
    h("td", { "data-label": "Last ticks" }, s.lastTicks.length ? h("ul", { class: "ticks" }, s.lastTicks.map(tickItem)) : h("span", { class: "muted", text: "none yet" })),
    h("td", { "data-label": "Action" }, button));
}

function schedulesTable(list, act) {
  if (!list.length) {
    return h("p", { class: "card empty", id: "schedules-empty" }, "No schedules yet. Create one with ", h("code", { text: "ratchet schedules create" }), " or POST /v1/schedules.");
  }
  return h("section", { class: "card" },
    h("div", { class: "table-wrap" },
      h("table", { class: "data schedules", id: "schedules-table" },
        h("caption", { class: "visually-hidden", text: "Schedules" }),
        h("thead", {}, h("tr", {}, ["Schedule", "Cron", "Tool", "State", "Next fire", "Last ticks", ""].map((t) => h("th", { scope: "col", text: t })))),
        h("tbody", {}, list.map((s) => scheduleRow(s, act))))),
    h("p", { class: "muted small", text: "One job per tick across every node. Ticks link to their jobs; times are the tick's, the job is due at the fire time." }));
}

export async function schedulesView(_, stale) {
  document.title = "Schedules · Ratchet";
  const body = h("div", { id: "schedules" });
  const problem = h("div", { id: "schedules-error" });
  $("view").replaceChildren(heading("Schedules", "Recurring jobs: one job per tick of a cron expression in its time zone, each schedule at its own offset in its spread window."), problem, body);
  const load = async () => {
    const { schedules } = await api("GET", "/v1/schedules");
    if (stale()) return;
    body.replaceChildren(schedulesTable(schedules, act));
    problem.replaceChildren();
  };
  const act = async (name, action, button) => {
    button.disabled = true;
    try {
      await api("POST", `/v1/schedules/${encodeURIComponent(name)}/${action}`);
      toast(`${action === "pause" ? "Paused" : "Resumed"} ${name}.`);
      await load();
    } catch (e) {
      button.disabled = false;
      problem.replaceChildren(fail(e));
    }
  };
  try {
    await load();
  } catch (e) {
    problem.replaceChildren(fail(e));
  }
  ready();
  while (!stale()) {
    await new Promise((r) => setTimeout(r, REFRESH_MS));
    if (stale()) return;
    await load().catch((e) => { if (!stale()) problem.replaceChildren(fail(e)); });
  }
}
