// The contention simulator's runs: asking this server for a sweep
// (POST /api/simulate), busy and status lines, a stale or failed result.
import { SIM_LIMITS } from "./limits.js";
import { $ } from "./ui.js";
import { BUSY_TRIES, INTEGER, intFmt, message, modesChecked, ms, plural, readForm, s, showErrors, state, writeURL } from "./simulator-form.js";
import { csv, headline, render } from "./simulator.js";

// ---------- running ----------

export const wait = (msec, signal) => new Promise((resolve, reject) => {
  const t = setTimeout(resolve, msec);
  signal.addEventListener("abort", () => { clearTimeout(t); reject(new DOMException("aborted", "AbortError")); }, { once: true });
});

function setBusy(busy) {
  $("run").disabled = busy;
  $("run").textContent = busy ? "Running…" : "Run simulation";
  for (const id of ["chart-calls", "chart-time", "sim-table"]) {
    $(id).setAttribute("aria-busy", String(busy));
    $(id).style.opacity = busy && state.result ? "0.45" : "";
  }
}

// done records how the last sweep ended on the document: data-sim is
// "done" or "error", and data-sim-count counts the sweeps that ended.
export function done(how) {
  const d = document.documentElement.dataset;
  d.sim = how;
  d.simCount = String(Number(d.simCount || 0) + 1);
}

function status(text) {
  $("sim-status").textContent = text;
}

// sweepHelp states the server's limits (limits.js, from simulate's
// constants) and what the sweep in the form asks for, so a sweep the
// server would refuse is visibly over a limit before it is run.
export function sweepHelp() {
  const L = SIM_LIMITS;
  const int = (id) => (INTEGER.test($(id).value.trim()) ? Number($(id).value.trim()) : NaN);
  const from = int("from"), to = int("to"), step = int("step"), runs = int("runs");
  const modes = modesChecked().length;
  let mine = "";
  if (from >= 1 && to >= from && step >= 1 && runs >= 1 && modes) {
    const points = Math.floor((to - from) / step) + 1;
    let clients = 0;
    for (let i = 0; i < Math.min(points, L.points + 1); i++) clients += from + i * step;
    const total = clients * runs * modes;
    mine = ` This sweep: ${plural(points, "point", "points")}, ${intFmt.format(clients)} clients over them × ${plural(runs, "run", "runs")} × ${plural(modes, "mode", "modes")} = ${intFmt.format(total)} client runs${total > L.clientRuns || points > L.points ? " — over the limit" : ""}.`;
  }
  $("sweep-help").textContent = `The study: 10 to 190 clients in steps of 10, 100 runs per point. Limits: at most ${intFmt.format(L.clients)} clients, ${intFmt.format(L.points)} points, ${intFmt.format(L.runs)} runs per point, and ${intFmt.format(L.clientRuns)} client runs in one sweep (the clients of every point × runs × modes; the study's sweep is 950,000).` + mine;
}

// staleResult greys the charts and the table out and says why when the
// last sweep failed: they show an older sweep, not the settings in the
// form. Downloads are off until a sweep succeeds.
export function staleResult(stale) {
  document.documentElement.dataset.simStale = String(stale);
  for (const el of document.querySelectorAll(".sim-out")) el.classList.toggle("stale-result", stale);
  for (const id of ["download-csv", "download-json"]) $(id).disabled = stale || !state.result;
  $("sim-stale").hidden = !stale || !state.result;
  if (stale) $("sim-headline").hidden = true;
}

// failed shows a refused or failed sweep: the errors in the result card,
// the old results greyed out, and, when the person pressed Run, focus on
// the errors (scrolled into view: on a phone the result card is below the
// form).
export function failed(userRun) {
  staleResult(true);
  done("error");
  if (!userRun) return;
  const box = $("sim-errors");
  box.tabIndex = -1;
  box.focus({ preventScroll: true });
  box.scrollIntoView({ block: "center", behavior: "instant" });
}

