// The dashboard's History view (GET /v1/history): per endpoint and minute,
// claims and outcomes, failures by class, the provider's latency and the
// due-to-claim lag, as charts with their data tables, the endpoint's
// pauses and circuit changes marked across them; refreshed every 5 s while
// current. The shortest range, 15 minutes, shows an outage minute by minute.
import { h } from "./ui.js";
import { api, query } from "./dashboard-api.js";
import { num, span } from "./dashboard-format.js";
import { every, heading, ready, setView, watchTables } from "./console-kit.js";
import { MINUTE, NS, ensureStyle, hm, hmUTC, ms, sameZone, stamp, zone } from "./dashboard-observe.js";
import { failureStack, failureSummary, latencyLines, markerBands, markerFlag, markerList, markerSlots } from "./history-detail.js";

// RANGES are the picker's ranges in minutes; the hours among them keep
// their "hours=" addresses.
const RANGES = [15, 60, 360, 1440, 2880];
const rangeText = (m) => m < 60 ? `${m} min` : `${m / 60} h`;
const rangeQuery = (m, endpoint) => query(m < 60 ? { minutes: m, endpoint } : { hours: m / 60, endpoint });

export async function view(_, stale) {
  ensureStyle();
  document.title = "History · Ratchet";
  const params = new URLSearchParams(location.search);
  // Without a range in the address the page shows the shortest range that
  // holds all the data of the last 48 h: 6 h made 20 minutes of data a
  // spike at the chart's edge.
  let fit = !params.has("hours") && !params.has("minutes");
  let minutes = params.has("minutes") ? Number(params.get("minutes")) : Number(params.get("hours") || 48) * 60;
  if (!RANGES.includes(minutes)) minutes = 360;
  const endpoint = params.get("endpoint") || "";
  const picker = h("nav", { class: "hours-picker", "aria-label": "Time range" },
    RANGES.map((m) => h("a", { href: "/history" + rangeQuery(m, endpoint), class: "button small", "data-minutes": m, text: rangeText(m) })));
  const mark = () => { for (const a of picker.children) a.setAttribute("aria-current", String(Number(a.dataset.minutes) === minutes)); };
  const body = h("div", { id: "history" });
  const problem = h("div", { id: "history-error" });
  const status = h("p", { class: "muted small", id: "history-range" });
  // The range picker sits in the heading itself, beside the title.
  const head = heading("History", "Per endpoint and minute: claims and successes, failures by class, the provider's latency and the due-to-claim lag (claim time minus due time), with pauses and circuit changes marked. A minute appears once it has closed.");
  head.append(picker);
  setView(head, problem, status, body);
  let first = true;
  await every(stale, problem, async () => {
    let res;
    try {
      res = await api("GET", "/v1/history" + query({ minutes, endpoint }));
    } finally {
      if (first) { first = false; ready(); }
    }
    if (stale()) return;
    if (fit) {
      fit = false;
      minutes = fitMinutes(res);
      res = trim(res, minutes);
    }
    mark();
    const from = Date.parse(res.from), to = Date.parse(res.to);
    status.textContent = `The last ${rangeText(minutes)}: ${stamp(new Date(from), false).slice(0, 16)} – ${stamp(new Date(to), false).slice(11, 16)} ${zone()}` +
      (sameZone() ? "" : ` (${stamp(new Date(from), true).slice(0, 16)} – ${stamp(new Date(to), true).slice(11, 16)} UTC)`) + ", one point per minute.";
    // Beside the endpoints, when there are several, the project as a whole.
    const all = res.series.length > 1 ? [endpointHistory(projectSeries(res.series), from, to, res.minuteMs)] : [];
    body.replaceChildren(...(res.series.length
      ? [...all, ...res.series.map((s) => endpointHistory(s, from, to, res.minuteMs))]
      : [h("p", { class: "card empty", text: "No endpoints yet." })]));
    drawCharts(body);
    watchTables(body);
    ready();
  });
}

