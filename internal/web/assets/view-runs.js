// The project's runs, newest first.

import { heading, link, ready, relEl, setTitle, setView, stateBadge, navigate } from "./console-kit.js";
import { $, h } from "./ui.js";
import { api, query } from "./dashboard-api.js";

// RUNS_PAGE is how many runs a page of the list shows.
const RUNS_PAGE = 50;

// ---------- runs ----------

export async function view(_, stale) {
  setTitle("Runs");
  // GET /v1/runs lists the project's runs, newest first (the page guessed
  // them from the newest 500 jobs, and said there were none when their
  // jobs were older).
  const first = await api("GET", "/v1/runs" + query({ limit: RUNS_PAGE }));
  if (stale()) return;
  const open = h("form", { class: "card open-run", id: "open-run", novalidate: true },
    h("div", { class: "field" }, h("label", { for: "run-id", text: "Open a run by id" }),
      h("div", { class: "inline-field" }, h("input", { id: "run-id", type: "text", inputmode: "numeric", placeholder: "42" }),
        h("button", { type: "submit", class: "button primary", text: "Open" }))));
  open.addEventListener("submit", (ev) => { ev.preventDefault(); const v = $("run-id").value.trim(); if (/^\d+$/.test(v)) navigate("/runs/" + v); });
  const item = (r) => h("li", { "data-run": r.id }, link("/runs/" + r.id, `Run #${r.id}${r.name ? " · " + r.name : ""}`), " ", stateBadge(r.state),
    h("span", { class: "muted small" }, " · started ", relEl(r.createdAt), r.finishedAt ? [" · finished ", relEl(r.finishedAt)] : null));
  const list = h("ul", { class: "run-list", id: "recent-runs" }, first.runs.map(item));
  let cursor = first.nextCursor;
  const more = h("button", { type: "button", class: "button small", id: "more-runs", text: "Older runs", hidden: !cursor });
  more.addEventListener("click", async () => {
    const page = await api("GET", "/v1/runs" + query({ limit: RUNS_PAGE, cursor }));
    if (stale()) return;
    list.append(...page.runs.map(item));
    cursor = page.nextCursor;
    more.hidden = !cursor;
  });
  setView(heading("Runs", "A run groups the steps of one piece of work. Open one to see its steps and their states."),
    h("div", { class: "split" }, open,
      h("section", { class: "card" }, h("h2", { text: "Runs, newest first" }),
        first.runs.length ? [list, more] : h("p", { class: "empty", id: "no-runs", text: "No runs yet: a producer starts one with POST /v1/runs." }))));
  ready();
}
