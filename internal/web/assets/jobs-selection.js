// The jobs list's selection and bulk actions: the checked rows and the bar
// that acts on them (selection), a row's own buttons (actOnRow) and the
// panel that acts on every job the filter selects (bulkPanel).
import { CANCELLABLE, REPLAYABLE, RUNNABLE, alertBox, confirmDialog, errorLines, keepFocus, link, morphChildren, orList, state, toast } from "./console-kit.js";
import { $, h } from "./ui.js";
import { api, query } from "./dashboard-api.js";
import { num } from "./dashboard-format.js";
import { scopeText } from "./jobs-table.js";

// selection keeps the checked rows of the view v (v.listBox, v.st) and
// draws the bar that acts on them; v.reload redraws the list after.
// Row selection: the checked jobs by id, each as it was when checked;
// the bar acts on them with POST /v1/jobs/bulk and ids (each job is
// checked by the server again). A checked job that live updates push off
// the page stays selected, and the bar says so (it was dropped silently).
export function selection(v) {
const { st, canOwner, stale } = v;
const selected = new Map();
const selBar = h("div", { id: "selection-bar", class: "selection-bar card", hidden: true, role: "region", "aria-label": "Selected jobs" });
const onPage = (id) => st.page.jobs.find((j) => j.id === id);
const jobOf = (id) => onPage(id) || selected.get(id);
const syncSelection = () => {
  for (const cb of v.listBox.querySelectorAll(".row-select")) cb.checked = selected.has(Number(cb.dataset.id));
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
    v.reload();
  } catch (e) {
    if (!stale()) toast(`${verb} failed: ${e.message}`);
  }
};
return { selBar, selected, onPage, syncSelection };
}

// actOnRow runs a row's own action (run now, cancel, replay) on job id.
export async function actOnRow(v, action, id) {
const { stale } = v;
  if (action !== "run-now") {
    const verb = action === "cancel" ? "Cancel" : "Replay";
    const ok = await confirmDialog(`${verb} job #${id}?`, action === "cancel" ? "A running job is asked to stop; a scheduled one will not run." : "It becomes a new scheduled job with the same payload and policy.", `${verb} job #${id}`);
    if (!ok || stale()) return;
  }
  try {
    const r = await api("POST", `/v1/jobs/${id}/${action}`);
    if (stale()) return;
    toast(action === "run-now" ? `Job #${id} is due now.` : action === "cancel" ? `Cancelled job #${id}.` : `Replayed job #${id} as #${r.id}.`);
    await v.reload();
    if (!stale()) keepFocus(`#jobs-table tr[data-job="${id}"] [data-action]`, `#jobs-table tr[data-job="${id}"] a`);
  } catch (e) {
    if (!stale()) toast(e.message);
  }
}

export function bulkPanel(f, count, stale) { // count: the GET /v1/jobs/count answer
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
