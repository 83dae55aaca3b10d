// The dashboard's Workers and History pages (GET /v1/workers, GET
// /v1/history). dashboard.js routes /workers and /history here; each view
// takes (args, stale) like the others, draws into #view, refreshes itself
// while it is the current view and marks the page ready for tests.
import { $, h } from "./ui.js";
import { api, ApiError, query } from "./dashboard-api.js";
import { num, pad, utc, span, msText } from "./dashboard-format.js";

const REFRESH_MS = 5000;
const HOURS = [1, 6, 24, 48];
const MINUTE = 60_000;
const NS = "http://www.w3.org/2000/svg";

// This module's stylesheet sits beside it; the page shell links only
// dashboard.css, so it is linked on first use.
function ensureStyle() {
  if (document.getElementById("observe-css")) return;
  document.head.append(h("link", { id: "observe-css", rel: "stylesheet", href: new URL("./dashboard-observe.css", import.meta.url).href }));
}

// ---------- formatting ----------
// num, span, utc and msText are the dashboard's (dashboard-format.js). What
// stays here is this module's own layout: the local time first with the
// zone's name ("2026-03-04 15:32:13 UTC+5:30 · 2026-03-04 10:02:13 UTC"),
// chart ticks of hours and minutes, and durations rounded for charts.

// stamp prints a Date as "2026-03-04 10:02:13", in UTC when utc is true and
// on this browser's clock otherwise.
function stamp(d, utc) {
  const g = (k) => d[(utc ? "getUTC" : "get") + k]();
  return `${g("FullYear")}-${pad(g("Month") + 1)}-${pad(g("Date"))} ${pad(g("Hours"))}:${pad(g("Minutes"))}:${pad(g("Seconds"))}`;
}

// zone names this browser's offset from UTC: "UTC+2", "UTC−5:30", "UTC".
function zone(d = new Date()) {
  const off = -d.getTimezoneOffset();
  if (off === 0) return "UTC";
  const a = Math.abs(off);
  return `UTC${off > 0 ? "+" : "−"}${Math.floor(a / 60)}${a % 60 ? ":" + pad(a % 60) : ""}`;
}

const sameZone = () => new Date().getTimezoneOffset() === 0;

// seen shows a time as "12 s ago" over its local time and UTC.
function seen(iso, now) {
  if (!iso) return h("span", { class: "muted", text: "never" });
  const d = new Date(iso);
  const ago = now - d.getTime();
  const rel = Math.abs(ago) < 1000 ? "just now" : ago > 0 ? span(ago) + " ago" : "in " + span(ago);
  const abs = sameZone() ? utc(iso) : `${stamp(d, false)} ${zone(d)} · ${utc(iso)}`;
  return h("time", { datetime: iso, title: abs, class: "seen" }, h("span", { class: "rel", text: rel }), h("span", { class: "abs", text: abs }));
}

