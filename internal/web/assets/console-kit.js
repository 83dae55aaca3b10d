// The console's view kit: what every view of the dashboard shares. The
// view's heading and the ready/focus rule, the error box, the table
// helpers (sideways scrolling), the live line and the stream or poll that
// refreshes a view, and the session state. The shell (dashboard.js) owns
// routing and sign-in; views import from here and never from the shell.

import * as B from "./backoff.js";
import { $, h, toast as showToast } from "./ui.js";
import { ApiError, openStream } from "./dashboard-api.js";
import { compactSpan, span, timesIn, when } from "./dashboard-format.js";
import { CLAIMABLE_STATES, CANCELLABLE_STATES, JOB_STATES, REPLAYABLE_STATES } from "./limits.js";

// Relative times ("in 12 s") are rewritten this often between events.
export const TICK_MS = 5000;
// The job states (tabs, filters, counts) and which of them each action
// takes come from the server's state machine (limits.js is generated from
// package wire); none is typed here.
export const STATES = JOB_STATES;
export const REPLAYABLE = REPLAYABLE_STATES;
export const CANCELLABLE = CANCELLABLE_STATES;
// RUNNABLE are the states run-now takes (owner keys only): the claimable ones.
export const RUNNABLE = CLAIMABLE_STATES;
// orList writes a list for a sentence: "a", "a or b", "a, b or c".
export const orList = (xs) => xs.length < 2 ? xs.join("") : `${xs.slice(0, -1).join(", ")} or ${xs[xs.length - 1]}`;

export const state = {
  me: null,
  skew: 0, // server clock minus this browser's clock, from /v1/overview
  timer: 0,
  stream: null, // the open GET /v1/stream of the current view
  token: 0, // bumped on every navigation; stale async work checks it
  flash: null, // a result to show on the next render of the jobs page
  render: () => {}, // the shell's render of the current address (dashboard.js)
};

// ---------- DOM helpers ----------

// The dashboard's messages (errors among them) stay a little longer.
export const toast = (message) => showToast(message, 3200);

// ---------- formatting ----------
// The shared formatting lives in dashboard-format.js; what needs the
// server's clock stays here.

export const serverNow = () => Date.now() + state.skew;

// relative is a time from now, compact ("in 1 h 10 min", "4 min ago");
// wherever it is printed the exact time is beside it or in its tooltip.
export function relative(iso) {
  const d = Date.parse(iso) - serverNow();
  if (Math.abs(d) < 1000) return "now";
  return d > 0 ? "in " + compactSpan(d) : compactSpan(d) + " ago";
}

// circuitOpenEnd is the end of an open circuit's sentence, after "open
// since …": when it half-opens, with its time. An open time that has
// passed is not "half-opens 11 min ago": the circuit half-opens at the
// next claim, which a paused endpoint does not make until it is resumed.
// Nodes: the caller puts them in its sentence.
export function circuitOpenEnd(c, paused) {
  const at = h("strong", { class: "half-opens", text: when(c.halfOpensAt) });
  if (Date.parse(c.halfOpensAt) > serverNow()) return ["; half-opens at ", at, ` (${relative(c.halfOpensAt)}).`];
  const ended = ["; its open time ended at ", at, ` (${relative(c.halfOpensAt)})`];
  return paused ? [...ended, ": it half-opens with the first claim after the endpoint is resumed, a probe."]
    : [...ended, ": the next claim half-opens it, a probe."];
}

// untilText is a hold's end for a sentence, " until … (in 4 min)"; an end
// that has passed while the page was open says so rather than "until …
// (2 min ago)": the next claim checks the gate again.
export function untilText(iso) {
  if (Date.parse(iso) > serverNow()) return ` until ${when(iso)} (${relative(iso)})`;
  return ` until ${when(iso)}, which has passed (${relative(iso)}): the next claim checks again`;
}

export function badge(text, kind) {
  return h("span", { class: "status status-" + kind, text });
}

export const stateBadge = (s) => badge(s, s);

export function circuitBadge(c) {
  const label = { closed: "Circuit closed", open: "Circuit open", half_open: "Circuit half-open" }[c.state] || c.state;
  return badge(label, "circuit-" + c.state);
}

export function setTitle(t) {
  document.title = t + " · Ratchet";
}

export function heading(title, lede, ...actions) {
  return h("section", { class: "intro view-head" },
    // tabindex -1: focusHeading puts focus here after a navigation, and the
    // attribute is part of the heading, so a live update that patches the
    // view (morph) keeps it and the focus.
    h("div", {}, h("h1", { text: title, tabindex: "-1" }), lede ? h("p", { class: "lede", text: lede }) : null),
    actions.length ? h("div", { class: "actions" }, ...actions) : null);
}

export function alertBox(title, lines) {
  return h("div", { class: "alert", role: "alert" }, h("p", { class: "alert-title", text: title }),
    lines && lines.length ? h("ul", {}, lines.map((l) => h("li", { text: l }))) : null);
}

export function errorLines(e) {
  if (e instanceof ApiError && e.fields.length) return e.fields.map((f) => f.message);
  return [];
}

// setView replaces the view's content. Like h, it skips null, undefined and
// false, which replaceChildren would print as the text "null".
export function setView(...nodes) {
  $("skip-view")?.remove();
  $("view").replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined && n !== false));
  watchTables($("view"));
}

