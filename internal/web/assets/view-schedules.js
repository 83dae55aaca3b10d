// The dashboard's Schedules view: the schedules a page at a time
// (GET /v1/schedules), each with its next fire time and its latest ticks,
// each tick linking to its job, and pause / resume; refreshed every 5 s
// while current.
import { h, toast } from "./ui.js";
import { api } from "./dashboard-api.js";
import { timeEl, msText } from "./dashboard-format.js";
import { every, failBox, heading, ready, setView, watchTables } from "./console-kit.js";
import { colHeads, stateBadge } from "./dashboard-schedules.js";

// tickItem is one tick: its time, its outcome's badge and its job.
function tickItem(t) {
  const job = t.jobId ? h("a", { href: "/jobs/" + t.jobId, class: "mono", text: "#" + t.jobId })
    : t.previousJobId ? h("span", { class: "muted small" }, "waited on ", h("a", { href: "/jobs/" + t.previousJobId, class: "mono", text: "#" + t.previousJobId }))
      : null;
  return h("li", { class: "tick", "data-tick": t.tickAt, title: t.error || "" },
    timeEl(t.tickAt), " ", h("span", { class: "status status-tick-" + t.outcome, text: t.outcome }), " ", job,
    t.missed ? h("span", { class: "muted small", text: ` · ${t.missed} missed before` }) : null);
}


function scheduleHref(name) {
  return "/schedules/" + encodeURIComponent(name);
}

function scheduleRow(s, act) {
  const button = h("button", { type: "button", class: "button small", "data-action": s.paused ? "resume" : "pause", text: s.paused ? "Resume" : "Pause" });
  button.addEventListener("click", () => act(s.name, s.paused ? "resume" : "pause", button));
  return h("tr", { "data-schedule": s.name },
    h("th", { scope: "row", class: "mono" }, h("a", { href: scheduleHref(s.name), text: s.name })),
    h("td", { "data-label": "Cron" }, h("span", { class: "mono", text: s.cron }), h("span", { class: "sub small", text: s.timeZone })),
    h("td", { "data-label": "Tool", class: "mono", text: s.tool }),
    h("td", { "data-label": "State" }, stateBadge(s)),
    h("td", { "data-label": "Next fire" }, s.nextFireAt ? timeEl(s.nextFireAt) : h("span", { class: "muted", text: "—" }),
      s.spreadMs ? h("span", { class: "sub small", text: `tick + ${msText(s.spreadOffsetMs)} (spread ${msText(s.spreadMs)})` }) : null),
    h("td", { "data-label": "Last ticks" }, s.lastTicks.length ? h("ul", { class: "ticks" }, s.lastTicks.map(tickItem)) : h("span", { class: "muted", text: "none yet" })),
    h("td", { "data-label": "Action" }, button));
}

// colHeads are a table's column headers; an empty title is named for
// screen readers only (an empty header fails axe's empty-table-header).
function schedulesTable(list, act, pager) {
  if (!list.length && !pager) {
    return h("p", { class: "card empty", id: "schedules-empty" }, "No schedules yet. Create one with ", h("code", { text: "ratchet schedules create" }), " or POST /v1/schedules.");
  }
  return h("section", { class: "card" },
    h("div", { class: "table-wrap" },
      h("table", { class: "data schedules", id: "schedules-table" },
        h("caption", { class: "visually-hidden", text: "Schedules" }),
        colHeads([["Schedule"], ["Cron"], ["Tool"], ["State"], ["Next fire"], ["Last ticks"], ["Actions", true]]),
        h("tbody", {}, list.map((s) => scheduleRow(s, act))))),
    pager,
    h("p", { class: "muted small", text: "One job per tick across every node. Ticks link to their jobs; times are the tick's, the job is due at the fire time. A schedule's name opens its tick history." }));
}

// PAGE is how many schedules a page of the list shows.
const PAGE = 100;

// listPager links the list's pages: ?after=NAME is the page after NAME.
function listPager(after, next) {
  if (!after && !next) return null;
  return h("nav", { class: "pager pager-bottom", "aria-label": "Schedule pages" },
    after ? h("a", { href: "/schedules", id: "schedules-first", text: "First page" }) : null,
    next ? h("a", { href: "/schedules?" + new URLSearchParams({ after: next }), id: "schedules-next", text: "Next page" }) : null);
}

export async function view(_, stale) {
  document.title = "Schedules · Ratchet";
  const body = h("div", { id: "schedules" });
  const problem = h("div", { id: "schedules-error" });
  setView(heading("Schedules", "Recurring jobs: one job per tick of a cron expression in its time zone, each schedule at its own offset in its spread window."), problem, body);
  const after = new URLSearchParams(location.search).get("after") || "";
  const load = async () => {
    const { schedules, nextCursor } = await api("GET", "/v1/schedules?" + new URLSearchParams(after ? { cursor: after, limit: PAGE } : { limit: PAGE }));
    if (stale()) return;
    body.replaceChildren(schedulesTable(schedules, act, listPager(after, nextCursor)));
    watchTables(body);
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
      problem.replaceChildren(failBox(e));
    }
  };
  await every(stale, problem, load);
  ready();
}

// ---------- one schedule ----------
