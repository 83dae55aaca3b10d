package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

// enqueueN enqueues n jobs of tool, due at runAt (nil: now).
func enqueueN(t *testing.T, c *client.Client, tool string, n int, runAt *time.Time) {
	t.Helper()
	rs := make([]client.EnqueueRequest, n)
	for i := range rs {
		rs[i] = client.EnqueueRequest{Tool: tool, Payload: json.RawMessage(`{}`)}
		if runAt != nil {
			rs[i].RunAt = runAt.UTC().Format(time.RFC3339)
		}
	}
	if _, err := c.EnqueueBatch(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
}

// TestHeldCountIsOneCount: 25 due jobs held by a pause read "25" on the
// overview and on the endpoint page alike (the endpoint page said "10+",
// the rows of its first page, where the overview said 25).
func TestHeldCountIsOneCount(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey)
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	must(c.CreateEndpoint(ctx, "payments", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "pay", Version: "1", Endpoint: "payments"}))(t)
	must(c.PauseEndpoint(ctx, "payments", "provider down"))(t)
	enqueueN(t, c, "pay@1", 25, nil)
	later := proctest.Now().Add(time.Hour) // the server's now, which the hour-shifted runs move
	enqueueN(t, c, "pay@1", 3, &later)

	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	a.signIn(ownerKey)
	a.open("/")
	a.waitView("overview")
	if got := a.text(`[data-endpoint="payments"] .held`); !strings.HasPrefix(got, "25 due, held by a pause") {
		t.Errorf("overview held line = %q", got)
	}
	if got := a.text("#attention"); !strings.Contains(got, "25 due jobs held") {
		t.Errorf("overview attention line = %q", got)
	}
	a.open("/endpoints/payments")
	a.waitView("endpoint")
	a.tab.WaitFor(`document.getElementById("ops-held-note").dataset.held !== undefined`)
	if got := a.text("#ops-held-note"); got != "25 due jobs held by the pause." {
		t.Errorf("endpoint page held note = %q, want the overview's 25", got)
	}
	if n := len(a.texts("#ops-held-table tbody tr")); n != 10 {
		t.Errorf("the held table shows %d rows, want a first page of 10", n)
	}
}

// TestPausedCircuitPastItsOpenTime: a circuit opened by hand on a paused
// endpoint, once its open time has passed, says that the open time ended
// and that it half-opens with the first claim after the resume — not that
// it "half-opens 11 min ago" — on the endpoint page and the overview.
func TestPausedCircuitPastItsOpenTime(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey, "--dev-clock")
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	// An open time of 10 minutes: the page is read well before it ends,
	// however slow the machine (the default is 5 s).
	must(c.CreateEndpoint(ctx, "payments", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"},
		EndpointSettings: client.EndpointSettings{MaxConcurrent: 10, CircuitFailureThreshold: 5, CircuitOpenMs: 600_000}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "pay", Version: "1", Endpoint: "payments"}))(t)
	enqueueN(t, c, "pay@1", 2, nil)
	ep := must(c.OpenCircuit(ctx, "payments"))(t)
	must(c.PauseEndpoint(ctx, "payments", "incident"))(t)

	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	a.signIn(ownerKey)
	a.open("/endpoints/payments")
	a.waitView("endpoint")
	if got := a.text("#ops-circuit"); !strings.Contains(got, "; half-opens at ") || !strings.Contains(got, "(in ") {
		t.Errorf("circuit line before its open time ends = %q", got)
	}
	if err := c.AdvanceClock(ctx, time.Duration(ep.CircuitOpenMs)*time.Millisecond+11*time.Minute); err != nil {
		t.Fatal(err)
	}
	past := regexp.MustCompile(`its open time ended at .+ \(11 min ago\): it half-opens with the first claim after the endpoint is resumed, a probe\.$`)
	// The overview takes the server's time (the dev clock moved it);
	// the endpoint page is reached from it, as people do.
	a.open("/")
	a.waitView("overview")
	if got := a.text(`[data-endpoint="payments"] .circuit-note`); !past.MatchString(got) {
		t.Errorf("overview circuit line past its open time = %q", got)
	}
	a.click(`[data-endpoint="payments"] h2 a`)
	a.waitView("endpoint")
	got := a.text("#ops-circuit")
	if !past.MatchString(got) || strings.Contains(got, "half-opens at") {
		t.Errorf("paused circuit line past its open time = %q", got)
	}
	must(c.ResumeEndpoint(ctx, "payments"))(t)
	a.click(`.crumbs a`)
	a.waitView("overview")
	a.click(`[data-endpoint="payments"] h2 a`)
	a.waitView("endpoint")
	if got := a.text("#ops-circuit"); !strings.HasSuffix(got, ": the next claim half-opens it, a probe.") {
		t.Errorf("resumed circuit line past its open time = %q", got)
	}
}

