// The dashboard's Schedule view: one schedule, its tick counts over 24 h
// (the missed ones, the skipped and the failed), its tick history a page at
// a time (GET /v1/schedules/NAME/ticks), and fire now, pause and resume for
// an owner; refreshed every 5 s while current.
import { h, toast } from "./ui.js";
import { api } from "./dashboard-api.js";
import { timeEl, msText } from "./dashboard-format.js";
import { every, failBox, heading, ready, setView, watchTables } from "./console-kit.js";
import { colHeads, stateBadge } from "./dashboard-schedules.js";

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

export async function view([name], stale) {
  document.title = `${name} · Schedules · Ratchet`;
  const path = "/v1/schedules/" + encodeURIComponent(name);
  const summary = h("div", { id: "schedule-head" });
  const history = h("div", { id: "ticks" });
  const problem = h("div", { id: "schedule-error" });
  const pagerBox = h("div", {});
  setView(
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
    watchTables(history);
    const newer = h("button", { type: "button", class: "button small", id: "ticks-newer", text: "Newer ticks" });
    const older = h("button", { type: "button", class: "button small", id: "ticks-older", text: "Older ticks" });
    newer.disabled = page === 0;
    older.disabled = !nextCursor;
    newer.addEventListener("click", () => { page--; loadTicks().catch(show); });
    older.addEventListener("click", () => { page++; loadTicks().catch(show); });
    pagerBox.replaceChildren(page === 0 && !nextCursor ? "" : h("div", { class: "pager pager-bottom" }, newer, older));
  };
  const show = (e) => { if (!stale()) problem.replaceChildren(failBox(e)); };
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
  // The first refresh draws the schedule already read; later ones read it.
  let s0 = first;
  await every(stale, problem, () => { const s = s0; s0 = null; return load(s); });
  ready();
}