// hm is a chart tick in local time, "14:05"; hmUTC the same in UTC.
const hm = (ms) => { const d = new Date(ms); return `${pad(d.getHours())}:${pad(d.getMinutes())}`; };
const hmUTC = (ms) => { const d = new Date(ms); return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`; };

// ms prints a lag for charts: "850 ms", "1.5 s", then as span does.
function ms(n) {
  if (n < 1000) return msText(Math.round(n));
  if (n < 60_000) return (Math.round(n / 100) / 10) + " s";
  return span(n);
}

function ready() {
  document.documentElement.dataset.ready = "true";
}

function heading(title, lede, ...extra) {
  return h("section", { class: "intro view-head" },
    h("div", {}, h("h1", { text: title }), lede ? h("p", { class: "lede", text: lede }) : null), ...extra);
}

function fail(e) {
  const lines = e instanceof ApiError && e.fields.length ? e.fields.map((f) => f.message) : [];
  return h("div", { class: "alert", role: "alert" }, h("p", { class: "alert-title", text: e.message }),
    lines.length ? h("ul", {}, lines.map((l) => h("li", { text: l }))) : null);
}

// every runs fn now and then every REFRESH_MS until the view is left.
// A failed refresh shows its error in box and keeps trying.
function every(stale, box, fn) {
  const tick = async () => {
    if (stale()) return;
    try {
      await fn();
      box.replaceChildren();
    } catch (e) {
      if (stale()) return;
      box.replaceChildren(fail(e));
    }
    if (!stale()) setTimeout(tick, REFRESH_MS);
  };
  return tick();
}

// serverNow is the server's clock from GET /v1/overview (the dev clock may
// run ahead), with this browser's as the fallback.
async function serverNow() {
  try {
    const o = await api("GET", "/v1/overview");
    const t = Date.parse(o.now);
    return Number.isNaN(t) ? Date.now() : t;
  } catch {
    return Date.now();
  }
}

// ---------- workers ----------

export async function workersView(_, stale) {
  ensureStyle();
  document.title = "Workers · Ratchet";
  const body = h("div", { id: "workers" });
  const problem = h("div", { id: "workers-error" });
  const status = h("p", { class: "muted small", id: "workers-updated", role: "status", "aria-live": "polite" });
  $("view").replaceChildren(
    heading("Workers", "Every worker id seen in the last 24 hours claiming, heartbeating or reporting, latest activity first, with the running jobs it holds now."),
    problem, status, body);
  let first = true;
  await every(stale, problem, async () => {
    let list, now;
    try {
      [list, now] = await Promise.all([api("GET", "/v1/workers"), serverNow()]);
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) {
        body.replaceChildren(h("p", { class: "card empty", id: "workers-forbidden", text: "The workers list needs an owner key; this key cannot read it." }));
        ready();
        return;
      }
      throw e;
    } finally {
      if (first) { first = false; ready(); }
    }
    if (stale()) return;
    body.replaceChildren(workersTable(list.workers, now));
    status.textContent = `${list.workers.length} worker${list.workers.length === 1 ? "" : "s"} · as of ${hm(now)}` +
      (sameZone() ? " UTC" : ` ${zone()} (${hmUTC(now)} UTC)`) + " on the server's clock · refreshes every 5 s";
    ready();
  });
}

function workersTable(ws, now) {
  if (!ws.length) {
    return h("p", { class: "card empty", id: "workers-empty", text: "No worker has claimed, heartbeated or reported in the last 24 hours." });
  }
  const rows = ws.map((w) => {
    const more = w.holding - w.jobs.length;
    const jobs = w.jobs.length
      ? h("span", { class: "job-links" }, w.jobs.map((id) => h("a", { href: "/jobs/" + id, class: "mono", text: "#" + id })),
        more > 0 ? h("span", { class: "muted", text: `and ${num(more)} more` }) : null)
      : h("span", { class: "muted", text: "—" });
    return h("tr", { "data-worker": w.workerId },
      h("th", { scope: "row", class: "mono worker-id", text: w.workerId }),
      h("td", { "data-label": "Last claim" }, seen(w.lastClaimAt, now)),
      h("td", { "data-label": "Last heartbeat" }, w.lastHeartbeatAt || !w.lastReportAt ? seen(w.lastHeartbeatAt, now)
        // A worker whose jobs end well within their leases never needs to
        // heartbeat (HTTP delivery's do not): "never" read as a fault.
        : h("span", { class: "muted no-heartbeat", title: "Its jobs ended within their leases, so it had no lease to extend", text: "none needed" })),
      h("td", { "data-label": "Last report" }, seen(w.lastReportAt, now)),
      h("td", { class: "num holding", "data-label": "Holding", text: num(w.holding) }),
      h("td", { "data-label": "Jobs held" }, jobs));
  });
  return h("section", { class: "card" },
    h("div", { class: "table-wrap" },
      h("table", { class: "data workers", id: "workers-table" },
        h("caption", { class: "visually-hidden", text: "Workers seen in the last 24 hours" }),
        h("thead", {}, h("tr", {}, ["Worker", "Last claim", "Last heartbeat", "Last report"].map((t) => h("th", { scope: "col", text: t })),
          h("th", { scope: "col", class: "num", text: "Holding" }), h("th", { scope: "col", text: "Jobs held" }))),
        h("tbody", {}, rows))),
    h("p", { class: "muted small", text: "Times are recorded at most once a second per worker and server node. Jobs link to their timelines." }));
}

// ---------- history ----------

export async function historyView(_, stale) {
  ensureStyle();
  document.title = "History · Ratchet";
  const params = new URLSearchParams(location.search);
  // Without a range in the address the page shows the shortest range that
  // holds all the data of the last 48 h: 6 h made 20 minutes of data a
  // spike at the chart's edge.
  let fit = !params.has("hours");
  let hours = Number(params.get("hours") || 48);
  if (!HOURS.includes(hours)) hours = 6;
  const endpoint = params.get("endpoint") || "";
  const picker = h("nav", { class: "hours-picker", "aria-label": "Time range" },
    HOURS.map((n) => h("a", { href: "/history" + query({ hours: n, endpoint }), class: "button small", "data-hours": n, text: `${n} h` })));
  const mark = () => { for (const a of picker.children) a.setAttribute("aria-current", String(Number(a.dataset.hours) === hours)); };
  const body = h("div", { id: "history" });
  const problem = h("div", { id: "history-error" });
  const status = h("p", { class: "muted small", id: "history-range" });
  $("view").replaceChildren(
    heading("History", "Per endpoint and minute: claims and successes, failures and timeouts, and the due-to-claim lag (claim time minus due time). A minute appears once it has closed.", picker),
    problem, status, body);
  let first = true;
  await every(stale, problem, async () => {
    let res;
    try {
      res = await api("GET", "/v1/history" + query({ hours, endpoint }));
    } finally {
      if (first) { first = false; ready(); }
    }
    if (stale()) return;
    if (fit) {
      fit = false;
      hours = fitHours(res);
      res = trim(res, hours);
    }
    mark();
    const from = Date.parse(res.from), to = Date.parse(res.to);
    status.textContent = `The last ${hours} h: ${stamp(new Date(from), false).slice(0, 16)} – ${stamp(new Date(to), false).slice(11, 16)} ${zone()}` +
      (sameZone() ? "" : ` (${stamp(new Date(from), true).slice(0, 16)} – ${stamp(new Date(to), true).slice(11, 16)} UTC)`) + ", one point per minute.";
    // Beside the endpoints, when there are several, the project as a whole.
    const all = res.series.length > 1 ? [endpointHistory(projectSeries(res.series), from, to, res.minuteMs)] : [];
    body.replaceChildren(...(res.series.length
      ? [...all, ...res.series.map((s) => endpointHistory(s, from, to, res.minuteMs))]
      : [h("p", { class: "card empty", text: "No endpoints yet." })]));
    drawCharts(body);
    ready();
  });
}

// fitHours is the shortest range of the picker that holds every point of
// res (48 h of history).
function fitHours(res) {
  const to = Date.parse(res.to);
  let first = to;
  for (const s of res.series) for (const p of s.points) first = Math.min(first, Date.parse(p.at));
  return HOURS.find((n) => to - n * 3_600_000 <= first) || HOURS[HOURS.length - 1];
}

// trim is res cut to its last hours.
function trim(res, hours) {
  const from = Date.parse(res.to) - hours * 3_600_000;
  return { ...res, from: new Date(from).toISOString(),
    series: res.series.map((s) => ({ ...s, points: s.points.filter((p) => Date.parse(p.at) >= from) })) };
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
  const charts = [
    chart({
      id: id + "-throughput", title: "Throughput", unit: "per minute",
      summary: s.points.length ? `${num(total("claims"))} claims and ${num(total("succeeded"))} successes in ${num(s.points.length)} active minutes; at most ${num(pc.v)} claims a minute${when(pc)}.` : "No claims in this range.",
      n, tick, yMax: countMax, bars: [{ values: claims, cls: "bar-claims", label: "claims" }], lines: [{ values: succeeded, cls: "line-ok", label: "succeeded" }],
    }),
    chart({
      id: id + "-failures", title: "Failures", unit: "per minute",
      summary: total("failed") + total("timedOut") ? `${num(total("failed"))} failed and ${num(total("timedOut"))} timed out; at most ${num(pf.v)} a minute${when(pf)}.` : "No failures or timeouts in this range.",
      n, tick, yMax: countMax, bars: [{ values: failed, cls: "bar-failed", label: "failed" }], lines: [{ values: timedOut, cls: "line-timeout", label: "timed out" }],
    }),
    chart({
      id: id + "-lag", title: "Due-to-claim lag", unit: "time", durations: true,
      summary: pl ? `Largest lag ${ms(pl.v)}${when(pl)}; average over the range ${ms(weightedLag(s.points))}.` : "No claims, so no lag, in this range.",
      n, tick, bars: [], lines: [{ values: lagAvg, cls: "line-avg", label: "average" }, { values: lagMax, cls: "line-max", label: "maximum" }],
    }),
  ];
  return h("section", { class: "card endpoint-history" + (s.project ? " project-history" : ""), "data-endpoint": s.project ? null : s.endpoint, "aria-labelledby": id + "-h" },
    h("div", { class: "card-head" }, h("h2", { id: id + "-h", class: s.project ? "" : "mono", text: s.project ? "All endpoints" : s.endpoint }),
      h("span", { class: "muted small", text: `${num(total("claims"))} claims · ${num(total("succeeded"))} succeeded · ${num(total("failed"))} failed · ${num(total("timedOut"))} timed out` })),
    h("div", { class: "chart-row" }, charts),
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

function chart(spec) {
  const svg = svgEl("svg", { class: "chart history-chart", role: "img", "aria-label": `${spec.title}: ${spec.summary}` });
  specs.set(svg, spec);
  const legend = h("ul", { class: "legend", "aria-hidden": "true" },
    [...spec.bars.map((b) => [b, "swatch-bar"]), ...spec.lines.map((l) => [l, "swatch-line"])].map(([s, kind]) =>
      h("li", {}, h("span", { class: `swatch ${kind} ${s.cls}` }), s.label)));
  return h("figure", { class: "history-figure", id: spec.id },
    h("figcaption", {}, h("strong", { text: spec.title }), " ", h("span", { class: "muted small", text: `(${spec.unit}, ${zone()})` })),
    svg, legend, h("p", { class: "chart-summary small", text: spec.summary }));
}

// drawCharts draws every chart under root and follows their widths.
function drawCharts(root) {
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
