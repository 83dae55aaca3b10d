// One job: its facts, its attempts and their timeline, and its actions.

import * as B from "./backoff.js";
import { CANCELLABLE, REPLAYABLE, untilText, badge, detailEl, keepFocus, link, live, liveLine, markOverflow, morphChildren, ready, relative, serverNow, setTitle, setView, state, toast, watchTables, navigate, GATE_NAMES, RUNNABLE, factList, heading, stateBadge, toolRef } from "./console-kit.js";
import { $, h } from "./ui.js";
import { api, query } from "./dashboard-api.js";
import { clockEl, msText, num, span, timeEl, when } from "./dashboard-format.js";
import { deliveryDetails, draw, lanes } from "./dashboard-timeline.js";

// ---------- job detail ----------


// jitteredOf is the attempt's jittered delay before the hint and the 24 h
// limit: round(base × (1 − j + u × 2j)), recomputed from the stored sample.
function jitteredOf(policy, a) {
  return B.policyJitter(policy, a.baseDelayMs, a.jitterSample);
}

// arithmetic is the delay decision after one attempt, in the documented
// order: capped base, jitter band, sample, hint, 24-hour limit, next due.
function arithmetic(policy, a) {
  const n = a.number;
  const raw = policy.initialDelayMs * B.pow(policy.multiplier, n - 1);
  const capped = raw > policy.maxDelayMs;
  const jit = jitteredOf(policy, a);
  const hintWon = a.retryAfterMs != null && a.retryAfterMs > jit;
  const limited = a.selectedDelayMs === B.SAFETY_LIMIT_MS && Math.max(jit, a.retryAfterMs || 0) > B.SAFETY_LIMIT_MS;
  const steps = [
    ["Base", `min(${num(policy.maxDelayMs)}, ${num(policy.initialDelayMs)} × ${B.formatNumber(policy.multiplier)}^${n - 1}) = ${msText(a.baseDelayMs)}${capped ? " (capped)" : ""}`],
    ["Jitter range", `± ${B.formatNumber(policy.jitterPercent)}% → ${msText(a.minDelayMs)} – ${msText(a.maxDelayMs)}`],
    ["Sample", `u = ${a.jitterSample.toFixed(4)} → ${msText(jit)}`],
    ["Hint", a.retryAfterMs != null ? `retry-after ${msText(a.retryAfterMs)} → ${hintWon ? "wins" : "loses"}` : "none"],
    ["Selected", `${msText(a.selectedDelayMs)} (${span(a.selectedDelayMs)})${hintWon ? " — the hint" : ""}${limited ? " — the 24-hour limit" : ""}`],
    ["Next due", when(a.nextDueAt, true)],
  ];
  return h("dl", { class: "arith", "data-attempt": n }, steps.map(([k, v]) => h("div", {}, h("dt", { text: k }), h("dd", { class: "mono", text: v }))));
}

// afterAttempt says why no delay followed an attempt.
function afterAttempt(j, a) {
  if (a.outcome === "running") return "In progress.";
  if (a.outcome === "succeeded") return "Succeeded: nothing more to schedule.";
  const last = a.number === j.attempts.length;
  if (last && j.state === "exhausted") return `Attempts used up (${a.number - (j.throttles || 0)} of ${j.maxAttempts} counted): the job is exhausted.`;
  if (last && j.state === "cancelled") return "The job was cancelled.";
  return "Not retryable: the job failed.";
}

