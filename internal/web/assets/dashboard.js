// The Ratchet dashboard: overview, endpoint policy editor, jobs with bulk
// actions, job timelines, tools and runs. One page routed on the client with
// the history API (the server answers every dashboard path with this shell).
// It reads and writes only through the public /v1 API with the signed-in key
// (dashboard-api.js), and never loads more than one page of jobs: lists are
// cursor-paged and counts come from GET /v1/jobs/count.
import * as B from "./backoff.js";
import { SEARCH_WINDOW, JOB_STATES, REPLAYABLE_STATES, CANCELLABLE_STATES, CLAIMABLE_STATES, UNSUCCESSFUL_STATES, JOB_SORTS, CUSTOM_PLANS, ATTEMPT_OUTCOMES } from "./limits.js";
import { $, h, toast as showToast, fieldText } from "./ui.js";
import { api, ApiError, getKey, setKey, hooks, query, openStream, session, ASK_MS } from "./dashboard-api.js";
import { lanes, draw, deliveryDetails } from "./dashboard-timeline.js";
import { operatorControls } from "./dashboard-ops.js";
import { failuresCard } from "./dashboard-failures.js";
import { workersView, historyView } from "./dashboard-observe.js";
import { schedulesView, scheduleView } from "./dashboard-schedules.js";
import { num, when, span, compactSpan, clockEl, clockBoth, timeEl, msText, timesIn, plainTimes } from "./dashboard-format.js";

// Relative times ("in 12 s") are rewritten this often between events.
const TICK_MS = 5000;
const PAGE_SIZE = 50;
const RUNS_PAGE = 50;
// The job states (tabs, filters, counts) and which of them each action
// takes come from the server's state machine (limits.js is generated from
// package wire); none is typed here.
const STATES = JOB_STATES;
const REPLAYABLE = REPLAYABLE_STATES;
const CANCELLABLE = CANCELLABLE_STATES;
// orList writes a list for a sentence: "a", "a or b", "a, b or c".
const orList = (xs) => xs.length < 2 ? xs.join("") : `${xs.slice(0, -1).join(", ")} or ${xs[xs.length - 1]}`;

const state = {
  me: null,
  skew: 0, // server clock minus this browser's clock, from /v1/overview
  timer: 0,
  stream: null, // the open GET /v1/stream of the current view
  token: 0, // bumped on every navigation; stale async work checks it
  flash: null, // a result to show on the next render of the jobs page
};

// ---------- DOM helpers ----------

// The dashboard's messages (errors among them) stay a little longer.
const toast = (message) => showToast(message, 3200);

// ---------- formatting ----------
// The shared formatting lives in dashboard-format.js; what needs the
// server's clock stays here.

const serverNow = () => Date.now() + state.skew;

// relative is a time from now, compact ("in 1 h 10 min", "4 min ago");
// wherever it is printed the exact time is beside it or in its tooltip.
function relative(iso) {
  const d = Date.parse(iso) - serverNow();
  if (Math.abs(d) < 1000) return "now";
  return d > 0 ? "in " + compactSpan(d) : compactSpan(d) + " ago";
}

function badge(text, kind) {
  return h("span", { class: "status status-" + kind, text });
}

const stateBadge = (s) => badge(s, s);

function circuitBadge(c) {
  const label = { closed: "Circuit closed", open: "Circuit open", half_open: "Circuit half-open" }[c.state] || c.state;
  return badge(label, "circuit-" + c.state);
}

function setTitle(t) {
  document.title = t + " · Ratchet";
}

function heading(title, lede, ...actions) {
  return h("section", { class: "intro view-head" },
    // tabindex -1: focusHeading puts focus here after a navigation, and the
    // attribute is part of the heading, so a live update that patches the
    // view (morph) keeps it and the focus.
    h("div", {}, h("h1", { text: title, tabindex: "-1" }), lede ? h("p", { class: "lede", text: lede }) : null),
    actions.length ? h("div", { class: "actions" }, ...actions) : null);
}

function alertBox(title, lines) {
  return h("div", { class: "alert", role: "alert" }, h("p", { class: "alert-title", text: title }),
    lines && lines.length ? h("ul", {}, lines.map((l) => h("li", { text: l }))) : null);
}

function errorLines(e) {
  if (e instanceof ApiError && e.fields.length) return e.fields.map((f) => f.message);
  return [];
}

// setView replaces the view's content. Like h, it skips null, undefined and
// false, which replaceChildren would print as the text "null".
function setView(...nodes) {
  $("skip-view")?.remove();
  $("view").replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined && n !== false));
  watchTables($("view"));
}

// viewSkip puts a second skip link after the page's "Skip to content",
// to the part of the view people come for (the jobs list was 38 Tabs from
// the top of the page, past the menu, the search, the filters and the
// tabs); setView takes it away. It moves focus to the target (made
// focusable) without touching the address.
function viewSkip(target, text) {
  const a = h("a", { class: "skip-link", id: "skip-view", href: "#" + target, text });
  a.addEventListener("click", (ev) => {
    ev.preventDefault();
    const el = $(target);
    if (!el) return;
    el.tabIndex = -1;
    el.focus();
  });
  document.querySelector(".skip-link").after(a);
}

// watchTables marks the tables under root that scroll sideways; call it
// after content is patched in place too.
function watchTables(root) {
  for (const w of root.querySelectorAll(".table-wrap")) { watchOverflow(w); markOverflow(w); }
}

// A table wider than its card scrolls inside its .table-wrap. markOverflow
// says so (data-overflow, styled in dashboard.css with edge shadows and a
// "scroll sideways" line) and lets the keyboard reach and scroll it.
const overflowObserver = new ResizeObserver((entries) => {
  for (const e of entries) markOverflow(e.target.closest(".table-wrap"));
});

function watchOverflow(w) {
  overflowObserver.observe(w);
  if (w.firstElementChild) overflowObserver.observe(w.firstElementChild);
}

function markOverflow(w) {
  if (!w) return;
  const over = w.scrollWidth > w.clientWidth + 1;
  if (w.dataset.overflow === String(over)) return;
  w.dataset.overflow = String(over);
  if (over) {
    w.tabIndex = 0;
    w.setAttribute("role", "region");
    w.setAttribute("aria-label", (w.querySelector("table") ? "Table" : "Timeline") + ", scrolls sideways");
  } else {
    w.removeAttribute("tabindex");
    w.removeAttribute("role");
    w.removeAttribute("aria-label");
  }
}

function failView(e) {
  setView(heading("Something went wrong"), alertBox(e.message, errorLines(e)));
  ready();
}

function ready() {
  document.documentElement.dataset.ready = "true";
  if (state.focusNext) {
    state.focusNext = false;
    // A control that re-renders its own view (a sortable column's header)
    // names itself in the history entry and keeps the focus.
    const keep = history.state && history.state.focus && document.querySelector(history.state.focus);
    // A link to a list's results (#results: an endpoint's "Failed jobs")
    // lands on the first job, as a link to a fragment lands on it: the
    // filters it set are above, a Shift+Tab away.
    const first = location.hash === "#results" && document.querySelector('#jobs-table tbody a[href^="/jobs/"]');
    if (keep) keep.focus(); else if (first) first.focus(); else focusHeading();
  }
}

// focusHeading moves focus to the view's heading, so that after a
// navigation a keyboard or screen reader starts at the new content rather
// than at the top of the page (focus would otherwise drop to the body).
function focusHeading() {
  const h1 = document.querySelector("#view h1");
  if (!h1) return;
  h1.tabIndex = -1;
  h1.focus({ preventScroll: true });
}

// keepFocus puts focus back on the page when an update removed the focused
// control (a Cancel button that became Replay): on the first of the
// candidates that exists, else on the heading.
function keepFocus(...candidates) {
  const a = document.activeElement;
  if (a && a !== document.body && document.contains(a)) return;
  for (const c of candidates) {
    const e = typeof c === "string" ? document.querySelector(c) : c;
    if (e) { e.focus(); return; }
  }
  focusHeading();
}

// FAILED_FILTER is the state filter of the jobs that failed: the
// replayable states but cancelled (failed and exhausted).
const FAILED_FILTER = REPLAYABLE_STATES.filter((s) => s !== "cancelled").join(",");

function link(href, text, cls) {
  return h("a", { href, class: cls, text });
}

const toolRef = (j) => j.tool + "@" + j.version;

// ---------- sign in ----------

function showSignin(message) {
  stopLive();
  state.token++;
  state.me = null;
  $("app").hidden = true;
  $("signin").hidden = false;
  setTitle("Sign in");
  const err = $("api-key-error");
  err.hidden = !message;
  err.textContent = message || "";
  $("api-key").setAttribute("aria-invalid", message ? "true" : "false");
  document.documentElement.dataset.view = "signin";
  ready();
  $("api-key").focus();
}

async function signIn(key) {
  const me = await api("GET", "/v1/me", undefined, key);
  setKey(key);
  state.me = me;
  $("signin").hidden = true;
  $("app").hidden = false;
  $("api-key").value = "";
  const p = me.project;
  $("session").replaceChildren("Signed in to project ", h("strong", { text: p.name }), " ",
    badge(p.plan + " plan", "plan"), " with ", h("span", { id: "key-scope", text: `a${me.key.scope === "owner" ? "n" : ""} ${me.key.scope} key` }), ".");
  render();
}

// ---------- routing ----------

const ROUTES = [
  { re: /^\/$/, name: "overview", view: overviewView },
  { re: /^\/endpoints\/([^/]+)$/, name: "endpoint", view: endpointView },
  { re: /^\/jobs$/, name: "jobs", view: jobsView },
  { re: /^\/jobs\/(\d+)$/, name: "job", view: jobView },
  { re: /^\/tools$/, name: "tools", view: toolsView },
  { re: /^\/runs$/, name: "runs", view: runsView },
  { re: /^\/runs\/(\d+)$/, name: "run", view: runView },
  { re: /^\/schedules$/, name: "schedules", view: schedulesView },
  { re: /^\/schedules\/([^/]+)$/, name: "schedule", view: scheduleView },
  { re: /^\/workers$/, name: "workers", view: workersView },
  { re: /^\/history$/, name: "history", view: historyView },
];

function match(pathname) {
  for (const r of ROUTES) {
    const m = r.re.exec(pathname);
    if (m) return { route: r, args: m.slice(1).map(decodeURIComponent) };
  }
  return null;
}

