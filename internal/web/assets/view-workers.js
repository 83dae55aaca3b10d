// The dashboard's Workers view (GET /v1/workers): every worker seen in the
// last 24 hours and the jobs it holds, refreshed every 5 s while current.
import { h } from "./ui.js";
import { api, ApiError } from "./dashboard-api.js";
import { num } from "./dashboard-format.js";
import { every, heading, ready, setView, watchTables } from "./console-kit.js";
import { ensureStyle, hm, hmUTC, sameZone, seen, serverClock, zone } from "./dashboard-observe.js";

// ---------- workers ----------

export async function view(_, stale) {
  ensureStyle();
  document.title = "Workers · Ratchet";
  const body = h("div", { id: "workers" });
  const problem = h("div", { id: "workers-error" });
  const status = h("p", { class: "muted small", id: "workers-updated", role: "status", "aria-live": "polite" });
  setView(
    heading("Workers", "Every worker id seen in the last 24 hours claiming, heartbeating or reporting, latest activity first, with the running jobs it holds now."),
    problem, status, body);
  let first = true;
  await every(stale, problem, async () => {
    let list, now;
    try {
      [list, now] = await Promise.all([api("GET", "/v1/workers"), serverClock()]);
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) {
        body.replaceChildren(h("p", { class: "card empty", id: "workers-forbidden", text: "The workers list needs an owner key; this key cannot read it." }));
        ready();
        return;
      }
      throw e;
    } finally {
      if (first) { first = false; ready(); }
    }
    if (stale()) return;
    body.replaceChildren(workersTable(list.workers, now));
    watchTables(body);
    status.textContent = `${list.workers.length} worker${list.workers.length === 1 ? "" : "s"} · as of ${hm(now)}` +
      (sameZone() ? " UTC" : ` ${zone()} (${hmUTC(now)} UTC)`) + " on the server's clock · refreshes every 5 s";
    ready();
  });
}

function workersTable(ws, now) {
  if (!ws.length) {
    return h("p", { class: "card empty", id: "workers-empty", text: "No worker has claimed, heartbeated or reported in the last 24 hours." });
  }
  const rows = ws.map((w) => {
    const more = w.holding - w.jobs.length;
    const jobs = w.jobs.length
      ? h("span", { class: "job-links" }, w.jobs.map((id) => h("a", { href: "/jobs/" + id, class: "mono", text: "#" + id })),
        more > 0 ? h("span", { class: "muted", text: `and ${num(more)} more` }) : null)
      : h("span", { class: "muted", text: "—" });
    return h("tr", { "data-worker": w.workerId },
      h("th", { scope: "row", class: "mono worker-id", text: w.workerId }),
      h("td", { "data-label": "Last claim" }, seen(w.lastClaimAt, now)),
      h("td", { "data-label": "Last heartbeat" }, w.lastHeartbeatAt || !w.lastReportAt ? seen(w.lastHeartbeatAt, now)
        // A worker whose jobs end well within their leases never needs to
        // heartbeat (HTTP delivery's do not): "never" read as a fault.
        : h("span", { class: "muted no-heartbeat", title: "Its jobs ended within their leases, so it had no lease to extend", text: "none needed" })),
      h("td", { "data-label": "Last report" }, seen(w.lastReportAt, now)),
      h("td", { class: "num holding", "data-label": "Holding", text: num(w.holding) }),
      h("td", { "data-label": "Jobs held" }, jobs));
  });
  return h("section", { class: "card" },
    h("div", { class: "table-wrap" },
      h("table", { class: "data workers", id: "workers-table" },
        h("caption", { class: "visually-hidden", text: "Workers seen in the last 24 hours" }),
        h("thead", {}, h("tr", {}, ["Worker", "Last claim", "Last heartbeat", "Last report"].map((t) => h("th", { scope: "col", text: t })),
          h("th", { scope: "col", class: "num", text: "Holding" }), h("th", { scope: "col", text: "Jobs held" }))),
        h("tbody", {}, rows))),
    h("p", { class: "muted small", text: "Times are recorded at most once a second per worker and server node. Jobs link to their timelines." }));
}

// ---------- history ----------
