// The contention simulator's line charts with spread bands, axes and
// hover, and their keys.
import { $, h } from "./ui.js";
import { MODE, count, intFmt, ms, s, state } from "./simulator-form.js";

// ---------- charts ----------

// Round tick steps: 1-2-2.5-5 for counts; for durations the same below a
// second, then steps that read as seconds and minutes.
const DURATION_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2.5e3, 5e3, 10e3, 15e3, 20e3, 30e3,
  60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 10800e3, 21600e3, 43200e3, 86400e3];

function niceStep(max, n, durations) {
  const raw = max / n;
  if (durations && raw <= DURATION_STEPS[DURATION_STEPS.length - 1]) return DURATION_STEPS.find((st) => st >= raw);
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

// Log-axis tick candidates: 1-2-5 for counts; for durations the same below
// a second, then steps that read as seconds, minutes and hours.
const LOG_COUNTS = [];
for (let d = 0; d <= 9; d++) for (const m of [1, 2, 5]) LOG_COUNTS.push(m * 10 ** d);
const LOG_DURATIONS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 10e3, 20e3, 30e3, 60e3, 120e3, 300e3, 600e3,
  1200e3, 1800e3, 3600e3, 7200e3, 18000e3, 36000e3, 86400e3, 172800e3, 432000e3, 864000e3];

const ROUND_COUNTS = new Set(LOG_COUNTS.filter((v) => String(v).replace(/0+$/, "") === "1"));
const ROUND_DURATIONS = new Set([1, 10, 100, 1e3, 10e3, 60e3, 600e3, 3600e3, 36000e3, 86400e3, 864000e3]);

// tickDuration labels a time axis: "500 ms", "2.5 s", "80 s", "5 min", "2 h".
function tickDuration(v) {
  const r = (x) => String(Math.round(x * 10) / 10);
  if (v === 0) return "0";
  if (v < 1000) return r(v) + " ms";
  if (v < 120_000) return r(v / 1000) + " s";
  if (v < 7_200_000) return r(v / 60_000) + " min";
  return r(v / 3_600_000) + " h";
}

// countAxis returns the label format of a count axis whose largest tick is
// top: one format for every tick ("0, 2k, 4k … 10k", never "8,000" beside
// "10k").
function countAxis(top) {
  const r = (x) => String(Math.round(x * 10) / 10);
  if (top >= 1e6) return (v) => (v === 0 ? "0" : r(v / 1e6) + "M");
  if (top >= 1e4) return (v) => (v === 0 ? "0" : r(v / 1e3) + "k");
  return (v) => intFmt.format(v);
}

// durationAxis does the same for time: the unit of the largest tick for
// every tick ("0, 30 s, 60 s, 90 s, 120 s", never "90 s" beside "2 min").
function durationAxis(top) {
  const r = (x) => String(Math.round(x * 100) / 100);
  if (top <= 2000) return (v) => (v === 0 ? "0" : r(v) + " ms");
  if (top <= 180_000) return (v) => (v === 0 ? "0" : r(v / 1000) + " s");
  if (top <= 10_800_000) return (v) => (v === 0 ? "0" : r(v / 60_000) + " min");
  return (v) => (v === 0 ? "0" : r(v / 3_600_000) + " h");
}

// logCountAxis labels a log count axis: thousands and millions with k
// and M from 1,000 up, the same way on every tick.
function logCountAxis(v) {
  if (v >= 1e6) return String(Math.round(v / 1e5) / 10) + "M";
  if (v >= 1e3) return String(Math.round(v / 100) / 10) + "k";
  return intFmt.format(v);
}

