// The attempt timeline of a job, drawn as inline SVG on one time axis: each
// attempt is a lane with the claim-to-report bar, then the delay the
// scheduler chose: the jitter range band, the capped base delay, the jittered
// sample, the retry-after hint and the selected next due time. Colours come
// from CSS classes, so it follows the light and dark themes.
import { h } from "./ui.js";

const NS = "http://www.w3.org/2000/svg";
const STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3,
  900e3, 1800e3, 3600e3, 7200e3, 10800e3, 21600e3, 43200e3, 86400e3, 172800e3];

function el(name, attrs = {}, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

const t = (iso) => (iso ? Date.parse(iso) : NaN);

// tickLabel prints an axis tick in the unit of the step, so every label is
// a whole number: steps of 15 s read "+60 s", "+75 s", not "+1.25 min".
const UNITS = [[86_400_000, "d"], [3_600_000, "h"], [60_000, "min"], [1000, "s"], [1, "ms"]];
export function tickLabel(v, step) {
  const [size, name] = UNITS.find(([u]) => step % u === 0 && step >= u);
  return `${v / size} ${name}`;
}

// MIN_W is the narrowest the timeline is drawn, in CSS pixels.
const MIN_W = 560;

// lanes turns the job's attempts into absolute times in milliseconds.
export function lanes(job, policy, jitterOf) {
  return job.attempts.map((a) => {
    const claimed = t(a.claimedAt);
    const finished = a.finishedAt ? t(a.finishedAt) : NaN;
    const lane = { number: a.number, outcome: a.outcome, claimed, finished };
    if (a.nextDueAt) {
      const due = t(a.nextDueAt);
      // The delay is counted from the report: next due minus the selected delay.
      const from = due - a.selectedDelayMs;
      lane.delay = {
        from, due,
        min: from + a.minDelayMs, max: from + a.maxDelayMs,
        base: from + a.baseDelayMs,
        sample: from + jitterOf(a),
        hint: a.retryAfterMs ? from + a.retryAfterMs : NaN,
      };
    }
    return lane;
  });
}

// draw renders the lanes into svg. now is the server's current time, drawn
// as a rule when it falls inside the axis.
export function draw(svg, ls, now) {
  svg.replaceChildren();
  if (!ls.length) return;
  // The drawing is as wide as its frame, so its text is drawn at its own
  // size, never scaled down; below MIN_W (a phone) it keeps MIN_W and the
  // frame scrolls sideways, since a 300 px axis cannot hold its labels.
  const avail = Math.round(svg.parentElement?.clientWidth || 760);
  const W = Math.min(1100, Math.max(MIN_W, avail));
  svg.style.width = W + "px";
  svg.style.maxWidth = "none";
  const M = { l: 84, r: 24, t: 14, b: 40 };
  const laneH = 40;
  const H = M.t + M.b + laneH * ls.length;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("height", String(H));
  const times = [];
  for (const l of ls) {
    times.push(l.claimed);
    if (!Number.isNaN(l.finished)) times.push(l.finished);
    if (l.delay) times.push(l.delay.max, l.delay.due, ...(Number.isNaN(l.delay.hint) ? [] : [l.delay.hint]));
  }
  const t0 = Math.min(...times);
  let span = Math.max(...times) - t0;
  if (span <= 0) span = 1000;
  const step = STEPS.find((s) => s >= span / (W < 700 ? 4 : 6)) || STEPS[STEPS.length - 1];
  const top = Math.ceil(span / step) * step;
  const x = (ms) => M.l + ((ms - t0) / top) * (W - M.l - M.r);
  const axis = el("g", { class: "axis" });
  for (let v = 0; v <= top + 1e-6; v += step) {
    axis.append(el("line", { x1: x(t0 + v), x2: x(t0 + v), y1: M.t - 4, y2: H - M.b + 4, class: "grid" }));
    axis.append(el("text", { x: x(t0 + v), y: H - M.b + 20, "text-anchor": "middle" }, v === 0 ? "first claim" : "+" + tickLabel(v, step)));
  }
  axis.append(el("text", { x: M.l + (W - M.l - M.r) / 2, y: H - 4, "text-anchor": "middle", class: "axis-title" }, "time since the first claim"));
  svg.append(axis);
  if (now >= t0 && now <= t0 + top) {
    const g = el("g", { class: "rule-now" });
    g.append(el("line", { x1: x(now), x2: x(now), y1: M.t - 6, y2: H - M.b + 2 }));
    g.append(el("text", { x: x(now) + 4, y: M.t + 2 }, "now"));
    svg.append(g);
  }
  ls.forEach((l, i) => {
    const y = M.t + laneH * i + laneH / 2;
    const g = el("g", { class: "lane outcome-" + l.outcome, "data-attempt": l.number });
    g.append(el("text", { x: M.l - 10, y: y + 4, "text-anchor": "end", class: "lane-label" }, "Attempt " + l.number));
    g.append(el("line", { x1: M.l, x2: W - M.r, y1: y, y2: y, class: "lane-rule" }));
    const end = Number.isNaN(l.finished) ? Math.max(l.claimed, now || l.claimed) : l.finished;
    const bw = Math.max(4, x(end) - x(l.claimed));
    g.append(el("rect", { x: x(l.claimed), y: y - 8, width: bw, height: 16, rx: 3, class: "run-bar" }));
    if (l.delay) {
      const d = l.delay;
      const dg = el("g", { class: "delay" });
      dg.append(el("line", { x1: x(d.from), x2: x(d.due), y1: y, y2: y, class: "wait" }));
      dg.append(el("rect", { x: x(d.min), y: y - 11, width: Math.max(2, x(d.max) - x(d.min)), height: 22, rx: 4, class: "range" }));
      dg.append(el("line", { x1: x(d.base), x2: x(d.base), y1: y - 13, y2: y + 13, class: "base" }));
      dg.append(el("circle", { cx: x(d.sample), cy: y, r: 4, class: "sample" }));
      if (!Number.isNaN(d.hint)) dg.append(el("line", { x1: x(d.hint), x2: x(d.hint), y1: y - 15, y2: y + 15, class: "hint" }));
      const dx = x(d.due);
      dg.append(el("path", { d: `M${dx} ${y - 7} L${dx + 7} ${y} L${dx} ${y + 7} L${dx - 7} ${y} Z`, class: "due" }));
      g.append(dg);
    }
    const title = el("title", {}, `Attempt ${l.number}: ${l.outcome}`);
    g.prepend(title);
    svg.append(g);
  });
}

// deliveryDetails shows what an HTTP delivery saw in one attempt
// (docs/delivery.md): the request's duration, the response headers that
// mattered and the start of the body, as text. Attempts reported by
// workers carry none of these and get nothing.
export function deliveryDetails(a) {
  const headers = Object.entries(a.responseHeaders || {}).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  if (a.requestMs == null && !headers.length && !a.responseExcerpt) return null;
  const summary = ["HTTP delivery", a.requestMs != null ? `request ${a.requestMs} ms` : null, a.httpStatus != null ? `HTTP ${a.httpStatus}` : null];
  return h("details", { class: "printed delivery", "data-attempt": a.number },
    h("summary", { text: summary.filter(Boolean).join(" · ") }),
    headers.length
      ? h("dl", { class: "arith response-headers" }, headers.map(([k, v]) => h("div", {}, h("dt", { class: "mono", text: k }), h("dd", { class: "mono", text: v }))))
      : h("p", { class: "muted small", text: "No response header that mattered." }),
    a.responseExcerpt
      ? h("pre", { class: "excerpt", "aria-label": "Start of the response body", text: a.responseExcerpt })
      : h("p", { class: "muted small", text: "No response body." }));
}
