// The jobs list: filters, table and pager, selection and bulk actions.

import { CANCELLABLE, PAGE_SIZE, REPLAYABLE, STATES, alertBox, confirmDialog, errorLines, heading, keepFocus, link, live, liveLine, morphChildren, orList, ready, relEl, relative, serverNow, setTitle, setView, state, stateBadge, toast, toolRef, viewSkip, watchTables, navigate, RUNNABLE } from "./console-kit.js";
import { $, h } from "./ui.js";
import { api, query } from "./dashboard-api.js";
import { clockBoth, num, plainTimes, when } from "./dashboard-format.js";
import { CLAIMABLE_STATES, JOB_SORTS, SEARCH_WINDOW, UNSUCCESSFUL_STATES } from "./limits.js";

// ---------- jobs ----------

const FILTER_KEYS = ["q", "state", "tool", "endpoint", "flowKey", "runId", "createdAfter", "createdBefore"];
const WINDOWS = [["", "Any time"], ["15m", "Last 15 minutes"], ["1h", "Last hour"], ["24h", "Last 24 hours"], ["7d", "Last 7 days"]];
const WINDOW_MS = { "15m": 900e3, "1h": 3600e3, "24h": 86400e3, "7d": 604800e3 };

function filterOf(params) {
  const f = {};
  for (const k of FILTER_KEYS) if (params.get(k)) f[k] = params.get(k);
  return f;
}

// The jobs list's orders (JOB_SORTS, wire.JobSort) are a column's key and
// a direction: "finished_desc" is the key "finished", descending. The
// sort is not a filter (f): counts and bulk actions select the same jobs
// whatever the order, so it travels beside f, in the URL as ?sort= when it
// is not the filter's default.
const sortKey = (s) => s.slice(0, s.lastIndexOf("_"));
const sortDir = (s) => s.slice(s.lastIndexOf("_") + 1);
const sortFor = (key, dir) => JOB_SORTS.find((s) => sortKey(s) === key && sortDir(s) === dir);
// byFinishOk: the finish-time orders need a state filter of failed and/or
// exhausted: only those jobs are in an index by finish time, and the API
// refuses the orders otherwise (internal/store/sqlstore/jobs_list.go).
const byFinishOk = (f) => !!f.state && f.state.split(",").every((s) => UNSUCCESSFUL_STATES.includes(s));
// defaultSort: a list of failed jobs (the failed and exhausted tabs, an
// endpoint's "Failed jobs") reads latest failure first; others newest first.
const defaultSort = (f) => sortFor(byFinishOk(f) ? "finished" : "id", "desc");
// sortOf is the order params ask for, if the filter allows it.
function sortOf(params, f) {
  const s = params.get("sort");
  return JOB_SORTS.includes(s) && (sortKey(s) !== "finished" || byFinishOk(f)) ? s : defaultSort(f);
}
// urlSort is s as the URL keeps it: nothing for the filter's default.
const urlSort = (s, f) => (s === defaultSort(f) ? "" : s);

// scopeText says in words which jobs a filter selects.
function scopeText(f, count, capped) {
  const states = f.state ? f.state.split(",").join(" or ") + " " : "";
  const parts = [];
  if (f.tool) parts.push(`of tool ${f.tool}`);
  if (f.endpoint) parts.push(`on endpoint ${f.endpoint}`);
  if (f.flowKey) parts.push(`for key ${f.flowKey}`);
  if (f.runId) parts.push(`in run #${f.runId}`);
  if (f.createdAfter && f.createdBefore) parts.push(`created from ${when(f.createdAfter)} to ${when(f.createdBefore)}`);
  else if (f.createdAfter) parts.push(`created since ${when(f.createdAfter)}`);
  else if (f.createdBefore) parts.push(`created before ${when(f.createdBefore)}`);
  if (f.q) parts.push(`matching “${f.q}”`);
  const n = count === undefined ? "" : num(count) + " ";
  // A capped search counted (and a bulk action acts on) only the newest jobs.
  const among = capped ? ` among the newest ${num(SEARCH_WINDOW)} jobs` : "";
  return `all ${n}${states}jobs${parts.length ? " " + parts.join(" ") : ""}${among}`;
}

