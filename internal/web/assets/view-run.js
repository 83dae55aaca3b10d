// One run and its steps.

import { STATES, badge, factList, heading, link, ready, relEl, setTitle, setView, stateBadge, toolRef } from "./console-kit.js";
import { $, h } from "./ui.js";
import { api, query } from "./dashboard-api.js";
import { num, timeEl } from "./dashboard-format.js";

export async function view([id], stale) {
  setTitle("Run #" + id);
  const r = await api("GET", "/v1/runs/" + id);
  if (stale()) return;
  const counts = STATES.filter((s) => r.counts[s]).map((s) => h("span", { class: "count-chip" }, stateBadge(s), " ", num(r.counts[s])));
  setView(
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, link("/runs", "Runs"), " / ", h("span", { text: "#" + r.id })),
    heading(`Run #${r.id}${r.name ? " · " + r.name : ""}`, null, link("/jobs" + query({ runId: r.id }), "Steps as jobs", "button small")),
    h("section", { class: "card" }, factList([
      ["State", badge(r.state, r.state === "finished" ? "succeeded" : "running")],
      ["Started", timeEl(r.createdAt)],
      r.finishedAt ? ["Finished", timeEl(r.finishedAt)] : null,
      ["Steps", h("span", { class: "chips" }, counts.length ? counts : "none")],
    ])),
    h("section", { class: "card" }, h("h2", { text: `Steps (${num(r.steps.length)})` }),
      r.steps.length ? h("div", { class: "table-wrap" }, h("table", { class: "data", id: "steps-table" },
        h("thead", {}, h("tr", {}, ["Job", "Tool", "Endpoint", "State", "Attempt", "Due / ended", "Last error", "Created"].map((t) => h("th", { text: t })))),
        h("tbody", {}, r.steps.map((j) => h("tr", { "data-job": j.id },
          h("td", {}, link("/jobs/" + j.id, "#" + j.id, "mono")), h("td", { class: "mono", text: toolRef(j) }),
          h("td", {}, link("/endpoints/" + encodeURIComponent(j.endpoint), j.endpoint)),
          h("td", {}, stateBadge(j.state)), h("td", { text: `${j.attempt} / ${j.maxAttempts}` }),
          h("td", { class: "small due-col" }, j.state === "scheduled" ? relEl(j.dueAt) : j.finishedAt ? relEl(j.finishedAt) : j.state === "running" ? "running" : "—"),
          h("td", { class: "small step-error", title: j.lastError || null }, j.lastError ? [j.lastClassification ? h("span", { class: "mono", text: j.lastClassification + " · " }) : null, j.lastError] : "—"),
          h("td", { class: "small" }, timeEl(j.createdAt)))))))
        : h("p", { class: "empty", text: "This run has no steps yet." })));
  ready();
}
