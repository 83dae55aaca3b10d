// What the dashboard's two Schedules views share (docs/schedules.md):
// view-schedules.js lists the schedules a page at a time with pause and
// resume; view-schedule.js shows one, its tick counts over 24 h, its tick
// history a page at a time, and fire now, pause and resume for an owner.
import { h } from "./ui.js";

// stateBadge is a schedule's state. Paused uses the paused badge of an
// endpoint: the cancelled grey read 4.37:1 on its ground, under WCAG AA.
export function stateBadge(s) {
  return h("span", { class: "status status-" + (s.paused ? "paused" : "scheduled"), text: s.paused ? "paused" : "active" });
}

export function colHeads(titles) {
  return h("thead", {}, h("tr", {}, titles.map(([t, hidden]) => h("th", { scope: "col" }, hidden ? h("span", { class: "visually-hidden", text: t }) : t))));
}