// Gate names short enough for a table cell.
const GATE_WORDS_SHORT = { circuit: "circuit", max_concurrent: "concurrency", rate_limit: "rate limit", paused: "paused", key_order: "key order", key_concurrency: "key concurrency", key_rate: "key rate" };

// statePick is the jobs filter's state: any number of states (the API
// takes several, comma-separated: "failed,exhausted" selects a tenant's
// failed jobs for one replay), as checkboxes in a fieldset that opens
// from a button the size of the other filters' selects, whose text says
// what is chosen.
function statePick(chosen) {
  const sum = () => { const c = Array.from(box.querySelectorAll("input:checked"), (i) => i.value); return c.length ? c.join(", ") : "Any state"; };
  const summary = h("summary", { class: "state-pick-summary", "aria-describedby": "flt-state-label" });
  const box = h("details", { class: "state-pick", id: "flt-state" }, summary,
    h("fieldset", {}, h("legend", { class: "visually-hidden", text: "Jobs in any of these states" }),
      STATES.map((s) => h("label", { class: "check" }, h("input", { type: "checkbox", name: "state", value: s, checked: chosen.includes(s) }), " " + s))));
  summary.textContent = sum();
  box.addEventListener("change", () => { summary.textContent = sum(); });
  return h("div", { class: "field" }, h("span", { class: "label", id: "flt-state-label", text: "State" }), box);
}

