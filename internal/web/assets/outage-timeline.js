// The endpoint page's outage timeline: the last hour of one endpoint
// minute by minute — failures by class and, as markers, the circuit's
// states and probes, pauses, the recovery ramp and learned limits (GET
// /v1/history's detail and markers, the latter the endpoint's event log)
// — and the drain: jobs held and the expected end of the drain at the
// recent completion pace.
// Re-read every few seconds while the page is open.
import { h } from "./ui.js";
import { api, query } from "./dashboard-api.js";
import { countText, num, when } from "./dashboard-format.js";
import { every, relative, serverNow } from "./console-kit.js";
import { chart, drawCharts } from "./view-history.js";
import { ensureStyle, hm } from "./dashboard-observe.js";
import { failureStack, failureSummary, markerBands, markerList, markerSlots } from "./history-detail.js";

const RANGE_MIN = 60;
// PACE_MIN is the window of the drain's pace: the jobs completed (the
// attempts that succeeded) in the last minutes, per minute. A failed
// attempt leaves its job held, so it does not count.
const PACE_MIN = 5;

// drainText says how many jobs are held and when the drain ends at the
// pace of the last PACE_MIN minutes: held ÷ completions a minute.
export function drainText(held, capped, completed, now) {
  const jobs = `${countText(held, capped)} ${held === 1 ? "job" : "jobs"} held`;
  if (held === 0) return "No job held: nothing to drain.";
  const pace = completed / PACE_MIN;
  if (pace <= 0) return `${jobs}; no job completed in the last ${PACE_MIN} min, so the drain has not started and has no expected end yet.`;
  const end = new Date(now + (held / pace) * 60_000).toISOString();
  return `${jobs}; at the last ${PACE_MIN} min's pace of ${num(Math.round(pace * 10) / 10)} completed a minute the drain ends at about ${when(end)} (${relative(end)})${capped ? ", later with more held" : ""}.`;
}

// outageCard returns the endpoint page's outage timeline card and keeps it
// current while stale() is false.
export function outageCard(ep, stale) {
  ensureStyle();
  const drain = h("p", { class: "outage-drain", id: "outage-drain", role: "status" }, "Loading…");
  const ramp = h("p", { class: "outage-ramp", id: "outage-ramp", hidden: true });
  const body = h("div", { class: "outage-chart", id: "outage-body" });
  const problem = h("div", { id: "outage-error" });
  const card = h("section", { class: "card endpoint-history", id: "outage", "data-endpoint": ep.name, "aria-labelledby": "outage-title" },
    h("div", { class: "card-head" }, h("h2", { id: "outage-title", text: "Outage timeline" }),
      h("a", { class: "small", href: "/history" + query({ minutes: 15, endpoint: ep.name }), text: "History of the last 15 min" })),
    h("p", { class: "help" }, `Up to the last ${RANGE_MIN} minutes (15 when all happened in them), minute by minute: failures by class, the circuit's states and probes, pauses and the recovery ramp; then the jobs held and when they drain at the recent pace.`),
    problem, ramp, drain, body);
  every(stale, problem, async () => {
    const enc = encodeURIComponent(ep.name);
    const [hist, held, cur] = await Promise.all([api("GET", "/v1/history" + query({ minutes: RANGE_MIN, endpoint: ep.name })), api("GET", `/v1/endpoints/${enc}/held?limit=1`),
      api("GET", `/v1/endpoints/${enc}`)]);
    const from = Date.parse(hist.from), to = Date.parse(hist.to);
    if (stale()) return;
    showRamp(ramp, cur);
    show(body, drain, hist.series[0], held, from, to, hist.minuteMs);
  });
  return card;
}

// fitFrom is the start of the timeline: the last 15 minutes when all that
// happened in the hour did so in them (an outage minutes old is not a
// sliver at the chart's edge), else the hour.
function fitFrom(s, from, to, minuteMs) {
  const short = to - 15 * minuteMs;
  const times = [...(s.detail || []), ...(s.markers || []), ...s.points.filter((p) => p.claims > 0)].map((x) => Date.parse(x.at));
  return times.every((t) => t >= short) ? short : from;
}

// rampText says where the endpoint's recovery ramp and the limit learned
// from its provider stand now ("" for neither): the API's recovery and
// learnedLimit.
export function rampText(ep) {
  const parts = [];
  const r = ep.recovery, l = ep.learnedLimit;
  if (r) {
    const cap = r.capPerSecond ? ` of ${num(r.capPerSecond)}` : "";
    parts.push(`Recovering since ${relative(r.startedAt)}: ${num(r.ratePerSecond)}${cap} claims a second allowed, ${r.phase}.`);
  }
  if (l) {
    const reset = l.resetAt ? `; none remain until ${relative(l.resetAt)}` : "";
    parts.push(`The provider said ${num(l.limit)} requests per ${num(l.windowMs / 1000)} s (${l.source} headers, ${relative(l.saidAt)})${reset}.`);
  }
  return parts.join(" ");
}

function showRamp(el, ep) {
  const text = rampText(ep);
  el.hidden = !text;
  el.textContent = text;
}

// show draws the timeline and the drain line.
function show(body, drain, s, held, from0, to, minuteMs) {
  const from = fitFrom(s, from0, to, minuteMs);
  const n = Math.max(1, Math.round((to - from) / minuteMs));
  const now = serverNow();
  const completed = s.points.filter((p) => Date.parse(p.at) >= to - PACE_MIN * minuteMs).reduce((a, p) => a + p.succeeded, 0);
  const n0 = held.held || held.due;
  drain.dataset.held = String(n0);
  drain.textContent = drainText(n0, held.heldCapped, completed, now);
  const stack = failureStack(s, from, n, minuteMs);
  const markers = markerSlots(s, from, n, minuteMs);
  const tick = (i) => hm(from + i * minuteMs);
  const fig = chart({ id: "outage-failures", title: "Failures by class", unit: "per minute", n, tick, bars: [], lines: [], stack, markers, bands: markerBands(markers, n),
    summary: failureSummary(stack) + (markers.length ? ` ${num(markers.length)} circuit, pause or recovery ${markers.length === 1 ? "change" : "changes"}, listed below.` : "") });
  body.replaceChildren(fig, markerList(s, "outage") || h("p", { class: "muted small", id: "outage-markers-none", text: `No circuit change, pause or recovery in the last ${RANGE_MIN} minutes.` }));
  drawCharts(body);
}