// TestRunAllHeldNow: the endpoint page's "Run all held now" counts the
// endpoint's scheduled jobs, says in its confirmation how many and that
// the endpoint's gates pace them, and makes them due (bulk run_now by
// filter, audited); Back does nothing.
func TestRunAllHeldNow(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey)
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	must(c.CreateEndpoint(ctx, "payments", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "pay", Version: "1", Endpoint: "payments"}))(t)
	must(c.PauseEndpoint(ctx, "payments", "provider down"))(t)
	enqueueN(t, c, "pay@1", 4, nil)
	later := proctest.Now().Add(time.Hour) // the server's now, which the hour-shifted runs move
	enqueueN(t, c, "pay@1", 3, &later)

	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	a.signIn(ownerKey)
	a.open("/endpoints/payments")
	a.waitView("endpoint")
	a.tab.WaitFor(`document.getElementById("ops-held-note").dataset.held === "4"`)
	a.click("#ops-run-held")
	a.tab.WaitFor(`document.getElementById("confirm").open`)
	if got := a.text("#confirm-title"); got != "Run 7 scheduled jobs of payments now?" {
		t.Errorf("confirmation title = %q", got)
	}
	body := a.text("#confirm-body")
	for _, want := range []string{"Each of the 7 scheduled jobs of payments", "without spending an attempt",
		"they go through the gates of payments — the pause, the circuit, its concurrency and rate limits and the recovery ramp — which pace them", "payments is paused: they stay held until it is resumed."} {
		if !strings.Contains(body, want) {
			t.Errorf("confirmation body %q lacks %q", body, want)
		}
	}
	if got := a.text("#confirm-yes"); got != "Run 7 jobs now" {
		t.Errorf("confirm button = %q", got)
	}
	a.shot("run-held-confirm-1280")
	cardShot(t, a, "#confirm", "run-held-dialog-1280")
	checkAxe(t, a.tab, "run all held confirmation")
	setViewport(t, a.tab, 390, 844)
	a.shot("run-held-confirm-390")
	cardShot(t, a, "#confirm", "run-held-dialog-390")
	setViewport(t, a.tab, 1280, 900)
	a.click("#confirm-no")
	a.tab.WaitFor(`!document.getElementById("confirm").open`)
	if held := must(c.HeldJobs(ctx, "payments", "", 0))(t); held.Held != 4 {
		t.Fatalf("Back ran jobs: %d held", held.Held)
	}

	a.click("#ops-run-held")
	a.tab.WaitFor(`document.getElementById("confirm").open`)
	a.click("#confirm-yes")
	a.tab.WaitFor(`document.getElementById("ops-held-note").dataset.held === "7"`)
	if got := a.text("#ops-held-note"); got != "7 due jobs held by the pause." {
		t.Errorf("held note after running all now = %q", got)
	}
	audit := must(c.Audit(ctx, "jobs", "", 10))(t)
	if len(audit.Entries) == 0 || audit.Entries[0].Action != "bulk.run_now" || !strings.HasPrefix(audit.Entries[0].Detail, "run_now: 7 of 7 jobs") {
		t.Errorf("audit = %+v, want a bulk.run_now of 7 jobs", audit.Entries)
	}
	// A producer key cannot run jobs now: no button.
	pk := must(c.CreateKey(ctx, "viewer", "producer", nil))(t)
	p := &dash{t: t, tab: b.NewIsolatedTab(t), base: srv.URL, dir: shots}
	p.signIn(pk.Secret)
	p.open("/endpoints/payments")
	p.waitView("endpoint")
	if p.visible("#ops-run-held") {
		t.Error("a producer key sees Run all held now")
	}
}