export async function view([id], stale) {
  setTitle("Job #" + id);
  const first = await api("GET", "/v1/jobs/" + id);
  if (stale()) return;
  // act does what a button of the page asks: the job's cancel, replay or
  // run now, or, from the hold banner, the endpoint's resume or circuit
  // close. Then the page shows the job as it is now.
  const DONE = { cancel: "Cancelled.", "run-now": "The job is due now; the gates still apply.", resume: "Endpoint resumed.", "circuit/close": "Circuit closed." };
  const act = async (jobId, what) => {
    try {
      const path = what === "resume" || what === "circuit/close" ? `/v1/endpoints/${encodeURIComponent(cur.endpoint)}/${what}` : `/v1/jobs/${jobId}/${what}`;
      const r = await api("POST", path);
      if (stale()) return;
      if (what === "replay") { toast(`Replayed as job #${r.id}.`); navigate("/jobs/" + r.id); return; }
      toast(DONE[what] || "Done.");
      show(r && r.attempts ? r : await api("GET", "/v1/jobs/" + jobId));
      keepFocus("#job-replay", "#job-run-now");
    } catch (e) { toast(e.message); }
  };
  const line = liveLine();
  const body = h("div", { id: "job-body" });
  let cur = first;
  // show patches the page in place (morphChildren): when a worker reports,
  // the attempt rows and the state change under the reader's eyes, and
  // focus, open details and the scroll position stay.
  const show = (j) => {
    if (stale()) return;
    cur = j;
    morphChildren(body, jobContent(j, act));
    watchTables(body);
    drawTimeline(j);
    body.dataset.state = j.state;
    body.dataset.attempts = String((j.attempts || []).length);
    line.shown(new Date(serverNow()).toISOString());
  };
  setView(
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, link("/jobs", "Jobs"), " / ", h("span", { text: "#" + first.id })),
    line.el, body);
  show(first);
  ready();
  live({ job: first.id }, line, (name, j) => { if (name === "job") show(j); }, stale, () => show(cur));
}

// drawTimeline draws the job's attempt timeline at the width of its frame,
// and again whenever that width changes (a phone turned, a window resized).
let timelineWidth = 0;
const timelineObserver = new ResizeObserver((entries) => {
  const w = Math.round(entries[0].contentRect.width);
  if (w !== timelineWidth && state.timelineJob) drawTimeline(state.timelineJob);
});

function drawTimeline(j) {
  const svg = $("timeline");
  state.timelineJob = svg ? j : null;
  if (!svg || !j.attempts || !j.attempts.length) return;
  const policy = policyOf(j);
  timelineWidth = Math.round(svg.parentElement.clientWidth);
  draw(svg, lanes(j, policy, (a) => jitteredOf(policy, a)), serverNow());
  timelineObserver.disconnect();
  timelineObserver.observe(svg.parentElement);
  markOverflow(svg.parentElement);
}

function policyOf(j) {
  const snap = j.policy || {};
  return { maxAttempts: snap.maxAttempts, initialDelayMs: snap.initialDelayMs, multiplier: snap.multiplier, maxDelayMs: snap.maxDelayMs, jitterPercent: snap.jitterPercent };
}

// holdActions are the hold banner's ways out for an owner: resume the
// paused endpoint, or close its open circuit, here, without a detour.
function holdActions(j, owner, act) {
  const g = j.heldBy;
  if (!owner || !g) return null;
  if (g.gate === "paused") return h("span", { class: "hold-actions" }, h("button", { type: "button", id: "hold-resume", class: "button small", text: `Resume ${j.endpoint}`, onclick: () => act(j.id, "resume") }));
  if (g.gate === "circuit") return h("span", { class: "hold-actions" }, h("button", { type: "button", id: "hold-close-circuit", class: "button small", text: "Close circuit", onclick: () => act(j.id, "circuit/close") }));
  return null;
}

// jobContent is the job page below the breadcrumb, for one state of the
// job. Every slot is always there (empty when it has nothing to show), so
// an update patches each part in its place.
// hintWon says whether the job waits for the provider's Retry-After hint
// rather than its own backoff: its last attempt had a hint and chose no
// longer a delay (the delay is the longer of the two, capped at 24 h).
function hintWon(j) {
  const a = j.attempts && j.attempts[j.attempts.length - 1];
  return !!a && a.retryAfterMs > 0 && a.selectedDelayMs <= a.retryAfterMs;
}