// jobColumns are the jobs list's columns after the checkbox: a label, a
// class and a cell for a job (null when it has nothing to say).
// A column with a sort key is sortable: its header is a button (the
// index-served orders only: by id and, on lists of failed jobs, by finish
// time); words say each direction.
function jobColumns(f, canOwner) {
  const held = (j) => j.state === "scheduled" && j.heldBy && j.heldBy.gate !== "none"
    ? h("span", { class: "held-cell", title: plainTimes(j.heldBy.detail) }, h("strong", { text: j.heldBy.gate === "due_time" ? "due time" : GATE_WORDS_SHORT[j.heldBy.gate] || j.heldBy.gate.replaceAll("_", " ") }),
      j.heldBy.until ? h("span", { class: "until" }, " ", relEl(j.heldBy.until)) : null)
    : null;
  const last = (j) => {
    const err = j.lastError || "";
    if (!j.lastClassification && !err) return null;
    return h("span", { class: "last-cell" }, j.lastClassification ? h("span", { class: "mono last-class", text: j.lastClassification }) : null,
      err ? h("span", { class: "last-error", title: err, text: err.length > 200 ? err.slice(0, 199) + "…" : err }) : null);
  };
  const acts = (j) => {
    const a = [];
    if (canOwner && RUNNABLE.includes(j.state)) a.push(h("button", { type: "button", class: "button small", "data-action": "run-now", "data-id": j.id, text: "Run now", "aria-label": `Run now: job #${j.id}` }));
    if (CANCELLABLE.includes(j.state)) a.push(h("button", { type: "button", class: "button small danger", "data-action": "cancel", "data-id": j.id, text: "Cancel", "aria-label": `Cancel job #${j.id}` }));
    if (REPLAYABLE.includes(j.state)) a.push(h("button", { type: "button", class: "button small", "data-action": "replay", "data-id": j.id, text: "Replay", "aria-label": `Replay job #${j.id}` }));
    return a.length ? h("span", { class: "actions" }, a) : null;
  };
  // "in 5 min" is when it is due, "5 min ago" when it ended: the column's
  // header says which, and the words are not repeated in every row.
  const when2 = (j) => j.state === "scheduled" ? relEl(j.dueAt) : j.finishedAt ? relEl(j.finishedAt) : j.state === "running" ? h("span", { text: "running" }) : null;
  return [
    { label: "Job", cls: "job-id", always: true, sort: "id", words: { desc: "newest first", asc: "oldest first" }, cell: (j) => [link("/jobs/" + j.id, "#" + j.id, "mono"), j.runId ? h("span", { class: "sub small" }, "run ", link("/runs/" + j.runId, "#" + j.runId)) : null,
      j.flowKey ? h("span", { class: "sub small flow-key", title: "Flow key " + j.flowKey }, "key ", j.flowKey === f.flowKey ? h("span", { class: "mono", text: j.flowKey }) : link("/jobs" + query({ flowKey: j.flowKey }), j.flowKey, "mono")) : null] },
    { label: "Tool · endpoint", cls: "tool-col", always: true, cell: (j) => h("span", {}, h("span", { class: "mono", text: toolRef(j) }), " · ", link("/endpoints/" + encodeURIComponent(j.endpoint), j.endpoint)) },
    { label: "State", cls: "state-col", always: true, cell: (j) => stateBadge(j.state) },
    { label: "Attempt", cls: "num", always: true, cell: (j) => h("span", { text: `${j.attempt} / ${j.maxAttempts}` }) },
    byFinishOk(f)
      ? { label: "Ended", cls: "small time-col", sort: "finished", words: { desc: "latest first", asc: "earliest first" }, cell: when2 }
      : { label: "Due / ended", cls: "small time-col", cell: when2 },
    { label: "Held by", cls: "small held-col", cell: held },
    { label: "Last result", cls: "small last-col", cell: last },
    { label: "Created", cls: "small time-col created-col", always: true, cell: (j) => relEl(j.createdAt) },
    { label: "Actions", cls: "row-actions", cell: acts },
  ];
}

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

  const sel = (id, label, options, value) => h("div", { class: "field" }, h("label", { for: id, text: label }),
    h("select", { id, name: id }, options.map(([v, t]) => h("option", { value: v, text: t, selected: v === value }))));
  const toolOpts = [["", "Any tool"]];
  for (const name of [...new Set(tools.tools.map((t) => t.name))]) {
    toolOpts.push([name, name + " (all versions)"]);
    for (const t of tools.tools.filter((x) => x.name === name)) toolOpts.push([t.name + "@" + t.version, t.name + "@" + t.version]);
  }
  if (f.tool && !toolOpts.some(([v]) => v === f.tool)) toolOpts.push([f.tool, f.tool]);
  const epOpts = [["", "Any endpoint"], ...eps.endpoints.map((e) => [e.name, e.name])];
  if (f.endpoint && !epOpts.some(([v]) => v === f.endpoint)) epOpts.push([f.endpoint, f.endpoint]);
  const createdOpts = [...WINDOWS];
  if (f.createdAfter || f.createdBefore) createdOpts.splice(1, 0, ["keep", f.createdAfter ? "Since " + clockBoth(f.createdAfter) : "Before " + clockBoth(f.createdBefore)]);
  // The search and its buttons on one line; the other filters below it in
  // a disclosure, open on a wide window and closed on a phone (its summary
  // says how many are set), so the list starts on the first screen.
  const narrowed = ["state", "tool", "endpoint", "flowKey", "runId", "createdAfter", "createdBefore"].filter((k) => f[k]).length;
  const more = h("details", { class: "more-filters", id: "more-filters", open: window.matchMedia("(min-width: 601px)").matches },
    h("summary", { text: narrowed ? `Filters (${narrowed} set)` : "Filters" }),
    h("div", { class: "filter-grid" },
      statePick(f.state ? f.state.split(",") : []),
      sel("flt-tool", "Tool", toolOpts, f.tool || ""),
      sel("flt-endpoint", "Endpoint", epOpts, f.endpoint || ""),
      h("div", { class: "field" }, h("label", { for: "flt-flow-key", text: "Flow key" }),
        h("input", { id: "flt-flow-key", type: "text", maxlength: "128", spellcheck: "false", autocapitalize: "none", placeholder: "exact key", title: "The jobs of this flow key (exact match)", value: f.flowKey || "" })),
      h("div", { class: "field" }, h("label", { for: "flt-run", text: "Run" }), h("input", { id: "flt-run", type: "text", inputmode: "numeric", placeholder: "run id", value: f.runId || "" })),
      sel("flt-created", "Created", createdOpts, f.createdAfter || f.createdBefore ? "keep" : "")));
  const filterForm = h("form", { class: "card filters", id: "job-filters", novalidate: true, autocomplete: "off", role: "search" },
    h("div", { class: "filter-main" },
      h("div", { class: "field field-q" }, h("label", { for: "flt-q", text: "Search" }),
        h("input", { id: "flt-q", type: "text", enterkeyhint: "search", maxlength: "200", spellcheck: "false", placeholder: "job id, idempotency key, tool, endpoint, payload or error text", value: f.q || "", "aria-describedby": "flt-q-help" }),
        h("p", { class: "visually-hidden", id: "flt-q-help", text: "A number finds that job; other text an exact idempotency key, a tool or endpoint name, or words in the payload or the last error." })),
      h("div", { class: "button-row filter-buttons" },
        h("button", { type: "submit", id: "apply-filters", class: "button primary", text: "Apply" }),
        link("/jobs", "Reset", "button"))),
    more);
  filterForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const nf2 = {};
    const st = Array.from(document.querySelectorAll("#flt-state input:checked"), (i) => i.value).join(","), tool = $("flt-tool").value, ep = $("flt-endpoint").value, run = $("flt-run").value.trim(), win = $("flt-created").value;
    const q = $("flt-q").value.trim();
    // A key never starts or ends with a space (the API refuses one that
    // does), so trimming what was typed cannot miss a key.
    const key = $("flt-flow-key").value.trim();
    if (q) nf2.q = q;
    if (st) nf2.state = st;
    if (tool) nf2.tool = tool;
    if (ep) nf2.endpoint = ep;
    if (key) nf2.flowKey = key;
    if (run) nf2.runId = run;
    if (win === "keep") {
      if (f.createdAfter) nf2.createdAfter = f.createdAfter;
      if (f.createdBefore) nf2.createdBefore = f.createdBefore;
    } else if (WINDOW_MS[win]) {
      // A window is fixed when applied, so the selection (and its count)
      // does not slide while someone reads it and confirms a bulk action.
      nf2.createdAfter = new Date(serverNow() - WINDOW_MS[win]).toISOString();
    }
    // The order chosen stays while the new filters allow it.
    const ns = sortOf(params, nf2);
    if (ns === sort) nf2.sort = urlSort(ns, nf2);
    navigate("/jobs" + query(nf2));
  });

  // st is what the list shows now; the pager's handlers read it, so they
  // stay right when the first page is refreshed in place.
  // capped: a text search counted only the newest jobs of the other
  // filters (wire.SearchWindow), so the counts are "at least".
  const st = { page, count: count.count, capped: count.capped, counts: null, countsCapped: false, loadedCount: count.count };
  const plus = (capped) => (capped ? "+" : "");
  const onFirstPage = !cursor;
  const pagerEl = (bottom) => {
    const pageNo = stack.length + 1;
    const first = (pageNo - 1) * PAGE_SIZE + 1;
    const n = st.page.jobs.length;
    return h("div", { class: "pager" + (bottom ? " pager-bottom" : "") },
      h("span", { class: "muted small", id: bottom ? null : "page-info" }, n ? `Page ${pageNo} · jobs ${num(first)}–${num(first + n - 1)} of ${num(st.count)}${plus(st.capped)}` : `Page ${pageNo}`),
      h("span", { class: "actions" },
        h("button", { type: "button", id: bottom ? null : "prev-page", class: "button small", text: "← Previous", disabled: stack.length === 0,
          onclick: () => { const s2 = stack.slice(0, -1); navigate(at({ cursor: stack[stack.length - 1] }), false, { cursors: s2 }); } }),
        h("button", { type: "button", id: bottom ? null : "next-page", class: "button small", text: "Next →", disabled: !st.page.nextCursor,
          onclick: () => navigate(at({ cursor: st.page.nextCursor }), false, { cursors: [...stack, cursor] }) })));
  };
  // headerCell is a column's header: a sortable column's is a button that
  // sorts by it (descending first, then flips), with aria-sort on the th
  // of the column the list is in the order of.
  const headerCell = (c) => {
    if (!c.sort) return h("th", { class: c.cls, scope: "col", text: c.label });
    const active = sortKey(sort) === c.sort;
    const dir = active ? sortDir(sort) : null;
    const next = sortFor(c.sort, dir === "desc" ? "asc" : "desc");
    return h("th", { class: c.cls + " sortable", scope: "col", "aria-sort": dir === "asc" ? "ascending" : dir === "desc" ? "descending" : null },
      h("button", { type: "button", class: "sort-button", "data-sort-col": c.sort, "data-sort": next,
        title: `${active ? "Sorted " + c.words[dir] + "; press" : "Press"} to sort by ${c.label.toLowerCase()}, ${c.words[sortDir(next)]}` },
      h("span", { text: c.label }), h("span", { class: "sort-arrow", "aria-hidden": "true", text: dir === "asc" ? "↑" : dir === "desc" ? "↓" : "↕" })));
  };
  const listParts = () => {
    // One line per job; a column every job of the page leaves empty (held
    // by on the failed tab, last result on a fresh queue) is left out.
    const cols = jobColumns(f, canOwner).filter((c) => c.always || st.page.jobs.some((j) => c.cell(j)));
    const rows = st.page.jobs.map((j) => h("tr", { "data-job": j.id, "data-key": "job-" + j.id, "data-state": j.state },
      h("td", { class: "select-col" }, h("input", { type: "checkbox", class: "row-select", "data-id": j.id, "aria-label": `Select job #${j.id}` })),
      cols.map((c) => {
        const v = c.cell(j);
        return h("td", { class: c.cls + (v ? "" : " empty-cell"), "data-label": c.label }, v || h("span", { class: "muted", text: "—" }));
      })));
    const allBox = h("input", { type: "checkbox", id: "select-page", "aria-label": "Select every job on this page" });
    const table = st.page.jobs.length
      ? h("div", { class: "table-wrap" }, h("table", { class: "data jobs", id: "jobs-table" },
        h("thead", {}, h("tr", {}, h("th", { class: "select-col" }, allBox), cols.map(headerCell))),
        h("tbody", {}, rows)))
      : h("p", { class: "empty", id: "jobs-empty", text: "No jobs match these filters." });
    return [
      h("div", { class: "card-head" }, h("h2", { id: "jobs-count", title: st.capped ? `A search counts within the newest ${num(SEARCH_WINDOW)} jobs of the other filters; older jobs may match too.` : null },
        `${st.capped ? "At least " : ""}${num(st.count)} ${st.count === 1 && !st.capped ? "job matches" : "jobs match"}`), pagerEl(false)),
      table,
      st.page.jobs.length > 15 ? pagerEl(true) : h("div", { class: "pager-slot" }),
    ];
  };
  // The state tabs: one per state and "all", each with its count under the
  // other filters, kept current by the stream.
  const tabsBox = h("nav", { class: "state-tabs", id: "state-tabs", "aria-label": "Jobs by state" });
  const tabs = () => [...STATES, "all"].map((s) => {
    const n = !st.counts ? null : s === "all" ? STATES.reduce((t, x) => t + (st.counts[x] || 0), 0) : st.counts[s] || 0;
    const active = s === "all" ? !f.state : f.state === s;
    const href = "/jobs" + query({ ...f, state: s === "all" ? "" : s });
    return h("a", { href, class: "state-tab state-tab-" + s, "data-state": s, "aria-current": active ? "page" : null },
      h("span", { class: "tab-name", text: s }), h("span", { class: "tab-count", text: n === null ? "…" : num(n) + plus(st.countsCapped && n > 0) }));
  });
  // Row selection: the checked jobs by id, each as it was when checked;
  // the bar acts on them with POST /v1/jobs/bulk and ids (each job is
  // checked by the server again). A checked job that live updates push off
  // the page stays selected, and the bar says so (it was dropped silently).
  const selected = new Map();
  const selBar = h("div", { id: "selection-bar", class: "selection-bar card", hidden: true, role: "region", "aria-label": "Selected jobs" });
  const onPage = (id) => st.page.jobs.find((j) => j.id === id);
  const jobOf = (id) => onPage(id) || selected.get(id);
  const syncSelection = () => {
    for (const cb of listBox.querySelectorAll(".row-select")) cb.checked = selected.has(Number(cb.dataset.id));
    const here = st.page.jobs.filter((j) => selected.has(j.id)).length;
    const away = [...selected.keys()].filter((id) => !onPage(id));
    const all = $("select-page");
    if (all) {
      all.checked = here > 0 && here === st.page.jobs.length;
      all.indeterminate = here > 0 && here < st.page.jobs.length;
    }
    selBar.hidden = selected.size === 0;
    if (!selected.size) { selBar.replaceChildren(); return; }
    // The buttons carry only their action: the bar is patched in place
    // (morphChildren keeps the old buttons), so a click reads the
    // selection as it is then.
    const btn = (action, label, states, cls) => {
      const ids = eligibleIds(states);
      return h("button", { type: "button", id: "sel-" + action, class: "button small " + (cls || ""), disabled: ids.length === 0, "data-sel-action": action,
        text: `${label} ${ids.length === selected.size ? "" : num(ids.length) + " of "}${num(selected.size)}…` });
    };
    morphChildren(selBar, [
      h("p", { id: "selection-count" }, h("strong", { text: `${num(selected.size)} selected` }),
        away.length ? ` · ${num(away.length)} no longer on this page (live updates moved ${away.length === 1 ? "it" : "them"}): ${away.slice(0, 5).map((id) => "#" + id).join(", ")}${away.length > 5 ? "…" : ""}` : " on this page"),
      h("div", { class: "button-row" },
        canOwner ? btn("run_now", "Run now", RUNNABLE) : null,
        btn("cancel", "Cancel", CANCELLABLE, "danger"),
        btn("replay", "Replay", REPLAYABLE),
        h("button", { type: "button", id: "sel-clear", class: "button small", text: "Clear selection", "data-sel-action": "clear" })),
    ].filter(Boolean));
  };
  const ACTION_STATES = { run_now: RUNNABLE, cancel: CANCELLABLE, replay: REPLAYABLE };
  const eligibleIds = (states) => [...selected.keys()].map(jobOf).filter((j) => j && states.includes(j.state)).map((j) => j.id);
  selBar.addEventListener("click", (ev) => {
    const b = ev.target.closest && ev.target.closest("button[data-sel-action]");
    if (!b || b.disabled) return;
    const action = b.dataset.selAction;
    if (action === "clear") { selected.clear(); syncSelection(); return; }
    actOnSelection(action, eligibleIds(ACTION_STATES[action]));
  });
  const verbs = { run_now: ["Run now", "Ran now", "Each becomes due now; the gates still apply and no attempt is spent."], cancel: ["Cancel", "Cancelled", "Running jobs are asked to stop; scheduled jobs will not run."], replay: ["Replay", "Replayed", "Each becomes a new scheduled job with the same payload and policy."] };
  const actOnSelection = async (action, ids) => {
    const [verb, done, what] = verbs[action];
    const skipped = selected.size - ids.length;
    const ok = await confirmDialog(`${verb} ${num(ids.length)} ${ids.length === 1 ? "job" : "jobs"}?`,
      `${verb} ${ids.map((id) => "#" + id).join(", ")}. ${what}${skipped ? ` ${num(skipped)} selected ${skipped === 1 ? "job is" : "jobs are"} left out: ${action === "replay" ? `only ${orList(REPLAYABLE)} jobs can be replayed` : action === "cancel" ? `only ${orList(CANCELLABLE)} jobs can be cancelled` : `only ${orList(RUNNABLE)} jobs can run now`}.` : ""}`,
      `${verb} ${num(ids.length)} ${ids.length === 1 ? "job" : "jobs"}`);
    if (!ok || stale()) return;
    try {
      const res = await api("POST", "/v1/jobs/bulk", { action, ids, expectedCount: ids.length });
      if (stale()) return;
      toast(`${done} ${num(res.count)} ${res.count === 1 ? "job" : "jobs"}${res.failed.length ? `; ${res.failed.length} could not be: ${res.failed.slice(0, 3).map((x) => "#" + x.id + " " + x.error).join("; ")}` : ""}.`);
      selected.clear();
      reload();
    } catch (e) {
      if (!stale()) toast(`${verb} failed: ${e.message}`);
    }
  };
  const actOnRow = async (action, id) => {
    if (action !== "run-now") {
      const verb = action === "cancel" ? "Cancel" : "Replay";
      const ok = await confirmDialog(`${verb} job #${id}?`, action === "cancel" ? "A running job is asked to stop; a scheduled one will not run." : "It becomes a new scheduled job with the same payload and policy.", `${verb} job #${id}`);
      if (!ok || stale()) return;
    }
    try {
      const r = await api("POST", `/v1/jobs/${id}/${action}`);
      if (stale()) return;
      toast(action === "run-now" ? `Job #${id} is due now.` : action === "cancel" ? `Cancelled job #${id}.` : `Replayed job #${id} as #${r.id}.`);
      await reload();
      if (!stale()) keepFocus(`#jobs-table tr[data-job="${id}"] [data-action]`, `#jobs-table tr[data-job="${id}"] a`);
    } catch (e) {
      if (!stale()) toast(e.message);
    }
  };
  const reload = () => (onFirstPage ? refresh() : state.render());
  const newBox = h("div", { id: "jobs-new", class: "jobs-new" });
  const listBox = h("section", { class: "card", id: "jobs-card" });
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
    if (b) actOnRow(b.dataset.action, Number(b.dataset.id));
  });
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

  const bulk = bulkPanel(f, count, stale);
  setView(
    heading("Jobs"),
    filterForm,
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
  // Each (re)connect's first event is compared with what the page shows.
  live({ view: "jobs", ...f, sort, limit: PAGE_SIZE }, { el: line.el, shown: line.shown, status: (s) => { if (s.state === "connecting" && connected) reconnected = true; if (!(held && s.state === "live")) line.status(s); } },
    (name, ev) => { if (name === "jobs") onJobs(ev); }, stale,
    () => { for (const t of listBox.querySelectorAll("time.rel")) t.textContent = relative(t.getAttribute("datetime")); });
}