// fitMinutes is the shortest range of the picker that holds every point
// of res (48 h of history).
function fitMinutes(res) {
  const to = Date.parse(res.to);
  let first = to;
  for (const s of res.series) for (const p of s.points) first = Math.min(first, Date.parse(p.at));
  return RANGES.find((m) => to - m * MINUTE <= first) || RANGES[RANGES.length - 1];
}

// trim is res cut to its last minutes.
function trim(res, minutes) {
  const from = Date.parse(res.to) - minutes * MINUTE;
  const after = (x) => Date.parse(x.at) >= from;
  return { ...res, from: new Date(from).toISOString(),
    series: res.series.map((s) => ({ ...s, points: s.points.filter(after), detail: (s.detail || []).filter(after), markers: (s.markers || []).filter(after),
      detailFrom: new Date(Math.max(from, Date.parse(s.detailFrom || res.from))).toISOString() })) };
}

// projectSeries adds the endpoints' series up minute by minute: counts
// summed, the lag's maximum the largest and its average weighted by claims.
function projectSeries(series) {
  const by = new Map();
  for (const s of series) {
    for (const p of s.points) {
      const q = by.get(p.at) || { at: p.at, claims: 0, succeeded: 0, failed: 0, timedOut: 0, lagAvgMs: 0, lagMaxMs: 0 };
      q.lagAvgMs = q.claims + p.claims ? (q.lagAvgMs * q.claims + p.lagAvgMs * p.claims) / (q.claims + p.claims) : 0;
      q.claims += p.claims; q.succeeded += p.succeeded; q.failed += p.failed; q.timedOut += p.timedOut;
      q.lagMaxMs = Math.max(q.lagMaxMs, p.claims ? p.lagMaxMs : 0);
      by.set(p.at, q);
    }
  }
  return { project: true, endpoint: "", points: [...by.values()].sort((a, b) => Date.parse(a.at) - Date.parse(b.at)) };
}