// lineChart draws one measure against the number of clients: per series a
// band from lo to hi and a line through the means, with a hover read-out of
// every series at the nearest point.
function lineChart(svg, spec) {
  svg.replaceChildren();
  const width = svg.clientWidth || svg.parentElement.clientWidth || 720;
  const W = Math.round(Math.min(1100, Math.max(300, width)));
  const H = W < 520 ? 250 : 320;
  const M = { l: W < 520 ? 50 : 62, r: 18, t: 14, b: 44 };
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.append(s("title", {}, spec.title), s("desc", {}, spec.desc));
  const xs = spec.xs;
  const x0 = xs[0], x1 = xs.length > 1 ? xs[xs.length - 1] : xs[0] + 1;
  const px = (v) => M.l + ((W - M.l - M.r) * (v - x0)) / (x1 - x0 || 1);
  let yMax = 0, yMin = Infinity;
  for (const ser of spec.series) {
    for (let i = 0; i < xs.length; i++) {
      yMax = Math.max(yMax, ser.hi[i], ser.mean[i]);
      for (const v of [ser.lo[i], ser.mean[i]]) if (v > 0) yMin = Math.min(yMin, v);
    }
  }
  if (!(yMax > 0)) yMax = 1;
  if (!(yMin < Infinity)) yMin = 1;
  const ticks = [];
  let py;
  const plotH = H - M.t - M.b;
  if (spec.log) {
    // Round values around the data, thinned to about seven ticks evenly
    // spread on the log axis.
    const cands = spec.durations ? LOG_DURATIONS : LOG_COUNTS;
    const lo = cands.filter((v) => v <= yMin).pop() ?? cands[0];
    const hi = cands.find((v) => v >= yMax) ?? cands[cands.length - 1];
    const span = Math.log10(hi) - Math.log10(lo) || 1;
    py = (v) => M.t + plotH * (1 - (Math.log10(Math.min(Math.max(v, lo), hi)) - Math.log10(lo)) / span);
    const inside = cands.filter((v) => v >= lo && v <= hi);
    const primary = inside.filter((v) => (spec.durations ? ROUND_DURATIONS : ROUND_COUNTS).has(v));
    // Over two decades or more, the round values alone read best (1 s,
    // 10 s, 1 min); the ends of the axis are labelled too when not crowded.
    let picked = primary.length >= 3 ? primary.slice() : inside;
    for (const end of [lo, hi]) {
      if (!picked.includes(end) && picked.every((v) => Math.abs(Math.log10(v) - Math.log10(end)) >= span / 9)) picked.push(end);
    }
    picked.sort((a, b) => a - b);
    let prev = -Infinity;
    for (const v of picked) {
      if (Math.log10(v) - prev >= span / 9) {
        ticks.push(v);
        prev = Math.log10(v);
      }
    }
  } else {
    const step = niceStep(yMax * 1.04, H < 280 ? 4 : 5, spec.durations);
    const top = Math.max(step, Math.ceil((yMax * 1.04) / step) * step);
    py = (v) => M.t + plotH * (1 - v / top);
    for (let v = 0; v <= top + step / 1e6; v += step) ticks.push(v);
  }
  // A log axis spans decades, so its labels carry their own unit; a linear
  // one uses the unit of its largest tick throughout.
  const top = ticks[ticks.length - 1];
  const fmt = spec.log ? (spec.durations ? tickDuration : logCountAxis) : spec.durations ? durationAxis(top) : countAxis(top);
  const axis = s("g", { class: "axis" });
  for (const v of ticks) {
    axis.append(s("line", { x1: M.l, x2: W - M.r, y1: py(v), y2: py(v), class: "grid" }));
    axis.append(s("text", { x: M.l - 8, y: py(v) + 4, "text-anchor": "end" }, fmt(v)));
  }
  const every = Math.ceil(xs.length / (W < 520 ? 6 : 12));
  xs.forEach((v, i) => {
    if (i % every === 0 || i === xs.length - 1 && (xs.length - 1) % every >= every / 2) {
      axis.append(s("text", { x: px(v), y: H - M.b + 18, "text-anchor": "middle" }, intFmt.format(v)));
    }
  });
  axis.append(s("text", { x: M.l + (W - M.l - M.r) / 2, y: H - 6, "text-anchor": "middle", class: "axis-title" }, "clients"));
  svg.append(axis);

  const line = (vals) => vals.map((v, i) => (i ? "L" : "M") + px(xs[i]).toFixed(2) + " " + py(v).toFixed(2)).join(" ");
  for (const ser of spec.series) {
    // Along the 95th percentiles, back along the 5th.
    const back = ser.lo.map((v, i) => "L" + px(xs[i]).toFixed(2) + " " + py(v).toFixed(2)).reverse().join(" ");
    const band = s("path", { class: "sim-band", d: line(ser.hi) + " " + back + " Z", "data-mode": ser.mode });
    band.style.fill = ser.color;
    band.style.fillOpacity = "0.13";
    band.style.stroke = "none";
    svg.append(band);
  }
  // Solid lines first, patterned ones over them: where two lines meet, the
  // gaps of the dashes show the line beneath.
  const order = [...spec.series].sort((a, b) => (a.dash ? 1 : 0) - (b.dash ? 1 : 0));
  for (const ser of order) {
    const g = s("g", { class: "series sim-series", "data-mode": ser.mode });
    const p = s("path", { d: line(ser.mean) });
    p.style.stroke = ser.color;
    p.style.strokeWidth = ser.dash ? "2.5" : "3";
    if (ser.dash) p.style.strokeDasharray = ser.dash;
    p.style.strokeLinecap = "round";
    g.append(p);
    ser.mean.forEach((v, i) => {
      const c = s("circle", { cx: px(xs[i]), cy: py(v), r: xs.length > 40 ? 2 : 3.2, "data-clients": xs[i], "data-value": v });
      c.style.fill = "var(--surface)";
      c.style.stroke = ser.color;
      c.style.strokeWidth = "2";
      c.append(s("title", {}, `${ser.label}, ${intFmt.format(xs[i])} clients: ${spec.format(v)} (5–95%: ${spec.format(ser.lo[i])} – ${spec.format(ser.hi[i])})`));
      g.append(c);
    });
    svg.append(g);
  }
  hover(svg, spec, { W, H, M, px, py });
}

