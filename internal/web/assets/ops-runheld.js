// "Run all held now": every scheduled job a filter selects (on the
// endpoint page, the endpoint's scheduled jobs) made due now through POST
// /v1/jobs/bulk (run_now, an owner key's action, audited as bulk.run_now).
// Nothing goes to the provider at once: each job is only made due, and the
// endpoint's gates (the pause, the circuit, its concurrency and rate
// limits, the recovery ramp) pace the claims as they do every job's.
import { confirmDialog, toast } from "./console-kit.js";
import { api, query } from "./dashboard-api.js";
import { num } from "./dashboard-format.js";

// BULK_MAX is the most jobs one POST /v1/jobs/bulk takes (wire.MaxBatch).
const BULK_MAX = 1000;
const LIST_PAGE = 500;

// runHeldText is the confirmation of running n jobs of endpoint name now:
// how many, and that the gates still pace them.
export function runHeldText(n, name, paused) {
  const jobs = `${num(n)} scheduled ${n === 1 ? "job" : "jobs"}`;
  return {
    title: `Run ${jobs} of ${name} now?`,
    body: `Each of the ${jobs} of ${name} (held by its gates or waiting out a backoff) becomes due now, without spending an attempt. ` +
      `They are not sent at once: they go through the gates of ${name} — the pause, the circuit, its concurrency and rate limits and the recovery ramp — which pace them to the provider.` +
      (paused ? ` ${name} is paused: they stay held until it is resumed.` : "") +
      " If the count changes before the server acts, nothing is done and you are asked again.",
    yes: `Run ${num(n)} ${n === 1 ? "job" : "jobs"} now`,
  };
}

// idsOf lists the ids of the jobs filter f selects, newest first, n at most.
async function idsOf(f, n) {
  const ids = [];
  let cursor = "";
  do {
    const page = await api("GET", "/v1/jobs" + query({ ...f, limit: LIST_PAGE, cursor }));
    ids.push(...page.jobs.map((j) => j.id));
    cursor = page.nextCursor || "";
  } while (cursor && ids.length < n);
  return ids.slice(0, n);
}

// runNow sends the bulk action: by filter, with the confirmed count, when
// it fits in one request; else the listed ids, BULK_MAX at a time (each
// job is checked by the server again: one run or finished since is left
// out and named in the answer).
async function runNow(f, n) {
  if (n <= BULK_MAX) return api("POST", "/v1/jobs/bulk", { action: "run_now", filter: f, expectedCount: n });
  const ids = await idsOf(f, n);
  const out = { count: 0, jobs: [], failed: [] };
  for (let i = 0; i < ids.length; i += BULK_MAX) {
    const part = ids.slice(i, i + BULK_MAX);
    const r = await api("POST", "/v1/jobs/bulk", { action: "run_now", ids: part, expectedCount: part.length });
    out.count += r.count;
    out.jobs.push(...r.jobs);
    out.failed.push(...r.failed);
  }
  return out;
}

// runAllHeld counts the jobs filter f selects (a scheduled state filter),
// asks, and makes them due now; it resolves to the bulk answer, or null
// when nothing was done. ep is the endpoint ({ name, paused }).
export async function runAllHeld(f, ep, stale, changedFrom) {
  const { count: n } = await api("GET", "/v1/jobs/count" + query(f));
  if (stale()) return null;
  if (n === 0) {
    toast(`No scheduled job of ${ep.name} to run now.`);
    return null;
  }
  const t = runHeldText(n, ep.name, !!ep.paused);
  const changed = changedFrom === undefined ? "" : `The count changed before the server acted: ${num(changedFrom)} then, ${num(n)} now. Nothing was done. `;
  if (!(await confirmDialog(t.title, changed + t.body, t.yes)) || stale()) return null;
  let res;
  try {
    res = await runNow(f, n);
  } catch (e) {
    if (e.status === 409 && !(e.fields && e.fields.length) && !stale()) return runAllHeld(f, ep, stale, n);
    throw e;
  }
  if (stale()) return null;
  toast(`${num(res.count)} ${res.count === 1 ? "job is" : "jobs are"} due now; the gates of ${ep.name} pace them.` +
    (res.failed.length ? ` ${num(res.failed.length)} could not be run now (run or finished since).` : ""));
  return res;
}