function endpointHistory(s, from, to, minuteMs) {
  const n = Math.max(1, Math.round((to - from) / minuteMs));
  const at = s.points.map((p) => Date.parse(p.at));
  const slot = (i) => Math.round((at[i] - from) / minuteMs);
  const dense = (key) => {
    const v = new Array(n).fill(0);
    s.points.forEach((p, i) => { const k = slot(i); if (k >= 0 && k < n) v[k] += p[key]; });
    return v;
  };
  // Lag exists only for minutes with claims: null elsewhere, so its line
  // breaks instead of dropping to zero.
  const sparse = (key) => {
    const v = new Array(n).fill(null);
    s.points.forEach((p, i) => { const k = slot(i); if (k >= 0 && k < n && p.claims > 0) v[k] = p[key]; });
    return v;
  };
  const total = (key) => s.points.reduce((a, p) => a + p[key], 0);
  const claims = dense("claims"), succeeded = dense("succeeded"), failed = dense("failed"), timedOut = dense("timedOut");
  const lagAvg = sparse("lagAvgMs"), lagMax = sparse("lagMaxMs");
  const peak = (v) => { let best = -1, k = -1; v.forEach((x, i) => { if (x !== null && x > best) { best = x; k = i; } }); return k < 0 ? null : { v: best, at: from + k * minuteMs }; };
  const when = (p) => p ? ` at ${hm(p.at)}` : "";
  const pc = peak(claims), pf = peak(failed.map((x, i) => x + timedOut[i])), pl = peak(lagMax);
  // The two count charts of a row share their scale (and so their ticks).
  const countMax = Math.max(0, ...claims, ...succeeded, ...failed, ...timedOut);
  const tick = (i) => hm(from + i * minuteMs);
  const id = s.project ? "project" : "ep-" + s.endpoint.replace(/[^A-Za-z0-9_-]/g, "_");
  // An endpoint's failures stack by class (its detail); the project's row
  // keeps failed and timed out.
  const stack = s.project ? null : failureStack(s, from, n, minuteMs);
  const markers = s.project ? [] : markerSlots(s, from, n, minuteMs);
  const bands = markerBands(markers, n);
  const latency = s.project ? null : latencyLines(s, from, n, minuteMs);
  const p95 = latency ? peak(latency[1].values) : null;
  const charts = [
    chart({
      id: id + "-throughput", title: "Throughput", unit: "per minute", markers, bands,
      summary: s.points.length ? `${num(total("claims"))} claims and ${num(total("succeeded"))} successes in ${num(s.points.length)} active minutes; at most ${num(pc.v)} claims a minute${when(pc)}.` : "No claims in this range.",
      n, tick, yMax: countMax, bars: [{ values: claims, cls: "bar-claims", label: "claims" }], lines: [{ values: succeeded, cls: "line-ok", label: "succeeded" }],
    }),
    stack ? chart({
      id: id + "-failures", title: "Failures by class", unit: "per minute", markers, bands,
      summary: failureSummary(stack) + (pf && pf.v ? ` At most ${num(pf.v)} a minute${when(pf)}.` : ""),
      n, tick, yMax: countMax, bars: [], stack, lines: [],
    }) : chart({
      id: id + "-failures", title: "Failures", unit: "per minute",
      summary: total("failed") + total("timedOut") ? `${num(total("failed"))} failed and ${num(total("timedOut"))} timed out; at most ${num(pf.v)} a minute${when(pf)}.` : "No failures or timeouts in this range.",
      n, tick, yMax: countMax, bars: [{ values: failed, cls: "bar-failed", label: "failed" }], lines: [{ values: timedOut, cls: "line-timeout", label: "timed out" }],
    }),
    latency ? chart({
      id: id + "-latency", title: "Provider latency", unit: "time", durations: true, markers, bands,
      summary: p95 ? `Slowest p95 ${ms(p95.v)}${when(p95)}; the p50 and p95 of the attempts the provider answered, each minute.` : "No attempt answered in this range.",
      n, tick, bars: [], lines: latency,
    }) : null,
    chart({
      id: id + "-lag", title: "Due-to-claim lag", unit: "time", durations: true,
      summary: pl ? `Largest lag ${ms(pl.v)}${when(pl)}; average over the range ${ms(weightedLag(s.points))}.` : "No claims, so no lag, in this range.",
      n, tick, bars: [], markers, bands, lines: [{ values: lagAvg, cls: "line-avg", label: "average" }, { values: lagMax, cls: "line-max", label: "maximum" }],
    }),
  ].filter(Boolean);
  return h("section", { class: "card endpoint-history" + (s.project ? " project-history" : ""), "data-endpoint": s.project ? null : s.endpoint, "aria-labelledby": id + "-h" },
    h("div", { class: "card-head" }, h("h2", { id: id + "-h", class: s.project ? "" : "mono", text: s.project ? "All endpoints" : s.endpoint }),
      h("span", { class: "muted small", text: `${num(total("claims"))} claims · ${num(total("succeeded"))} succeeded · ${num(total("failed"))} failed · ${num(total("timedOut"))} timed out` })),
    h("div", { class: "chart-row" + (charts.length > 3 ? " chart-row-4" : "") }, charts),
    markerList(s, id),
    dataTable(s, id));
}

function weightedLag(points) {
  let sum = 0, n = 0;
  for (const p of points) if (p.claims > 0) { sum += p.lagAvgMs * p.claims; n += p.claims; }
  return n ? sum / n : 0;
}

