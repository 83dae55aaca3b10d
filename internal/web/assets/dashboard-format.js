// The dashboard's formatting of times, durations and numbers, shared by
// dashboard.js and its modules (dashboard-ops.js, dashboard-observe.js) so
// that every page prints them alike. What depends on the dashboard's state
// (the server's clock, relative times) stays in dashboard.js.
import { h } from "./ui.js";

const nf = new Intl.NumberFormat("en-US");
export const num = (n) => nf.format(n);
// countText is a count that may be a lower bound ("10,000+"): the due and
// held counts of the overview and the endpoint page (capped alike).
export const countText = (n, capped) => nf.format(n) + (capped ? "+" : "");
export const pad = (n, w = 2) => String(n).padStart(w, "0");

// Times are stored and compared in UTC, and people read their own clock:
// every time the dashboard prints says both, "2026-03-04 10:02:13 UTC
// (11:02:13 local)", unless this browser's time zone is UTC. The local part
// carries the date when the local day differs from the UTC day.

// utc prints an RFC 3339 time as "2026-03-04 10:02:13 UTC" (with
// milliseconds when ms is true).
export function utc(iso, ms = false) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const s = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return (ms ? s + "." + pad(d.getUTCMilliseconds(), 3) : s) + " UTC";
}

// local is the same instant on this browser's clock, "11:02:13 local", or
// "" when the browser's zone is UTC at that instant.
export function local(iso, ms = false) {
  const d = new Date(iso);
  if (!iso || Number.isNaN(d.getTime()) || d.getTimezoneOffset() === 0) return "";
  let s = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  if (ms) s += "." + pad(d.getMilliseconds(), 3);
  if (d.getDate() !== d.getUTCDate()) s = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${s}`;
  return s + " local";
}

// when prints a time for a sentence: UTC, then the local time in brackets.
export function when(iso, ms = false) {
  const l = local(iso, ms);
  return utc(iso, ms) + (l ? ` (${l})` : "");
}

// span prints a duration for people: "850 ms", "42 s", "4 min 10 s", "2 h 5 min".
export function span(ms) {
  ms = Math.abs(Math.round(ms));
  if (ms < 1000) return ms + " ms";
  const s = Math.round(ms / 1000);
  if (s < 60) return s + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const hr = Math.floor(m / 60);
  if (hr < 48) return m % 60 ? `${hr} h ${m % 60} min` : `${hr} h`;
  return `${Math.round(hr / 24)} days`;
}

// compactSpan prints a duration as a list glances at it, in one unit:
// "42 s", "4 min", "3 h", "12 days" — seconds and minutes counted whole
// (a minute and ten seconds is "1 min"), hours and days rounded. A
// relative time is then at most "59 min ago" or "999 days ago" wherever
// it falls; the exact time is beside it or in its tooltip.
export function compactSpan(ms) {
  const s = Math.floor(Math.abs(ms) / 1000);
  if (s < 60) return s + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return m + " min";
  const hr = Math.round(m / 60);
  if (hr < 48) return hr + " h";
  return Math.round(hr / 24) + " days";
}

// clock prints the UTC time of day, "10:02:13 UTC" (or "10:02:13.456" in
// a column headed UTC).
export function clock(iso, ms = false) {
  const d = new Date(iso);
  const s = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return ms ? s + "." + pad(d.getUTCMilliseconds(), 3) : s + " UTC";
}

// clockEl is a table cell's time of day: UTC, with the local time as a
// second, quieter line (none when the browser's zone is UTC).
export function clockEl(iso, ms = false) {
  const l = local(iso, ms);
  return h("time", { datetime: iso, title: when(iso, true) }, clock(iso, ms), l ? h("span", { class: "local", text: localClock(iso, ms) }) : null);
}

// clockBoth is "10:02:13 UTC (11:02:13 local)" for short labels.
export function clockBoth(iso) {
  return clock(iso) + (local(iso) ? ` (${localClock(iso)})` : "");
}

// localClock is the local time of day only, "11:02:13.456 local".
export function localClock(iso, ms = false) {
  const d = new Date(iso);
  const s = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return (ms ? s + "." + pad(d.getMilliseconds(), 3) : s) + " local";
}

export const msText = (ms) => num(ms) + " ms";

// timeEl prints a time in UTC with the local time as a second, quieter
// line (none when the browser's zone is UTC).
export function timeEl(iso, ms = false) {
  const l = local(iso, ms);
  return h("time", { datetime: iso || "", title: iso || "" }, utc(iso, ms), l ? h("span", { class: "local", text: l }) : null);
}

// The server's sentences (a hold's detail: "endpoint x was paused by ops at
// 2026-03-04T10:02:13.000Z: deploy") carry RFC 3339 times. timesIn splits
// such a text into its words and its times, each time with the " at " that
// leads to it dropped, so the page can put a relative time in its place
// ("paused by ops 5 min ago"): [{text}, {iso}, {text}, …].
const ISO_IN_TEXT = /( at )?(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))/g;
export function timesIn(text) {
  const parts = [];
  let last = 0;
  for (const m of (text || "").matchAll(ISO_IN_TEXT)) {
    if (m.index > last) parts.push({ text: text.slice(last, m.index) });
    parts.push({ iso: m[2], at: !!m[1] });
    last = m.index + m[0].length;
  }
  if (last < (text || "").length) parts.push({ text: text.slice(last) });
  return parts;
}

// plainTimes is a server sentence for a tooltip: its times as "2026-03-04
// 10:02:13 UTC (11:02:13 local)".
export function plainTimes(text) {
  return timesIn(text).map((p) => p.iso ? (p.at ? " at " : "") + when(p.iso) : p.text).join("");
}
