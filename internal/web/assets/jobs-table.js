// The jobs list's table and pager (listParts) and its state tabs
// (stateTabs). Both draw from the view's v: st is what the list shows now
// (the page, its count and the stream's counts), f the filter, sort the
// order, stack and cursor the pages behind and this one.
import { STATES, CANCELLABLE, REPLAYABLE, RUNNABLE, link, navigate, relEl, stateBadge, toolRef } from "./console-kit.js";
import { h } from "./ui.js";
import { query } from "./dashboard-api.js";
import { num, plainTimes, when } from "./dashboard-format.js";
import { SEARCH_WINDOW } from "./limits.js";
import { byFinishOk, sortDir, sortFor, sortKey } from "./jobs-filters.js";


// scopeText says in words which jobs a filter selects.
export function scopeText(f, count, capped) {
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

// PAGE_SIZE is how many jobs a page of the list shows.
export const PAGE_SIZE = 50;

// plus marks a count a search capped ("at least").
export const plus = (capped) => (capped ? "+" : "");

// Gate names short enough for a table cell.
const GATE_WORDS_SHORT = { circuit: "circuit", max_concurrent: "concurrency", rate_limit: "rate limit", paused: "paused", key_order: "key order", key_concurrency: "key concurrency", key_rate: "key rate" };

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

function pagerEl(v, bottom) {
const { st, stack, at, cursor } = v;
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
}

// headerCell is a column's header: a sortable column's is a button that
// sorts by it (descending first, then flips), with aria-sort on the th
// of the column the list is in the order of.
function headerCell(sort, c) {
  if (!c.sort) return h("th", { class: c.cls, scope: "col", text: c.label });
  const active = sortKey(sort) === c.sort;
  const dir = active ? sortDir(sort) : null;
  const next = sortFor(c.sort, dir === "desc" ? "asc" : "desc");
  return h("th", { class: c.cls + " sortable", scope: "col", "aria-sort": dir === "asc" ? "ascending" : dir === "desc" ? "descending" : null },
    h("button", { type: "button", class: "sort-button", "data-sort-col": c.sort, "data-sort": next,
      title: `${active ? "Sorted " + c.words[dir] + "; press" : "Press"} to sort by ${c.label.toLowerCase()}, ${c.words[sortDir(next)]}` },
    h("span", { text: c.label }), h("span", { class: "sort-arrow", "aria-hidden": "true", text: dir === "asc" ? "↑" : dir === "desc" ? "↓" : "↕" })));
}

export function listParts(v) {
const { st, f, canOwner, sort } = v;
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
      h("thead", {}, h("tr", {}, h("th", { class: "select-col" }, allBox), cols.map((c) => headerCell(sort, c)))),
      h("tbody", {}, rows)))
    : h("p", { class: "empty", id: "jobs-empty", text: "No jobs match these filters." });
  return [
    h("div", { class: "card-head" }, h("h2", { id: "jobs-count", title: st.capped ? `A search counts within the newest ${num(SEARCH_WINDOW)} jobs of the other filters; older jobs may match too.` : null },
      `${st.capped ? "At least " : ""}${num(st.count)} ${st.count === 1 && !st.capped ? "job matches" : "jobs match"}`), pagerEl(v, false)),
    table,
    st.page.jobs.length > 15 ? pagerEl(v, true) : h("div", { class: "pager-slot" }),
  ];
}

// The state tabs: one per state and "all", each with its count under the
// other filters, kept current by the stream.
export function stateTabs(v) {
const { st, f } = v;
return [...STATES, "all"].map((s) => {
  const n = !st.counts ? null : s === "all" ? STATES.reduce((t, x) => t + (st.counts[x] || 0), 0) : st.counts[s] || 0;
  const active = s === "all" ? !f.state : f.state === s;
  const href = "/jobs" + query({ ...f, state: s === "all" ? "" : s });
  return h("a", { href, class: "state-tab state-tab-" + s, "data-state": s, "aria-current": active ? "page" : null },
    h("span", { class: "tab-name", text: s }), h("span", { class: "tab-count", text: n === null ? "…" : num(n) + plus(st.countsCapped && n > 0) }));
});
}