// dataTable is the charts' data for people who do not see them: the
// minutes with activity, newest first, local time beside UTC.
function dataTable(s, id) {
  const rows = s.points.slice().reverse().slice(0, 120);
  return h("details", { class: "history-data" },
    h("summary", { text: `Data table (${s.points.length} active minute${s.points.length === 1 ? "" : "s"}${s.points.length > 120 ? ", newest 120 shown" : ""})` }),
    s.points.length ? h("div", { class: "table-wrap" },
      h("table", { class: "data history-table", id: id + "-table" },
        h("caption", { class: "visually-hidden", text: `Per-minute history of ${s.project ? "all endpoints" : s.endpoint}` }),
        h("thead", {}, h("tr", {}, h("th", { scope: "col", text: `Minute (${zone()})` }), sameZone() ? null : h("th", { scope: "col", text: "UTC" }),
          ["Claims", "Succeeded", "Failed", "Timed out", "Lag avg", "Lag max"].map((t) => h("th", { scope: "col", class: "num", text: t })))),
        h("tbody", {}, rows.map((p) => {
          const t = Date.parse(p.at);
          return h("tr", {},
            h("th", { scope: "row" }, h("time", { datetime: p.at, text: stamp(new Date(t), false).slice(0, 16) })),
            sameZone() ? null : h("td", { text: stamp(new Date(t), true).slice(0, 16) }),
            [num(p.claims), num(p.succeeded), num(p.failed), num(p.timedOut), p.claims ? ms(p.lagAvgMs) : "—", p.claims ? ms(p.lagMaxMs) : "—"]
              .map((v) => h("td", { class: "num", text: v })));
        })))) : h("p", { class: "muted small", text: "No activity in this range." }));
}

// ---------- charts ----------

function svgEl(name, attrs = {}, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

// Steps of a duration axis that read as whole milliseconds, seconds,
// minutes or hours.
const DURATION_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 250, 500, 1e3, 2e3, 5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3,
  900e3, 1800e3, 3600e3, 7200e3, 10800e3, 21600e3, 43200e3, 86400e3];

function niceTop(max, durations) {
  if (!(max > 0)) return { top: durations ? 1000 : 1, step: durations ? 250 : 1 };
  const raw = max / 4;
  if (durations && raw <= DURATION_STEPS[DURATION_STEPS.length - 1]) {
    const step = DURATION_STEPS.find((st) => st >= raw);
    return { top: Math.ceil(max / step) * step, step };
  }
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = 10 * mag;
  for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) { step = m * mag; break; }
  if (!durations) step = Math.max(1, step);
  return { top: Math.ceil(max / step) * step, step };
}

// A duration axis is labelled in the unit of its step, so every label is a
// whole number: "250 ms", "30 s", "2 min" (steps of 250 s read "4 min 10 s").
const DURATION_UNITS = [[3_600_000, "h"], [60_000, "min"], [1000, "s"], [1, "ms"]];
const yLabel = (v, durations, step) => {
  if (!durations) return num(v);
  if (v === 0) return "0";
  const [size, name] = DURATION_UNITS.find(([u]) => step % u === 0 && step >= u);
  return `${num(v / size)} ${name}`;
};

// chart makes one small chart's figure: a caption, an SVG with an
// aria-label summary, and a legend. The SVG is drawn by draw once the
// figure is in the page, at the width it is shown, so its text keeps its
// CSS size on a phone as on a desktop; it is redrawn when that changes.
const specs = new WeakMap();
const resized = new ResizeObserver((entries) => {
  for (const e of entries) {
    const svg = e.target.querySelector("svg.history-chart");
    if (svg && Math.round(e.contentRect.width) !== Number(svg.dataset.w)) draw(svg);
  }
});