// TestDispatcherBehindIsNotAWorker: an HTTP-delivered endpoint whose due
// jobs no gate holds, while the dispatcher (concurrency 1 here) is busy
// with a slow provider, says that the HTTP dispatcher is behind, with the
// count and its concurrency, on the overview, the endpoint page and the
// job's explanation — not that the jobs "wait for a worker".
func TestDispatcherBehindIsNotAWorker(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	release := make(chan struct{})
	prov := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(prov.Close)
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey, "--delivery-allow", "127.0.0.1/32", "--delivery-concurrency", "1")
	// Cleanups run last first: the provider answers before the server
	// is stopped, so its deliveries end.
	t.Cleanup(func() { close(release) })
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	must(c.CreateEndpoint(ctx, "partner", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Standard},
		EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 600000, MaxConcurrent: 50, CircuitFailureThreshold: 5, CircuitOpenMs: 30000}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "notify", Version: "1", Endpoint: "partner", Delivery: &wire.DeliveryTarget{URL: prov.URL + "/hook"}}))(t)
	enqueueN(t, c, "notify@1", 6, nil)

	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	a.signIn(ownerKey)
	a.open("/")
	a.waitView("overview")
	// The dispatcher holds at most twice its concurrency: 2 running, 4 due.
	a.tab.WaitFor(`(document.querySelector('[data-endpoint="partner"] .held') || {}).dataset?.waiting === "dispatcher" && document.querySelector('[data-endpoint="partner"] .due').textContent === "4"`)
	want := "No gate holds them — the HTTP dispatcher is behind: 4 due, delivery concurrency 1 on this node."
	if got := a.text(`[data-endpoint="partner"] .held`); got != want {
		t.Errorf("overview held line = %q, want %q", got, want)
	}
	a.open("/endpoints/partner")
	a.waitView("endpoint")
	a.tab.WaitFor(`document.getElementById("ops-held-note").dataset.held === "0"`)
	if got := a.text("#ops-held-note"); got != want {
		t.Errorf("endpoint page held note = %q, want %q", got, want)
	}
	page := must(c.ListJobs(ctx, client.JobFilter{Endpoint: "partner", States: []wire.JobState{wire.JobScheduled}}))(t)
	if len(page.Jobs) == 0 {
		t.Fatal("no scheduled job")
	}
	if h := page.Jobs[0].HeldBy; h == nil || h.Gate != wire.GateNone || !strings.Contains(h.Detail, "the HTTP dispatcher is behind (delivery concurrency 1 on this node)") {
		t.Errorf("explain of a due delivery job = %+v", h)
	}
}

// seedOutage runs an outage of endpoint "payments" on a server started
// with --dev-clock, as a worker would see it: 10 jobs claimed at once, the
// provider answering 3 of them 429, 4 of them 503 and 2 with a refused
// connection (the 503s and the connections open the circuit, threshold 3),
// 1 success; the answers after 1.5 s and 4.5 s. Then an owner pauses the
// endpoint and resumes it a minute later; 20 more jobs wait. It returns
// once the minutes are rolled up.
func seedOutage(t *testing.T, c *client.Client) {
	t.Helper()
	ctx := context.Background()
	must(c.CreateEndpoint(ctx, "payments", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Standard},
		EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 60000, MaxConcurrent: 50, CircuitFailureThreshold: 3, CircuitOpenMs: 300000}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "pay", Version: "1", Endpoint: "payments"}))(t)
	enqueueN(t, c, "pay@1", 10, nil)
	js := must(c.Claim(ctx, client.ClaimRequest{WorkerID: "w1", Tools: []string{"pay@1"}, Max: 10}))(t)
	if len(js) != 10 {
		t.Fatalf("claimed %d, want 10", len(js))
	}
	answers := []client.Report{{HTTPStatus: 429}, {HTTPStatus: 429}, {HTTPStatus: 429}, {Success: true, HTTPStatus: 200},
		{HTTPStatus: 503}, {HTTPStatus: 503}, {ErrorKind: "connect"}, {HTTPStatus: 503}, {HTTPStatus: 503}, {ErrorKind: "connect"}}
	for i, r := range answers {
		switch i {
		case 0:
			must(struct{}{}, c.AdvanceClock(ctx, 1500*time.Millisecond))(t)
		case 5:
			must(struct{}{}, c.AdvanceClock(ctx, 3*time.Second))(t)
		}
		r.JobID, r.LeaseToken = js[i].ID, js[i].LeaseToken
		must(c.ReportOne(ctx, r))(t)
	}
	must(struct{}{}, c.AdvanceClock(ctx, time.Minute))(t)
	must(c.PauseEndpoint(ctx, "payments", "provider incident #7"))(t)
	enqueueN(t, c, "pay@1", 20, nil)
	must(struct{}{}, c.AdvanceClock(ctx, time.Minute))(t)
	must(c.ResumeEndpoint(ctx, "payments"))(t)
	must(struct{}{}, c.AdvanceClock(ctx, 2*time.Minute))(t)
	// The server rolls the closed minutes up in the background.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		hs := must(c.HistoryMinutes(ctx, "payments", 15))(t)
		var n int64
		for _, p := range hs.Series[0].Points {
			n += p.Failed + p.Succeeded
		}
		if n == 10 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("history counts %d finished attempts, want 10", n)
		}
	}
}

