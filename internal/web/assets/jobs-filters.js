// The jobs list's filters: what the address asks for (filterOf, sortOf)
// and the form that sets it (filterForm), with the state picker.
import { link, navigate, serverNow } from "./console-kit.js";
import { $, h } from "./ui.js";
import { query } from "./dashboard-api.js";
import { clockBoth } from "./dashboard-format.js";
import { JOB_SORTS, UNSUCCESSFUL_STATES, JOB_STATES as STATES } from "./limits.js";

const FILTER_KEYS = ["q", "state", "tool", "endpoint", "flowKey", "runId", "createdAfter", "createdBefore"];
const WINDOWS = [["", "Any time"], ["15m", "Last 15 minutes"], ["1h", "Last hour"], ["24h", "Last 24 hours"], ["7d", "Last 7 days"]];
const WINDOW_MS = { "15m": 900e3, "1h": 3600e3, "24h": 86400e3, "7d": 604800e3 };

export function filterOf(params) {
  const f = {};
  for (const k of FILTER_KEYS) if (params.get(k)) f[k] = params.get(k);
  return f;
}

// The jobs list's orders (JOB_SORTS, wire.JobSort) are a column's key and
// a direction: "finished_desc" is the key "finished", descending. The
// sort is not a filter (f): counts and bulk actions select the same jobs
// whatever the order, so it travels beside f, in the URL as ?sort= when it
// is not the filter's default.
export const sortKey = (s) => s.slice(0, s.lastIndexOf("_"));
export const sortDir = (s) => s.slice(s.lastIndexOf("_") + 1);
export const sortFor = (key, dir) => JOB_SORTS.find((s) => sortKey(s) === key && sortDir(s) === dir);
// byFinishOk: the finish-time orders need a state filter of failed and/or
// exhausted: only those jobs are in an index by finish time, and the API
// refuses the orders otherwise (internal/store/sqlstore/jobs_list.go).
export const byFinishOk = (f) => !!f.state && f.state.split(",").every((s) => UNSUCCESSFUL_STATES.includes(s));
// defaultSort: a list of failed jobs (the failed and exhausted tabs, an
// endpoint's "Failed jobs") reads latest failure first; others newest first.
const defaultSort = (f) => sortFor(byFinishOk(f) ? "finished" : "id", "desc");
// sortOf is the order params ask for, if the filter allows it.
export function sortOf(params, f) {
  const s = params.get("sort");
  return JOB_SORTS.includes(s) && (sortKey(s) !== "finished" || byFinishOk(f)) ? s : defaultSort(f);
}
// urlSort is s as the URL keeps it: nothing for the filter's default.
export const urlSort = (s, f) => (s === defaultSort(f) ? "" : s);

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

// filterForm is the search and the filters of the list f (sorted by sort,
// read from params), with the tools and endpoints to choose from; applying
// it navigates to the list it asks for.
export function filterForm(f, params, sort, tools, eps) {
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
  const form = h("form", { class: "card filters", id: "job-filters", novalidate: true, autocomplete: "off", role: "search" },
    h("div", { class: "filter-main" },
      h("div", { class: "field field-q" }, h("label", { for: "flt-q", text: "Search" }),
        h("input", { id: "flt-q", type: "text", enterkeyhint: "search", maxlength: "200", spellcheck: "false", placeholder: "job id, idempotency key, tool, endpoint, payload or error text", value: f.q || "", "aria-describedby": "flt-q-help" }),
        h("p", { class: "visually-hidden", id: "flt-q-help", text: "A number finds that job; other text an exact idempotency key, a tool or endpoint name, or words in the payload or the last error." })),
      h("div", { class: "button-row filter-buttons" },
        h("button", { type: "submit", id: "apply-filters", class: "button primary", text: "Apply" }),
        link("/jobs", "Reset", "button"))),
    more);
  form.addEventListener("submit", (ev) => {
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
  return form;
}