// navSection mirrors web.NavSection: the header entry of a path.
function navSection(pathname) {
  const first = pathname.replace(/^\//, "").split("/")[0];
  return first === "endpoints" ? "/" : "/" + first;
}

export function navigate(url, replace = false, histState = null) {
  if (replace) history.replaceState(histState, "", url); else history.pushState(histState, "", url);
  state.focusNext = true;
  render();
  window.scrollTo(0, 0);
}

function render() {
  if (!state.me) return;
  stopLive();
  const token = ++state.token;
  const m = match(location.pathname);
  const section = navSection(location.pathname);
  for (const a of document.querySelectorAll(".site-nav a")) {
    if (a.getAttribute("href") === section) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  document.documentElement.dataset.ready = "false";
  if (!m) {
    document.documentElement.dataset.view = "notfound";
    setView(heading("Not found", "There is no dashboard page at this address."), h("p", {}, link("/", "Go to the overview")));
    ready();
    return;
  }
  document.documentElement.dataset.view = m.route.name;
  setView(h("p", { class: "loading muted", text: "Loading…" }));
  const stale = () => token !== state.token;
  m.route.view(m.args, stale).catch((e) => {
    if (!stale()) failView(e);
  });
}

// ---------- overview ----------

// ---------- live updates ----------

// stopLive ends the view's stream and timer (on navigation and sign-out).
function stopLive() {
  clearTimeout(state.timer);
  clearInterval(state.timer);
  clearTimeout(state.hiddenTimer);
  if (state.stream) state.stream.close();
  state.stream = null;
  state.reopen = null;
}

// A browser gives one site only six connections at a time, and every open
// stream holds one: a tab hidden for HIDDEN_CLOSE_MS closes its stream and
// opens it again when it is shown, so many open tabs cannot starve the
// one in front.
const HIDDEN_CLOSE_MS = 10000;
document.addEventListener("visibilitychange", () => {
  if (!state.reopen) return;
  clearTimeout(state.hiddenTimer);
  if (document.hidden) {
    state.hiddenTimer = setTimeout(() => {
      if (state.stream) state.stream.close();
      state.stream = null;
      if (state.paused) state.paused();
    }, HIDDEN_CLOSE_MS);
  } else if (!state.stream) {
    state.stream = state.reopen();
  }
});

// liveLine is the "Live" line of a page that updates itself from
// GET /v1/stream. It says what is true: green "Live" while the stream is
// open, amber "Reconnecting" after it dropped, red "Disconnected" after
// three failed tries or when the server refused the stream, each with the
// time of the data shown and when the next try is. The live region is only
// the short state, so a screen reader hears a change of state, not every
// update; the details beside it are outside the region.
function liveLine() {
  const liveState = h("span", { id: "refresh-state", role: "status", "aria-live": "polite" });
  const detail = h("span", { id: "refresh-detail" });
  const el = h("p", { class: "refresh muted small connecting", id: "refresh", "data-state": "connecting" },
    h("span", { class: "live-dot", "aria-hidden": "true" }), liveState, detail);
  let shownAt = "";
  const say = (cls, text, more) => {
    el.classList.toggle("connecting", cls === "connecting");
    el.classList.toggle("stale", cls === "reconnecting" || cls === "down");
    el.classList.toggle("down", cls === "down");
    el.dataset.state = cls;
    if (liveState.textContent !== text) liveState.textContent = text;
    detail.textContent = more;
  };
  const from = () => (shownAt ? ` · showing data from ${when(shownAt)}` : "");
  return {
    el,
    // shown records the server time of the data on screen.
    shown(iso) {
      shownAt = iso;
      el.dataset.updated = iso;
      if (el.dataset.state === "live") say("live", "Live", ` · updated ${when(iso)} · updates as they happen`);
    },
    status(s) {
      if (s.state === "live") {
        if (el.dataset.state !== "live") say("live", "Live", shownAt ? ` · updated ${when(shownAt)} · updates as they happen` : " · updates as they happen");
        el.dataset.heard = String(s.at);
      } else if (s.state === "held") {
        say("reconnecting", "Paused", `${from()} · live updates are paused; the list stays as it is until you resume them`);
      } else if (s.state === "paused") {
        say("reconnecting", "Paused", `${from()} · the tab is hidden; updates resume when you come back`);
      } else if (s.state === "connecting") {
        if (el.dataset.state === "connecting" || !shownAt) say("connecting", "Connecting…", from());
      } else {
        const down = s.failures >= 3 || /too many/.test(s.message);
        say(down ? "down" : "reconnecting", down ? "Disconnected" : "Reconnecting",
          `${from()} · ${s.message} · next try in ${span(s.retryInMs)}`);
      }
    },
  };
}

// live opens the view's stream, feeding events to onEvent and the stream's
// state to line, and re-runs tick every TICK_MS so relative times stay true
// between events.
function live(params, line, onEvent, stale, tick) {
  stopLive();
  state.reopen = () => openStream(params, {
    onEvent: (name, data) => { if (!stale()) onEvent(name, data); },
    onStatus: (s) => { if (!stale()) line.status(s); },
  });
  state.paused = () => { if (!stale()) line.status({ state: "paused" }); };
  state.stream = state.reopen();
  if (tick) state.timer = setInterval(() => { if (!stale()) tick(); }, TICK_MS);
}

// ---------- overview ----------

async function overviewView(_, stale) {
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
  const held = eps.reduce((t, e) => t + (e.due > 0 && e.heldBy ? e.due : 0), 0);
  const parts = [];
  if (open) parts.push(`${num(open)} open circuit${open === 1 ? "" : "s"}`);
  if (paused) parts.push(`${num(paused)} paused`);
  if (held) parts.push(`${num(held)} due ${held === 1 ? "job" : "jobs"} held`);
  // Nodes, not strings: morphChildren patches nodes.
  return parts.length ? [h("strong", { text: "Needs attention: " }), document.createTextNode(parts.join(" · "))] : [];
}

// morphChildren makes parent's children look like next without replacing
// nodes that can be kept: same-tag elements are patched in place (their
// attributes, inline style and children), text nodes get new text, and
// only what differs in kind is replaced. A focused link therefore keeps its
// focus across a refresh.
function morphChildren(parent, next) {
  const keyOf = (n) => (n && n.nodeType === Node.ELEMENT_NODE && n.dataset.key) || "";
  next.forEach((n, i) => {
    const k = keyOf(n);
    let cur = parent.childNodes[i];
    // Keyed children (data-key: a job row, a fact) keep their node when
    // others appear or go before them: the ones in between that are not
    // wanted any more go, and a new one is inserted before a kept one.
    if (k && cur && keyOf(cur) !== k) {
      const match = Array.from(parent.childNodes).slice(i + 1).find((o) => keyOf(o) === k);
      if (match) while (parent.childNodes[i] !== match) parent.childNodes[i].remove();
      cur = parent.childNodes[i];
    }
    if (cur && keyOf(cur) && keyOf(cur) !== k && next.slice(i + 1).some((x) => keyOf(x) === keyOf(cur))) {
      parent.insertBefore(n, cur);
      return;
    }
    if (!cur) parent.append(n);
    else if (!morph(cur, n)) parent.replaceChild(n, cur);
  });
  while (parent.childNodes.length > next.length) parent.lastChild.remove();
}

function morph(o, n) {
  if (o.nodeType !== n.nodeType) return false;
  if (o.nodeType === Node.TEXT_NODE) {
    if (o.data !== n.data) o.data = n.data;
    return true;
  }
  if (o.nodeType !== Node.ELEMENT_NODE || o.tagName !== n.tagName) return false;
  // An element with another id is another thing (the job page's Cancel
  // button becoming Replay): replace it, so its listeners go with it.
  if (o.id !== n.id || o.dataset.key !== n.dataset.key) return false;
  // A <details> the person opened or closed stays so.
  if (o.tagName === "DETAILS") n.open = o.open;
  if (o.isEqualNode(n)) return true;
  for (const a of Array.from(o.attributes)) if (!n.hasAttribute(a.name)) o.removeAttribute(a.name);
  for (const a of Array.from(n.attributes)) {
    // The strict CSP refuses style attributes; copy widths through the CSSOM.
    if (a.name === "style") { if (o.style.cssText !== n.style.cssText) o.style.cssText = n.style.cssText; continue; }
    if (o.getAttribute(a.name) !== a.value) o.setAttribute(a.name, a.value);
  }
  if (!n.hasAttribute("style") && o.hasAttribute("style")) o.style.cssText = "";
  morphChildren(o, Array.from(n.childNodes));
  return true;
}

function meter(value, max) {
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

// What each gate is called in a sentence; the gate names are the server's
// (limits.js), so a gate added there shows by its name until it is worded here.
const GATE_WORDS = {
  paused: "a pause",
  circuit: "the circuit breaker",
  max_concurrent: "the concurrency limit",
  rate_limit: "the rate limit",
  due_time: "their due time",
  key_order: "the order of its key",
  key_concurrency: "the concurrency limit per key",
  key_rate: "the rate limit per key",
};
const GATE_NAMES = Object.fromEntries(B.GATES.map((g) => [g, GATE_WORDS[g] || g.replaceAll("_", " ")]));

function heldLine(ep) {
  if (ep.due === 0) return h("p", { class: "held held-none" }, ep.scheduled ? `No job is due yet; ${num(ep.scheduled)} scheduled for later.` : "No jobs waiting.");
  if (!ep.heldBy) return h("p", { class: "held held-open" }, `${num(ep.due)} due and claimable: no gate holds them; they wait for a worker.`);
  const g = ep.heldBy;
  return h("p", { class: "held held-gated", "data-gate": g.gate },
    `${num(ep.due)} due, held by `, h("strong", { text: GATE_NAMES[g.gate] || g.gate }),
    g.until ? ` until ${when(g.until)} (${relative(g.until)})` : "", g.detail ? [" — ", detailEl(g.detail)] : ".");
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
    return h("p", { class: "circuit-note bad" }, `Open since ${when(c.openedAt)} after ${num(c.failures)} failure${c.failures === 1 ? "" : "s"}; half-opens at `,
      h("strong", { class: "half-opens", text: when(c.halfOpensAt) }), ` (${relative(c.halfOpensAt)}).`);
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
      metric("Due now", h("span", { class: "due" }, num(ep.due)))),
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
// 5 running · 60/min · ordered · fair", or is null when it has none.
function keyLimitsLine(ep, cls, id) {
  const parts = [];
  if (ep.keyMaxConcurrent != null) parts.push(`${num(ep.keyMaxConcurrent)} running`);
  if (ep.keyRateLimitPerMinute != null) parts.push(`${num(ep.keyRateLimitPerMinute)}/min`);
  if (ep.keyOrdered) parts.push("ordered");
  if (ep.fairKeys) parts.push("fair");
  if (!parts.length) return null;
  return h("p", { class: cls, id, title: "Limits on the jobs of each flow key, within the endpoint's own" }, h("strong", { text: "Per key:" }), " " + parts.join(" · "));
}

function policyLabel(pol) {
  if (!pol || !pol.preset) return "STANDARD";
  if (pol.preset !== "CUSTOM") return pol.preset;
  return `CUSTOM ${pol.maxAttempts} attempts from ${span(pol.initialDelayMs)} ×${B.formatNumber(pol.multiplier)}`;
}

// ---------- endpoint policy editor ----------

const POLICY_INPUTS = [
  { key: "maxAttempts", label: "Max attempts", unit: "1–10" },
  { key: "initialDelayMs", label: "Initial delay", unit: "ms" },
  { key: "multiplier", label: "Multiplier", unit: "1–4" },
  { key: "maxDelayMs", label: "Max delay", unit: "ms" },
  { key: "jitterPercent", label: "Jitter", unit: "± %" },
];
// range gives an endpoint setting the server's bounds (limits.js, generated
// from the Go constants) and its message (engine.ParseEndpointPolicy), so a
// rejection reads the same here and there.
function range(bound, unit, nullable) {
  const { min, max } = B.LIMITS[bound];
  const allowed = `${nullable ? "must be null (no limit) or" : "must be"} an integer from ${min} through ${max}${unit}`;
  return { lo: min, hi: max, allowed };
}

// The other endpoint settings, built from ENDPOINT_SETTINGS (limits.js,
// generated from wire.EndpointSettings' tags) so a new setting gets its
// field without an edit here: the endpoint's own integers (an "int" must
// be given; a "limit" may be empty for none), the limits per flow key
// (group KeyLimits, docs/flow-control.md) and their switches, held as
// "true" or "false" among the form's text values. The API keeps a limit
// per key an update leaves out; the form always sends all of them. The
// import sits here, beside its only use, rather than in the list above.
import { ENDPOINT_SETTINGS } from "./limits.js";
const settingInput = (f) => ({ key: f.key, label: f.label, unit: f.units, help: f.help, ...range(f.bound, f.unit, f.kind === "limit"), nullable: f.kind === "limit" });
const LIMIT_INPUTS = ENDPOINT_SETTINGS.filter((f) => f.kind !== "bool" && f.group !== "KeyLimits").map(settingInput);
const KEY_INPUTS = ENDPOINT_SETTINGS.filter((f) => f.kind !== "bool" && f.group === "KeyLimits").map(settingInput);
// The switches: all are limits per flow key today; one of the endpoint's
// own would show among them until the form gives it a place.
const KEY_FLAGS = ENDPOINT_SETTINGS.filter((f) => f.kind === "bool").map((f) => ({ key: f.key, label: f.label, help: f.help }));
// NUMBER_INPUTS are the settings typed as integers.
const NUMBER_INPUTS = [...LIMIT_INPUTS, ...KEY_INPUTS];
const FIELD_LABELS = Object.fromEntries([["preset", "Retry preset"], ...[...POLICY_INPUTS, ...NUMBER_INPUTS, ...KEY_FLAGS].map((f) => [f.key, f.label])]);
const ALL_KEYS = ["preset", ...[...POLICY_INPUTS, ...NUMBER_INPUTS, ...KEY_FLAGS].map((f) => f.key)];
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

// valuesOf is an endpoint as the form's text values.
function valuesOf(ep) {
  const pol = ep.policy && ep.policy.preset ? ep.policy : { preset: "STANDARD" };
  const p = B.policyParams(pol);
  const v = { preset: pol.preset };
  for (const f of POLICY_INPUTS) v[f.key] = String(p[f.key]);
  for (const f of NUMBER_INPUTS) v[f.key] = ep[f.key] == null ? "" : String(ep[f.key]);
  for (const f of KEY_FLAGS) v[f.key] = String(ep[f.key] === true);
  return v;
}

function sameValues(a, b) {
  return ALL_KEYS.every((k) => norm(a[k]) === norm(b[k]));
}

const norm = (s) => String(s ?? "").trim();

function validateLimits(v) {
  const errors = [];
  for (const f of NUMBER_INPUTS) {
    const raw = norm(v[f.key]);
    if (raw === "") {
      if (!f.nullable) errors.push({ field: f.key, message: B.fieldError(f.key, B.MISSING, "an update carries the full policy; " + f.allowed) });
      continue;
    }
    const n = JSON_NUMBER.test(raw) ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n < f.lo || n > f.hi) errors.push({ field: f.key, message: B.fieldError(f.key, JSON_NUMBER.test(raw) ? raw : B.quote(raw), f.allowed) });
  }
  return errors;
}

function bodyOf(v, expectedVersion) {
  const body = { expectedVersion, preset: v.preset };
  if (v.preset === "CUSTOM") for (const f of POLICY_INPUTS) body[f.key] = Number(norm(v[f.key]));
  for (const f of NUMBER_INPUTS) body[f.key] = norm(v[f.key]) === "" ? null : Number(norm(v[f.key]));
  for (const f of KEY_FLAGS) body[f.key] = v[f.key] === "true";
  return body;
}

function displayValue(v, key) {
  const s = norm(v[key]);
  if (s === "" && NUMBER_INPUTS.some((f) => f.key === key && f.nullable)) return "no limit";
  if (KEY_FLAGS.some((f) => f.key === key)) return s === "true" ? "on" : "off";
  if (POLICY_INPUTS.some((f) => f.key === key) && v.preset !== "CUSTOM") return s + " (preset)";
  return s;
}

// flowKeysCard lists the endpoint's busiest flow keys and the due jobs
// each key's own limits hold (GET /v1/endpoints/{name}/keys), re-read
// every few seconds while the page is open. Each key links to its jobs.
function flowKeysCard(name, stale) {
  const body = h("div", { id: "flow-keys-body" }, h("p", { class: "muted small", text: "Loading…" }));
  const card = h("section", { class: "card", id: "flow-keys", "aria-labelledby": "flow-keys-title" },
    h("div", { class: "card-head" }, h("h2", { id: "flow-keys-title", text: "Busiest flow keys" }), h("span", { class: "muted small", id: "flow-keys-note" })),
    body);
  const heldCell = (k) => {
    if (!k.heldBy) return h("td", { class: "held-col", text: k.held ? num(k.held) : "—" });
    return h("td", { class: "held-col", title: plainTimes(k.heldBy.detail) }, h("strong", { text: num(k.held) }), " by " + (GATE_NAMES[k.heldBy.gate] || k.heldBy.gate));
  };
  const show = (l) => {
    $("flow-keys-note").textContent = l.keyed ? "limits per key apply" : "no limits per key";
    if (!l.keys.length) {
      morphChildren(body, [h("p", { class: "empty", id: "flow-keys-empty", text: "No job of this endpoint in flight or queued has a flow key." })]);
      return;
    }
    morphChildren(body, [
      h("div", { class: "table-wrap" }, h("table", { class: "data", id: "flow-keys-table" },
        h("thead", {}, h("tr", {}, ["Key", "In flight", "Queued", "Due", "Held"].map((t) => h("th", { text: t })))),
        h("tbody", {}, l.keys.map((k) => h("tr", { "data-key": "k:" + k.key, "data-flow-key": k.key },
          h("td", {}, link("/jobs" + query({ endpoint: name, flowKey: k.key }), k.key)),
          h("td", { text: num(k.running) }), h("td", { text: num(k.scheduled) }), h("td", { text: num(k.due) }), heldCell(k)))))),
      l.capped ? h("p", { class: "help", text: "Counted from the first 200,000 keyed jobs in flight and the first 200,000 queued." }) : null,
    ].filter(Boolean));
  };
  const load = async () => {
    try {
      const l = await api("GET", `/v1/endpoints/${encodeURIComponent(name)}/keys?limit=10`);
      if (!stale()) show(l);
    } catch (e) {
      if (!stale()) morphChildren(body, [h("p", { class: "callout", text: "Could not read the flow keys: " + e.message })]);
    }
  };
  load();
  const timer = setInterval(() => (stale() ? clearInterval(timer) : load()), 5000);
  return card;
}

async function endpointView([name], stale) {
  setTitle(name + " policy");
  const ep = await api("GET", "/v1/endpoints/" + encodeURIComponent(name));
  if (stale()) return;
  const plan = state.me.project.plan;
  const canWrite = state.me.key.scope === "owner";
  // serverError is the last refused save other than a conflict; it stays on
  // screen until the form is edited or saved again.
  const ed = { base: ep, conflict: null, serverError: null };

  const form = h("form", { id: "policy-form", class: "card inputs policy-form", novalidate: true, autocomplete: "off" });
  const presetSel = h("select", { id: "f-preset", name: "preset", "aria-describedby": "f-preset-error" },
    B.PRESET_NAMES.map((p) => h("option", { value: p, text: p === "CUSTOM" && !CUSTOM_PLANS.includes(plan) ? `CUSTOM (needs ${orList(CUSTOM_PLANS)})` : p })));
  const field = (f, input) => h("div", { class: "field" },
    h("label", { for: "f-" + f.key }, f.label, " ", h("span", { class: "unit", text: f.unit || "" })),
    input,
    f.help ? h("p", { class: "help", text: f.help }) : null,
    h("p", { class: "field-error", id: "f-" + f.key + "-error", hidden: true }));
  const textInput = (key) => h("input", { id: "f-" + key, name: key, type: "text", inputmode: "decimal", spellcheck: "false", "aria-describedby": "f-" + key + "-error" });
  const checkField = (f) => h("div", { class: "field field-check" },
    h("label", { for: "f-" + f.key }, h("input", { id: "f-" + f.key, name: f.key, type: "checkbox", "aria-describedby": `f-${f.key}-help f-${f.key}-error` }), f.label),
    h("p", { class: "help", id: `f-${f.key}-help`, text: f.help }),
    h("p", { class: "field-error", id: "f-" + f.key + "-error", hidden: true }));
  const planNote = h("p", { id: "plan-note", class: "callout callout-warn small", hidden: true },
    `This project is on the ${plan} plan, which cannot save a CUSTOM retry policy. Choose a preset, or move the project to ${orList(CUSTOM_PLANS)}.`);
  form.append(
    h("h2", { text: "Retry policy" }),
    field({ key: "preset", label: "Preset" }, presetSel),
    planNote,
    h("div", { class: "field-grid" }, POLICY_INPUTS.map((f) => field(f, textInput(f.key)))),
    h("h2", { class: "form-sub", text: "Gates" }),
    h("div", { class: "field-grid" }, LIMIT_INPUTS.map((f) => field(f, textInput(f.key)))),
    h("h2", { class: "form-sub", id: "key-limits-title", text: "Limits per flow key" }),
    h("p", { class: "help form-lede", text: "For the jobs of each flow key, within the endpoint's gates above. Jobs without a key are not limited by these." }),
    h("div", { class: "field-grid", role: "group", "aria-labelledby": "key-limits-title" }, KEY_INPUTS.map((f) => field(f, textInput(f.key))), KEY_FLAGS.map(checkField)),
    h("div", { id: "form-errors", class: "alert", hidden: true }, h("p", { class: "alert-title", text: "Fix these to save:" }), h("ul")),
    h("div", { class: "button-row" },
      h("button", { type: "submit", id: "save", class: "button primary", text: "Save policy" }),
      h("button", { type: "button", id: "revert", class: "button", text: "Revert" })),
    h("p", { id: "save-state", class: "help", role: "status" }));

  const preview = h("section", { class: "card", "aria-labelledby": "preview-title" },
    h("div", { class: "card-head" }, h("h2", { id: "preview-title", text: "Retry schedule" }), h("span", { class: "muted small", id: "preview-policy" })),
    h("p", { class: "help" }, "What jobs enqueued after you save will do. Jobs already queued keep the policy they were enqueued with."),
    h("div", { id: "preview-empty", class: "empty", hidden: true, text: "Fix the policy fields to see the schedule." }),
    h("div", { id: "preview-out" },
      h("div", { class: "table-wrap" }, h("table", { class: "data", id: "preview-table" },
        h("thead", {}, h("tr", {}, ["Failed attempt", "Base delay", "Jitter range", "Next execution"].map((t) => h("th", { text: t })))), h("tbody"))),
      h("p", { class: "total", id: "preview-total" }),
      h("p", { class: "note", id: "preview-ceiling" })));
  const conflictBox = h("section", { id: "conflict", class: "card conflict", hidden: true, "aria-live": "assertive" });
  const headBox = h("div", { id: "endpoint-head" });
  setView(
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, link("/", "Overview"), " / ", h("span", { text: ep.name })),
    headBox, conflictBox,
    h("div", { class: "split editor" }, form, h("div", { class: "stack" }, preview, flowKeysCard(ep.name, stale), h("section", { class: "card" }, h("h2", { text: "Saved policy as JSON" }), h("pre", { class: "json", id: "saved-json" })))));
  headBox.after(operatorControls(ep, canWrite, stale), failuresCard(ep, canWrite || state.me.key.scope === "producer", stale));

  const input = (k) => $("f-" + k);
  // A checkbox's value is "true" or "false", like valuesOf writes it.
  const valueOf = (e) => (e.type === "checkbox" ? String(e.checked) : e.value);
  const read = () => Object.fromEntries(ALL_KEYS.map((k) => [k, valueOf(input(k))]));
  // fill loads values into the form; a preset change the user makes
  // afterwards is what update() treats as leaving or returning to CUSTOM.
  const fill = (v) => {
    for (const k of ALL_KEYS) { const e = input(k); if (e.type === "checkbox") e.checked = v[k] === "true"; else e.value = v[k]; }
    ed.lastPreset = v.preset;
  };

  const renderHead = () => {
    const b = ed.base;
    headBox.replaceChildren(heading(b.name, null, circuitBadge(b.circuit)),
      h("p", { class: "muted small", id: "version-line" }, `Version ${b.version} · saved ${when(b.updatedAt)} · `, link("/jobs" + query({ endpoint: b.name }), "jobs of this endpoint")),
      ...[keyLimitsLine(b, "key-limits small", "key-limits")].filter(Boolean));
    $("saved-json").textContent = JSON.stringify(savedDoc(b), null, 2);
  };

  const update = () => {
    const v = read();
    const custom = v.preset === "CUSTOM";
    // Choosing a preset shows its numbers; the custom numbers typed before
    // are kept and come back when CUSTOM is chosen again.
    if (ed.lastPreset === "CUSTOM" && !custom) ed.customDraft = Object.fromEntries(POLICY_INPUTS.map((f) => [f.key, v[f.key]]));
    if (ed.lastPreset !== "CUSTOM" && custom && ed.customDraft) for (const f of POLICY_INPUTS) input(f.key).value = ed.customDraft[f.key];
    ed.lastPreset = v.preset;
    // Only an owner key may save, so other keys see the form read-only.
    presetSel.disabled = !canWrite;
    for (const f of [...NUMBER_INPUTS, ...KEY_FLAGS]) input(f.key).disabled = !canWrite;
    for (const f of POLICY_INPUTS) {
      input(f.key).disabled = !custom || !canWrite;
      if (!custom && B.PRESETS[v.preset]) input(f.key).value = String(B.PRESETS[v.preset][f.key]);
    }
    const v2 = read();
    const errors = [];
    let params = null;
    if (custom) {
      const r = B.validatePolicyText(Object.fromEntries(POLICY_INPUTS.map((f) => [f.key, v2[f.key]])));
      errors.push(...r.errors);
      params = r.params;
    } else params = B.PRESETS[v2.preset];
    errors.push(...validateLimits(v2));
    for (const k of ALL_KEYS) {
      const fe = errors.filter((e) => e.field === k);
      const p = $("f-" + k + "-error");
      p.hidden = fe.length === 0;
      p.textContent = fe.map((e) => fieldText(e.field, e.message)).join("\n");
      input(k).setAttribute("aria-invalid", fe.length ? "true" : "false");
    }
    const box = $("form-errors");
    const se = errors.length === 0 ? ed.serverError : null;
    box.hidden = errors.length === 0 && !se;
    box.querySelector(".alert-title").textContent = se ? "The server did not save the policy: " + se.message : "Fix these to save:";
    // The form's own errors sit beside their fields: the box names the
    // fields to fix (each a link to it). A refusal from the server is shown
    // here in full, with the fields by their labels.
    const items = se
      ? (se.fields || []).map((f) => h("li", { text: (FIELD_LABELS[f.field] || f.field) + ": " + fieldText(f.field, f.message || `${f.field}: ${f.value} is not allowed; ${f.allowed}`) }))
      : [...new Set(errors.map((e) => e.field))].map((k) => h("li", {}, h("a", { href: "#f-" + k, text: FIELD_LABELS[k] || k, onclick: (ev) => { ev.preventDefault(); input(k).focus(); } })));
    box.querySelector("ul").replaceChildren(...items);
    const planBlocked = custom && !CUSTOM_PLANS.includes(plan);
    planNote.hidden = !planBlocked;
    const dirty = !sameValues(v2, valuesOf(ed.base));
    $("save").disabled = !canWrite || errors.length > 0 || planBlocked || !dirty;
    $("revert").disabled = !dirty || !canWrite;
    $("save-state").textContent = !canWrite ? "Only an owner key can change the policy." : planBlocked ? `The ${plan} plan cannot save CUSTOM.` : errors.length ? "" : dirty ? "Unsaved changes." : "No changes.";
    // Preview.
    $("preview-empty").hidden = !!params;
    $("preview-out").hidden = !params;
    $("preview-policy").textContent = v2.preset;
    if (params) {
      const s = B.policySchedule(params);
      $("preview-table").tBodies[0].replaceChildren(...s.rows.map((row) =>
        h("tr", { class: row.exhausted ? "exhausted-row" : "" }, B.policyTableCells(row).map((c) => h("td", { text: c })))));
      $("preview-total").textContent = B.totalSentence(s);
      $("preview-ceiling").textContent = params.jitterPercent > 0
        ? `The cap applies before jitter: the longest delay this policy alone can select is ${B.seconds(s.ceilingMs)}.`
        : `No jitter: the longest delay this policy alone can select is the cap, ${B.seconds(s.ceilingMs)}.`;
    }
  };

  const save = async () => {
    const v = read();
    $("save").disabled = true;
    $("save-state").textContent = "Saving…";
    try {
      const saved = await api("PUT", `/v1/endpoints/${encodeURIComponent(ed.base.name)}/policy`, bodyOf(v, ed.base.version));
      if (stale()) return;
      ed.base = saved;
      ed.conflict = null;
      ed.serverError = null;
      conflictBox.hidden = true;
      renderHead();
      fill(valuesOf(saved));
      update();
      $("save-state").textContent = `Saved as version ${saved.version}.`;
      toast(`Saved ${saved.name} as version ${saved.version}.`);
    } catch (e) {
      if (stale()) return;
      ed.serverError = null;
      if (e.status === 409 && e.current) {
        showConflict(e.current, v);
      } else {
        ed.serverError = e;
      }
      update();
      $("save-state").textContent = e.status === 409 ? "Not saved: someone else saved first." : "Not saved: the server refused it (see above).";
    }
  };

  // showConflict puts three versions side by side: the one the user started
  // from, the one someone else saved, and the user's unsaved edit.
  const showConflict = (current, mine) => {
    const from = valuesOf(ed.base), theirs = valuesOf(current);
    ed.conflict = { current, mine };
    const rows = ALL_KEYS.filter((k) => norm(from[k]) !== norm(theirs[k]) || norm(from[k]) !== norm(mine[k])).map((k) => {
      const theyChanged = norm(from[k]) !== norm(theirs[k]);
      const iChanged = norm(from[k]) !== norm(mine[k]);
      return h("tr", { "data-field": k },
        h("th", { scope: "row", text: FIELD_LABELS[k] }),
        h("td", { class: "mono", text: displayValue(from, k) }),
        h("td", { class: "mono theirs" + (theyChanged ? " changed" : ""), text: displayValue(theirs, k) }),
        h("td", { class: "mono mine" + (iChanged ? " changed" : ""), text: displayValue(mine, k) + (theyChanged && iChanged && norm(theirs[k]) !== norm(mine[k]) ? " (both changed)" : "") }));
    });
    conflictBox.hidden = false;
    conflictBox.replaceChildren(
      h("div", { class: "card-head" }, h("h2", { text: "Someone else saved this endpoint first" }), badge("version conflict", "conflict")),
      h("p", { id: "conflict-summary" }, `You edited version ${ed.base.version}, but version ${current.version} was saved at ${when(current.updatedAt)}. Your change was not saved. Here is their change next to yours:`),
      h("div", { class: "table-wrap" }, h("table", { class: "data diff", id: "conflict-table" },
        h("thead", {}, h("tr", {}, h("th", { text: "Setting" }), h("th", { text: `Version ${ed.base.version} (you started here)` }),
          h("th", { text: `Version ${current.version} (saved by someone else)` }), h("th", { text: "Yours (not saved)" }))),
        h("tbody", {}, rows))),
      h("p", { class: "help" }, "Reapplying puts your edits on top of their version: the settings you changed take your values, the rest keep theirs. Review the form, then save again."),
      h("div", { class: "button-row" },
        h("button", { type: "button", id: "reapply", class: "button primary", text: `Reapply my changes onto version ${current.version}`, onclick: () => reapply(true) }),
        h("button", { type: "button", id: "discard", class: "button", text: `Discard mine and load version ${current.version}`, onclick: () => reapply(false) })));
    conflictBox.scrollIntoView({ block: "nearest" });
  };

  const reapply = (keepMine) => {
    const { current, mine } = ed.conflict;
    const from = valuesOf(ed.base), theirs = valuesOf(current);
    const merged = {};
    for (const k of ALL_KEYS) merged[k] = keepMine && norm(mine[k]) !== norm(from[k]) ? mine[k] : theirs[k];
    // A preset decides the five numbers; keep them consistent with it.
    if (merged.preset !== "CUSTOM" && B.PRESETS[merged.preset]) for (const f of POLICY_INPUTS) merged[f.key] = String(B.PRESETS[merged.preset][f.key]);
    ed.base = current;
    ed.conflict = null;
    conflictBox.hidden = true;
    renderHead();
    fill(merged);
    update();
    $("save-state").textContent = keepMine ? `Your changes are applied onto version ${current.version}. Review and save.` : `Loaded version ${current.version}.`;
    if (keepMine) $("save").focus();
  };

  fill(valuesOf(ep));
  renderHead();
  update();
  const edited = () => { ed.serverError = null; update(); };
  form.addEventListener("input", edited);
  form.addEventListener("change", edited);
  form.addEventListener("submit", (ev) => { ev.preventDefault(); if (!$("save").disabled) save(); });
  $("revert").addEventListener("click", () => { fill(valuesOf(ed.base)); edited(); });
  ready();
}

function savedDoc(ep) {
  const d = { ...ep.policy };
  for (const f of [...NUMBER_INPUTS, ...KEY_FLAGS]) d[f.key] = ep[f.key];
  return d;
}

// ---------- jobs ----------

const FILTER_KEYS = ["q", "state", "tool", "endpoint", "flowKey", "runId", "createdAfter", "createdBefore"];
// RUNNABLE are the states run-now takes (owner keys only): the claimable ones.
const RUNNABLE = CLAIMABLE_STATES;
const WINDOWS = [["", "Any time"], ["15m", "Last 15 minutes"], ["1h", "Last hour"], ["24h", "Last 24 hours"], ["7d", "Last 7 days"]];
const WINDOW_MS = { "15m": 900e3, "1h": 3600e3, "24h": 86400e3, "7d": 604800e3 };

function filterOf(params) {
  const f = {};
  for (const k of FILTER_KEYS) if (params.get(k)) f[k] = params.get(k);
  return f;
}

// The jobs list's orders (JOB_SORTS, wire.JobSort) are a column's key and
// a direction: "finished_desc" is the key "finished", descending. The
// sort is not a filter (f): counts and bulk actions select the same jobs
// whatever the order, so it travels beside f, in the URL as ?sort= when it
// is not the filter's default.
const sortKey = (s) => s.slice(0, s.lastIndexOf("_"));
const sortDir = (s) => s.slice(s.lastIndexOf("_") + 1);
const sortFor = (key, dir) => JOB_SORTS.find((s) => sortKey(s) === key && sortDir(s) === dir);
// byFinishOk: the finish-time orders need a state filter of failed and/or
// exhausted: only those jobs are in an index by finish time, and the API
// refuses the orders otherwise (internal/store/sqlstore/jobs_list.go).
const byFinishOk = (f) => !!f.state && f.state.split(",").every((s) => UNSUCCESSFUL_STATES.includes(s));
// defaultSort: a list of failed jobs (the failed and exhausted tabs, an
// endpoint's "Failed jobs") reads latest failure first; others newest first.
const defaultSort = (f) => sortFor(byFinishOk(f) ? "finished" : "id", "desc");
// sortOf is the order params ask for, if the filter allows it.
function sortOf(params, f) {
  const s = params.get("sort");
  return JOB_SORTS.includes(s) && (sortKey(s) !== "finished" || byFinishOk(f)) ? s : defaultSort(f);
}
// urlSort is s as the URL keeps it: nothing for the filter's default.
const urlSort = (s, f) => (s === defaultSort(f) ? "" : s);

// scopeText says in words which jobs a filter selects.
function scopeText(f, count, capped) {
  const states = f.state ? f.state.split(",").join(" or ") + " " : "";
  const parts = [];
  if (f.tool) parts.push(`of tool ${f.tool}`);
  if (f.endpoint) parts.push(`on endpoint ${f.endpoint}`);
  if (f.flowKey) parts.push(`for key ${f.flowKey}`);
  if (f.runId) parts.push(`in run #${f.runId}`);
  if (f.createdAfter && f.createdBefore) parts.push(`created from ${when(f.createdAfter)} to ${when(f.createdBefore)}`);
  else if (f.createdAfter) parts.push(`created since ${when(f.createdAfter)}`);
  else if (f.createdBefore) parts.push(`created before ${when(f.createdBefore)}`);
  if (f.q) parts.push(`matching “${f.q}”`);
  const n = count === undefined ? "" : num(count) + " ";
  // A capped search counted (and a bulk action acts on) only the newest jobs.
  const among = capped ? ` among the newest ${num(SEARCH_WINDOW)} jobs` : "";
  return `all ${n}${states}jobs${parts.length ? " " + parts.join(" ") : ""}${among}`;
}

// Gate names short enough for a table cell.
const GATE_WORDS_SHORT = { circuit: "circuit", max_concurrent: "concurrency", rate_limit: "rate limit", paused: "paused", key_order: "key order", key_concurrency: "key concurrency", key_rate: "key rate" };

// relEl is a time as people glance at it in a list, "4 min ago" or "in
// 12 s", with the exact time (UTC and local) as its tooltip; the list's
// tick rewrites it.
function relEl(iso) {
  return h("time", { class: "rel", datetime: iso, title: when(iso, true), text: relative(iso) });
}

// detailEl is a server sentence (a hold's detail) for the page: each time
// in it relative ("paused by ops 5 min ago", "scheduled to run in 1 h"),
// with the exact time, UTC and local, in its tooltip, ending in a full stop.
function detailEl(text) {
  const parts = timesIn(text.replace(/\.?$/, "."));
  return h("span", { class: "detail" }, parts.flatMap((p) => p.iso ? [p.at ? " " : "", relEl(p.iso)] : [p.text]));
}

// statePick is the jobs filter's state: any number of states (the API
// takes several, comma-separated: "failed,exhausted" selects a tenant's
// failed jobs for one replay), as checkboxes in a fieldset that opens
// from a button the size of the other filters' selects, whose text says
// what is chosen.
function statePick(chosen) {
  const sum = () => { const c = Array.from(box.querySelectorAll("input:checked"), (i) => i.value); return c.length ? c.join(", ") : "Any state"; };
  const summary = h("summary", { class: "state-pick-summary", "aria-describedby": "flt-state-label" });
  const box = h("details", { class: "state-pick", id: "flt-state" }, summary,
    h("fieldset", {}, h("legend", { class: "visually-hidden", text: "Jobs in any of these states" }),
      STATES.map((s) => h("label", { class: "check" }, h("input", { type: "checkbox", name: "state", value: s, checked: chosen.includes(s) }), " " + s))));
  summary.textContent = sum();
  box.addEventListener("change", () => { summary.textContent = sum(); });
  return h("div", { class: "field" }, h("span", { class: "label", id: "flt-state-label", text: "State" }), box);
}

// jobColumns are the jobs list's columns after the checkbox: a label, a
// class and a cell for a job (null when it has nothing to say).
// A column with a sort key is sortable: its header is a button (the
// index-served orders only: by id and, on lists of failed jobs, by finish
// time); words say each direction.
function jobColumns(f, canOwner) {
  const held = (j) => j.state === "scheduled" && j.heldBy && j.heldBy.gate !== "none"
    ? h("span", { class: "held-cell", title: plainTimes(j.heldBy.detail) }, h("strong", { text: j.heldBy.gate === "due_time" ? "due time" : GATE_WORDS_SHORT[j.heldBy.gate] || j.heldBy.gate.replaceAll("_", " ") }),
      j.heldBy.until ? h("span", { class: "until" }, " ", relEl(j.heldBy.until)) : null)
    : null;
  const last = (j) => {
    const err = j.lastError || "";
    if (!j.lastClassification && !err) return null;
    return h("span", { class: "last-cell" }, j.lastClassification ? h("span", { class: "mono last-class", text: j.lastClassification }) : null,
      err ? h("span", { class: "last-error", title: err, text: err.length > 200 ? err.slice(0, 199) + "…" : err }) : null);
  };
  const acts = (j) => {
    const a = [];
    if (canOwner && RUNNABLE.includes(j.state)) a.push(h("button", { type: "button", class: "button small", "data-action": "run-now", "data-id": j.id, text: "Run now", "aria-label": `Run now: job #${j.id}` }));
    if (CANCELLABLE.includes(j.state)) a.push(h("button", { type: "button", class: "button small danger", "data-action": "cancel", "data-id": j.id, text: "Cancel", "aria-label": `Cancel job #${j.id}` }));
    if (REPLAYABLE.includes(j.state)) a.push(h("button", { type: "button", class: "button small", "data-action": "replay", "data-id": j.id, text: "Replay", "aria-label": `Replay job #${j.id}` }));
    return a.length ? h("span", { class: "actions" }, a) : null;
  };
  // "in 5 min" is when it is due, "5 min ago" when it ended: the column's
  // header says which, and the words are not repeated in every row.
  const when2 = (j) => j.state === "scheduled" ? relEl(j.dueAt) : j.finishedAt ? relEl(j.finishedAt) : j.state === "running" ? h("span", { text: "running" }) : null;
  return [
    { label: "Job", cls: "job-id", always: true, sort: "id", words: { desc: "newest first", asc: "oldest first" }, cell: (j) => [link("/jobs/" + j.id, "#" + j.id, "mono"), j.runId ? h("span", { class: "sub small" }, "run ", link("/runs/" + j.runId, "#" + j.runId)) : null,
      j.flowKey ? h("span", { class: "sub small flow-key", title: "Flow key " + j.flowKey }, "key ", j.flowKey === f.flowKey ? h("span", { class: "mono", text: j.flowKey }) : link("/jobs" + query({ flowKey: j.flowKey }), j.flowKey, "mono")) : null] },
    { label: "Tool · endpoint", cls: "tool-col", always: true, cell: (j) => h("span", {}, h("span", { class: "mono", text: toolRef(j) }), " · ", link("/endpoints/" + encodeURIComponent(j.endpoint), j.endpoint)) },
    { label: "State", cls: "state-col", always: true, cell: (j) => stateBadge(j.state) },
    { label: "Attempt", cls: "num", always: true, cell: (j) => h("span", { text: `${j.attempt} / ${j.maxAttempts}` }) },
    byFinishOk(f)
      ? { label: "Ended", cls: "small time-col", sort: "finished", words: { desc: "latest first", asc: "earliest first" }, cell: when2 }
      : { label: "Due / ended", cls: "small time-col", cell: when2 },
    { label: "Held by", cls: "small held-col", cell: held },
    { label: "Last result", cls: "small last-col", cell: last },
    { label: "Created", cls: "small time-col created-col", always: true, cell: (j) => relEl(j.createdAt) },
    { label: "Actions", cls: "row-actions", cell: acts },
  ];
}

async function jobsView(_, stale) {
  setTitle("Jobs");
  const canOwner = state.me.key.scope === "owner";
  const params = new URLSearchParams(location.search);
  const f = filterOf(params);
  const sort = sortOf(params, f);
  // at is this list's address with more parameters (a page's cursor).
  const at = (more) => "/jobs" + query({ ...f, sort: urlSort(sort, f), ...more });
  const cursor = params.get("cursor") || "";
  const stack = (history.state && history.state.cursors) || [];
  const [page, count, tools, eps] = await Promise.all([
    api("GET", "/v1/jobs" + query({ ...f, sort, cursor, limit: PAGE_SIZE })),
    api("GET", "/v1/jobs/count" + query(f)),
    api("GET", "/v1/tools").catch(() => ({ tools: [] })),
    api("GET", "/v1/endpoints").catch(() => ({ endpoints: [] })),
  ]);
  if (stale()) return;

  const sel = (id, label, options, value) => h("div", { class: "field" }, h("label", { for: id, text: label }),
    h("select", { id, name: id }, options.map(([v, t]) => h("option", { value: v, text: t, selected: v === value }))));
  const toolOpts = [["", "Any tool"]];
  for (const name of [...new Set(tools.tools.map((t) => t.name))]) {
    toolOpts.push([name, name + " (all versions)"]);
    for (const t of tools.tools.filter((x) => x.name === name)) toolOpts.push([t.name + "@" + t.version, t.name + "@" + t.version]);
  }
  if (f.tool && !toolOpts.some(([v]) => v === f.tool)) toolOpts.push([f.tool, f.tool]);
  const epOpts = [["", "Any endpoint"], ...eps.endpoints.map((e) => [e.name, e.name])];
  if (f.endpoint && !epOpts.some(([v]) => v === f.endpoint)) epOpts.push([f.endpoint, f.endpoint]);
  const createdOpts = [...WINDOWS];
  if (f.createdAfter || f.createdBefore) createdOpts.splice(1, 0, ["keep", f.createdAfter ? "Since " + clockBoth(f.createdAfter) : "Before " + clockBoth(f.createdBefore)]);
  // The search and its buttons on one line; the other filters below it in
  // a disclosure, open on a wide window and closed on a phone (its summary
  // says how many are set), so the list starts on the first screen.
  const narrowed = ["state", "tool", "endpoint", "flowKey", "runId", "createdAfter", "createdBefore"].filter((k) => f[k]).length;
  const more = h("details", { class: "more-filters", id: "more-filters", open: window.matchMedia("(min-width: 601px)").matches },
    h("summary", { text: narrowed ? `Filters (${narrowed} set)` : "Filters" }),
    h("div", { class: "filter-grid" },
      statePick(f.state ? f.state.split(",") : []),
      sel("flt-tool", "Tool", toolOpts, f.tool || ""),
      sel("flt-endpoint", "Endpoint", epOpts, f.endpoint || ""),
      h("div", { class: "field" }, h("label", { for: "flt-flow-key", text: "Flow key" }),
        h("input", { id: "flt-flow-key", type: "text", maxlength: "128", spellcheck: "false", autocapitalize: "none", placeholder: "exact key", title: "The jobs of this flow key (exact match)", value: f.flowKey || "" })),
      h("div", { class: "field" }, h("label", { for: "flt-run", text: "Run" }), h("input", { id: "flt-run", type: "text", inputmode: "numeric", placeholder: "run id", value: f.runId || "" })),
      sel("flt-created", "Created", createdOpts, f.createdAfter || f.createdBefore ? "keep" : "")));
  const filterForm = h("form", { class: "card filters", id: "job-filters", novalidate: true, autocomplete: "off", role: "search" },
    h("div", { class: "filter-main" },
      h("div", { class: "field field-q" }, h("label", { for: "flt-q", text: "Search" }),
        h("input", { id: "flt-q", type: "text", enterkeyhint: "search", maxlength: "200", spellcheck: "false", placeholder: "job id, idempotency key, tool, endpoint, payload or error text", value: f.q || "", "aria-describedby": "flt-q-help" }),
        h("p", { class: "visually-hidden", id: "flt-q-help", text: "A number finds that job; other text an exact idempotency key, a tool or endpoint name, or words in the payload or the last error." })),
      h("div", { class: "button-row filter-buttons" },
        h("button", { type: "submit", id: "apply-filters", class: "button primary", text: "Apply" }),
        link("/jobs", "Reset", "button"))),
    more);
  filterForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const nf2 = {};
    const st = Array.from(document.querySelectorAll("#flt-state input:checked"), (i) => i.value).join(","), tool = $("flt-tool").value, ep = $("flt-endpoint").value, run = $("flt-run").value.trim(), win = $("flt-created").value;
    const q = $("flt-q").value.trim();
    // A key never starts or ends with a space (the API refuses one that
    // does), so trimming what was typed cannot miss a key.
    const key = $("flt-flow-key").value.trim();
    if (q) nf2.q = q;
    if (st) nf2.state = st;
    if (tool) nf2.tool = tool;
    if (ep) nf2.endpoint = ep;
    if (key) nf2.flowKey = key;
    if (run) nf2.runId = run;
    if (win === "keep") {
      if (f.createdAfter) nf2.createdAfter = f.createdAfter;
      if (f.createdBefore) nf2.createdBefore = f.createdBefore;
    } else if (WINDOW_MS[win]) {
      // A window is fixed when applied, so the selection (and its count)
      // does not slide while someone reads it and confirms a bulk action.
      nf2.createdAfter = new Date(serverNow() - WINDOW_MS[win]).toISOString();
    }
    // The order chosen stays while the new filters allow it.
    const ns = sortOf(params, nf2);
    if (ns === sort) nf2.sort = urlSort(ns, nf2);
    navigate("/jobs" + query(nf2));
  });

  // st is what the list shows now; the pager's handlers read it, so they
  // stay right when the first page is refreshed in place.
  // capped: a text search counted only the newest jobs of the other
  // filters (wire.SearchWindow), so the counts are "at least".
  const st = { page, count: count.count, capped: count.capped, counts: null, countsCapped: false, loadedCount: count.count };
  const plus = (capped) => (capped ? "+" : "");
  const onFirstPage = !cursor;
  const pagerEl = (bottom) => {
    const pageNo = stack.length + 1;
    const first = (pageNo - 1) * PAGE_SIZE + 1;
    const n = st.page.jobs.length;
    return h("div", { class: "pager" + (bottom ? " pager-bottom" : "") },
      h("span", { class: "muted small", id: bottom ? null : "page-info" }, n ? `Page ${pageNo} · jobs ${num(first)}–${num(first + n - 1)} of ${num(st.count)}${plus(st.capped)}` : `Page ${pageNo}`),
      h("span", { class: "actions" },
        h("button", { type: "button", id: bottom ? null : "prev-page", class: "button small", text: "← Previous", disabled: stack.length === 0,
          onclick: () => { const s2 = stack.slice(0, -1); navigate(at({ cursor: stack[stack.length - 1] }), false, { cursors: s2 }); } }),
        h("button", { type: "button", id: bottom ? null : "next-page", class: "button small", text: "Next →", disabled: !st.page.nextCursor,
          onclick: () => navigate(at({ cursor: st.page.nextCursor }), false, { cursors: [...stack, cursor] }) })));
  };
  // headerCell is a column's header: a sortable column's is a button that
  // sorts by it (descending first, then flips), with aria-sort on the th
  // of the column the list is in the order of.
  const headerCell = (c) => {
    if (!c.sort) return h("th", { class: c.cls, scope: "col", text: c.label });
    const active = sortKey(sort) === c.sort;
    const dir = active ? sortDir(sort) : null;
    const next = sortFor(c.sort, dir === "desc" ? "asc" : "desc");
    return h("th", { class: c.cls + " sortable", scope: "col", "aria-sort": dir === "asc" ? "ascending" : dir === "desc" ? "descending" : null },
      h("button", { type: "button", class: "sort-button", "data-sort-col": c.sort, "data-sort": next,
        title: `${active ? "Sorted " + c.words[dir] + "; press" : "Press"} to sort by ${c.label.toLowerCase()}, ${c.words[sortDir(next)]}` },
      h("span", { text: c.label }), h("span", { class: "sort-arrow", "aria-hidden": "true", text: dir === "asc" ? "↑" : dir === "desc" ? "↓" : "↕" })));
  };
  const listParts = () => {
    // One line per job; a column every job of the page leaves empty (held
    // by on the failed tab, last result on a fresh queue) is left out.
    const cols = jobColumns(f, canOwner).filter((c) => c.always || st.page.jobs.some((j) => c.cell(j)));
    const rows = st.page.jobs.map((j) => h("tr", { "data-job": j.id, "data-key": "job-" + j.id, "data-state": j.state },
      h("td", { class: "select-col" }, h("input", { type: "checkbox", class: "row-select", "data-id": j.id, "aria-label": `Select job #${j.id}` })),
      cols.map((c) => {
        const v = c.cell(j);
        return h("td", { class: c.cls + (v ? "" : " empty-cell"), "data-label": c.label }, v || h("span", { class: "muted", text: "—" }));
      })));
    const allBox = h("input", { type: "checkbox", id: "select-page", "aria-label": "Select every job on this page" });
    const table = st.page.jobs.length
      ? h("div", { class: "table-wrap" }, h("table", { class: "data jobs", id: "jobs-table" },
        h("thead", {}, h("tr", {}, h("th", { class: "select-col" }, allBox), cols.map(headerCell))),
        h("tbody", {}, rows)))
      : h("p", { class: "empty", id: "jobs-empty", text: "No jobs match these filters." });
    return [
      h("div", { class: "card-head" }, h("h2", { id: "jobs-count", title: st.capped ? `A search counts within the newest ${num(SEARCH_WINDOW)} jobs of the other filters; older jobs may match too.` : null },
        `${st.capped ? "At least " : ""}${num(st.count)} ${st.count === 1 && !st.capped ? "job matches" : "jobs match"}`), pagerEl(false)),
      table,
      st.page.jobs.length > 15 ? pagerEl(true) : h("div", { class: "pager-slot" }),
    ];
  };
  // The state tabs: one per state and "all", each with its count under the
  // other filters, kept current by the stream.
  const tabsBox = h("nav", { class: "state-tabs", id: "state-tabs", "aria-label": "Jobs by state" });
  const tabs = () => [...STATES, "all"].map((s) => {
    const n = !st.counts ? null : s === "all" ? STATES.reduce((t, x) => t + (st.counts[x] || 0), 0) : st.counts[s] || 0;
    const active = s === "all" ? !f.state : f.state === s;
    const href = "/jobs" + query({ ...f, state: s === "all" ? "" : s });
    return h("a", { href, class: "state-tab state-tab-" + s, "data-state": s, "aria-current": active ? "page" : null },
      h("span", { class: "tab-name", text: s }), h("span", { class: "tab-count", text: n === null ? "…" : num(n) + plus(st.countsCapped && n > 0) }));
  });
  // Row selection: the checked jobs by id, each as it was when checked;
  // the bar acts on them with POST /v1/jobs/bulk and ids (each job is
  // checked by the server again). A checked job that live updates push off
  // the page stays selected, and the bar says so (it was dropped silently).
  const selected = new Map();
  const selBar = h("div", { id: "selection-bar", class: "selection-bar card", hidden: true, role: "region", "aria-label": "Selected jobs" });
  const onPage = (id) => st.page.jobs.find((j) => j.id === id);
  const jobOf = (id) => onPage(id) || selected.get(id);
  const syncSelection = () => {
    for (const cb of listBox.querySelectorAll(".row-select")) cb.checked = selected.has(Number(cb.dataset.id));
    const here = st.page.jobs.filter((j) => selected.has(j.id)).length;
    const away = [...selected.keys()].filter((id) => !onPage(id));
    const all = $("select-page");
    if (all) {
      all.checked = here > 0 && here === st.page.jobs.length;
      all.indeterminate = here > 0 && here < st.page.jobs.length;
    }
    selBar.hidden = selected.size === 0;
    if (!selected.size) { selBar.replaceChildren(); return; }
    // The buttons carry only their action: the bar is patched in place
    // (morphChildren keeps the old buttons), so a click reads the
    // selection as it is then.
    const btn = (action, label, states, cls) => {
      const ids = eligibleIds(states);
      return h("button", { type: "button", id: "sel-" + action, class: "button small " + (cls || ""), disabled: ids.length === 0, "data-sel-action": action,
        text: `${label} ${ids.length === selected.size ? "" : num(ids.length) + " of "}${num(selected.size)}…` });
    };
    morphChildren(selBar, [
      h("p", { id: "selection-count" }, h("strong", { text: `${num(selected.size)} selected` }),
        away.length ? ` · ${num(away.length)} no longer on this page (live updates moved ${away.length === 1 ? "it" : "them"}): ${away.slice(0, 5).map((id) => "#" + id).join(", ")}${away.length > 5 ? "…" : ""}` : " on this page"),
      h("div", { class: "button-row" },
        canOwner ? btn("run_now", "Run now", RUNNABLE) : null,
        btn("cancel", "Cancel", CANCELLABLE, "danger"),
        btn("replay", "Replay", REPLAYABLE),
        h("button", { type: "button", id: "sel-clear", class: "button small", text: "Clear selection", "data-sel-action": "clear" })),
    ].filter(Boolean));
  };
  const ACTION_STATES = { run_now: RUNNABLE, cancel: CANCELLABLE, replay: REPLAYABLE };
  const eligibleIds = (states) => [...selected.keys()].map(jobOf).filter((j) => j && states.includes(j.state)).map((j) => j.id);
  selBar.addEventListener("click", (ev) => {
    const b = ev.target.closest && ev.target.closest("button[data-sel-action]");
    if (!b || b.disabled) return;
    const action = b.dataset.selAction;
    if (action === "clear") { selected.clear(); syncSelection(); return; }
    actOnSelection(action, eligibleIds(ACTION_STATES[action]));
  });
  const verbs = { run_now: ["Run now", "Ran now", "Each becomes due now; the gates still apply and no attempt is spent."], cancel: ["Cancel", "Cancelled", "Running jobs are asked to stop; scheduled jobs will not run."], replay: ["Replay", "Replayed", "Each becomes a new scheduled job with the same payload and policy."] };
  const actOnSelection = async (action, ids) => {
    const [verb, done, what] = verbs[action];
    const skipped = selected.size - ids.length;
    const ok = await confirmDialog(`${verb} ${num(ids.length)} ${ids.length === 1 ? "job" : "jobs"}?`,
      `${verb} ${ids.map((id) => "#" + id).join(", ")}. ${what}${skipped ? ` ${num(skipped)} selected ${skipped === 1 ? "job is" : "jobs are"} left out: ${action === "replay" ? `only ${orList(REPLAYABLE)} jobs can be replayed` : action === "cancel" ? `only ${orList(CANCELLABLE)} jobs can be cancelled` : `only ${orList(RUNNABLE)} jobs can run now`}.` : ""}`,
      `${verb} ${num(ids.length)} ${ids.length === 1 ? "job" : "jobs"}`);
    if (!ok || stale()) return;
    try {
      const res = await api("POST", "/v1/jobs/bulk", { action, ids, expectedCount: ids.length });
      if (stale()) return;
      toast(`${done} ${num(res.count)} ${res.count === 1 ? "job" : "jobs"}${res.failed.length ? `; ${res.failed.length} could not be: ${res.failed.slice(0, 3).map((x) => "#" + x.id + " " + x.error).join("; ")}` : ""}.`);
      selected.clear();
      reload();
    } catch (e) {
      if (!stale()) toast(`${verb} failed: ${e.message}`);
    }
  };
  const actOnRow = async (action, id) => {
    if (action !== "run-now") {
      const verb = action === "cancel" ? "Cancel" : "Replay";
      const ok = await confirmDialog(`${verb} job #${id}?`, action === "cancel" ? "A running job is asked to stop; a scheduled one will not run." : "It becomes a new scheduled job with the same payload and policy.", `${verb} job #${id}`);
      if (!ok || stale()) return;
    }
    try {
      const r = await api("POST", `/v1/jobs/${id}/${action}`);
      if (stale()) return;
      toast(action === "run-now" ? `Job #${id} is due now.` : action === "cancel" ? `Cancelled job #${id}.` : `Replayed job #${id} as #${r.id}.`);
      await reload();
      if (!stale()) keepFocus(`#jobs-table tr[data-job="${id}"] [data-action]`, `#jobs-table tr[data-job="${id}"] a`);
    } catch (e) {
      if (!stale()) toast(e.message);
    }
  };
  const reload = () => (onFirstPage ? refresh() : render());
  const newBox = h("div", { id: "jobs-new", class: "jobs-new" });
  const listBox = h("section", { class: "card", id: "jobs-card" });
  const line = liveLine();
  const redrawList = () => { morphChildren(listBox, listParts()); watchTables(listBox); syncSelection(); };
  listBox.addEventListener("change", (ev) => {
    const t = ev.target;
    if (t.id === "select-page") {
      if (t.checked) for (const j of st.page.jobs) selected.set(j.id, j); else selected.clear();
    } else if (t.classList.contains("row-select")) {
      const id = Number(t.dataset.id);
      if (t.checked) selected.set(id, onPage(id)); else selected.delete(id);
    } else return;
    syncSelection();
  });
  listBox.addEventListener("click", (ev) => {
    // A new order starts at its first page, as a new filter does, and the
    // header keeps the focus. Bulk actions and counts take f, not the
    // order: sorting never changes which jobs they select.
    const sb = ev.target.closest && ev.target.closest("button[data-sort]");
    if (sb) {
      const ns = sb.dataset.sort;
      navigate("/jobs" + query({ ...f, sort: urlSort(ns, f) }), false, { focus: `#jobs-table thead button[data-sort-col="${sb.dataset.sortCol}"]` });
      return;
    }
    const b = ev.target.closest && ev.target.closest("button[data-action]");
    if (b) actOnRow(b.dataset.action, Number(b.dataset.id));
  });
  // refresh re-reads the first page and its count and patches the table.
  let refreshing = false, again = false;
  const refresh = async () => {
    if (refreshing) { again = true; return; }
    refreshing = true;
    try {
      const [p2, c2] = await Promise.all([api("GET", "/v1/jobs" + query({ ...f, sort, limit: PAGE_SIZE })), api("GET", "/v1/jobs/count" + query(f))]);
      if (stale()) return;
      st.page = p2;
      st.count = c2.count;
      st.capped = c2.capped;
      st.loadedCount = c2.count;
      redrawList();
      const scope = $("bulk-scope");
      if (scope) scope.textContent = scopeText(f, c2.count, c2.capped);
      line.shown(new Date(serverNow()).toISOString());
    } catch (e) {
      if (!stale()) toast("Could not refresh the list: " + e.message);
    } finally {
      refreshing = false;
      if (again && !stale()) { again = false; refresh(); }
    }
  };
  // countOf is how many jobs the filter selects according to the stream's
  // counts (which leave the state filter out).
  const countOf = (counts) => (f.state ? f.state.split(",") : STATES).reduce((t, x) => t + (counts[x] || 0), 0);
  // The first event of a stream says nothing changed since the stream
  // opened, but the page may be older than that: the first connection
  // compares the counts, and a reconnection refreshes whatever they say.
  let connected = false, reconnected = false;
  // Live updates can be paused while a person reads or checks rows: the
  // stream stays open, its last event waits, and Resume applies it.
  let held = false, waiting = null;
  const toggle = h("button", { type: "button", id: "live-toggle", class: "button small", "aria-pressed": "false", text: "Pause live updates" });
  toggle.addEventListener("click", () => {
    held = !held;
    toggle.setAttribute("aria-pressed", String(held));
    toggle.textContent = held ? "Resume live updates" : "Pause live updates";
    if (held) { line.status({ state: "held" }); return; }
    line.status({ state: "live" });
    newBox.replaceChildren();
    const ev = waiting;
    waiting = null;
    if (ev) onJobs({ ...ev, changed: true });
  });
  const onJobs = (ev) => {
    if (held) {
      waiting = waiting ? { ...ev, changed: waiting.changed || ev.changed } : ev;
      if (ev.changed || countOf(ev.counts) !== st.loadedCount) {
        newBox.replaceChildren(h("p", { class: "callout", id: "jobs-held", text: "Live updates are paused; the list has changed since. Resume live updates to see it." }));
      }
      return;
    }
    st.counts = ev.counts;
    st.countsCapped = ev.capped;
    morphChildren(tabsBox, tabs());
    const changed = ev.changed || reconnected || countOf(ev.counts) !== st.loadedCount;
    connected = true;
    reconnected = false;
    if (!changed) { line.shown(new Date(serverNow()).toISOString()); return; }
    if (onFirstPage) { refresh(); return; }
    const n = countOf(ev.counts) - st.loadedCount;
    newBox.replaceChildren(h("button", { type: "button", id: "show-new", class: "button small", text: n > 0 ? `${num(n)} new — show` : "The list changed — show the first page",
      onclick: () => navigate(at({})) }));
  };

  const bulk = bulkPanel(f, count, stale);
  setView(
    heading("Jobs"),
    filterForm,
    bulk,
    tabsBox,
    h("div", { class: "live-row" }, line.el, toggle),
    newBox,
    selBar,
    listBox);
  viewSkip("jobs-count", "Skip to the jobs");
  morphChildren(tabsBox, tabs());
  redrawList();
  if (state.flash) {
    $("bulk-result").replaceChildren(state.flash);
    $("bulk-card").hidden = false;
    state.flash = null;
  }
  ready();
  // Each (re)connect's first event is compared with what the page shows.
  live({ view: "jobs", ...f, sort, limit: PAGE_SIZE }, { el: line.el, shown: line.shown, status: (s) => { if (s.state === "connecting" && connected) reconnected = true; if (!(held && s.state === "live")) line.status(s); } },
    (name, ev) => { if (name === "jobs") onJobs(ev); }, stale,
    () => { for (const t of listBox.querySelectorAll("time.rel")) t.textContent = relative(t.getAttribute("datetime")); });
}

