// Operator controls on the endpoint page: pause and resume the endpoint,
// close or open its circuit by hand, the jobs its gates hold now (paged),
// and the last actions taken on it (the audit log). Owner keys get the
// buttons; other keys see the same state without them. Everything goes
// through the public /v1 API (dashboard-api.js), like the rest of the page.
import { h, toast } from "./ui.js";
import { circuitOpenEnd, GATE_NAMES } from "./console-kit.js";
import { api, ApiError, query } from "./dashboard-api.js";
import { countText, when, timeEl, plainTimes } from "./dashboard-format.js";
import { waitingText } from "./view-overview.js";
import { runAllHeld } from "./ops-runheld.js";
import { REPLAYABLE_STATES } from "./limits.js";

// The card's styles live beside it, so dashboard.css stays as it is.
if (!document.getElementById("ops-style")) {
  document.head.append(h("link", { id: "ops-style", rel: "stylesheet", href: new URL("./dashboard-ops.css", import.meta.url).href }));
}

const HELD_PAGE = 10;
const AUDIT_SHOWN = 5;
const REASON_MAX = 500;

// What holds the jobs, in a sentence; a gate not worded here shows by name.
const HELD_BY = {
  paused: "the pause", circuit: "the circuit breaker", max_concurrent: "the concurrency limit", rate_limit: "the rate limit",
  key_order: "the order of their key", key_concurrency: "the concurrency limit per key", key_rate: "the rate limit per key",
  daily_budget: "the daily budget", monthly_budget: "the monthly budget", delivery_window: "the quiet hours",
  key_daily_budget: "the daily budget per key", key_monthly_budget: "the monthly budget per key",
};

// at is a time inside a sentence or a line of text: UTC, then the local time
// in brackets (dashboard-format.js), as the rest of the dashboard prints it.
const at = (iso) => h("time", { datetime: iso || "", title: iso || "" }, when(iso));

// pauseText is the sentence of a pause: "Paused by ops at 2026-… UTC (… local): reason".
function pauseText(p) {
  return h("span", {}, "Paused by ", h("strong", { class: "ops-by", text: p.by }), " at ", at(p.at), p.reason ? ": " + p.reason : ".");
}

function circuitText(c, paused) {
  if (c.state === "open") {
    return h("span", {}, "Circuit ", h("strong", { text: "open" }), c.openedBy ? ` (opened by hand by ${c.openedBy})` : "", " since ", at(c.openedAt),
      ...circuitOpenEnd(c, paused));
  }
  if (c.state === "half_open") return h("span", {}, "Circuit ", h("strong", { text: "half-open" }), c.probeJobId ? `: probe job #${c.probeJobId} decides.` : ": the next claim is a probe.");
  return h("span", {}, "Circuit ", h("strong", { text: "closed" }), ` · ${c.failures} consecutive failure${c.failures === 1 ? "" : "s"} counted.`);
}

// confirmAction asks through the page's #confirm dialog (dashboard.html);
// the Failures card's replays ask through it too.
export function confirmAction(title, body, yes) {
  const d = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-body").textContent = body;
  document.getElementById("confirm-yes").textContent = yes;
  d.returnValue = "";
  return new Promise((resolve) => {
    d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true });
    d.showModal();
    document.getElementById("confirm-no").focus();
  });
}