function bulkPanel(f, count, stale) { // count: the GET /v1/jobs/count answer
  const states = f.state ? f.state.split(",") : [];
  const canReplay = states.length > 0 && states.every((s) => REPLAYABLE.includes(s));
  const canCancel = states.length > 0 && states.every((s) => CANCELLABLE.includes(s));
  const result = h("div", { id: "bulk-result" });
  // run counts the selection, asks, and acts. When the selection changed
  // between the count and the server acting (409), nothing was done: it says
  // so and asks again with the new count, as the dialog promised.
  const run = async (action, changedFrom) => {
    result.replaceChildren();
    let n, capped;
    try {
      ({ count: n, capped } = await api("GET", "/v1/jobs/count" + query(f)));
    } catch (e) {
      result.replaceChildren(alertBox(e.message, errorLines(e)));
      return;
    }
    if (stale()) return;
    const changed = changedFrom !== undefined
      ? `The selection changed before the server acted: it held ${num(changedFrom)} ${changedFrom === 1 ? "job" : "jobs"} when you confirmed and holds ${num(n)} now. Nothing was done. `
      : "";
    if (n === 0) { result.replaceChildren(h("p", { class: "callout", id: "bulk-changed", text: changed + "No jobs match this selection now; nothing to do." })); return; }
    if (n > 1000) { result.replaceChildren(alertBox(`This selection holds ${num(n)} jobs; a bulk action takes at most 1,000. Narrow the filters (a shorter time window, one tool).`)); return; }
    const verb = action === "replay" ? "Replay" : "Cancel";
    const ok = await confirmDialog(`${verb} ${num(n)} ${n === 1 ? "job" : "jobs"}?`,
      `${changed}${verb} ${scopeText(f, n, capped)}. ${action === "replay" ? "Each becomes a new scheduled job with the same payload and policy." : "Running jobs are asked to stop; scheduled jobs will not run."} If the selection changes before the server acts, nothing is done and you are asked again.`,
      `${verb} ${num(n)} ${n === 1 ? "job" : "jobs"}`);
    if (!ok || stale()) {
      if (changed && !stale()) result.replaceChildren(h("p", { class: "callout callout-warn", id: "bulk-changed", text: changed }));
      return;
    }
    try {
      const res = await api("POST", "/v1/jobs/bulk", { action, filter: f, expectedCount: n });
      if (stale()) return;
      const done = action === "replay" ? "Replayed" : "Cancelled";
      toast(`${done} ${num(res.count)} ${res.count === 1 ? "job" : "jobs"}.`);
      const ids = res.jobs.slice(0, 20).map((id) => link("/jobs/" + id, "#" + id, "mono"));
      // The list is reloaded; the next render shows this result above it.
      state.flash = h("div", { class: "callout callout-good", id: "bulk-done" },
        `${done} ${num(res.count)} ${res.count === 1 ? "job" : "jobs"}${action === "replay" ? " as new jobs " : ": "}`,
        ...ids.flatMap((a, i) => (i ? [", ", a] : [a])), res.jobs.length > 20 ? ", …" : "",
        res.failed.length ? ` · ${res.failed.length} could not be ${action === "replay" ? "replayed" : "cancelled"}.` : ".");
      state.render();
    } catch (e) {
      if (stale()) return;
      if (e.status === 409 && !e.fields.length) { run(action, n); return; }
      result.replaceChildren(alertBox("The bulk action failed: " + e.message, errorLines(e)));
    }
  };
  // Shown only when the filter selects jobs an action takes (a state filter
  // of replayable or cancellable states); the rows' own selection has the
  // bar above the list.
  return h("section", { class: "card bulk", id: "bulk-card", "aria-labelledby": "bulk-title", hidden: !canReplay && !canCancel },
    h("div", { class: "bulk-line" },
      h("h2", { id: "bulk-title", text: "Bulk action" }),
      h("p", { class: "bulk-scope-line", title: `Replay needs a state filter of ${orList(REPLAYABLE)}; cancel needs ${orList(CANCELLABLE)}. The count is taken again just before you confirm, and sent with the request so nothing else is touched.` },
        "On ", h("strong", { id: "bulk-scope", text: scopeText(f, count.count, count.capped) })),
      h("div", { class: "button-row" },
        h("button", { type: "button", id: "bulk-replay", class: "button small", text: "Replay selection…", disabled: !canReplay || count.count === 0, onclick: () => run("replay") }),
        h("button", { type: "button", id: "bulk-cancel", class: "button small danger", text: "Cancel selection…", disabled: !canCancel || count.count === 0, onclick: () => run("cancel") }))),
    result);
}
