// Hand-written inline SVG charts: the waits per retry with their jitter band,
// and the spread of one retry's waits. No library; the page's CSS colours
// them through class names, so the charts follow the light and dark themes.

const NS = "http://www.w3.org/2000/svg";
const M = { l: 68, r: 18, t: 18, b: 44 };
// The charts are drawn at the size they are shown, so their text stays at
// its CSS size on a phone as on a desktop.
let W = 720, H = 300;
function size(svg) {
  const w = svg.clientWidth || svg.parentElement?.clientWidth || 720;
  W = Math.round(Math.min(960, Math.max(300, w)));
  H = W < 520 ? 240 : 300;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
}

// Tick steps that read well as durations: 1-2-5 below a second, then whole
// seconds, minutes and hours.
const DURATION_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 5e3, 10e3, 15e3, 30e3,
  60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 10800e3, 21600e3, 43200e3, 86400e3];

function el(name, attrs = {}, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

// duration prints a chart tick or label: "250 ms", "1.5 s", "2 min", "1.5 h".
export function duration(ms) {
  const r = (x) => String(Math.round(x * 100) / 100);
  if (ms === 0) return "0";
  if (ms < 1000) return r(ms) + " ms";
  if (ms < 60_000) return r(ms / 1000) + " s";
  if (ms < 3_600_000) return r(ms / 60_000) + " min";
  if (ms < 86_400_000 * 2) return r(ms / 3_600_000) + " h";
  return r(ms / 86_400_000) + " d";
}

// niceStep picks a round tick step for a range split in about n parts.
function niceStep(max, n, durations) {
  const raw = max / n;
  if (durations && raw <= DURATION_STEPS[DURATION_STEPS.length - 1]) return DURATION_STEPS.find((st) => st >= raw);
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

function frame(svg, yMax, xCount, xLabel, xTick, durations = true) {
  const step = niceStep(yMax, H < 280 ? 4 : 5, durations);
  const top = Math.max(step, Math.ceil(yMax / step) * step);
  const y = (v) => M.t + (H - M.t - M.b) * (1 - v / top);
  const slot = (W - M.l - M.r) / xCount;
  const x = (i) => M.l + slot * (i + 0.5);
  const g = el("g", { class: "axis" });
  for (let v = 0; v <= top + step / 1e6; v += step) {
    g.append(el("line", { x1: M.l, x2: W - M.r, y1: y(v), y2: y(v), class: "grid" }));
    g.append(el("text", { x: M.l - 8, y: y(v) + 4, "text-anchor": "end" }, duration(v)));
  }
  const every = Math.ceil(xCount / (W < 520 ? 8 : 15));
  for (let i = 0; i < xCount; i++) {
    const label = i % every === 0 ? xTick(i) : "";
    if (label) g.append(el("text", { x: x(i), y: H - M.b + 18, "text-anchor": "middle" }, label));
  }
  g.append(el("text", { x: M.l + (W - M.l - M.r) / 2, y: H - 6, "text-anchor": "middle", class: "axis-title" }, xLabel));
  svg.append(g);
  return { x, y, slot, top };
}

function path(points) {
  return points.map(([px, py], i) => (i ? "L" : "M") + px.toFixed(2) + " " + py.toFixed(2)).join(" ");
}

// bandChart draws, per x position, stacked bands (each {lo[], hi[], cls,
// label}), lines ({values[], cls, label, dots}) and horizontal rules ({y, cls,
// label}). desc is the accessible description of the picture.
export function bandChart(svg, spec) {
  svg.replaceChildren();
  size(svg);
  const n = spec.count;
  let yMax = 0;
  for (const b of spec.bands) for (const v of b.hi) yMax = Math.max(yMax, v);
  for (const l of spec.lines) for (const v of l.values) yMax = Math.max(yMax, v);
  for (const r of spec.rules) if (r.scale !== false) yMax = Math.max(yMax, r.y);
  if (!(yMax > 0)) yMax = 1;
  svg.append(el("title", {}, spec.title));
  svg.append(el("desc", {}, spec.desc));
  const { x, y, slot, top } = frame(svg, yMax * 1.04, n, spec.xLabel, spec.xTick);
  const half = slot * 0.36;
  for (const b of spec.bands) {
    const g = el("g", { class: "band " + b.cls });
    for (let i = 0; i < n; i++) {
      const y1 = y(b.hi[i]), y0 = y(b.lo[i]);
      const r = el("rect", { x: x(i) - half, width: half * 2, y: y1, height: Math.max(1.5, y0 - y1), rx: 3 });
      r.append(el("title", {}, `${spec.xTick(i)}: ${b.label} ${duration(b.lo[i])} – ${duration(b.hi[i])}`));
      g.append(r);
    }
    svg.append(g);
  }
  for (const r of spec.rules) {
    if (r.y > top) continue;
    const g = el("g", { class: "rule " + r.cls });
    g.append(el("line", { x1: M.l, x2: W - M.r, y1: y(r.y), y2: y(r.y) }));
    g.append(el("text", { x: W - M.r - 4, y: y(r.y) - 6, "text-anchor": "end" }, r.label));
    svg.append(g);
  }
  for (const l of spec.lines) {
    const g = el("g", { class: "series " + l.cls });
    const pts = l.values.map((v, i) => [x(i), y(v)]);
    if (l.path !== false) g.append(el("path", { d: path(pts) }));
    if (l.dots) {
      pts.forEach(([px, py], i) => {
        const c = el("circle", { cx: px, cy: py, r: 4.5 });
        c.append(el("title", {}, `${spec.xTick(i)}: ${l.label} ${duration(l.values[i])}`));
        g.append(c);
      });
    }
    svg.append(g);
  }
}

// histogram draws the spread of one retry's waits over many seeds, with the
// waits that landed exactly on the cap drawn as their own highlighted bar.
export function histogram(svg, spec) {
  svg.replaceChildren();
  size(svg);
  svg.append(el("title", {}, spec.title));
  svg.append(el("desc", {}, spec.desc));
  const { values, atCap, cap, bins: nb } = spec;
  const below = values.filter((v) => !(atCap && v === cap));
  // The bins span the waits that occur, widened to round tick values, not
  // 0 to the cap: a retry whose waits all fall in 0.5–1 s would otherwise
  // crowd into one corner of a 0–30 s axis.
  const vMin = below.length ? Math.min(...below) : 0, vMax = below.length ? Math.max(...below) : (cap > 0 ? cap : 1);
  const tickStep = niceStep(Math.max(vMax - vMin, 1), W < 520 ? 3 : 5, true);
  const lo = Math.floor(vMin / tickStep) * tickStep;
  let hi = Math.ceil(vMax / tickStep) * tickStep;
  if (hi <= lo) hi = lo + tickStep;
  const width = (hi - lo) / nb;
  const counts = new Array(nb).fill(0);
  for (const v of below) counts[Math.min(nb - 1, Math.max(0, Math.floor((v - lo) / width)))]++;
  const spike = values.length - below.length;
  const total = values.length || 1;
  const share = (c) => (c / total) * 100;
  const yMax = Math.max(1, ...counts.map(share), share(spike));
  const n = nb + 2; // the bins, a gap, and the spike bar
  const { x, y, slot } = frame(svg, Math.min(100, yMax * 1.08), n, spec.xLabel, () => "", false);
  // The y axis counts a share of the seeds, not a duration: relabel the ticks.
  for (const t of svg.querySelectorAll(".axis > text[text-anchor=end]")) {
    const ms = t.textContent;
    t.textContent = ms === "0" ? "0%" : ms.replace(/ ms$/, "%");
  }
  // The x axis: a label at every round wait under the bins, and "= cap"
  // under the bar of the waits exactly at the cap.
  const xAxis = el("g", { class: "axis x-ticks" });
  const left = x(0) - slot / 2, binsWidth = slot * nb;
  for (let v = lo; v <= hi + tickStep / 1e6; v += tickStep) {
    const px = left + ((v - lo) / (hi - lo)) * binsWidth;
    xAxis.append(el("line", { x1: px, x2: px, y1: y(0), y2: y(0) + 5, class: "grid" }));
    xAxis.append(el("text", { x: px, y: H - M.b + 18, "text-anchor": "middle" }, duration(v)));
  }
  if (spike) xAxis.append(el("text", { x: x(nb + 1), y: H - M.b + 18, "text-anchor": "middle" }, "= cap"));
  svg.append(xAxis);
  const g = el("g", { class: "bars" });
  counts.forEach((c, i) => {
    if (!c) return;
    const r = el("rect", { x: x(i) - slot * 0.46, width: slot * 0.92, y: y(share(c)), height: y(0) - y(share(c)) });
    r.append(el("title", {}, `${duration(lo + i * width)} – ${duration(lo + (i + 1) * width)}: ${share(c).toFixed(1)}% of seeds`));
    g.append(r);
  });
  svg.append(g);
  if (spike) {
    const s = el("g", { class: "spike" });
    const r = el("rect", { x: x(nb + 1) - slot * 0.46, width: slot * 0.92, y: y(share(spike)), height: y(0) - y(share(spike)) });
    r.append(el("title", {}, `exactly the cap: ${share(spike).toFixed(1)}% of seeds`));
    s.append(r);
    s.append(el("text", { x: x(nb + 1), y: y(share(spike)) - 6, "text-anchor": "end" }, share(spike).toFixed(1) + "%"));
    svg.append(s);
  }
}