function bulkPanel(f, count, stale) { // count: the GET /v1/jobs/count answer
  const states = f.state ? f.state.split(",") : [];
  const canReplay = states.length > 0 && states.every((s) => REPLAYABLE.includes(s));
  const canCancel = states.length > 0 && states.every((s) => CANCELLABLE.includes(s));
  const result = h("div", { id: "bulk-result" });
  // run counts the selection, asks, and acts. When the selection changed
  // between the count and the server acting (409), nothing was done: it says
  // so and asks again with the new count, as the dialog promised.
  const run = async (action, changedFrom) => {
    result.replaceChildren();
    let n, capped;
    try {
      ({ count: n, capped } = await api("GET", "/v1/jobs/count" + query(f)));
    } catch (e) {
      result.replaceChildren(alertBox(e.message, errorLines(e)));
      return;
    }
    if (stale()) return;
    const changed = changedFrom !== undefined
      ? `The selection changed before the server acted: it held ${num(changedFrom)} ${changedFrom === 1 ? "job" : "jobs"} when you confirmed and holds ${num(n)} now. Nothing was done. `
      : "";
    if (n === 0) { result.replaceChildren(h("p", { class: "callout", id: "bulk-changed", text: changed + "No jobs match this selection now; nothing to do." })); return; }
    if (n > 1000) { result.replaceChildren(alertBox(`This selection holds ${num(n)} jobs; a bulk action takes at most 1,000. Narrow the filters (a shorter time window, one tool).`)); return; }
    const verb = action === "replay" ? "Replay" : "Cancel";
    const ok = await confirmDialog(`${verb} ${num(n)} ${n === 1 ? "job" : "jobs"}?`,
      `${changed}${verb} ${scopeText(f, n, capped)}. ${action === "replay" ? "Each becomes a new scheduled job with the same payload and policy." : "Running jobs are asked to stop; scheduled jobs will not run."} If the selection changes before the server acts, nothing is done and you are asked again.`,
      `${verb} ${num(n)} ${n === 1 ? "job" : "jobs"}`);
    if (!ok || stale()) {
      if (changed && !stale()) result.replaceChildren(h("p", { class: "callout callout-warn", id: "bulk-changed", text: changed }));
      return;
    }
    try {
      const res = await api("POST", "/v1/jobs/bulk", { action, filter: f, expectedCount: n });
      if (stale()) return;
      const done = action === "replay" ? "Replayed" : "Cancelled";
      toast(`${done} ${num(res.count)} ${res.count === 1 ? "job" : "jobs"}.`);
      const ids = res.jobs.slice(0, 20).map((id) => link("/jobs/" + id, "#" + id, "mono"));
      // The list is reloaded; the next render shows this result above it.
      state.flash = h("div", { class: "callout callout-good", id: "bulk-done" },
        `${done} ${num(res.count)} ${res.count === 1 ? "job" : "jobs"}${action === "replay" ? " as new jobs " : ": "}`,
        ...ids.flatMap((a, i) => (i ? [", ", a] : [a])), res.jobs.length > 20 ? ", …" : "",
        res.failed.length ? ` · ${res.failed.length} could not be ${action === "replay" ? "replayed" : "cancelled"}.` : ".");
      render();
    } catch (e) {
      if (stale()) return;
      if (e.status === 409 && !e.fields.length) { run(action, n); return; }
      result.replaceChildren(alertBox("The bulk action failed: " + e.message, errorLines(e)));
    }
  };
  // Shown only when the filter selects jobs an action takes (a state filter
  // of replayable or cancellable states); the rows' own selection has the
  // bar above the list.
  return h("section", { class: "card bulk", id: "bulk-card", "aria-labelledby": "bulk-title", hidden: !canReplay && !canCancel },
    h("div", { class: "bulk-line" },
      h("h2", { id: "bulk-title", text: "Bulk action" }),
      h("p", { class: "bulk-scope-line", title: `Replay needs a state filter of ${orList(REPLAYABLE)}; cancel needs ${orList(CANCELLABLE)}. The count is taken again just before you confirm, and sent with the request so nothing else is touched.` },
        "On ", h("strong", { id: "bulk-scope", text: scopeText(f, count.count, count.capped) })),
      h("div", { class: "button-row" },
        h("button", { type: "button", id: "bulk-replay", class: "button small", text: "Replay selection…", disabled: !canReplay || count.count === 0, onclick: () => run("replay") }),
        h("button", { type: "button", id: "bulk-cancel", class: "button small danger", text: "Cancel selection…", disabled: !canCancel || count.count === 0, onclick: () => run("cancel") }))),
    result);
}

