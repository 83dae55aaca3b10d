// The recovery scenario's charts: per strategy, the requests that reached
// the provider each second (served, and refused with 429 stacked on top),
// the provider's capacity and the rate the ramp allowed. Every chart of a
// result shares one scale, so they compare at a glance.
import { $, h } from "./ui.js";
import { intFmt, s } from "./simulator-form.js";

// The Okabe–Ito colours the contention charts use; refused bars carry a
// hatch as well, so served and refused differ without colour.
export const SERIES = {
  served: { label: "Served", color: "light-dark(#0072b2, #56b4e9)" },
  refused: { label: "Refused with 429", color: "light-dark(#d55e00, #ff8c42)" },
  allowed: { label: "Allowed by the ramp", color: "light-dark(#009e73, #3fd0a0)", dash: "6 3" },
  capacity: { label: "Capacity", color: "var(--ink-2)", dash: "2 3" },
};

// SHORT names the strategies in the figures table.
export const SHORT = { "at-once": "At once", ramp: "Ramp", learned: "Learned limits" };

export const TITLES = {
  "at-once": "Released at once",
  ramp: "Released by the ramp",
  learned: "By the ramp, with learned limits",
};

// MAX_BARS bounds the bars of one chart: a longer run shows each bar as
// the mean per second of a few seconds.
const MAX_BARS = 240;