// hover shows a guide at the nearest number of clients and a box with every
// series' value there, ordered from highest to lowest.
function hover(svg, spec, { W, H, M, px, py }) {
  const guide = s("line", { y1: M.t, y2: H - M.b, class: "grid" });
  guide.style.stroke = "var(--ink-3)";
  guide.style.strokeDasharray = "3 3";
  const tip = s("g", { class: "sim-tip" });
  const overlay = s("rect", { x: M.l, y: M.t, width: W - M.l - M.r, height: H - M.t - M.b, fill: "transparent" });
  const layer = s("g", { "aria-hidden": "true" });
  layer.style.pointerEvents = "none";
  layer.append(guide, tip);
  layer.style.display = "none";
  svg.append(overlay, layer);
  const show = (ev) => {
    const box = svg.getBoundingClientRect();
    const mx = ((ev.clientX - box.left) / box.width) * W;
    let best = 0;
    spec.xs.forEach((v, i) => { if (Math.abs(px(v) - mx) < Math.abs(px(spec.xs[best]) - mx)) best = i; });
    const gx = px(spec.xs[best]);
    guide.setAttribute("x1", gx);
    guide.setAttribute("x2", gx);
    tip.replaceChildren();
    const rows = spec.series.map((ser) => ({ ser, v: ser.mean[best] })).sort((a, b) => b.v - a.v);
    const bg = s("rect", { rx: 8 });
    bg.style.fill = "var(--surface)";
    bg.style.stroke = "var(--line)";
    tip.append(bg);
    const head = s("text", { x: 12, y: 20, class: "axis-title" }, `${intFmt.format(spec.xs[best])} clients`);
    tip.append(head);
    rows.forEach(({ ser, v }, k) => {
      const y = 40 + k * 18;
      const dot = s("circle", { cx: 16, cy: y - 4, r: 4 });
      dot.style.fill = ser.color;
      tip.append(dot, s("text", { x: 26, y }, ser.label), s("text", { x: 0, y, "text-anchor": "end", class: "sim-tip-value" }, spec.format(v)));
    });
    let wLabel = 0, wValue = 0;
    for (const t of tip.querySelectorAll("text")) {
      const len = t.getComputedTextLength();
      if (t.classList.contains("sim-tip-value")) wValue = Math.max(wValue, len);
      else if (t !== head) wLabel = Math.max(wLabel, len);
    }
    const bw = Math.max(26 + wLabel + 18 + wValue + 12, head.getComputedTextLength() + 24);
    for (const t of tip.querySelectorAll(".sim-tip-value")) t.setAttribute("x", bw - 12);
    const bh = 30 + rows.length * 18;
    bg.setAttribute("width", bw);
    bg.setAttribute("height", bh);
    const tx = gx + 14 + bw > W - M.r ? gx - 14 - bw : gx + 14;
    tip.setAttribute("transform", `translate(${tx.toFixed(1)} ${M.t + 4})`);
    layer.style.display = "";
  };
  overlay.addEventListener("pointermove", show);
  overlay.addEventListener("pointerdown", show);
  overlay.addEventListener("pointerleave", () => { layer.style.display = "none"; });
}

