// History's detail (GET /v1/history's detail and markers per endpoint):
// failures by class as stacked bars, the provider's latency p50/p95, and
// the markers of pauses and circuit changes drawn across an endpoint's
// charts and listed under them. view-history.js draws the charts; the
// endpoint page's outage timeline (view-endpoint-outage.js) uses the same.
import { h } from "./ui.js";
import { plainTimes, when } from "./dashboard-format.js";
import { FAILURE_CLASSES } from "./limits.js";

// The failure classes (classify.Classes, from limits.js) stack in their
// order; a class not worded here shows by its name.
const CLASS_WORDS = { worker: "worker's decision" };
export const classWord = (c) => CLASS_WORDS[c] || c.replaceAll("_", " ");

// The markers' words and their one-letter flags on the charts.
const MARKERS = { paused: ["paused", "P"], resumed: ["resumed", "R"], circuit_opened: ["circuit opened", "O"], circuit_closed: ["circuit closed", "C"],
  circuit_half_open: ["circuit half-open", "H"], recovery_started: ["recovery ramp started", "↗"], recovery_ended: ["recovery ramp ended", "✓"], limit_learned: ["limit learned", "L"] };
export const markerWord = (k) => (MARKERS[k] || [k.replaceAll("_", " ")])[0];
export const markerFlag = (k) => (MARKERS[k] || [k, "•"])[1];

// slotOf is the minute slot of an ISO time in a range starting at from.
const slotOf = (iso, from, minuteMs) => Math.floor((Date.parse(iso) - from) / minuteMs);

// failureStack is the series' failures by class, one stack per class
// present, dense over n minutes; minutes before the detail starts (the
// range held more attempts than the server reads) stack the roll-up's
// failures and timeouts as "not classified".
export function failureStack(s, from, n, minuteMs) {
  const by = new Map();
  const add = (cls, k, v) => {
    if (k < 0 || k >= n || !v) return;
    if (!by.has(cls)) by.set(cls, new Array(n).fill(0));
    by.get(cls)[k] += v;
  };
  for (const d of s.detail || []) for (const [c, v] of Object.entries(d.failures)) add(c, slotOf(d.at, from, minuteMs), v);
  const detailFrom = Date.parse(s.detailFrom || "") || from;
  for (const p of s.points) if (Date.parse(p.at) < detailFrom) add("unread", slotOf(p.at, from, minuteMs), p.failed + p.timedOut);
  const order = [...FAILURE_CLASSES, ...[...by.keys()].filter((c) => !FAILURE_CLASSES.includes(c) && c !== "unread").sort(), "unread"];
  return order.filter((c) => by.has(c)).map((c) => ({ values: by.get(c), cls: "cls-" + c, label: c === "unread" ? "not classified" : classWord(c) }));
}

// latencyLines are the p50 and p95 lines of the provider's latency, null
// in minutes without an answered attempt.
export function latencyLines(s, from, n, minuteMs) {
  const p50 = new Array(n).fill(null), p95 = new Array(n).fill(null);
  for (const d of s.detail || []) {
    const k = slotOf(d.at, from, minuteMs);
    if (k < 0 || k >= n || !(d.latencyP95Ms > 0 || d.latencyP50Ms > 0)) continue;
    p50[k] = d.latencyP50Ms;
    p95[k] = d.latencyP95Ms;
  }
  return [{ values: p50, cls: "line-p50", label: "p50" }, { values: p95, cls: "line-p95", label: "p95" }];
}

// markerSlots are the series' markers placed on the charts' minutes.
export function markerSlots(s, from, n, minuteMs) {
  return (s.markers || []).map((m) => ({ i: Math.min(n - 1, Math.max(0, slotOf(m.at, from, minuteMs))), kind: m.kind, label: `${markerWord(m.kind)} at ${when(m.at)}: ${plainTimes(m.detail)}` }));
}

// markerList is the markers as text under an endpoint's charts, oldest
// first; null when there are none.
export function markerList(s, id) {
  if (!(s.markers || []).length) return null;
  return h("ol", { class: "history-markers small", id: id + "-markers", "aria-label": "Pauses and circuit changes" },
    s.markers.map((m) => h("li", { "data-kind": m.kind },
      h("span", { class: "marker-flag marker-" + m.kind, "aria-hidden": "true", text: markerFlag(m.kind) }), " ",
      h("time", { datetime: m.at, text: when(m.at) }), " — ", h("strong", { text: markerWord(m.kind) }), m.detail ? ": " + plainTimes(m.detail) : "")));
}

// failureSummary says the failures by class in a sentence.
export function failureSummary(stack) {
  const parts = stack.map((st) => [st.label, st.values.reduce((a, v) => a + v, 0)]).filter(([, v]) => v > 0);
  if (!parts.length) return "No failures or timeouts in this range.";
  return "Failures by class: " + parts.map(([l, v]) => `${v} ${l}`).join(", ") + ".";
}

// The spans an endpoint's markers open and close, as a chart's bands: the
// circuit open or half-open, the endpoint paused, the recovery ramp.
const SPANS = {
  circuit_opened: ["circuit", "open"], circuit_half_open: ["circuit", "half"], circuit_closed: ["circuit", null],
  paused: ["pause", "paused"], resumed: ["pause", null], recovery_started: ["ramp", "ramp"], recovery_ended: ["ramp", null],
};
const BAND_WORDS = { open: "circuit open", half: "circuit half-open", paused: "paused", ramp: "recovery ramp" };

// markerBands turns markers (oldest first, each with its slot i) into
// bands over n slots. A span's end without its start in the range (the
// circuit closed, opened before the range) starts at the range's start;
// a span still open at its end runs to the range's end.
export function markerBands(markers, n) {
  const open = {}, out = [];
  const close = (track, i) => {
    const o = open[track];
    if (o) out.push({ from: o.i, to: Math.max(o.i, i), kind: o.state, cls: "band-" + o.state, label: BAND_WORDS[o.state], title: `${BAND_WORDS[o.state]}` });
    delete open[track];
  };
  for (const m of markers) {
    const sp = SPANS[m.kind];
    if (!sp) continue;
    const [track, state] = sp;
    if (!open[track] && !state) {
      // The end of a span that began before the range.
      const was = track === "circuit" ? (m.kind === "circuit_closed" ? "open" : null) : track === "pause" ? "paused" : "ramp";
      if (was) open[track] = { i: 0, state: was };
    }
    close(track, m.i);
    if (state) open[track] = { i: m.i, state };
  }
  for (const track of Object.keys(open)) close(track, n - 1);
  return out;
}