// viewSkip puts a second skip link after the page's "Skip to content",
// to the part of the view people come for (the jobs list was 38 Tabs from
// the top of the page, past the menu, the search, the filters and the
// tabs); setView takes it away. It moves focus to the target (made
// focusable) without touching the address.
export function viewSkip(target, text) {
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
export function watchTables(root) {
  for (const w of root.querySelectorAll(".table-wrap")) { watchOverflow(w); markOverflow(w); }
}

// A table wider than its card scrolls inside its .table-wrap. markOverflow
// says so (data-overflow, styled in dashboard.css with edge shadows and a
// "scroll sideways" line) and lets the keyboard reach and scroll it.
export const overflowObserver = new ResizeObserver((entries) => {
  for (const e of entries) markOverflow(e.target.closest(".table-wrap"));
});

export function watchOverflow(w) {
  overflowObserver.observe(w);
  if (w.firstElementChild) overflowObserver.observe(w.firstElementChild);
}

export function markOverflow(w) {
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

// failBox is the error box of a failed request: its message and the
// fields it names.
export function failBox(e) {
  return alertBox(e.message, errorLines(e));
}

// REFRESH_MS is how often a view that polls (every) asks again.
export const REFRESH_MS = 5000;

// every runs fn now and then every REFRESH_MS until the view is left: the
// refresh of a view that polls rather than listens to the stream. A failed
// refresh shows its error in box (failBox) and keeps trying.
export function every(stale, box, fn) {
  const tick = async () => {
    if (stale()) return;
    try {
      await fn();
      box.replaceChildren();
    } catch (e) {
      if (stale()) return;
      box.replaceChildren(failBox(e));
    }
    if (!stale()) setTimeout(tick, REFRESH_MS);
  };
  return tick();
}

export function failView(e) {
  setView(heading("Something went wrong"), alertBox(e.message, errorLines(e)));
  ready();
}

export function ready() {
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
export function focusHeading() {
  const h1 = document.querySelector("#view h1");
  if (!h1) return;
  h1.tabIndex = -1;
  h1.focus({ preventScroll: true });
}

// keepFocus puts focus back on the page when an update removed the focused
// control (a Cancel button that became Replay): on the first of the
// candidates that exists, else on the heading.
export function keepFocus(...candidates) {
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
export const FAILED_FILTER = REPLAYABLE_STATES.filter((s) => s !== "cancelled").join(",");

export function link(href, text, cls) {
  return h("a", { href, class: cls, text });
}

export const toolRef = (j) => j.tool + "@" + j.version;

// navigate goes to url inside the dashboard: a history entry (histState
// rides along, e.g. a control to keep focus on), focus to the new view's
// heading once it is ready, and the shell's render (state.render).
export function navigate(url, replace = false, histState = null) {
  if (replace) history.replaceState(histState, "", url); else history.pushState(histState, "", url);
  state.focusNext = true;
  state.render();
  window.scrollTo(0, 0);
}

// ---------- live updates ----------

// stopLive ends the view's stream and timer (on navigation and sign-out).
export function stopLive() {
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
export const HIDDEN_CLOSE_MS = 10000;
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
export function liveLine() {
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
export function live(params, line, onEvent, stale, tick) {
  stopLive();
  state.reopen = () => openStream(params, {
    onEvent: (name, data) => { if (!stale()) onEvent(name, data); },
    onStatus: (s) => { if (!stale()) line.status(s); },
  });
  state.paused = () => { if (!stale()) line.status({ state: "paused" }); };
  state.stream = state.reopen();
  if (tick) state.timer = setInterval(() => { if (!stale()) tick(); }, TICK_MS);
}

// morphChildren makes parent's children look like next without replacing
// nodes that can be kept: same-tag elements are patched in place (their
// attributes, inline style and children), text nodes get new text, and
// only what differs in kind is replaced. A focused link therefore keeps its
// focus across a refresh.
export function morphChildren(parent, next) {
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

export function morph(o, n) {
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

// relEl is a time as people glance at it in a list, "4 min ago" or "in
// 12 s", with the exact time (UTC and local) as its tooltip; the list's
// tick rewrites it.
export function relEl(iso) {
  return h("time", { class: "rel", datetime: iso, title: when(iso, true), text: relative(iso) });
}

// detailEl is a server sentence (a hold's detail) for the page: each time
// in it relative ("paused by ops 5 min ago", "scheduled to run in 1 h"),
// with the exact time, UTC and local, in its tooltip, ending in a full stop.
export function detailEl(text) {
  const parts = timesIn(text.replace(/\.?$/, "."));
  return h("span", { class: "detail" }, parts.flatMap((p) => p.iso ? [p.at ? " " : "", relEl(p.iso)] : [p.text]));
}

export function confirmDialog(title, body, yes) {
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

export function factList(items) {
  return h("dl", { class: "facts" }, items.filter(Boolean).map(([k, v]) => h("div", { "data-key": k }, h("dt", { text: k }), h("dd", {}, v))));
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
  daily_budget: "the daily budget",
  monthly_budget: "the monthly budget",
  delivery_window: "the quiet hours",
  key_daily_budget: "the daily budget per key",
  key_monthly_budget: "the monthly budget per key",
};
export const GATE_NAMES = Object.fromEntries(B.GATES.map((g) => [g, GATE_WORDS[g] || g.replaceAll("_", " ")]));

// policyLabel names an endpoint's retry policy in a few words.
export function policyLabel(pol) {
  if (!pol || !pol.preset) return "STANDARD";
  if (pol.preset !== "CUSTOM") return pol.preset;
  return `CUSTOM ${pol.maxAttempts} attempts from ${span(pol.initialDelayMs)} ×${B.formatNumber(pol.multiplier)}`;
}