function seriesOf(result, pick) {
  return result.series.map((ser) => ({
    mode: ser.mode,
    label: MODE[ser.mode].label,
    color: MODE[ser.mode].color,
    dash: MODE[ser.mode].dash,
    mean: ser.points.map((p) => pick(p).mean),
    lo: ser.points.map((p) => pick(p).p5),
    hi: ser.points.map((p) => pick(p).p95),
  }));
}

export function drawCharts() {
  const r = state.result;
  if (!r) return;
  const runs = r.config.runs;
  lineChart($("chart-calls"), {
    title: "Total calls against the number of clients",
    desc: `Mean writes per run over ${runs} runs for ${r.series.map((x) => MODE[x.mode].label).join(", ")}, from ${r.clients[0]} to ${r.clients[r.clients.length - 1]} clients, with the 5th to 95th percentile as a band.`,
    xs: r.clients, series: seriesOf(r, (p) => p.calls), durations: false, log: $("calls-log").checked, format: count,
  });
  lineChart($("chart-time"), {
    title: "Completion time against the number of clients",
    desc: `Mean time until the last client finished, over ${runs} runs, per mode, with the 5th to 95th percentile as a band.`,
    xs: r.clients, series: seriesOf(r, (p) => p.timeMs), durations: true, log: $("time-log").checked, format: ms,
  });
  for (const legend of document.querySelectorAll(".sim-legend")) {
    legend.replaceChildren(...r.series.map((ser) => h("li", { "data-mode": ser.mode }, lineKey(ser.mode), MODE[ser.mode].label)),
      h("li", {}, bandKey(), "5th–95th percentile of runs"),
      h("li", { class: "legend-note" }, "Dashed lines are drawn over solid ones: where lines overlap, look for the dashes."));
  }
}

// lineKey is a mode's line as the charts draw it: colour and dashes.
export function lineKey(mode) {
  const svg = s("svg", { class: "line-key", width: 28, height: 10, viewBox: "0 0 28 10", "aria-hidden": "true" });
  const l = s("line", { x1: 1, x2: 27, y1: 5, y2: 5, "data-dash": MODE[mode].dash || "solid" });
  l.style.stroke = MODE[mode].color;
  l.style.strokeWidth = "2.5";
  l.style.strokeLinecap = "round";
  if (MODE[mode].dash) l.style.strokeDasharray = MODE[mode].dash;
  svg.append(l);
  return svg;
}

function bandKey() {
  const k = h("span", { class: "key" });
  k.style.background = "color-mix(in srgb, var(--ink-3) 22%, transparent)";
  return k;
}
