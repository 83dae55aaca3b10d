// The jobs list: filters (jobs-filters.js), table and pager
// (jobs-table.js), selection and bulk actions (jobs-selection.js); this
// module reads the list, keeps it live and lays the parts out.
import { STATES, heading, live, liveLine, morphChildren, navigate, ready, relative, serverNow, setTitle, setView, state, toast, viewSkip, watchTables } from "./console-kit.js";
import { $, h } from "./ui.js";
import { api, query } from "./dashboard-api.js";
import { num } from "./dashboard-format.js";
import { filterForm, filterOf, sortOf, urlSort } from "./jobs-filters.js";
import { PAGE_SIZE, listParts as listPartsOf, scopeText, stateTabs } from "./jobs-table.js";
import { actOnRow, bulkPanel, selection } from "./jobs-selection.js";

export async function view(_, stale) {
  setTitle("Jobs");
  const canOwner = state.me.key.scope === "owner";
  const params = new URLSearchParams(location.search);
  const f = filterOf(params);
  const sort = sortOf(params, f);
  // at is this list's address with more parameters (a page's cursor).
  const at = (more) => "/jobs" + query({ ...f, sort: urlSort(sort, f), ...more });
  const cursor = params.get("cursor") || "";
  const stack = (history.state && history.state.cursors) || [];
  const [page, count, tools, eps] = await Promise.all([
    api("GET", "/v1/jobs" + query({ ...f, sort, cursor, limit: PAGE_SIZE })),
    api("GET", "/v1/jobs/count" + query(f)),
    api("GET", "/v1/tools").catch(() => ({ tools: [] })),
    api("GET", "/v1/endpoints").catch(() => ({ endpoints: [] })),
  ]);
  if (stale()) return;

  const form = filterForm(f, params, sort, tools, eps);
  // st is what the list shows now; the pager's handlers read it, so they
  // stay right when the first page is refreshed in place.
  // capped: a text search counted only the newest jobs of the other
  // filters (wire.SearchWindow), so the counts are "at least".
  const st = { page, count: count.count, capped: count.capped, counts: null, countsCapped: false, loadedCount: count.count };
  const onFirstPage = !cursor;
  // v is what the list's parts (jobs-table.js, jobs-selection.js) share.
  const v = { f, sort, at, cursor, stack, st, canOwner, stale };
  const tabsBox = h("nav", { class: "state-tabs", id: "state-tabs", "aria-label": "Jobs by state" });
  const tabs = () => stateTabs(v);
  const listParts = () => listPartsOf(v);
  const { selBar, selected, onPage, syncSelection } = selection(v);
  const reload = () => (onFirstPage ? v.refresh() : state.render());
  const newBox = h("div", { id: "jobs-new", class: "jobs-new" });
  const listBox = h("section", { class: "card", id: "jobs-card" });
  v.listBox = listBox;
  v.reload = reload;
  const line = liveLine();
  const redrawList = () => { morphChildren(listBox, listParts()); watchTables(listBox); syncSelection(); };
  listBox.addEventListener("change", (ev) => {
    const t = ev.target;
    if (t.id === "select-page") {
      if (t.checked) for (const j of st.page.jobs) selected.set(j.id, j); else selected.clear();
    } else if (t.classList.contains("row-select")) {
      const id = Number(t.dataset.id);
      if (t.checked) selected.set(id, onPage(id)); else selected.delete(id);
    } else return;
    syncSelection();
  });
  listBox.addEventListener("click", (ev) => {
    // A new order starts at its first page, as a new filter does, and the
    // header keeps the focus. Bulk actions and counts take f, not the
    // order: sorting never changes which jobs they select.
    const sb = ev.target.closest && ev.target.closest("button[data-sort]");
    if (sb) {
      const ns = sb.dataset.sort;
      navigate("/jobs" + query({ ...f, sort: urlSort(ns, f) }), false, { focus: `#jobs-table thead button[data-sort-col="${sb.dataset.sortCol}"]` });
      return;
    }
    const b = ev.target.closest && ev.target.closest("button[data-action]");
    if (b) actOnRow(v, b.dataset.action, Number(b.dataset.id));
  });
  const refresh = refresher(v, line, redrawList);
  v.refresh = refresh;
  const { toggle, start } = liveUpdates(v, line, newBox, tabsBox);

  const bulk = bulkPanel(f, count, stale);
  setView(
    heading("Jobs"),
    form,
    bulk,
    tabsBox,
    h("div", { class: "live-row" }, line.el, toggle),
    newBox,
    selBar,
    listBox);
  viewSkip("jobs-count", "Skip to the jobs");
  morphChildren(tabsBox, tabs());
  redrawList();
  if (state.flash) {
    $("bulk-result").replaceChildren(state.flash);
    $("bulk-card").hidden = false;
    state.flash = null;
  }
  ready();
  start();
}