export function chart(spec) {
  const svg = svgEl("svg", { class: "chart history-chart", role: "img", "aria-label": `${spec.title}: ${spec.summary}` });
  specs.set(svg, spec);
  const legend = h("ul", { class: "legend", "aria-hidden": "true" },
    [...spec.bars.map((b) => [b, "swatch-bar"]), ...(spec.stack || []).map((b) => [b, "swatch-bar"]), ...spec.lines.map((l) => [l, "swatch-line"]),
      ...bandKinds(spec.bands).map((b) => [b, "swatch-band"])].map(([s, kind]) =>
      h("li", {}, h("span", { class: `swatch ${kind} ${s.cls}` }), s.label)));
  return h("figure", { class: "history-figure", id: spec.id },
    h("figcaption", {}, h("strong", { text: spec.title }), " ", h("span", { class: "muted small", text: `(${spec.unit}, ${zone()})` })),
    svg, legend, h("p", { class: "chart-summary small", text: spec.summary }));
}

// drawCharts draws every chart under root and follows their widths.
export function drawCharts(root) {
  for (const svg of root.querySelectorAll("svg.history-chart")) {
    draw(svg);
    resized.observe(svg.parentElement);
  }
}

function draw(svg) {
  const spec = specs.get(svg);
  if (!spec) return;
  svg.replaceChildren();
  const W = Math.round(Math.max(240, svg.parentElement.clientWidth || 480)), H = W < 420 ? 170 : 190;
  svg.dataset.w = String(Math.round(svg.parentElement.clientWidth || 0));
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  // One left margin for every chart, so the time ticks of a row's charts
  // stand at the same places.
  const M = { l: 56, r: 8, t: 10, b: 24 };
  let max = spec.yMax || 0;
  for (const b of spec.bars) for (const v of b.values) max = Math.max(max, v);
  if (spec.stack) for (let i = 0; i < spec.n; i++) max = Math.max(max, spec.stack.reduce((a, st) => a + st.values[i], 0));
  for (const l of spec.lines) for (const v of l.values) if (v !== null) max = Math.max(max, v);
  const { top, step } = niceTop(max, spec.durations);
  const y = (v) => M.t + (H - M.t - M.b) * (1 - v / top);
  const slotW = (W - M.l - M.r) / spec.n;
  const x = (i) => M.l + slotW * (i + 0.5);
  svg.append(svgEl("title", {}, `${spec.title} (${spec.unit})`));
  const axis = svgEl("g", { class: "axis" });
  for (let v = 0; v <= top + step / 1e6; v += step) {
    axis.append(svgEl("line", { x1: M.l, x2: W - M.r, y1: y(v), y2: y(v), class: "grid" }));
    axis.append(svgEl("text", { x: M.l - 6, y: y(v) + 4, "text-anchor": "end" }, yLabel(v, spec.durations, step)));
  }
  // A few time ticks on whole minutes that read well: about one per 80 px.
  const want = Math.max(2, Math.floor((W - M.l - M.r) / 80));
  const every = [1, 5, 10, 15, 30, 60, 120, 180, 360, 720].find((m) => spec.n / m <= want) || 720;
  for (let i = 0; i < spec.n; i++) {
    const t = spec.tick(i);
    const mins = Number(t.slice(0, 2)) * 60 + Number(t.slice(3));
    if (mins % every !== 0) continue;
    axis.append(svgEl("line", { x1: x(i), x2: x(i), y1: H - M.b, y2: H - M.b + 4, class: "grid" }));
    axis.append(svgEl("text", { x: x(i), y: H - 6, "text-anchor": "middle" }, t));
  }
  svg.append(axis);
  for (const b of spec.bars) {
    const g = svgEl("g", { class: "bars " + b.cls });
    const w = Math.max(1.5, slotW * 0.8);
    b.values.forEach((v, i) => {
      if (!v) return;
      const r = svgEl("rect", { x: x(i) - w / 2, width: w, y: y(v), height: Math.max(1, y(0) - y(v)), "data-v": v });
      r.append(svgEl("title", {}, `${spec.tick(i)}: ${num(v)} ${b.label}`));
      g.append(r);
    });
    svg.append(g);
  }
  drawBands(svg, spec, x, slotW, M, H);
  drawStack(svg, spec, x, y, slotW);
  drawMarkers(svg, spec, x, M, H);
  for (const l of spec.lines) {
    const g = svgEl("g", { class: "series " + l.cls });
    let d = "", prev = false;
    l.values.forEach((v, i) => {
      // Counts are 0 in idle minutes and drawn there only next to activity;
      // a lag of null breaks the line.
      const show = v !== null && (spec.durations || v > 0 || (l.values[i - 1] || 0) > 0 || (l.values[i + 1] || 0) > 0);
      if (!show) { prev = false; return; }
      d += (prev ? "L" : "M") + x(i).toFixed(1) + " " + y(v).toFixed(1);
      prev = true;
    });
    if (d) g.append(svgEl("path", { d }));
    l.values.forEach((v, i) => {
      if (v === null || (!spec.durations && v === 0)) return;
      const c = svgEl("circle", { cx: x(i), cy: y(v), r: 3, class: "point", "data-v": v });
      c.append(svgEl("title", {}, `${spec.tick(i)}: ${l.label} ${spec.durations ? ms(v) : num(v)}`));
      g.append(c);
    });
    svg.append(g);
  }
}

