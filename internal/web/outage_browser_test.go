package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

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
	later := time.Now().Add(time.Hour)
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
	must(c.CreateEndpoint(ctx, "payments", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}}))(t)
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
	later := time.Now().Add(time.Hour)
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
		"they go through payments's gates — the pause, the circuit, its concurrency and rate limits and the recovery ramp — which pace them", "payments is paused: they stay held until it is resumed."} {
		if !strings.Contains(body, want) {
			t.Errorf("confirmation body %q lacks %q", body, want)
		}
	}
	if got := a.text("#confirm-yes"); got != "Run 7 jobs now" {
		t.Errorf("confirm button = %q", got)
	}
	a.shot("run-held-confirm-1280")
	setViewport(t, a.tab, 390, 844)
	a.shot("run-held-confirm-390")
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
