// What the dashboard's Workers and History views share (view-workers.js,
// view-history.js): their stylesheet, linked on first use, and their
// times: the local time first with the zone's name, chart ticks of hours
// and minutes, durations rounded for charts, and the server's clock.
import { h } from "./ui.js";
import { api } from "./dashboard-api.js";
import { pad, utc, span, msText } from "./dashboard-format.js";

export const HOURS = [1, 6, 24, 48];
export const MINUTE = 60_000;
export const NS = "http://www.w3.org/2000/svg";

// This module's stylesheet sits beside it; the page shell links only
// dashboard.css, so it is linked on first use.
export function ensureStyle() {
  if (document.getElementById("observe-css")) return;
  document.head.append(h("link", { id: "observe-css", rel: "stylesheet", href: new URL("./dashboard-observe.css", import.meta.url).href }));
}

// ---------- formatting ----------
// num, span, utc and msText are the dashboard's (dashboard-format.js). What
// stays here is this module's own layout: the local time first with the
// zone's name ("2026-03-04 15:32:13 UTC+5:30 · 2026-03-04 10:02:13 UTC"),
// chart ticks of hours and minutes, and durations rounded for charts.

// stamp prints a Date as "2026-03-04 10:02:13", in UTC when utc is true and
// on this browser's clock otherwise.
export function stamp(d, utc) {
  const g = (k) => d[(utc ? "getUTC" : "get") + k]();
  return `${g("FullYear")}-${pad(g("Month") + 1)}-${pad(g("Date"))} ${pad(g("Hours"))}:${pad(g("Minutes"))}:${pad(g("Seconds"))}`;
}

// zone names this browser's offset from UTC: "UTC+2", "UTC−5:30", "UTC".
export function zone(d = new Date()) {
  const off = -d.getTimezoneOffset();
  if (off === 0) return "UTC";
  const a = Math.abs(off);
  return `UTC${off > 0 ? "+" : "−"}${Math.floor(a / 60)}${a % 60 ? ":" + pad(a % 60) : ""}`;
}

export const sameZone = () => new Date().getTimezoneOffset() === 0;

// seen shows a time as "12 s ago" over its local time and UTC.
export function seen(iso, now) {
  if (!iso) return h("span", { class: "muted", text: "never" });
  const d = new Date(iso);
  const ago = now - d.getTime();
  const rel = Math.abs(ago) < 1000 ? "just now" : ago > 0 ? span(ago) + " ago" : "in " + span(ago);
  const abs = sameZone() ? utc(iso) : `${stamp(d, false)} ${zone(d)} · ${utc(iso)}`;
  return h("time", { datetime: iso, title: abs, class: "seen" }, h("span", { class: "rel", text: rel }), h("span", { class: "abs", text: abs }));
}

// hm is a chart tick in local time, "14:05"; hmUTC the same in UTC.
export const hm = (ms) => { const d = new Date(ms); return `${pad(d.getHours())}:${pad(d.getMinutes())}`; };
export const hmUTC = (ms) => { const d = new Date(ms); return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`; };

// ms prints a lag for charts: "850 ms", "1.5 s", then as span does.
export function ms(n) {
  if (n < 1000) return msText(Math.round(n));
  if (n < 60_000) return (Math.round(n / 100) / 10) + " s";
  return span(n);
}

// serverClock is the server's clock from GET /v1/overview (the dev clock may
// run ahead), with this browser's as the fallback.
export async function serverClock() {
  try {
    const o = await api("GET", "/v1/overview");
    const t = Date.parse(o.now);
    return Number.isNaN(t) ? Date.now() : t;
  } catch {
    return Date.now();
  }
}