// TestHistoryOutageIn15Minutes: History's 15-minute range shows an
// outage minute by minute: failures stacked by class (3 throttled, 4
// server errors, 2 network), the provider's latency p50/p95, and the
// endpoint's events — the circuit's opening, the pause, the resume and the
// recovery ramp — as markers on the charts and in a list.
func TestHistoryOutageIn15Minutes(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey, "--dev-clock")
	c := client.New(srv.URL, ownerKey)
	seedOutage(t, c)

	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	a.signIn(ownerKey)
	for _, vp := range viewports {
		setViewport(t, a.tab, vp.w, vp.h)
		a.open("/history?endpoint=payments")
		a.waitView("history")
		a.tab.WaitFor(`document.querySelector('[data-endpoint="payments"] [id$="-failures"] rect[data-v]') !== null`)
		if got := a.text(`.hours-picker a[aria-current="true"]`); got != "15 min" {
			t.Errorf("%s: the range picked for minutes of data is %q, want 15 min", vp.name, got)
		}
		sum := func(cls string) int64 {
			return browsertest.Eval[int64](a.tab, `Array.from(document.querySelectorAll('[data-endpoint="payments"] [id$="-failures"] .`+cls+` rect[data-v]')).reduce((n, r) => n + Number(r.dataset.v), 0)`)
		}
		for cls, want := range map[string]int64{"cls-throttled": 3, "cls-server_error": 4, "cls-network": 2} {
			if got := sum(cls); got != want {
				t.Errorf("%s: %s bars add up to %d, want %d", vp.name, cls, got, want)
			}
		}
		if got := a.text(`[data-endpoint="payments"] [id$="-failures"] .chart-summary`); !strings.HasPrefix(got, "Failures by class: 3 throttled, 4 server error, 2 network.") {
			t.Errorf("%s: failures summary = %q", vp.name, got)
		}
		p95 := browsertest.Eval[[]int64](a.tab, `Array.from(document.querySelectorAll('[data-endpoint="payments"] [id$="-latency"] .line-p95 circle[data-v]')).map((c) => Number(c.dataset.v))`)
		// The dev clock moved 1.5 s and 3 s between claim and reports (the
		// real clock adds its milliseconds): the slowest answers took 4.5 s.
		if slowest := slices.Max(append(p95, 0)); slowest < 4500 || slowest >= 5500 {
			t.Errorf("%s: latency p95 points = %v, want the slowest at 4.5 s", vp.name, p95)
		}
		kinds := browsertest.Eval[[]string](a.tab, `Array.from(document.querySelectorAll('[data-endpoint="payments"] [id$="-throughput"] g.marker')).map((m) => m.dataset.kind)`)
		// The endpoint's event log: the circuit opened by failures, the
		// pause, the resume and the recovery ramp the resume starts.
		if strings.Join(kinds, ",") != "circuit_opened,paused,resumed,recovery_started" {
			t.Errorf("%s: throughput chart markers = %v", vp.name, kinds)
		}
		if got := a.texts(`[data-endpoint="payments"] .history-markers li`); len(got) != 4 || !strings.Contains(got[0], "circuit opened: the circuit of endpoint payments opened after 3 consecutive counted failures (threshold 3)") ||
			!strings.Contains(got[1], "paused: bootstrap owner: paused endpoint payments: provider incident #7") {
			t.Errorf("%s: marker list = %q", vp.name, got)
		}
		noSideScroll(t, a.tab, "history 15 min "+vp.name)
		a.shot("history-15min-" + vp.name)
		checkAxe(t, a.tab, "history 15 min "+vp.name)
	}
}

