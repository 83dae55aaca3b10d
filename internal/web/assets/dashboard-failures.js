// The "Failures" card of the endpoint page: the endpoint's failed and
// exhausted jobs of a time range grouped by classification and message
// fingerprint (GET /v1/endpoints/{name}/failures), the largest group
// first, each with its counts, first and last seen, a sparkline, and a
// "Replay group" button. The button previews first (POST
// /v1/failures/replay with preview), asks with the count, then replays
// with that count as expectedCount, so a group that changed in between is
// not touched. The new jobs wait for the endpoint's gates like any job.
import { h, toast } from "./ui.js";
import { api, ApiError, query } from "./dashboard-api.js";
import { num, when, timeEl } from "./dashboard-format.js";
import { REPLAYABLE_STATES } from "./limits.js";
import { AUDITED, confirmAction } from "./dashboard-ops.js";

if (!document.getElementById("failures-style")) {
  document.head.append(h("link", { id: "failures-style", rel: "stylesheet", href: new URL("./dashboard-failures.css", import.meta.url).href }));
}

const NS = "http://www.w3.org/2000/svg";
const HOUR = 3600_000;
// The ranges offered, each with its sparkline resolution.
const RANGES = [
  { id: "1h", label: "Last hour", ms: HOUR, buckets: 12, unit: "5 minutes" },
  { id: "24h", label: "Last 24 hours", ms: 24 * HOUR, buckets: 24, unit: "hour" },
  { id: "7d", label: "Last 7 days", ms: 7 * 24 * HOUR, buckets: 28, unit: "6 hours" },
];
// The failed states of a group's jobs (cancelled jobs are replayable but
// not failures).
const FAILED = REPLAYABLE_STATES.filter((s) => s !== "cancelled");

function svgEl(name, attrs = {}) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

// sparkline draws counts as bars, the largest full height; its label reads
// the counts for people who do not see it.
export function sparkline(counts, unit) {
  const w = 4, gap = 1, ht = 22;
  const most = Math.max(1, ...counts);
  const svg = svgEl("svg", { class: "spark", width: counts.length * (w + gap), height: ht, viewBox: `0 0 ${counts.length * (w + gap)} ${ht}`, role: "img",
    "aria-label": `failures per ${unit}, oldest first: ${counts.join(", ")}` });
  counts.forEach((n, i) => {
    const bh = n === 0 ? 1 : Math.max(3, Math.round((n / most) * ht));
    svg.append(svgEl("rect", { x: i * (w + gap), y: ht - bh, width: w, height: bh, class: n === 0 ? "spark-zero" : "spark-bar" }));
  });
  return svg;
}

// gatesText says what paces the new jobs on this endpoint.
function gatesText(ep) {
  const parts = [];
  if (ep.paused) parts.push("the endpoint is paused, so they wait until it is resumed");
  if (ep.circuit && ep.circuit.state !== "closed") parts.push(`its circuit is ${ep.circuit.state.replace("_", "-")}`);
  parts.push(`at most ${num(ep.maxConcurrent)} run at a time`);
  if (ep.rateLimitPerMinute) parts.push(`at most ${num(ep.rateLimitPerMinute)} start per minute`);
  return parts.join("; ");
}