// askReason opens the pause dialog and resolves to the reason typed, or null
// when the person went back. Line breaks become spaces: the reason is one
// line of text wherever it is shown, and the server refuses control
// characters.
function askReason(name) {
  let d = document.getElementById("pause-dialog");
  if (!d) {
    const input = h("textarea", { id: "pause-reason", name: "reason", rows: "3", maxlength: String(REASON_MAX), "aria-describedby": "pause-reason-help" });
    const count = h("span", { id: "pause-reason-count" });
    input.addEventListener("input", () => { count.textContent = `${input.value.length} / ${REASON_MAX}`; });
    // The reason is one line wherever it is shown: Enter pauses, as in a
    // one-line field (Shift+Enter still breaks the line, made a space).
    // The dialog closes on the key's release: closed on the press, focus
    // went back to the Pause button, whose click the rest of the key
    // press then fired, opening the dialog again.
    let enter = false;
    input.addEventListener("keydown", (ev) => {
      enter = ev.key === "Enter" && !ev.shiftKey && !ev.isComposing;
      if (enter) ev.preventDefault();
    });
    input.addEventListener("keypress", (ev) => { if (enter) ev.preventDefault(); });
    input.addEventListener("keyup", (ev) => {
      if (ev.key === "Enter" && enter) { enter = false; d.close("ok"); }
    });
    d = h("dialog", { id: "pause-dialog", class: "dialog", "aria-labelledby": "pause-title" },
      h("form", { method: "dialog" },
        h("h2", { id: "pause-title" }),
        h("p", { text: "Its due jobs stay scheduled and spend no attempt, for workers and HTTP delivery alike, until someone resumes it. People who look at the endpoint or its jobs see who paused it and why." }),
        h("div", { class: "field" },
          h("label", { for: "pause-reason" }, "Reason ", h("span", { class: "unit", text: "optional" })),
          input,
          h("p", { class: "help", id: "pause-reason-help" }, "Shown with the pause, e.g. a link to the incident. Enter pauses. ", count)),
        h("div", { class: "button-row end" },
          h("button", { type: "submit", value: "cancel", id: "pause-no", class: "button", text: "Back" }),
          h("button", { type: "submit", value: "ok", id: "pause-yes", class: "button primary", text: "Pause endpoint" }))));
    document.body.append(d);
  }
  document.getElementById("pause-title").textContent = `Pause ${name}?`;
  const input = document.getElementById("pause-reason");
  input.value = "";
  document.getElementById("pause-reason-count").textContent = `0 / ${REASON_MAX}`;
  d.returnValue = "";
  return new Promise((resolve) => {
    d.addEventListener("close", () => resolve(d.returnValue === "ok" ? input.value.replace(/\s+/g, " ").trim() : null), { once: true });
    d.showModal();
    input.focus();
  });
}

// heldRow is one held job of the operator controls' list.
function heldRow(j) {
  return h("tr", {},
    h("td", {}, h("a", { href: "/jobs/" + j.id, text: "#" + j.id })),
    h("td", { text: j.tool + "@" + j.version }),
    h("td", { text: `${j.attempt} / ${j.maxAttempts}` }),
    h("td", {}, timeEl(j.dueAt)),
    h("td", { "data-gate": j.heldBy ? j.heldBy.gate : "", title: j.heldBy ? plainTimes(j.heldBy.detail) : "", text: j.heldBy ? j.heldBy.gate.replaceAll("_", " ") : "—" }));
}

// heldJobs is the operator controls' list of an endpoint's due jobs held by
// its gates, a page at a time: loadHeld(false) reads the first page again,
// loadHeld(true) appends the next. Its count is the server's (held, the
// overview's count too), not the rows shown.
function heldJobs(enc, stale) {
  const heldBody = h("tbody");
  const heldTable = h("div", { class: "table-wrap", hidden: true }, h("table", { class: "data", id: "ops-held-table" },
    h("thead", {}, h("tr", {}, ["Job", "Tool", "Attempt", "Due", "Held by"].map((t) => h("th", { text: t })))), heldBody));
  const heldNote = h("p", { class: "help", id: "ops-held-note" });
  const heldMore = h("button", { type: "button", class: "button small", id: "ops-held-more", text: "More held jobs", hidden: true });
  let cursor = null;
  const loadHeld = async (more) => {
    const page = await api("GET", `/v1/endpoints/${enc}/held` + query({ limit: HELD_PAGE, cursor: more ? cursor : "" }));
    if (stale()) return;
    if (!more) heldBody.replaceChildren();
    heldBody.append(...page.jobs.map(heldRow));
    cursor = page.nextCursor;
    heldMore.hidden = !cursor;
    heldTable.hidden = heldBody.childElementCount === 0;
    const gate = page.jobs.length && page.jobs[0].heldBy ? page.jobs[0].heldBy.gate : "";
    const n = page.held;
    heldNote.dataset.held = String(n);
    heldNote.textContent = n > 0 ? `${countText(n, page.heldCapped)} due job${n === 1 ? "" : "s"} held by ${HELD_BY[gate] || GATE_NAMES[gate] || gate || "its gates"}.`
      : page.due > 0 ? waitingText({ due: page.due, dueCapped: page.heldCapped, dispatcher: page.dispatcher })
        : "No due job of this endpoint is held by its gates now.";
  };
  return { heldNote, heldTable, heldMore, loadHeld };
}