// TestOutageTimelineOnTheEndpointPage: the endpoint page of an endpoint
// through an outage shows its last hour: failures stacked by class, the
// circuit's opening, the pause and the resume marked and shaded, and the
// drain: the jobs held (the held count of the overview) and when they
// drain at the last 5 minutes' pace.
func TestOutageTimelineOnTheEndpointPage(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey, "--dev-clock")
	c := client.New(srv.URL, ownerKey)
	seedOutage(t, c)

	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	a.signIn(ownerKey)
	for _, vp := range viewports {
		setViewport(t, a.tab, vp.w, vp.h)
		// From the overview, which takes the server's (moved) clock.
		a.open("/")
		a.waitView("overview")
		a.click(`[data-endpoint="payments"] h2 a`)
		a.waitView("endpoint")
		a.tab.WaitFor(`document.querySelector('#outage [id="outage-failures"] rect[data-v]') !== null && document.getElementById("outage-drain").dataset.held !== undefined`)
		sum := func(cls string) int64 {
			return browsertest.Eval[int64](a.tab, `Array.from(document.querySelectorAll('#outage-failures .`+cls+` rect[data-v]')).reduce((n, r) => n + Number(r.dataset.v), 0)`)
		}
		for cls, want := range map[string]int64{"cls-throttled": 3, "cls-server_error": 4, "cls-network": 2} {
			if got := sum(cls); got != want {
				t.Errorf("%s: %s bars add up to %d, want %d", vp.name, cls, got, want)
			}
		}
		kinds := browsertest.Eval[[]string](a.tab, `Array.from(document.querySelectorAll('#outage-failures g.marker')).map((m) => m.dataset.kind)`)
		for _, k := range []string{"circuit_opened", "paused", "resumed", "recovery_started"} {
			if !slices.Contains(kinds, k) {
				t.Errorf("%s: timeline markers %v lack %s", vp.name, kinds, k)
			}
		}
		bands := browsertest.Eval[[]string](a.tab, `Array.from(document.querySelectorAll('#outage-failures rect.band')).map((r) => r.dataset.band)`)
		if !slices.Contains(bands, "open") || !slices.Contains(bands, "paused") || !slices.Contains(bands, "ramp") {
			t.Errorf("%s: timeline bands %v, want the open circuit, the pause and the ramp", vp.name, bands)
		}
		held := must(c.HeldJobs(context.Background(), "payments", "", 1))(t)
		drain := a.text("#outage-drain")
		// One job completed in the last 5 minutes: 0.2 a minute.
		if want := fmt.Sprintf("%d jobs held; at the last 5 min's pace of 0.2 completed a minute the drain ends at about ", held.Held); held.Held == 0 || !strings.HasPrefix(drain, want) {
			t.Errorf("%s: drain line = %q, want it to start %q", vp.name, drain, want)
		}
		// The resume started the recovery ramp: the card says where it
		// stands, as GET /v1/endpoints/payments does.
		ep := must(c.GetEndpoint(context.Background(), "payments"))(t)
		if ep.Recovery == nil {
			t.Fatalf("%s: payments is not recovering after the resume", vp.name)
		}
		a.tab.WaitFor(`!document.getElementById("outage-ramp").hidden`)
		if got, want := a.text("#outage-ramp"), "claims a second allowed, "+ep.Recovery.Phase; !strings.HasPrefix(got, "Recovering since ") || !strings.Contains(got, want) {
			t.Errorf("%s: ramp line = %q, want \"Recovering since …\" with %q", vp.name, got, want)
		}
		noSideScroll(t, a.tab, "endpoint outage "+vp.name)
		browsertest.Eval[chromedp.Void](a.tab, `document.getElementById("outage").scrollIntoView()`)
		a.shot("endpoint-outage-" + vp.name)
		cardShot(t, a, "#outage", "outage-card-"+vp.name)
		checkAxe(t, a.tab, "endpoint page through an outage "+vp.name)
	}
}

// cardShot keeps a screenshot of one element of the page (a card is
// easier to look at than the whole page) beside the test's others.
func cardShot(t *testing.T, a *dash, css, name string) {
	t.Helper()
	if a.dir == "" {
		return
	}
	buf, err := chromedp.Run(a.tab.Ctx, chromedp.Screenshot(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", css, err)
	}
	if err := os.WriteFile(filepath.Join(a.dir, name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}