// refresher re-reads the first page of the list v and its count and
// patches the table (redrawList), the bulk panel's scope and the live line.
function refresher(v, line, redrawList) {
  const { f, sort, st, stale } = v;
  // refresh re-reads the first page and its count and patches the table.
  let refreshing = false, again = false;
  const refresh = async () => {
    if (refreshing) { again = true; return; }
    refreshing = true;
    try {
      const [p2, c2] = await Promise.all([api("GET", "/v1/jobs" + query({ ...f, sort, limit: PAGE_SIZE })), api("GET", "/v1/jobs/count" + query(f))]);
      if (stale()) return;
      st.page = p2;
      st.count = c2.count;
      st.capped = c2.capped;
      st.loadedCount = c2.count;
      redrawList();
      const scope = $("bulk-scope");
      if (scope) scope.textContent = scopeText(f, c2.count, c2.capped);
      line.shown(new Date(serverNow()).toISOString());
    } catch (e) {
      if (!stale()) toast("Could not refresh the list: " + e.message);
    } finally {
      refreshing = false;
      if (again && !stale()) { again = false; refresh(); }
    }
  };
  return refresh;
}

// liveUpdates keeps the list v live from the stream: the state tabs' counts,
// the first page refreshed in place (a later page offers the new jobs), and
// a toggle that holds the updates while someone reads. start opens the
// stream once the view is drawn.
function liveUpdates(v, line, newBox, tabsBox) {
  const { f, sort, st, at, stale } = v;
  const onFirstPage = !v.cursor;
  const refresh = () => v.refresh();
  const tabs = () => stateTabs(v);
  // countOf is how many jobs the filter selects according to the stream's
  // counts (which leave the state filter out).
  const countOf = (counts) => (f.state ? f.state.split(",") : STATES).reduce((t, x) => t + (counts[x] || 0), 0);
  // The first event of a stream says nothing changed since the stream
  // opened, but the page may be older than that: the first connection
  // compares the counts, and a reconnection refreshes whatever they say.
  let connected = false, reconnected = false;
  // Live updates can be paused while a person reads or checks rows: the
  // stream stays open, its last event waits, and Resume applies it.
  let held = false, waiting = null;
  const toggle = h("button", { type: "button", id: "live-toggle", class: "button small", "aria-pressed": "false", text: "Pause live updates" });
  toggle.addEventListener("click", () => {
    held = !held;
    toggle.setAttribute("aria-pressed", String(held));
    toggle.textContent = held ? "Resume live updates" : "Pause live updates";
    if (held) { line.status({ state: "held" }); return; }
    line.status({ state: "live" });
    newBox.replaceChildren();
    const ev = waiting;
    waiting = null;
    if (ev) onJobs({ ...ev, changed: true });
  });
  const onJobs = (ev) => {
    if (held) {
      waiting = waiting ? { ...ev, changed: waiting.changed || ev.changed } : ev;
      if (ev.changed || countOf(ev.counts) !== st.loadedCount) {
        newBox.replaceChildren(h("p", { class: "callout", id: "jobs-held", text: "Live updates are paused; the list has changed since. Resume live updates to see it." }));
      }
      return;
    }
    st.counts = ev.counts;
    st.countsCapped = ev.capped;
    morphChildren(tabsBox, tabs());
    const changed = ev.changed || reconnected || countOf(ev.counts) !== st.loadedCount;
    connected = true;
    reconnected = false;
    if (!changed) { line.shown(new Date(serverNow()).toISOString()); return; }
    if (onFirstPage) { refresh(); return; }
    const n = countOf(ev.counts) - st.loadedCount;
    newBox.replaceChildren(h("button", { type: "button", id: "show-new", class: "button small", text: n > 0 ? `${num(n)} new — show` : "The list changed — show the first page",
      onclick: () => navigate(at({})) }));
  };
  const start = () => {
  // Each (re)connect's first event is compared with what the page shows.
    live({ view: "jobs", ...f, sort, limit: PAGE_SIZE }, { el: line.el, shown: line.shown, status: (s) => { if (s.state === "connecting" && connected) reconnected = true; if (!(held && s.state === "live")) line.status(s); } },
      (name, ev) => { if (name === "jobs") onJobs(ev); }, stale,
      () => { for (const t of v.listBox.querySelectorAll("time.rel")) t.textContent = relative(t.getAttribute("datetime")); });
  };
  return { toggle, start };
}