function confirmDialog(title, body, yes) {
  const d = $("confirm");
  $("confirm-title").textContent = title;
  $("confirm-body").textContent = body;
  $("confirm-yes").textContent = yes;
  d.returnValue = "";
  return new Promise((resolve) => {
    d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true });
    d.showModal();
    $("confirm-no").focus();
  });
}

// ---------- job detail ----------

function factList(items) {
  return h("dl", { class: "facts" }, items.filter(Boolean).map(([k, v]) => h("div", { "data-key": k }, h("dt", { text: k }), h("dd", {}, v))));
}

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
  if (last && j.state === "exhausted") return `Attempts used up (${a.number} of ${j.maxAttempts}): the job is exhausted.`;
  if (last && j.state === "cancelled") return "The job was cancelled.";
  return "Not retryable: the job failed.";
}

async function jobView([id], stale) {
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
      g.until ? ` until ${when(g.until)} (${relative(g.until)})` : "", g.detail ? [" — ", detailEl(g.detail)] : ".",
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
    h("td", { class: "mono small", text: a.classification || "—" }),
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
        ["Attempt", `${j.attempt} of ${j.maxAttempts}`],
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

// ---------- tools ----------

async function toolsView(_, stale) {
  setTitle("Tools");
  const { tools } = await api("GET", "/v1/tools");
  if (stale()) return;
  const cards = tools.map((t) => {
    const ref = t.name + "@" + t.version;
    return h("article", { class: "card tool", id: ref, "data-tool": ref },
      h("div", { class: "card-head" }, h("h2", { class: "mono", text: ref }),
        h("span", { class: "actions" }, link("/jobs" + query({ tool: ref }), "Jobs", "button small"))),
      t.description ? h("p", { text: t.description }) : null,
      factList([
        ["Endpoint", link("/endpoints/" + encodeURIComponent(t.endpoint), t.endpoint)],
        t.delivery ? ["Delivered to", h("span", { class: "delivery-target" }, h("span", { class: "mono method", text: t.delivery.method || "POST" }), " ", h("span", { class: "mono url", text: t.delivery.url }))] : ["Run by", "workers that claim it"],
        t.delivery ? ["Signing", t.delivery.signed ? "Standard Webhooks signature (webhook-id, webhook-timestamp, webhook-signature)" : "not signed"] : null,
        t.delivery && t.delivery.headers && Object.keys(t.delivery.headers).length ? ["Headers", h("span", { class: "mono", text: Object.keys(t.delivery.headers).sort().join(", ") })] : null,
        ["Timeout", t.timeoutMs == null ? "the endpoint's lease" : msText(t.timeoutMs)],
        ["Retry policy", t.retryPreset ? (t.retryPreset === "CUSTOM" ? policyLabel(t.retryPolicy) : t.retryPreset) : "the endpoint's policy"],
        ["Published", timeEl(t.createdAt)],
      ]),
      h("details", { class: "printed", open: true }, h("summary", { text: "Payload schema" }),
        h("pre", { class: "json", text: t.payloadSchema == null ? "any JSON payload" : JSON.stringify(t.payloadSchema, null, 2) })),
      t.retryPolicy ? h("details", { class: "printed" }, h("summary", { text: "Retry policy document" }), h("pre", { class: "json", text: JSON.stringify(t.retryPolicy, null, 2) })) : null);
  });
  setView(heading("Tools", "Published tool contracts. A contract never changes once published; a change is a new version."),
    cards.length ? h("div", { class: "tool-grid" }, cards) : h("p", { class: "card empty", text: "No tools published yet." }));
  if (location.hash) document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView();
  ready();
}

// ---------- runs ----------

async function runsView(_, stale) {
  setTitle("Runs");
  // GET /v1/runs lists the project's runs, newest first (the page guessed
  // them from the newest 500 jobs, and said there were none when their
  // jobs were older).
  const first = await api("GET", "/v1/runs" + query({ limit: RUNS_PAGE }));
  if (stale()) return;
  const open = h("form", { class: "card open-run", id: "open-run", novalidate: true },
    h("div", { class: "field" }, h("label", { for: "run-id", text: "Open a run by id" }),
      h("div", { class: "inline-field" }, h("input", { id: "run-id", type: "text", inputmode: "numeric", placeholder: "42" }),
        h("button", { type: "submit", class: "button primary", text: "Open" }))));
  open.addEventListener("submit", (ev) => { ev.preventDefault(); const v = $("run-id").value.trim(); if (/^\d+$/.test(v)) navigate("/runs/" + v); });
  const item = (r) => h("li", { "data-run": r.id }, link("/runs/" + r.id, `Run #${r.id}${r.name ? " · " + r.name : ""}`), " ", stateBadge(r.state),
    h("span", { class: "muted small" }, " · started ", relEl(r.createdAt), r.finishedAt ? [" · finished ", relEl(r.finishedAt)] : null));
  const list = h("ul", { class: "run-list", id: "recent-runs" }, first.runs.map(item));
  let cursor = first.nextCursor;
  const more = h("button", { type: "button", class: "button small", id: "more-runs", text: "Older runs", hidden: !cursor });
  more.addEventListener("click", async () => {
    const page = await api("GET", "/v1/runs" + query({ limit: RUNS_PAGE, cursor }));
    if (stale()) return;
    list.append(...page.runs.map(item));
    cursor = page.nextCursor;
    more.hidden = !cursor;
  });
  setView(heading("Runs", "A run groups the steps of one piece of work. Open one to see its steps and their states."),
    h("div", { class: "split" }, open,
      h("section", { class: "card" }, h("h2", { text: "Runs, newest first" }),
        first.runs.length ? [list, more] : h("p", { class: "empty", id: "no-runs", text: "No runs yet: a producer starts one with POST /v1/runs." }))));
  ready();
}

async function runView([id], stale) {
  setTitle("Run #" + id);
  const r = await api("GET", "/v1/runs/" + id);
  if (stale()) return;
  const counts = STATES.filter((s) => r.counts[s]).map((s) => h("span", { class: "count-chip" }, stateBadge(s), " ", num(r.counts[s])));
  setView(
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, link("/runs", "Runs"), " / ", h("span", { text: "#" + r.id })),
    heading(`Run #${r.id}${r.name ? " · " + r.name : ""}`, null, link("/jobs" + query({ runId: r.id }), "Steps as jobs", "button small")),
    h("section", { class: "card" }, factList([
      ["State", badge(r.state, r.state === "finished" ? "succeeded" : "running")],
      ["Started", timeEl(r.createdAt)],
      r.finishedAt ? ["Finished", timeEl(r.finishedAt)] : null,
      ["Steps", h("span", { class: "chips" }, counts.length ? counts : "none")],
    ])),
    h("section", { class: "card" }, h("h2", { text: `Steps (${num(r.steps.length)})` }),
      r.steps.length ? h("div", { class: "table-wrap" }, h("table", { class: "data", id: "steps-table" },
        h("thead", {}, h("tr", {}, ["Job", "Tool", "Endpoint", "State", "Attempt", "Due / ended", "Last error", "Created"].map((t) => h("th", { text: t })))),
        h("tbody", {}, r.steps.map((j) => h("tr", { "data-job": j.id },
          h("td", {}, link("/jobs/" + j.id, "#" + j.id, "mono")), h("td", { class: "mono", text: toolRef(j) }),
          h("td", {}, link("/endpoints/" + encodeURIComponent(j.endpoint), j.endpoint)),
          h("td", {}, stateBadge(j.state)), h("td", { text: `${j.attempt} / ${j.maxAttempts}` }),
          h("td", { class: "small due-col" }, j.state === "scheduled" ? relEl(j.dueAt) : j.finishedAt ? relEl(j.finishedAt) : j.state === "running" ? "running" : "—"),
          h("td", { class: "small step-error", title: j.lastError || null }, j.lastError ? [j.lastClassification ? h("span", { class: "mono", text: j.lastClassification + " · " }) : null, j.lastError] : "—"),
          h("td", { class: "small" }, timeEl(j.createdAt)))))))
        : h("p", { class: "empty", text: "This run has no steps yet." })));
  ready();
}

