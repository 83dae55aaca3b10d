// The dashboard's only way to the server: the public /v1 API with the
// signed-in key as a bearer token, exactly as any other client calls it.
// The key lives in sessionStorage, so it stays with this tab and is gone when
// the tab closes; it is never put in a URL, a cookie or localStorage.

import { EventStreamParser } from "./sse.js";

const KEY = "ratchet.apiKey";

export function getKey() {
  try { return sessionStorage.getItem(KEY) || ""; } catch { return ""; }
}

export function setKey(k) {
  try {
    if (k) sessionStorage.setItem(KEY, k); else sessionStorage.removeItem(KEY);
  } catch { /* storage disabled: the key lives until the next reload */ }
}

// ---------- the session across tabs ----------
//
// A new tab (a Ctrl+click, a pasted link) asks the dashboard's open tabs
// for the key on a BroadcastChannel, which reaches only pages of this
// origin in this browser profile, and signs in with the answer; a tab that
// signs out tells the others, which sign out too. The key is still never
// written anywhere but each tab's sessionStorage: closing the last tab
// ends the session, and since no cookie carries it the API has no ambient
// authority for a cross-site request to borrow (no CSRF). Why this and not
// a session cookie: docs/dashboard.md, Dashboard sessions.

const CHANNEL = "ratchet.session";

// How long a new tab waits for an open tab to answer before it shows the
// sign-in form. An answer that comes later still signs the form's tab in.
export const ASK_MS = 600;

// session joins the channel. onKey(key) hears a key an open tab handed
// over (to a tab showing the sign-in form); onSignOut() hears another tab
// sign out. It returns ask() (ask the open tabs for the key), signedIn(key)
// (hand the key to tabs showing the form) and signedOut().
export function session({ onKey, onSignOut }) {
  let ch = null;
  try { ch = new BroadcastChannel(CHANNEL); } catch { ch = null; }
  const post = (m) => { if (ch) ch.postMessage(m); };
  if (ch) {
    ch.onmessage = (ev) => {
      const m = ev.data || {};
      if (m.type === "ask" && getKey()) post({ type: "key", key: getKey() });
      else if (m.type === "key" && typeof m.key === "string" && m.key) onKey(m.key);
      else if (m.type === "signout") onSignOut();
    };
  }
  return {
    available: !!ch,
    ask: () => post({ type: "ask" }),
    signedIn: (key) => post({ type: "key", key }),
    signedOut: () => post({ type: "signout" }),
  };
}

// ApiError is a non-2xx answer: status, the error code and message of the
// API's one error shape, its field errors, and error.current on a conflict.
export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || "";
    this.fields = e.fields || [];
    this.current = e.current;
  }
}

// api calls one route and returns the decoded JSON body. A 401 signs the
// tab out (the onUnauthenticated hook shows the sign-in form again).
export const hooks = { onUnauthenticated: () => {} };

export async function api(method, path, body, key = getKey()) {
  const init = { method, headers: { Authorization: "Bearer " + key, Accept: "application/json" }, cache: "no-store" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, { error: { code: "network", message: "The server did not answer; check that ratchet serve is running." } });
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data);
    if (res.status === 401) hooks.onUnauthenticated(err);
    throw err;
  }
  return data;
}

// query builds "?a=1&b=2" from an object, leaving out empty values.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? "?" + s : "";
}

// ---------- live updates ----------

// Backoff between reconnects: 1 s doubling to 30 s, with up to a fifth
// added at random so many tabs do not reconnect in step after a restart.
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30000;
// A stream that has sent nothing, not even its ping (every 15 s), for this
// long is dead although the connection looks open: drop it and reconnect.
const SILENCE_MS = 40000;

// openStream reads GET /v1/stream with the signed-in key (EventSource
// cannot send a header, so it is fetch and a stream reader) and keeps it
// open: when it ends or fails it reconnects with backoff. onEvent(name,
// data) gets every event with its JSON data; onStatus({state, ...}) hears
// "connecting", "live" (with at, the time of the last byte), and "down"
// (with message, retryInMs, failures). close() stops it for good.
export function openStream(params, { onEvent, onStatus }) {
  let closed = false, ctrl = null, timer = 0, failures = 0, silence = 0;
  const status = (s) => { if (!closed) onStatus(s); };
  const retry = (message) => {
    if (closed) return;
    failures++;
    const base = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (failures - 1));
    const wait = Math.round(base * (1 + Math.random() / 5));
    status({ state: "down", message, retryInMs: wait, failures });
    timer = setTimeout(connect, wait);
  };
  const connect = async () => {
    if (closed) return;
    ctrl = new AbortController();
    const mine = ctrl;
    status({ state: "connecting", failures });
    let res;
    try {
      res = await fetch("/v1/stream" + query(params), {
        headers: { Authorization: "Bearer " + getKey(), Accept: "text/event-stream" }, cache: "no-store", signal: mine.signal,
      });
    } catch {
      if (!mine.signal.aborted) retry("the server did not answer");
      return;
    }
    if (!res.ok) {
      let data = null;
      try { data = await res.json(); } catch { data = null; }
      const err = new ApiError(res.status, data);
      if (res.status === 401) { hooks.onUnauthenticated(err); return; }
      retry(res.status === 429 ? "too many live streams are open (" + err.message + ")" : err.message);
      return;
    }
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    const parser = new EventStreamParser();
    let gotEvent = false;
    const watchdog = () => {
      clearTimeout(silence);
      silence = setTimeout(() => mine.abort(), SILENCE_MS);
    };
    watchdog();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        watchdog();
        const events = parser.pushWithComments(dec.decode(value, { stream: true }));
        for (const e of events) {
          if (closed) return;
          if (e.comment !== undefined) { status({ state: "live", at: Date.now() }); continue; }
          if (e.event === "error") {
            let body = null;
            try { body = JSON.parse(e.data); } catch { body = null; }
            retry(new ApiError(0, body).message);
            clearTimeout(silence);
            return;
          }
          let data;
          try { data = JSON.parse(e.data); } catch { continue; }
          if (!gotEvent) { gotEvent = true; failures = 0; }
          status({ state: "live", at: Date.now() });
          onEvent(e.event, data);
        }
      }
    } catch (err) {
      // aborted by close(), by the watchdog, or the connection broke; or
      // the server sent more than an event may hold: drop the connection
      if (err instanceof RangeError) {
        clearTimeout(silence);
        mine.abort();
        retry(err.message);
        return;
      }
    }
    clearTimeout(silence);
    if (closed) return;
    retry(mine.signal.aborted ? "the stream went silent" : "the stream ended (the server restarted or the network dropped)");
  };
  connect();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      clearTimeout(silence);
      if (ctrl) ctrl.abort();
    },
  };
}
