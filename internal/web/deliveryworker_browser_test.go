package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

// TestDeliveryWorkerAcrossRestarts (defect 20, at 1280 px): the server's
// HTTP deliveries carry one worker id across a restart of the node (it
// held the process id, so every restart added a dead worker); the workers
// page shows that one worker, and says a worker whose jobs end within
// their leases needed no heartbeat rather than "never"; a job page's
// timeline labels its ticks in whole units ("+75 s", not "+1.25 min").
func TestDeliveryWorkerAcrossRestarts(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	prov := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(prov.Close)
	dir := t.TempDir()
	args := []string{"--delivery-allow", "127.0.0.1/32"}
	srv := proctest.Start(t, dir, nil, append(args, "--bootstrap-key", ownerKey)...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	o := client.New(srv.URL, ownerKey)
	must(o.CreateEndpoint(ctx, "partner", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 3, InitialDelayMs: 1000, Multiplier: 1, MaxDelayMs: 1000, JitterPercent: 0}}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 10000, MaxConcurrent: 10, CircuitFailureThreshold: 1000}}))(t)
	must(o.PublishTool(ctx, client.ToolSpec{Name: "notify", Version: "1", Endpoint: "partner", Delivery: &wire.DeliveryTarget{URL: prov.URL + "/hook"}}))(t)
	must(o.PublishTool(ctx, client.ToolSpec{Name: "manual", Version: "1", Endpoint: "partner"}))(t)
	var lastDelivered int64
	delivered := func(o *client.Client) string {
		t.Helper()
		j := enqueue(t, o, client.EnqueueRequest{Tool: "notify@1", Payload: json.RawMessage(`{}`)})
		lastDelivered = j.ID
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			got, err := o.GetJob(ctx, j.ID)
			if err == nil && got.State == wire.JobSucceeded {
				return got.Attempts[0].WorkerID
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %d not delivered within 30 s: %v %+v", j.ID, err, got)
			}
		}
	}
	before := delivered(o)
	srv.Stop(t)
	srv = proctest.Start(t, dir, nil, args...)
	o = client.New(srv.URL, ownerKey)
	if after := delivered(o); after != before || after != srv.DeliveryWorkerID(t) {
		t.Errorf("deliveries before and after a restart by %q and %q; want one worker id, the one the server printed (%q)", before, after, srv.DeliveryWorkerID(t))
	}
	// A worker's failure with an 80 s Retry-After: its timeline spans
	// 80 s, in steps of 15 s.
	hinted := enqueue(t, o, client.EnqueueRequest{Tool: "manual@1", Payload: json.RawMessage(`{}`)})
	js := must(o.Claim(ctx, client.ClaimRequest{WorkerID: "worker-1", Tools: []string{"manual@1"}, Max: 1, WaitMs: 5000}))(t)
	if len(js) != 1 {
		t.Fatalf("claim: %+v", js)
	}
	must(o.ReportOne(ctx, client.Report{JobID: js[0].ID, LeaseToken: js[0].LeaseToken, HTTPStatus: 503, Headers: map[string]string{"Retry-After": "80"}}))(t)

	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	setViewport(t, a.tab, 1280, 800)
	a.signIn(ownerKey)
	a.open("/workers")
	a.waitView("workers")
	rows := browsertest.Eval[[][]string](a.tab, `Array.from(document.querySelectorAll("#workers-table tbody tr"), r => [r.dataset.worker, r.querySelector('[data-label="Last heartbeat"]').innerText.trim()])`)
	dispatchers := 0
	for _, r := range rows {
		if regexp.MustCompile(`^ratchet-delivery/`).MatchString(r[0]) {
			dispatchers++
		}
		if r[1] == "never" {
			t.Errorf("worker %s: last heartbeat %q, though its jobs ended within their leases", r[0], r[1])
		}
	}
	if dispatchers != 1 {
		t.Errorf("the workers page lists %d delivery workers, want 1 across the restart: %q", dispatchers, rows)
	}
	a.shot("workers-1280")

	a.open(fmt.Sprintf("/jobs/%d", hinted.ID))
	a.waitView("job")
	ticks := browsertest.Eval[[]string](a.tab, `Array.from(document.querySelectorAll(".timeline-wrap svg .axis text:not(.axis-title)"), e => e.textContent)`)
	whole := regexp.MustCompile(`^(first claim|\+\d+ (ms|s|min|h|d))$`)
	if len(ticks) < 4 {
		t.Errorf("timeline ticks %q", ticks)
	}
	for _, tk := range ticks {
		if !whole.MatchString(tk) {
			t.Errorf("timeline tick %q in %q; want whole numbers of one unit", tk, ticks)
		}
	}
	a.shot("timeline-1280")

	// The attempts table fits its card at 1280 px (defect 14: clipped),
	// with a delivery worker's long id and a hint's message.
	for _, id := range []int64{lastDelivered, hinted.ID} {
		a.open(fmt.Sprintf("/jobs/%d", id))
		a.waitView("job")
		if w := browsertest.Eval[[]float64](a.tab, `(() => { const w = document.querySelector("#attempts-table").closest(".table-wrap"); return [w.scrollWidth, w.clientWidth]; })()`); w[0] > w[1] {
			t.Errorf("job %d at 1280 px: the attempts table is %.0f px wide in a %.0f px card", id, w[0], w[1])
		}
		a.shot(fmt.Sprintf("attempts-%d-1280", id))
	}
}