// ---------- start ----------

// tabs is the session shared with the dashboard's other tabs in this
// browser (dashboard-api.js, session); set by init.
let tabs = null;

// signOut forgets the key in this tab and, unless another tab said so,
// tells the others to forget it too.
function signOut(message, fromOtherTab) {
  setKey("");
  if (!fromOtherTab && tabs) tabs.signedOut();
  showSignin("");
  toast(message);
}

// adoptKey signs in with a key another tab handed over, if this tab shows
// the sign-in form and nobody has started typing in it.
let adopting = false;
function adoptKey(key) {
  if (adopting || state.me || getKey() || $("api-key").value) return;
  adopting = true;
  state.focusNext = document.activeElement === $("api-key");
  signIn(key).catch(() => { showSignin(""); }).finally(() => { adopting = false; });
}

function init() {
  hooks.onUnauthenticated = () => {
    setKey("");
    showSignin("Your key is no longer accepted. Sign in again.");
  };
  tabs = session({
    onKey: adoptKey,
    onSignOut: () => { if (state.me || getKey()) signOut("Signed out in another tab; the key is gone from this one too.", true); },
  });
  $("signin-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const key = $("api-key").value.trim();
    if (!key) { showSignin("Paste an API key."); return; }
    $("signin-button").disabled = true;
    try {
      state.focusNext = true;
      await signIn(key);
      tabs.signedIn(key);
    } catch (e) {
      showSignin(e.status === 401 ? "This key was not accepted: it is unknown or revoked." : e.message);
    } finally {
      $("signin-button").disabled = false;
    }
  });
  $("signout").addEventListener("click", () => signOut("Signed out; the key is gone from this tab and the dashboard's other tabs."));
  // Dashboard links route on the client; everything else (the calculator,
  // new tabs, modified clicks) loads normally.
  document.addEventListener("click", (ev) => {
    const a = ev.target.closest && ev.target.closest("a[href]");
    if (!a || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey || a.target) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !match(url.pathname) || !state.me) return;
    if (url.pathname === location.pathname && url.search === location.search && url.hash) return;
    ev.preventDefault();
    navigate(url.pathname + url.search + url.hash);
  });
  window.addEventListener("popstate", () => { state.focusNext = true; render(); });
  // Leaving the page closes its stream at once, so the connection is not
  // left to the browser's clean-up (a browser allows only a few per host).
  window.addEventListener("pagehide", stopLive);
  const key = getKey();
  if (key) {
    signIn(key).catch((e) => showSignin(e.status === 401 ? "Your key is no longer accepted. Sign in again." : e.message));
    return;
  }
  // A new tab: an open tab that answers signs it in (adoptKey); without an
  // answer soon, the form.
  if (!tabs.available) { showSignin(""); return; }
  document.documentElement.dataset.view = "handover";
  tabs.ask();
  setTimeout(() => { if (!adopting && !state.me && !getKey()) showSignin(""); }, ASK_MS);
}

init();
