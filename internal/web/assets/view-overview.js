// The overview: every endpoint's card, trouble first, updated live.

import * as B from "./backoff.js";
import { FAILED_FILTER, GATE_NAMES, policyLabel, badge, circuitBadge, untilText, circuitOpenEnd, detailEl, heading, link, live, liveLine, morphChildren, ready, serverNow, setTitle, setView, state } from "./console-kit.js";
import { $, h } from "./ui.js";
import { api, query } from "./dashboard-api.js";
import { countText, num, span, when } from "./dashboard-format.js";
import { ATTEMPT_OUTCOMES } from "./limits.js";

// ---------- overview ----------

export async function view(_, stale) {
  setTitle("Overview");
  const grid = h("div", { class: "ep-grid", id: "endpoints" });
  const attention = h("p", { class: "attention", id: "attention" });
  const line = liveLine();
  setView(
    heading("Overview", "Every endpoint with its circuit, its gates and its recent outcomes, trouble first. This page updates itself as jobs move."),
    attention, line.el, grid);
  let last = null;
  const show = (o) => {
    last = o;
    if (o.now) state.skew = Date.parse(o.now) - Date.now();
    // Update the cards in place: a card whose content did not change is
    // left alone, and one that did is patched node by node, so focus, a
    // text selection and the scroll position survive the update.
    morphChildren(attention, attentionParts(o.endpoints));
    morphChildren(grid, o.endpoints.length ? byTrouble(o.endpoints).map(endpointCard) : [h("div", { class: "card empty" }, "No endpoints yet. Create one with ", h("code", { text: "ratchet endpoints create" }), " or POST /v1/endpoints.")]);
    line.shown(o.now || new Date(serverNow()).toISOString());
  };
  show(await api("GET", "/v1/overview"));
  if (stale()) return;
  ready();
  live({ view: "overview" }, line, (name, o) => { if (name === "overview") show(o); }, stale, () => last && morphChildren(grid, byTrouble(last.endpoints).map(endpointCard)));
}

// trouble ranks an endpoint for the overview: an open circuit first, then
// half-open, then paused, then the rest by name. Only states that last
// count: jobs held by a rate limit come and go within a minute, and cards
// that jumped about with them would move under the pointer.
function trouble(ep) {
  if (ep.circuit.state === "open") return 0;
  if (ep.circuit.state === "half_open") return 1;
  if (ep.paused) return 2;
  return 3;
}

