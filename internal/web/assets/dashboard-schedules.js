// The dashboard's Schedules pages (docs/schedules.md). /schedules: the
// schedules a page at a time (GET /v1/schedules), each with its next fire
// time and its latest ticks, each tick linking to its job, and pause /
// resume. /schedules/NAME: one schedule, its tick counts over 24 h
// (the missed ones, the skipped and the failed), its tick history a page at a time (GET
// /v1/schedules/NAME/ticks), and fire now, pause and resume for an owner.
// dashboard.js routes both here; the views take (args, stale) like the
// others, refresh themselves every 5 s while current and mark the page
// ready for tests.
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

// stateBadge is a schedule's state. Paused uses the paused badge of an
// endpoint: the cancelled grey read 4.37:1 on its ground, under WCAG AA.
function stateBadge(s) {
  return h("span", { class: "status status-" + (s.paused ? "paused" : "scheduled"), text: s.paused ? "paused" : "active" });
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
function colHeads(titles) {
  return h("thead", {}, h("tr", {}, titles.map(([t, hidden]) => h("th", { scope: "col" }, hidden ? h("span", { class: "visually-hidden", text: t }) : t))));
}

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

export async function schedulesView(_, stale) {
  document.title = "Schedules · Ratchet";
  const body = h("div", { id: "schedules" });
  const problem = h("div", { id: "schedules-error" });
  $("view").replaceChildren(heading("Schedules", "Recurring jobs: one job per tick of a cron expression in its time zone, each schedule at its own offset in its spread window."), problem, body);
  const after = new URLSearchParams(location.search).get("after") || "";
  const load = async () => {
    const { schedules, nextCursor } = await api("GET", "/v1/schedules?" + new URLSearchParams(after ? { cursor: after, limit: PAGE } : { limit: PAGE }));
    if (stale()) return;
    body.replaceChildren(schedulesTable(schedules, act, listPager(after, nextCursor)));
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

// ---------- one schedule ----------

// TICK_PAGE is how many ticks a page of the history shows.
const TICK_PAGE = 50;

function countItem(label, n, cls) {
  return h("div", { class: "metric " + cls }, h("dt", { text: label }), h("dd", { text: String(n) }));
}

function tickRow(t) {
  const job = t.jobId ? h("a", { href: "/jobs/" + t.jobId, class: "mono", text: "#" + t.jobId }) : h("span", { class: "muted", text: "—" });
  const prev = t.previousJobId ? h("a", { href: "/jobs/" + t.previousJobId, class: "mono", text: "#" + t.previousJobId }) : h("span", { class: "muted", text: "—" });
  return h("tr", { class: "tick-row", "data-tick": t.tickAt },
    h("th", { scope: "row" }, timeEl(t.tickAt)),
    h("td", { "data-label": "Outcome" }, h("span", { class: "status status-tick-" + t.outcome, text: t.outcome })),
    h("td", { "data-label": "Job" }, job),
    h("td", { "data-label": "Waited on" }, prev),
    h("td", { "data-label": "Missed before", class: "num", text: String(t.missed || 0) }),
    h("td", { "data-label": "Fired" }, timeEl(t.firedAt), t.error ? h("span", { class: "sub small", text: t.error }) : null));
}

function ticksTable(ticks) {
  if (!ticks.length) return h("p", { class: "muted", id: "ticks-empty", text: "No ticks yet." });
  return h("div", { class: "table-wrap" },
    h("table", { class: "data schedules ticks-history", id: "ticks-table" },
      h("caption", { class: "visually-hidden", text: "Tick history, newest first" }),
      colHeads([["Tick"], ["Outcome"], ["Job"], ["Waited on"], ["Missed before"], ["Fired"]]),
      h("tbody", {}, ticks.map(tickRow))));
}

function scheduleSummary(s, owner, act) {
  const n = s.last24h;
  const buttons = owner ? [
    h("button", { type: "button", class: "button", id: "fire-now", "data-action": "fire", text: "Fire now" }),
    h("button", { type: "button", class: "button", id: "pause-toggle", "data-action": s.paused ? "resume" : "pause", text: s.paused ? "Resume" : "Pause" }),
  ] : [];
  for (const b of buttons) b.addEventListener("click", () => act(b.dataset.action, b));
  return h("section", { class: "card", id: "schedule-summary" },
    h("div", { class: "card-head" }, h("h2", { text: "Last 24 hours" }), stateBadge(s)),
    h("dl", { class: "metrics tick-counts" },
      countItem("Ticks", n.ticks, "ticks"), countItem("Missed", n.missed, "missed"),
      countItem("Skipped", n.skipped, "skipped"), countItem("Failed", n.failed, "failed")),
    h("p", { class: "small" }, "Next fire: ", s.nextFireAt ? timeEl(s.nextFireAt) : h("span", { class: "muted", text: s.paused ? "none while paused" : "—" }),
      ` · ${s.overlap} on overlap · catch-up ${s.catchUp}` + (s.spreadMs ? ` · fires ${msText(s.spreadOffsetMs)} after each tick` : "")),
    buttons.length ? h("div", { class: "actions" }, buttons) : h("p", { class: "muted small", text: "Only an owner key can fire, pause or resume a schedule." }));
}

export async function scheduleView([name], stale) {
  document.title = `${name} · Schedules · Ratchet`;
  const path = "/v1/schedules/" + encodeURIComponent(name);
  const summary = h("div", { id: "schedule-head" });
  const history = h("div", { id: "ticks" });
  const problem = h("div", { id: "schedule-error" });
  const pagerBox = h("div", {});
  $("view").replaceChildren(
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "/schedules", text: "Schedules" }), " / ", h("span", { text: name })),
    heading(name, "Loading…"), problem, summary,
    h("section", { class: "card", "aria-labelledby": "ticks-title" },
      h("div", { class: "card-head" }, h("h2", { id: "ticks-title", text: "Tick history" }), h("span", { class: "muted small", text: "newest first; older ticks go with the jobs' retention (at least 24 h, the latest always stays)" })),
      history, pagerBox));
  const [me, first] = await Promise.all([api("GET", "/v1/me"), api("GET", path)]);
  if (stale()) return;
  const owner = me.key.scope === "owner";
  // cursors[i] is the cursor of page i; page 0 is the newest.
  const cursors = [""];
  let page = 0;
  const lede = (s) => `${s.cron} in ${s.timeZone} · ${s.tool}`;
  const loadTicks = async () => {
    const q = { limit: TICK_PAGE };
    if (cursors[page]) q.cursor = cursors[page];
    const { ticks, nextCursor } = await api("GET", path + "/ticks?" + new URLSearchParams(q));
    if (stale()) return;
    cursors[page + 1] = nextCursor || "";
    history.replaceChildren(ticksTable(ticks));
    const newer = h("button", { type: "button", class: "button small", id: "ticks-newer", text: "Newer ticks" });
    const older = h("button", { type: "button", class: "button small", id: "ticks-older", text: "Older ticks" });
    newer.disabled = page === 0;
    older.disabled = !nextCursor;
    newer.addEventListener("click", () => { page--; loadTicks().catch(show); });
    older.addEventListener("click", () => { page++; loadTicks().catch(show); });
    pagerBox.replaceChildren(page === 0 && !nextCursor ? "" : h("div", { class: "pager pager-bottom" }, newer, older));
  };
  const show = (e) => { if (!stale()) problem.replaceChildren(fail(e)); };
  const load = async (s) => {
    s = s || await api("GET", path);
    if (stale()) return;
    document.querySelector("#view .view-head .lede").textContent = lede(s);
    summary.replaceChildren(scheduleSummary(s, owner, act));
    if (page === 0) await loadTicks();
    problem.replaceChildren();
  };
  const act = async (action, button) => {
    button.disabled = true;
    try {
      const r = await api("POST", `${path}/${action}`);
      toast(action === "fire" ? (r.jobId ? `Fired ${name}: job #${r.jobId}.` : `Fired ${name}: no job (${r.error}).`) : `${action === "pause" ? "Paused" : "Resumed"} ${name}.`);
      page = 0;
      await load();
    } catch (e) {
      button.disabled = false;
      show(e);
    }
  };
  await load(first).catch(show);
  ready();
  while (!stale()) {
    await new Promise((r) => setTimeout(r, REFRESH_MS));
    if (stale()) return;
    await load().catch(show);
  }
}