// failuresCard returns the card and fills it; canReplay is true for keys that
// may replay jobs; stale() says the page moved on.
export function failuresCard(ep, canReplay, stale) {
  const name = ep.name;
  let range = RANGES[1];
  const body = h("div", { id: "failures-body" }, h("p", { class: "muted small", text: "Loading…" }));
  const note = h("span", { class: "muted small", id: "failures-note" });
  const select = h("select", { id: "failures-range", "aria-label": "Time range of the failures" },
    RANGES.map((r) => h("option", { value: r.id, text: r.label, selected: r === range })));
  const card = h("section", { class: "card", id: "failures", "aria-labelledby": "failures-title" },
    h("div", { class: "card-head" }, h("h2", { id: "failures-title", text: "Failures" }), note, select),
    body);

  // replay previews what the filter selects, asks with that count (what
  // is a sentence naming the jobs), then replays exactly that many.
  const replay = async (filter, what, button) => {
    button.disabled = true;
    try {
      const pre = await api("POST", "/v1/failures/replay", { ...filter, preview: true });
      if (stale()) return;
      if (pre.count === 0) {
        toast(`Every job of this ${filter.group ? "group" : "range"} was replayed already (${num(pre.skipped)}).`);
        return;
      }
      const jobs = `${num(pre.count)} failed ${pre.count === 1 ? "job" : "jobs"}`;
      const ok = await confirmAction(`Replay ${jobs}?`,
        `Each becomes a new scheduled job, due now: ${what}. The endpoint's gates pace them: ${gatesText(ep)}.` +
        (pre.skipped ? ` ${num(pre.skipped)} already replayed ${pre.skipped === 1 ? "is" : "are"} left out.` : "") +
        (pre.capped ? " Only the latest 10,000 failures of the range were read." : ""),
        `Replay ${jobs}`);
      if (!ok || stale()) return;
      const res = await api("POST", "/v1/failures/replay", { ...filter, expectedCount: pre.count });
      if (stale()) return;
      toast(`Replayed ${num(res.replayed)} ${res.replayed === 1 ? "job" : "jobs"}${res.failed.length ? `; ${res.failed.length} could not be` : ""}`);
      // The operator controls' "Recent actions" and held jobs show it too.
      document.dispatchEvent(new CustomEvent(AUDITED, { detail: { target: "endpoint:" + name } }));
      await load();
    } catch (e) {
      if (stale()) return;
      const lines = e instanceof ApiError ? e.fields.map((f) => f.message) : [];
      body.prepend(h("div", { class: "alert", role: "alert" }, h("p", { class: "alert-title", text: "Could not replay: " + e.message }),
        lines.length ? h("ul", {}, lines.map((l) => h("li", { text: l }))) : null));
    } finally {
      button.disabled = false;
      if (!document.activeElement || document.activeElement === document.body) button.focus();
    }
  };

  const row = (g) => {
    // The visible words are the button's name (as axe's
    // label-content-name-mismatch asks); the group it replays is its
    // description.
    const button = canReplay ? h("button", { type: "button", class: "button small", "data-replay": g.group, text: "Replay group…",
      "aria-describedby": "fail-fp-" + g.group }) : null;
    if (button) {
      button.addEventListener("click", () => replay({ endpoint: name, group: g.group, since: list.since, until: list.until },
        `“${g.fingerprint || "(no message)"}” (${g.classification})`, button));
    }
    return h("tr", { "data-group": g.group },
      h("td", { class: "fail-what" },
        h("span", { class: "fail-fp", id: "fail-fp-" + g.group, title: "Latest: " + g.example, text: g.fingerprint || "(no message)" }),
        h("span", { class: "fail-meta" }, h("code", { text: g.classification }),
          [[g.exhausted, "exhausted"], [g.failed, "failed"], [g.replayed, "replayed"]].filter(([n]) => n).map(([n, w]) => ` · ${num(n)} ${w}`).join(""))),
      h("td", { class: "num fail-count", text: num(g.count) }),
      h("td", { class: "fail-seen" }, timeEl(g.firstSeen)),
      h("td", { class: "fail-seen" }, timeEl(g.lastSeen)),
      h("td", { class: "fail-trend" }, sparkline(g.sparkline, range.unit)),
      h("td", { class: "fail-act" }, button));
  };

  let list = null;
  const show = (l) => {
    list = l;
    const total = l.groups.reduce((a, g) => a + g.count, 0);
    note.textContent = total ? `${num(total)} ${total === 1 ? "job" : "jobs"} in ${num(l.groups.length)} ${l.groups.length === 1 ? "group" : "groups"}` : "";
    if (!l.groups.length) {
      body.replaceChildren(h("p", { class: "empty", id: "failures-empty", text: `No job of this endpoint failed in the ${range.label.toLowerCase()}.` }));
      return;
    }
    body.replaceChildren(
      h("div", { class: "table-wrap" }, h("table", { class: "data failures-table", id: "failures-table" },
        h("thead", {}, h("tr", {}, ["Failure", "Jobs", "First seen", "Last seen", "Trend", "Actions"].map((t, i) =>
          i === 5 ? h("th", {}, h("span", { class: "visually-hidden", text: t })) : h("th", { class: ["", "num", "fail-seen", "fail-seen", ""][i], text: t })))),
        h("tbody", {}, l.groups.map(row)))),
      h("div", { class: "fail-foot" },
        h("p", { class: "help" }, l.capped ? "Grouped from the latest 10,000 failures of the range. " : "",
          h("a", { href: "/jobs" + query({ endpoint: name, state: FAILED.join(",") }), text: "All failed jobs of " + name })),
        canReplay ? replayAllButton(l) : null));
  };

  // replayAllButton replays every failure of the range, whatever its group.
  const replayAllButton = (l) => {
    const b = h("button", { type: "button", class: "button small", id: "failures-replay-all", text: "Replay all in range…" });
    b.addEventListener("click", () => replay({ endpoint: name, since: l.since, until: l.until },
      `every failed job of ${name} in the ${range.label.toLowerCase()}, in every group`, b));
    return b;
  };

  const load = async () => {
    try {
      const until = new Date(Math.ceil(Date.now() / 60_000) * 60_000);
      const since = new Date(until.getTime() - range.ms);
      const l = await api("GET", `/v1/endpoints/${encodeURIComponent(name)}/failures` + query({ since: since.toISOString(), until: until.toISOString(), buckets: range.buckets }));
      if (!stale()) show(l);
    } catch (e) {
      if (!stale()) body.replaceChildren(h("p", { class: "callout", text: "Could not read the failures: " + e.message }));
    }
  };
  select.addEventListener("change", () => {
    range = RANGES.find((r) => r.id === select.value) || RANGES[1];
    load();
  });
  if (!canReplay && ep) note.title = "Replaying needs a key that may replay jobs.";
  load();
  const timer = setInterval(() => (stale() ? clearInterval(timer) : (document.activeElement?.closest?.("#failures") ? null : load())), 15000);
  return card;
}