const byTrouble = (eps) => [...eps].sort((a, b) => trouble(a) - trouble(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

// attentionParts is the overview's line of trouble, "1 open circuit ·
// 1 paused · 7,254 jobs held", or nothing when all is well.
function attentionParts(eps) {
  const open = eps.filter((e) => e.circuit.state === "open").length;
  const paused = eps.filter((e) => e.paused).length;
  const heldEps = eps.filter((e) => e.due > 0 && e.heldBy);
  const held = heldEps.reduce((t, e) => t + e.due, 0);
  const parts = [];
  if (open) parts.push(`${num(open)} open circuit${open === 1 ? "" : "s"}`);
  if (paused) parts.push(`${num(paused)} paused`);
  if (held) parts.push(`${countText(held, heldEps.some((e) => e.dueCapped))} due ${held === 1 ? "job" : "jobs"} held`);
  // Nodes, not strings: morphChildren patches nodes.
  return parts.length ? [h("strong", { text: "Needs attention: " }), document.createTextNode(parts.join(" · "))] : [];
}

export function meter(value, max) {
  const track = h("span", { class: "bar-track" });
  const bar = h("span", { class: "bar" + (max && value >= max ? " bar-full" : "") });
  bar.style.width = max ? Math.min(100, (value / max) * 100).toFixed(1) + "%" : "0%";
  track.append(bar);
  return track;
}

// The meter (extra) sits in the dd: a dl's groups hold only dt and dd.
function metric(label, value, extra, cls) {
  return h("div", { class: "metric " + (cls || "") }, h("dt", { text: label }), h("dd", {}, value, extra || null));
}


// waitingText says what an endpoint's due jobs that no gate holds wait
// for: a worker, or Ratchet's own HTTP dispatcher when it delivers the
// endpoint's tools (the dispatcher that is behind is not "a worker").
export function waitingText(ep) {
  const due = countText(ep.due, ep.dueCapped);
  const d = ep.dispatcher;
  if (!d) return `${due} due and claimable: no gate holds them; they wait for a worker.`;
  const others = d.workerTools ? " (jobs of its worker tools wait for a worker)" : "";
  if (!d.concurrency) return `No gate holds them — ${due} due wait for the HTTP dispatcher, which runs on other nodes (none on this one)${others}.`;
  return `No gate holds them — the HTTP dispatcher is behind: ${due} due, delivery concurrency ${num(d.concurrency)} on this node${others}.`;
}

function heldLine(ep) {
  if (ep.due === 0) return h("p", { class: "held held-none" }, ep.scheduled ? `No job is due yet; ${num(ep.scheduled)} scheduled for later.` : "No jobs waiting.");
  if (!ep.heldBy) return h("p", { class: "held held-open", "data-waiting": ep.dispatcher ? "dispatcher" : "worker" }, waitingText(ep));
  const g = ep.heldBy;
  return h("p", { class: "held held-gated", "data-gate": g.gate },
    `${countText(ep.due, ep.dueCapped)} due, held by `, h("strong", { text: GATE_NAMES[g.gate] || g.gate }),
    g.until ? untilText(g.until) : "", g.detail ? [" — ", detailEl(g.detail)] : ".");
}

// How the outcome table heads and colours each ended attempt outcome
// (limits.js lists them); an outcome added there shows by its name.
const OUTCOME_COLUMNS = { succeeded: ["Succeeded", "ok"], failed: ["Failed", "bad"], timed_out: ["Timed out", "warn"] };
const ENDED_OUTCOMES = ATTEMPT_OUTCOMES.filter((o) => o !== "running");

function outcomeTable(ep) {
  const col = (o) => OUTCOME_COLUMNS[o] || [o.replaceAll("_", " "), ""];
  const row = (label, o) => {
    o = o || {};
    return h("tr", {}, h("th", { scope: "row", text: label }),
      ...ENDED_OUTCOMES.map((x) => h("td", { class: "num " + col(x)[1], text: num(o[x] || 0) })));
  };
  return h("table", { class: "data outcomes" },
    h("thead", {}, h("tr", {}, h("th", { text: "Attempts" }), ...ENDED_OUTCOMES.map((x) => h("th", { class: "num", text: col(x)[0] })))),
    h("tbody", {}, row("Last 5 min", ep.outcomes5m), row("Last hour", ep.outcomes1h)));
}

function circuitLine(ep) {
  const c = ep.circuit;
  if (c.state === "open") {
    return h("p", { class: "circuit-note bad" }, `Open since ${when(c.openedAt)} after ${num(c.failures)} failure${c.failures === 1 ? "" : "s"}`,
      ...circuitOpenEnd(c, !!ep.paused));
  }
  if (c.state === "half_open") return h("p", { class: "circuit-note warn" }, c.probeJobId ? `Half-open: probe job #${c.probeJobId} decides whether it closes.` : "Half-open: the next claim is a probe.");
  return h("p", { class: "circuit-note muted" }, `Closed · ${num(c.failures)} of ${num(ep.circuitFailureThreshold)} consecutive failures open it for ${span(ep.circuitOpenMs)}.`);
}

function endpointCard(ep) {
  const name = encodeURIComponent(ep.name);
  const rate = ep.rateLimitPerMinute;
  return h("article", { class: "card ep circuit-" + ep.circuit.state + (ep.paused ? " paused" : ""), "data-endpoint": ep.name, "data-key": "ep-" + ep.name },
    h("div", { class: "card-head" },
      h("h2", {}, link("/endpoints/" + name, ep.name)),
      h("span", { class: "badges" }, ep.paused ? badge("Paused", "paused") : null, circuitBadge(ep.circuit))),
    circuitLine(ep),
    h("dl", { class: "metrics" },
      // The counts of jobs are links to those jobs.
      metric("Running", h("a", { class: "running count-link", href: "/jobs" + query({ endpoint: ep.name, state: "running" }), title: `The running jobs of ${ep.name}` }, `${num(ep.running)} / ${num(ep.maxConcurrent)}`), meter(ep.running, ep.maxConcurrent)),
      metric("Claims in the last minute", h("span", { class: "claims" }, rate == null ? `${num(ep.claimsInWindow)} · no limit` : `${num(ep.claimsInWindow)} / ${num(rate)}`), meter(ep.claimsInWindow, rate)),
      metric("Scheduled", h("a", { class: "scheduled count-link", href: "/jobs" + query({ endpoint: ep.name, state: "scheduled" }), title: `The scheduled jobs of ${ep.name}` }, num(ep.scheduled))),
      metric("Due now", h("span", { class: "due" }, countText(ep.due, ep.dueCapped)))),
    keyLimitsLine(ep, "key-limits small"),
    heldLine(ep),
    outcomeTable(ep),
    h("div", { class: "ep-foot" },
      h("span", { class: "muted small" }, `${policyLabel(ep.policy)} · version ${ep.version} · lease ${span(ep.defaultTimeoutMs)}`),
      // Trouble first, here too: Failed jobs is the first of the card's
      // buttons (and the fewest Tabs from the overview's heading).
      h("span", { class: "actions" },
        h("a", { href: "/jobs" + query({ endpoint: ep.name, state: FAILED_FILTER }) + "#results", class: "button small failed-jobs", text: "Failed jobs", "aria-label": `Failed jobs of ${ep.name}` }),
        link("/jobs" + query({ endpoint: ep.name }), "Jobs", "button small"),
        link("/endpoints/" + name, "Edit policy", "button small"))));
}

// keyLimitsLine says an endpoint's limits per flow key in a line, "Per key:
// 5 running · 60/min · ordered · fair · 500/day · 10,000/month", or is
// null when it has none.
export function keyLimitsLine(ep, cls, id) {
  const parts = [];
  if (ep.keyMaxConcurrent != null) parts.push(`${num(ep.keyMaxConcurrent)} running`);
  if (ep.keyRateLimitPerMinute != null) parts.push(`${num(ep.keyRateLimitPerMinute)}/min`);
  if (ep.keyOrdered) parts.push("ordered");
  if (ep.fairKeys) parts.push("fair");
  if (ep.keyDailyCallBudget != null) parts.push(`${num(ep.keyDailyCallBudget)}/day`);
  if (ep.keyMonthlyCallBudget != null) parts.push(`${num(ep.keyMonthlyCallBudget)}/month`);
  if (!parts.length) return null;
  return h("p", { class: cls, id, title: "Limits on the jobs of each flow key, within the endpoint's own" }, h("strong", { text: "Per key:" }), " " + parts.join(" · "));
}