// FIRST_LOOK_RUNS is the runs per point of the quick sweep a page opened
// on a larger sweep shows first: the study's sweep takes seconds of the
// server's CPU, and the page sat on "Running…" with empty charts until it
// came. The quick one takes a tenth of it and is replaced when the full
// sweep arrives.
const FIRST_LOOK_RUNS = 10;

export async function run(userRun = false) {
  writeURL();
  const { cfg, errors } = readForm();
  if (errors.length) {
    showErrors(errors, "Fix these settings to run the sweep:");
    status("Not run: the settings above need fixing.");
    failed(userRun);
    return;
  }
  if (state.controller) state.controller.abort();
  const controller = new AbortController();
  state.controller = controller;
  setBusy(true);
  document.documentElement.dataset.sim = "running";
  const points = cfg.to >= cfg.from && cfg.step > 0 ? Math.floor((cfg.to - cfg.from) / cfg.step) + 1 : 0;
  const sweepOf = (c) => `${plural(points, "point", "points")} × ${plural(c.runs, "run", "runs")} × ${plural(c.modes.length, "mode", "modes")}`;
  const what = sweepOf(cfg);
  // The page's own first sweep, when it is large, is preceded by a quick
  // one of FIRST_LOOK_RUNS runs per point (a person's Run is run as asked).
  let first = !userRun && !state.result && cfg.runs > FIRST_LOOK_RUNS ? { ...cfg, runs: FIRST_LOOK_RUNS } : null;
  status(first ? `Running a first look, ${sweepOf(first)}, on the server…` : `Running ${what} on the server…`);
  const started = performance.now();
  try {
    for (let attempt = 1; ; attempt++) {
      const resp = await fetch("/api/simulate", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(first || cfg),
        signal: controller.signal,
      });
      const text = await resp.text();
      if (resp.ok && first) {
        state.result = JSON.parse(text);
        staleResult(false);
        render();
        status(`A first look from ${plural(first.runs, "run", "runs")} per point; running the full sweep, ${what}, on the server…`);
        first = null;
        attempt = 0;
        continue;
      }
      if (resp.ok) {
        showErrors([]);
        const timing = resp.headers.get("Server-Timing") || "";
        const dur = /dur=([\d.]+)/.exec(timing);
        const where = timing.startsWith("cache") ? "from the server's cache (the same settings give the same numbers)"
          : dur ? `in ${ms(Number(dur[1]))} on the server` : `in ${ms(performance.now() - started)}`;
        state.result = JSON.parse(text);
        staleResult(false);
        render();
        status(`Simulated ${what} ${where}.`);
        done("done");
        return;
      }
      let err = null;
      try { err = JSON.parse(text).error; } catch { /* not the API's shape */ }
      if (resp.status === 503 && attempt < BUSY_TRIES) {
        const floor = Number(resp.headers.get("Retry-After")) * 1000 || 1000;
        const delay = Math.max(floor, Math.random() * Math.min(8000, 500 * 2 ** attempt));
        status(`The server is running another simulation; trying again in ${ms(delay)} (attempt ${attempt + 1} of ${BUSY_TRIES}).`);
        await wait(delay, controller.signal);
        continue;
      }
      if (err && err.fields) {
        showErrors(err.fields, "The server did not run the sweep:");
        status("Not run: the settings above need fixing.");
        failed(userRun);
      } else {
        showErrors([{ field: "server", message: err ? err.message : `the server answered ${resp.status}` }], "The server did not run the sweep:");
        status("Not run.");
        failed(userRun);
      }
      return;
    }
  } catch (e) {
    if (e.name === "AbortError") return;
    showErrors([{ field: "server", message: "the server could not be reached: " + e.message }], "The sweep did not run:");
    status("Not run.");
    failed(userRun);
  } finally {
    if (state.controller === controller) {
      state.controller = null;
      setBusy(false);
    }
  }
}