function jobContent(j, act) {
  const snap = j.policy || {};
  const policy = policyOf(j);
  const actions = [];
  const owner = state.me && state.me.key.scope === "owner";
  if (owner && RUNNABLE.includes(j.state)) actions.push(h("button", { type: "button", id: "job-run-now", class: "button", text: "Run now", onclick: () => act(j.id, "run-now") }));
  if (CANCELLABLE.includes(j.state)) actions.push(h("button", { type: "button", id: "job-cancel", class: "button danger", text: "Cancel job", onclick: () => act(j.id, "cancel") }));
  if (REPLAYABLE.includes(j.state)) actions.push(h("button", { type: "button", id: "job-replay", class: "button", text: "Replay as a new job", onclick: () => act(j.id, "replay") }));

  let hold = null;
  if (j.state === "scheduled" && j.heldBy) {
    const g = j.heldBy;
    hold = h("div", { class: "callout " + (g.gate === "none" ? "" : "callout-warn"), id: "held-by" },
      h("strong", {}, g.gate === "due_time" ? (j.attempt === 0 ? "Scheduled for later" : hintWon(j) ? "Waiting out the provider's Retry-After" : "Waiting out its backoff delay") : g.gate === "none" ? "Ready to be claimed" : `Held by ${GATE_NAMES[g.gate] || g.gate}`),
      g.until ? untilText(g.until) : "", g.detail ? [" — ", detailEl(g.detail)] : ".",
      holdActions(j, owner, act));
  }
  // Why it failed, up top: the last failed attempt's classification and
  // message (a retry waiting for its next attempt shows it too).
  const failure = j.lastError || (j.lastClassification && j.state !== "succeeded")
    ? h("p", { class: "last-failure", id: "job-last-error" }, h("strong", { text: "Last error: " }),
      j.lastClassification ? h("span", { class: "mono", text: j.lastClassification + (j.lastError ? " · " : "") }) : null, j.lastError || "")
    : null;

  const attempts = j.attempts || [];
  // The table is what people scan: who ran each attempt, what came back,
  // the delay chosen and when the next is due. How the delay was reached
  // (the hint, the base, the jitter range and sample) is each attempt's
  // card under Delay arithmetic: with them the table was 1,478 px at its
  // longest, in a 1,146 px card.
  const rows = attempts.map((a) => h("tr", { "data-attempt": a.number, "data-key": "attempt-" + a.number },
    h("td", { class: "num", text: String(a.number) }),
    h("td", { class: "mono small worker-col", title: a.workerId, text: a.workerId }),
    h("td", { class: "small" }, clockEl(a.claimedAt, true)),
    h("td", { class: "num", text: a.durationMs == null ? "running" : msText(a.durationMs) }),
    h("td", {}, badge(a.outcome, "outcome-" + a.outcome)),
    h("td", { class: "mono small" }, a.classification || "—", a.throttleFree ? h("span", { class: "muted throttle-free", title: "A provider throttle: not counted against maxAttempts", text: "throttle, not counted" }) : ""),
    h("td", { class: "num", text: a.httpStatus == null ? "—" : String(a.httpStatus) }),
    h("td", { class: "small message-col", title: a.message || null, text: a.message || "—" }),
    h("td", { class: "num strong", text: a.selectedDelayMs == null ? "—" : msText(a.selectedDelayMs) }),
    h("td", { class: "small" }, a.nextDueAt ? clockEl(a.nextDueAt, true) : a.outcome === "running" ? "" : "no retry")));

  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "chart timeline");
  svg.setAttribute("id", "timeline");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "Attempts and the delays between them on a time axis");
  const details = attempts.map((a) => h("article", { class: "attempt-card", id: "attempt-" + a.number },
    h("h3", {}, `Attempt ${a.number} `, badge(a.outcome, "outcome-" + a.outcome), " ", h("span", { class: "muted small", text: a.classification })),
    h("p", { class: "small" }, `Worker ${a.workerId || "—"} · claimed ${when(a.claimedAt, true)}`, a.durationMs != null ? ` · ran ${msText(a.durationMs)}` : "",
      a.httpStatus != null ? ` · HTTP ${a.httpStatus}` : "", a.message ? ` · “${a.message}”` : ""),
    deliveryDetails(a),
    a.nextDueAt ? arithmetic(policy, a) : h("p", { class: "muted small", text: afterAttempt(j, a) })));

  return [
    heading(`Job #${j.id}`, null, ...actions),
    h("div", { class: "job-head" }, stateBadge(j.state), " ", h("span", { class: "mono", text: toolRef(j) }), " on ", link("/endpoints/" + encodeURIComponent(j.endpoint), j.endpoint)),
    h("div", { class: "failure-slot" }, failure),
    h("div", { class: "hold-slot" }, hold),
    h("div", { class: "split split-even job-split" },
      h("section", { class: "card" }, h("h2", { text: "Job" }), factList([
        ["State", stateBadge(j.state)],
        ["Attempt", j.throttles ? `${j.attempt - j.throttles} of ${j.maxAttempts} counted, and ${j.throttles} ${j.throttles === 1 ? "throttle" : "throttles"} not counted` : `${j.attempt} of ${j.maxAttempts}`],
        j.lastError ? ["Last error", h("span", { id: "fact-last-error", text: j.lastError })] : null,
        j.state === "scheduled" ? ["Due", h("span", {}, timeEl(j.dueAt, true), ` (${relative(j.dueAt)})`)] : null,
        j.state === "running" ? ["Lease", h("span", {}, `${j.workerId} until `, timeEl(j.leaseExpiresAt))] : null,
        ["Tool", link("/tools#" + encodeURIComponent(toolRef(j)), toolRef(j), "mono")],
        ["Idempotency key", h("span", { class: "mono", text: j.idempotencyKey || "—" })],
        ["Flow key", j.flowKey ? h("a", { href: "/jobs" + query({ flowKey: j.flowKey }), class: "mono", id: "job-flow-key", title: "The jobs of this flow key", text: j.flowKey }) : h("span", { id: "job-flow-key", text: "—" })],
        ["Run", j.runId ? link("/runs/" + j.runId, "#" + j.runId) : "—"],
        j.replayOf ? ["Replay of", link("/jobs/" + j.replayOf, "#" + j.replayOf)] : null,
        ["Created", timeEl(j.createdAt)],
        j.finishedAt ? ["Finished", timeEl(j.finishedAt)] : null,
      ]), j.payload !== undefined ? h("details", { class: "printed" }, h("summary", { text: "Payload" }), h("pre", { class: "json", text: JSON.stringify(j.payload, null, 2) })) : null),
      h("section", { class: "card", id: "snapshot" }, h("h2", { text: "Snapshotted policy" }),
        h("p", { class: "help" }, `Copied at enqueue from the ${snap.source || "resolved"} policy; later edits do not change it.`),
        factList([
          ["Preset", snap.preset || "—"],
          ["Max attempts", `${snap.maxAttempts}${snap.maxAttemptsOverridden ? " (set at enqueue)" : ""}`],
          ["Initial delay", msText(snap.initialDelayMs)],
          ["Multiplier", B.formatNumber(snap.multiplier)],
          ["Max delay", msText(snap.maxDelayMs)],
          ["Jitter", `± ${B.formatNumber(snap.jitterPercent)}%`],
          ["Lease timeout", msText(snap.timeoutMs)],
        ]))),
    h("section", { class: "card", "aria-labelledby": "timeline-title" },
      h("div", { class: "card-head" }, h("h2", { id: "timeline-title", text: "Attempt timeline" }),
        h("ul", { class: "legend" },
          h("li", {}, h("span", { class: "key key-run" }), "attempt"),
          h("li", {}, h("span", { class: "key key-range" }), "jitter range"),
          h("li", {}, h("span", { class: "key key-base" }), "base delay"),
          h("li", {}, h("span", { class: "key key-seed" }), "sample"),
          h("li", {}, h("span", { class: "key key-hint" }), "retry-after hint"),
          h("li", {}, h("span", { class: "key key-due" }), "next due"))),
      attempts.length ? h("div", { class: "table-wrap timeline-wrap" }, svg) : h("p", { class: "empty", id: "no-attempt", text: "No attempt yet." }),
      attempts.length ? h("div", { class: "table-wrap" }, h("table", { class: "data attempts", id: "attempts-table" },
        h("thead", {}, h("tr", {}, ["#", "Worker", "Claimed (UTC)", "Duration", "Outcome", "Classification", "Status", "Message", "Delay", "Next due (UTC)"].map((t, i) => h("th", { class: [0, 3, 6, 8].includes(i) ? "num" : "", text: t })))),
        h("tbody", {}, rows))) : h("div", { class: "table-slot" })),
    h("div", { class: "arith-slot" }, attempts.length ? h("section", { class: "card" }, h("h2", { text: "Delay arithmetic" }),
      h("p", { class: "formula" }, "base = min(maxDelay, initialDelay × multiplier^(n−1)); jittered = round(base × (1 − j + u × 2j)); selected = min(24 h, max(jittered, retry-after))"),
      h("div", { class: "attempt-cards" }, details)) : null),
  ];
}