// operatorControls returns the "Operator controls" card of an endpoint and
// fills it. canWrite is true for owner keys; stale() says the page moved on.
export function operatorControls(initial, canWrite, stale) {
  const enc = encodeURIComponent(initial.name);
  let ep = initial;
  const stateBox = h("div", { id: "ops-state" });
  const buttons = h("div", { class: "button-row", id: "ops-buttons" });
  const problem = h("div", { id: "ops-error", role: "alert" });
  const { heldNote, heldTable, heldMore, loadHeld } = heldJobs(enc, stale);
  const auditList = h("ol", { class: "ops-audit", id: "ops-audit" });
  // Run all held now: the endpoint's scheduled jobs made due now, paced
  // by its gates (ops-runheld.js); owner keys only, like run-now.
  const runHeld = canWrite ? h("div", { class: "button-row" }, h("button", { type: "button", id: "ops-run-held", class: "button small", text: "Run all held now…",
    onclick: () => runAllHeld({ endpoint: initial.name, state: "scheduled" }, ep, stale)
      .then((r) => r && Promise.all([loadHeld(false), loadAudit()]))
      .catch((e) => { if (!stale()) problem.replaceChildren(h("div", { class: "alert" }, h("p", { class: "alert-title", text: "Could not run the held jobs now: " + e.message }))); }) })) : null;
  const card = h("section", { class: "card", id: "ops-card", "aria-labelledby": "ops-title" },
    h("div", { class: "card-head" }, h("h2", { id: "ops-title", text: "Operator controls" })),
    // The state and its buttons first, the links to the jobs after them:
    // Pause is two Tabs from the page's heading.
    stateBox, buttons, problem,
    h("p", { class: "small ops-links" }, h("a", { href: "/jobs" + query({ endpoint: initial.name, state: "scheduled" }), text: "Scheduled jobs" }), " · ",
      h("a", { href: "/jobs" + query({ endpoint: initial.name, state: REPLAYABLE_STATES.filter((s) => s !== "cancelled").join(",") }) + "#results", id: "ops-failed-jobs", text: "Failed jobs" })),
    h("h3", { text: "Held jobs" }), heldNote, runHeld, heldTable, heldMore,
    h("h3", { text: "Recent actions" }),
    canWrite ? auditList : h("p", { class: "help", text: "Only owner keys read the audit log." }));

  const loadAudit = async () => {
    if (!canWrite) return;
    const a = await api("GET", "/v1/audit" + query({ target: "endpoint:" + initial.name, limit: AUDIT_SHOWN }));
    if (stale()) return;
    auditList.replaceChildren(...(a.entries.length ? a.entries.map((e) => h("li", { "data-action": e.action },
      at(e.at), " · ", h("strong", { text: e.actor }), " · ", h("code", { text: e.action }), e.detail ? " — " + e.detail : "")) : [h("li", { class: "muted", text: "No operator action on this endpoint yet." })]));
  };

  const act = async (what, path, body, done) => {
    problem.replaceChildren();
    for (const b of buttons.querySelectorAll("button")) b.disabled = true;
    try {
      ep = await api("POST", `/v1/endpoints/${enc}/${path}`, body);
      if (stale()) return;
      toast(done);
    } catch (e) {
      if (stale()) return;
      const lines = e instanceof ApiError ? e.fields.map((f) => f.message) : [];
      problem.replaceChildren(h("div", { class: "alert" }, h("p", { class: "alert-title", text: `Could not ${what}: ${e.message}` }),
        lines.length ? h("ul", {}, lines.map((l) => h("li", { text: l }))) : null));
    }
    renderState();
    // The buttons were disabled and replaced (Pause became Resume): focus
    // goes to the one that undoes what was done, not to the page's body.
    const again = buttons.querySelector(path.startsWith("circuit") ? '[id^="ops-circuit"]' : "#ops-pause, #ops-resume");
    if (again && (!document.activeElement || document.activeElement === document.body)) again.focus();
    await Promise.all([loadHeld(false), loadAudit()]).catch(showLoadError);
  };

  // The page's heading shows the circuit too (dashboard.js); keep it true
  // after an action here rather than render the heading again.
  const syncHeading = () => {
    const b = document.querySelector('#endpoint-head [class*="status-circuit-"]');
    if (!b) return;
    b.className = "status status-circuit-" + ep.circuit.state;
    b.textContent = { closed: "Circuit closed", open: "Circuit open", half_open: "Circuit half-open" }[ep.circuit.state] || ep.circuit.state;
  };

  const renderState = () => {
    syncHeading();
    stateBox.replaceChildren(
      ep.paused
        ? h("p", { class: "held held-gated", id: "ops-paused", "data-gate": "paused" }, pauseText(ep.paused))
        : h("p", { class: "held held-open", id: "ops-paused" }, "Not paused: due jobs are claimed as the endpoint's gates allow."),
      h("p", { class: "held", id: "ops-circuit" }, circuitText(ep.circuit, !!ep.paused)));
    if (!canWrite) {
      buttons.replaceChildren(h("p", { class: "help", text: "Pausing and circuits need an owner key." }));
      return;
    }
    const pause = ep.paused
      ? h("button", { type: "button", id: "ops-resume", class: "button primary", text: "Resume",
        onclick: () => act("resume", "resume", undefined, `${ep.name} resumed`) })
      : h("button", { type: "button", id: "ops-pause", class: "button danger", text: "Pause…",
        onclick: async () => {
          const reason = await askReason(ep.name);
          if (reason !== null) await act("pause", "pause", reason ? { reason } : {}, `${ep.name} paused`);
        } });
    const circuit = ep.circuit.state === "closed"
      ? h("button", { type: "button", id: "ops-circuit-open", class: "button danger", text: "Open circuit…",
        onclick: async () => {
          if (await confirmAction(`Open the circuit of ${ep.name}?`, `Claims stop now; after ${Math.round(ep.circuitOpenMs / 1000)} s one job goes through as a probe, as when failures open it.`, "Open circuit")) {
            await act("open the circuit", "circuit/open", undefined, `circuit of ${ep.name} opened`);
          }
        } })
      : h("button", { type: "button", id: "ops-circuit-close", class: "button", text: "Close circuit",
        onclick: () => act("close the circuit", "circuit/close", undefined, `circuit of ${ep.name} closed`) });
    buttons.replaceChildren(pause, circuit);
  };

  const showLoadError = (e) => {
    if (!stale()) problem.replaceChildren(h("div", { class: "alert" }, h("p", { class: "alert-title", text: "Could not load: " + e.message })));
  };
  heldMore.addEventListener("click", () => loadHeld(true).catch(showLoadError));
  // Another card of the page acted on this endpoint (the failures card's
  // replay): its audit entry and the jobs it made belong here too.
  const onAudited = (e) => {
    if (stale()) {
      document.removeEventListener(AUDITED, onAudited);
      return;
    }
    if (e.detail && e.detail.target === "endpoint:" + initial.name) Promise.all([loadHeld(false), loadAudit()]).catch(showLoadError);
  };
  document.addEventListener(AUDITED, onAudited);
  renderState();
  Promise.all([loadHeld(false), loadAudit()]).catch(showLoadError);
  return card;
}

// AUDITED is the event a card of the endpoint page sends on document when
// it did something the audit log records: { detail: { target } }.
export const AUDITED = "ratchet:audited";
