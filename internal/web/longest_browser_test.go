package web_test

import (
	"context"
	"fmt"
	"testing"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/getratchet/ratchet/internal/browsertest"
)

// longestFill is a script run in the page before the console's own: it
// rewrites the server's answers for the jobs list and a job's page so that
// every row carries the longest content it can show — the longest gate and
// classification, the largest ids and counts, and times at the longest
// relative text the lists print ("999 days ago"), every delay and
// duration at its bound. The console draws those rows with its own code,
// so a fit check on them no longer depends on what a run happens to draw
// (a loaded machine drew "key concurrency in 1 min 10 s" where a quiet one
// drew "rate limit in 1 min 10 s", and the table overflowed by 52 px).
const longestFill = `(() => {
	// The longest relative times a list prints: "59 min ago" and "999
	// days ago"; rows take one or the other in turn.
	const LONGS = [(59 * 60 + 30) * 1000, 999 * 86400000];
	// Every gate, in turn, with a time when it can have one: the longest
	// name ("key concurrency") has none; due_time's time is the due column's.
	const GATES = ["key_concurrency", "key_order", "circuit", "rate_limit", "key_rate", "paused", "max_concurrent", "due_time"];
	const TIMED = ["key_order", "circuit", "rate_limit", "key_rate", "paused", "due_time"];
	const iso = (ms) => new Date(ms).toISOString();
	let skew = 0, held = 0;
	const now = () => Date.now() + skew;
	const fill = (j, i) => {
		const LONG = LONGS[i % 2];
		j.id = 99999900 + i; // eight digits
		if (j.runId !== undefined || i % 2 === 0) j.runId = 9999999;
		j.flowKey = "customer_8f2c1a0e-4b7d-4e55-9a3c-2f1d6b7e9a10";
		j.attempt = 10; j.maxAttempts = 10;
		j.createdAt = iso(now() - LONG);
		j.lastClassification = "network_authentication_required";
		j.lastError = "HTTP 400 — client error, fail; the response: error.code: invalid_recipient, error.message: mailbox 1234 does not exist at the provider";
		if (j.state === "scheduled") {
			j.dueAt = iso(now() + LONG);
			// The scheduled rows take every gate with the one long time,
			// then every gate with the other.
			const k = held++, gate = GATES[k % GATES.length];
			j.heldBy = { gate, detail: "held by " + gate };
			if (TIMED.includes(gate)) j.heldBy.until = iso(now() + LONGS[Math.floor(k / GATES.length) % 2]);
		} else if (j.state !== "running") {
			j.finishedAt = iso(now() - LONG);
		}
	};
	const fillAttempt = (a, i) => {
		a.workerId = "ratchet-delivery/a-rather-long-host-name.example.internal/8f2c1a0e";
		a.durationMs = 43200000;
		a.classification = "network_authentication_required";
		a.httpStatus = 599;
		a.message = "HTTP 400 — client error, fail; the response: error.code: invalid_recipient";
		a.retryAfterMs = 86400000; a.baseDelayMs = 86400000; a.minDelayMs = 43200000; a.maxDelayMs = 129600000;
		a.jitterSample = 0.123456; a.selectedDelayMs = 86400000;
		if (a.outcome !== "running") a.nextDueAt = new Date(Date.UTC(2026, 11, 31, 23, 59, 59, 999)).toISOString();
	};
	const orig = window.fetch;
	window.fetch = async (input, init) => {
		const url = new URL(typeof input === "string" ? input : input.url, location.href);
		// The live stream would send the job as the server has it: it is
		// held open with nothing in it.
		if (url.pathname === "/v1/stream") return new Response(new ReadableStream({ start() {} }), { status: 200, headers: { "Content-Type": "text/event-stream" } });
		const res = await orig(input, init);
		if ((init && init.method && init.method !== "GET") || !res.ok) return res;
		let rewrite = null;
		if (url.pathname === "/v1/overview") rewrite = (o) => { if (o.now) skew = Date.parse(o.now) - Date.now(); };
		else if (url.pathname === "/v1/jobs") rewrite = (o) => { held = 0; (o.jobs || []).forEach(fill); };
		else if (/^\/v1\/jobs\/\d+$/.test(url.pathname)) rewrite = (o) => { fill(o, 0); o.id = Number(url.pathname.split("/").pop()); (o.attempts || []).forEach(fillAttempt); };
		if (!rewrite) return res;
		const body = await res.json();
		rewrite(body);
		return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
	};
})()`

// longestRowsFit opens the jobs list (every tab) and the job pages with
// every row at its longest (longestFill) and checks that at 1280 px each
// table fits its card and at 390 px nothing sticks out of the window.
func longestRowsFit(t *testing.T, b *browsertest.Browser, base string, jobPages []string) {
	t.Helper()
	shots := browsertest.ScreenshotDir(t)
	for _, vp := range viewports {
		t.Run("longest-"+vp.name, func(t *testing.T) {
			tab := b.NewIsolatedTab(t)
			tab.Do("fill script", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
				_, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: longestFill})
				return err
			}))
			d := &dash{t: t, tab: tab, base: base, dir: shots}
			setViewport(t, tab, vp.w, vp.h)
			d.signIn(ownerKey)
			paths := []string{"/jobs"}
			for _, s := range []string{"scheduled", "running", "succeeded", "failed", "exhausted", "cancelled"} {
				paths = append(paths, "/jobs?state="+s)
			}
			for _, p := range append(paths, jobPages...) {
				d.open(p)
				if p[len("/jobs"):] != "" && p[len("/jobs")] == '/' {
					d.waitView("job")
				} else {
					d.waitView("jobs")
				}
				what := fmt.Sprintf("%s at %s px with its longest rows", p, vp.name)
				noSideScroll(t, tab, what)
				if vp.w >= 1280 {
					tablesFit(t, tab, what)
				}
				d.shot(fmt.Sprintf("longest-%s-%s", vp.name, shotName(p)))
			}
		})
	}
}