function niceStep(max, n) {
  const raw = max / n, mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

// group folds per-second values into bars of k seconds, each the mean per
// second over its seconds.
function group(vals, n, k) {
  const out = [];
  for (let i = 0; i < n; i += k) {
    let sum = 0;
    for (let j = i; j < Math.min(n, i + k); j++) sum += vals[j] || 0;
    out.push(sum / Math.min(k, n - i));
  }
  return out;
}

// hatch defines the refused bars' fill, one per chart (ids are unique).
function hatch(svg, id) {
  const pat = s("pattern", { id, width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" });
  const bg = s("rect", { width: 6, height: 6 });
  bg.style.fill = SERIES.refused.color;
  const line = s("line", { x1: 0, y1: 0, x2: 0, y2: 6 });
  line.style.stroke = "var(--surface)";
  line.style.strokeWidth = "2";
  pat.append(bg, line);
  const defs = s("defs");
  defs.append(pat);
  svg.append(defs);
}

// axes draws the grid, the count labels and the seconds along the bottom.
function axes(svg, g) {
  const axis = s("g", { class: "axis" });
  for (let v = 0; v <= g.top + g.step / 1e6; v += g.step) {
    axis.append(s("line", { x1: g.M.l, x2: g.W - g.M.r, y1: g.py(v), y2: g.py(v), class: "grid" }));
    axis.append(s("text", { x: g.M.l - 8, y: g.py(v) + 4, "text-anchor": "end" }, intFmt.format(v)));
  }
  const xStep = niceStep(g.seconds, g.W < 520 ? 4 : 8);
  for (let t = 0; t <= g.seconds; t += xStep) {
    axis.append(s("text", { x: g.px(t), y: g.H - g.M.b + 18, "text-anchor": "middle" }, intFmt.format(t) + " s"));
  }
  axis.append(s("text", { x: g.M.l + (g.W - g.M.l - g.M.r) / 2, y: g.H - 6, "text-anchor": "middle", class: "axis-title" }, "seconds after the provider came back"));
  svg.append(axis);
}

// bars draws one bar per group of seconds: served from the axis, refused
// stacked on it.
function bars(svg, run, g) {
  const served = group(run.served, g.n, g.k), refused = group(run.refused, g.n, g.k);
  const layer = s("g", { class: "rec-bars", "data-strategy": run.strategy });
  const bw = Math.max(0.6, g.px(g.k) - g.px(0) - (g.k === 1 && g.seconds < 120 ? 1 : 0));
  served.forEach((v, i) => {
    const x = g.px(i * g.k), r = refused[i];
    const a = s("rect", { x, y: g.py(v), width: bw, height: g.py(0) - g.py(v), class: "rec-served" });
    a.style.fill = SERIES.served.color;
    const b = s("rect", { x, y: g.py(v + r), width: bw, height: g.py(v) - g.py(v + r), class: "rec-refused", fill: `url(#${g.hatch})` });
    const what = g.k === 1 ? `Second ${i}` : `Seconds ${i * g.k}–${Math.min(g.n, (i + 1) * g.k) - 1} (mean per second)`;
    const tip = s("title", {}, `${what}: ${intFmt.format(v)} served, ${intFmt.format(r)} refused`);
    const bar = s("g", { "data-second": i * g.k });
    bar.append(a, b, tip);
    layer.append(bar);
  });
  svg.append(layer);
}

// lines draws the capacity and, for a ramp, the rate it allowed.
function lines(svg, run, g, capacity) {
  const cap = s("line", { x1: g.M.l, x2: g.W - g.M.r, y1: g.py(capacity), y2: g.py(capacity), class: "rec-capacity" });
  cap.style.stroke = SERIES.capacity.color;
  cap.style.strokeWidth = "2";
  cap.style.strokeDasharray = SERIES.capacity.dash;
  svg.append(cap);
  if (!run.allowed.length) return;
  const vals = group(run.allowed, g.n, g.k);
  const d = vals.map((v, i) => `${i ? "L" : "M"}${g.px(i * g.k).toFixed(1)} ${g.py(Math.min(v, g.top)).toFixed(1)} H${g.px(Math.min(g.n, (i + 1) * g.k)).toFixed(1)}`).join(" ");
  const p = s("path", { d, class: "rec-allowed", fill: "none" });
  p.style.stroke = SERIES.allowed.color;
  p.style.strokeWidth = "2.5";
  p.style.strokeDasharray = SERIES.allowed.dash;
  svg.append(p);
}

// drawRun draws one strategy's chart into svg, on the shared scale.
function drawRun(svg, run, scale, capacity) {
  svg.replaceChildren();
  const width = svg.clientWidth || svg.parentElement.clientWidth || 720;
  const W = Math.round(Math.min(1100, Math.max(300, width)));
  const H = W < 520 ? 220 : 260;
  const M = { l: W < 520 ? 46 : 56, r: 14, t: 12, b: 44 };
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const n = run.served.length, k = Math.max(1, Math.ceil(scale.seconds / MAX_BARS));
  const step = niceStep(scale.peak * 1.04, H < 240 ? 4 : 5);
  const top = Math.max(step, Math.ceil((scale.peak * 1.04) / step) * step);
  const g = {
    W, H, M, n, k, step, top, seconds: scale.seconds, hatch: "rec-hatch-" + run.strategy,
    px: (t) => M.l + ((W - M.l - M.r) * t) / scale.seconds,
    py: (v) => M.t + (H - M.t - M.b) * (1 - v / top),
  };
  svg.append(s("title", {}, TITLES[run.strategy]), s("desc", {}, describe(run, capacity)));
  hatch(svg, g.hatch);
  axes(svg, g);
  bars(svg, run, g);
  lines(svg, run, g, capacity);
}

// describe says in words what a chart shows, for its text alternative.
export function describe(run, capacity) {
  return `${intFmt.format(run.requests)} requests reached the provider, ${intFmt.format(run.refusals)} refused with 429; ` +
    `the busiest second brought ${intFmt.format(run.busiestSecond)} against a capacity of ${intFmt.format(capacity)}; the backlog was done after ${run.drainS.toFixed(1)} s.`;
}

// drawRecovery draws one card per strategy of result r into #rec-charts.
export function drawRecovery(r) {
  const box = $("rec-charts");
  const scale = { seconds: 1, peak: r.config.capacityPerS };
  for (const run of r.runs) {
    scale.seconds = Math.max(scale.seconds, run.served.length);
    scale.peak = Math.max(scale.peak, run.busiestSecond, ...run.allowed.map((v) => Math.min(v, 2 * run.busiestSecond + 1)));
  }
  const cards = r.runs.map((run) => {
    const id = "rec-chart-" + run.strategy;
    const title = h("h2", { id: id + "-title", text: TITLES[run.strategy] });
    const caption = h("p", { class: "muted small", id: id + "-caption", text: describe(run, r.config.capacityPerS) });
    const svg = s("svg", { id, class: "chart", role: "img", "aria-labelledby": `${id}-title ${id}-caption` });
    const card = h("section", { class: "card rec-out", "aria-labelledby": id + "-title", "data-strategy": run.strategy },
      h("div", { class: "card-head" }, title), caption, legend(run), svg);
    return { card, svg, run };
  });
  box.replaceChildren(...cards.map((c) => c.card));
  for (const c of cards) drawRun(c.svg, c.run, scale, r.config.capacityPerS);
}

// legend lists what a chart draws, each with its key.
function legend(run) {
  const key = (name) => {
    const k = h("span", { class: "key" });
    const ser = SERIES[name];
    if (ser.dash) {
      k.style.height = "0";
      k.style.borderRadius = "0";
      k.style.borderTop = `2px ${name === "capacity" ? "dotted" : "dashed"} ${ser.color}`;
    } else {
      k.style.background = ser.color;
    }
    if (name === "refused") k.style.background = `repeating-linear-gradient(45deg, ${ser.color} 0 3px, var(--surface) 3px 5px)`;
    return h("li", {}, k, ser.label);
  };
  const names = ["served", "refused", "capacity"].concat(run.allowed.length ? ["allowed"] : []);
  return h("ul", { class: "legend", "aria-hidden": "true" }, ...names.map(key));
}