// drawStack draws a chart's stacked bars (failures by class): each
// minute's classes one on another, in the stack's order.
function drawStack(svg, spec, x, y, slotW) {
  if (!spec.stack) return;
  const w = Math.max(1.5, slotW * 0.8);
  const base = new Array(spec.n).fill(0);
  for (const st of spec.stack) {
    const g = svgEl("g", { class: "bars stack " + st.cls });
    st.values.forEach((v, i) => {
      if (!v) return;
      const r = svgEl("rect", { x: x(i) - w / 2, width: w, y: y(base[i] + v), height: Math.max(1, y(base[i]) - y(base[i] + v)), "data-v": v });
      r.append(svgEl("title", {}, `${spec.tick(i)}: ${num(v)} ${st.label}`));
      g.append(r);
      base[i] += v;
    });
    svg.append(g);
  }
}

// drawMarkers draws an endpoint's pauses and circuit changes as dashed
// lines across a chart, each flagged with its letter at the top.
function drawMarkers(svg, spec, x, M, H) {
  if (!spec.markers || !spec.markers.length) return;
  const g = svgEl("g", { class: "markers" });
  for (const m of spec.markers) {
    const mk = svgEl("g", { class: "marker marker-" + m.kind, "data-kind": m.kind });
    mk.append(svgEl("line", { x1: x(m.i), x2: x(m.i), y1: M.t, y2: H - M.b }), svgEl("text", { x: x(m.i) + 3, y: M.t + 25 }, markerFlag(m.kind)), svgEl("title", {}, m.label));
    g.append(mk);
  }
  svg.append(g);
}

// bandKinds are a chart's band kinds, once each, for its legend.
function bandKinds(bands) {
  const seen = new Map();
  for (const b of bands || []) if (!seen.has(b.cls)) seen.set(b.cls, b);
  return [...seen.values()];
}

// drawBands shades the spans of a chart's states behind its bars: the
// circuit open or half-open across the chart's height, a pause and the
// recovery ramp each as a lane along its top.
const LANES = { paused: 0, ramp: 1 };
function drawBands(svg, spec, x, slotW, M, H) {
  if (!spec.bands || !spec.bands.length) return;
  const g = svgEl("g", { class: "bands" });
  for (const b of spec.bands) {
    const lane = LANES[b.kind];
    const y = lane === undefined ? M.t : M.t + lane * 7;
    const r = svgEl("rect", { class: "band " + b.cls + (lane === undefined ? "" : " lane"), x: x(b.from) - slotW / 2, width: Math.max(2, slotW * (b.to - b.from + 1)),
      y, height: lane === undefined ? H - M.t - M.b : 6, "data-band": b.kind });
    r.append(svgEl("title", {}, b.title || b.label));
    g.append(r);
  }
  svg.append(g);
}
