package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

// TestDashboardDeliveryAttempts: a job delivered by the server itself (an
// HTTP tool) to a local provider that answers 503 with Retry-After and a
// body holding markup, then 200. Its job page shows, per attempt, the
// request's duration, the response headers kept and the start of the body
// (as text, never as markup); an attempt a worker reported shows none of
// it.
func TestDashboardDeliveryAttempts(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	var calls atomic.Int64
	prov := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("X-Unrelated", "not kept")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":"busy","html":"<img src=x onerror=window.__xss=1>"}`)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(prov.Close)
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey, "--delivery-allow", "127.0.0.1/32")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	o := client.New(srv.URL, ownerKey)
	if _, err := o.CreateEndpoint(ctx, "partner", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 3, InitialDelayMs: 1000, Multiplier: 1, MaxDelayMs: 1000, JitterPercent: 0}}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 10000, MaxConcurrent: 10, CircuitFailureThreshold: 1000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.PublishTool(ctx, client.ToolSpec{Name: "notify", Version: "1", Endpoint: "partner",
		Delivery: &wire.DeliveryTarget{URL: prov.URL + "/orders/{orderId}"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.PublishTool(ctx, client.ToolSpec{Name: "manual", Version: "1", Endpoint: "partner"}); err != nil {
		t.Fatal(err)
	}
	delivered, _, err := o.Enqueue(ctx, client.EnqueueRequest{Tool: "notify@1", Payload: json.RawMessage(`{"orderId":7}`)})
	if err != nil {
		t.Fatal(err)
	}
	worked, _, err := o.Enqueue(ctx, client.EnqueueRequest{Tool: "manual@1"})
	if err != nil {
		t.Fatal(err)
	}
	js, err := o.Claim(ctx, client.ClaimRequest{WorkerID: "worker-1", Tools: []string{"manual@1"}, Max: 1, WaitMs: 5000})
	if err != nil || len(js) != 1 {
		t.Fatalf("claim: %v %+v", err, js)
	}
	if _, err := o.ReportOne(ctx, client.Report{JobID: js[0].ID, LeaseToken: js[0].LeaseToken, Success: true, HTTPStatus: 200}); err != nil {
		t.Fatal(err)
	}
	var job *client.Job
	deadline := time.Now().Add(30 * time.Second)
	for {
		if job, err = o.GetJob(ctx, delivered.ID); err == nil && job.State == wire.JobSucceeded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d not delivered within 30 s: %v %+v", delivered.ID, err, job)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(job.Attempts) != 2 || job.Attempts[0].RequestMs == nil || job.Attempts[1].RequestMs == nil {
		t.Fatalf("job %d attempts: %+v", delivered.ID, job.Attempts)
	}

	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	a.signIn(ownerKey)
	a.open(fmt.Sprintf("/jobs/%d", delivered.ID))
	a.waitView("job")
	if n := browsertest.Eval[int](a.tab, `document.querySelectorAll("#attempt-1 details.delivery, #attempt-2 details.delivery").length`); n != 2 {
		t.Fatalf("%d attempt cards have delivery details, want 2", n)
	}
	// Closed at first: the summary line says the duration and status.
	for i, at := range job.Attempts {
		sel := fmt.Sprintf("#attempt-%d details.delivery", at.Number)
		want := fmt.Sprintf("HTTP delivery · request %d ms · HTTP %d", *at.RequestMs, *at.HTTPStatus)
		if got := a.text(sel + " summary"); got != want {
			t.Errorf("attempt %d summary = %q, want %q", i+1, got, want)
		}
		if browsertest.Eval[bool](a.tab, fmt.Sprintf(`document.querySelector(%q).open`, sel)) {
			t.Errorf("attempt %d: the delivery details start open", i+1)
		}
	}
	browsertest.Eval[chromedp.Void](a.tab, `document.querySelectorAll("details.delivery").forEach(d => { d.open = true; })`)
	first := a.text("#attempt-1 details.delivery")
	for _, want := range []string{"Retry-After 1", "Content-Type application/json", `{"error":"busy","html":"<img src=x onerror=window.__xss=1>"}`} {
		if !strings.Contains(first, want) {
			t.Errorf("attempt 1 delivery details %q lack %q", first, want)
		}
	}
	if strings.Contains(first, "X-Unrelated") {
		t.Errorf("attempt 1 shows a header the server does not keep: %q", first)
	}
	if got := a.text("#attempt-2 details.delivery pre"); got != `{"ok":true}` {
		t.Errorf("attempt 2 excerpt = %q", got)
	}
	if browsertest.Eval[bool](a.tab, `!!document.querySelector("#attempt-1 details.delivery img") || window.__xss === 1`) {
		t.Error("the response excerpt was rendered as markup")
	}
	if txt := a.text("#view"); strings.Contains(txt, "null") || strings.Contains(txt, "undefined") {
		t.Errorf("the job page prints null or undefined: %q", txt)
	}
	a.shot("delivery-attempts")
	// The provider's answer is in the last error, where people look first:
	// the banner, the list's row and a search for its words.
	const said = "the response: error: busy"
	if got := a.text("#job-last-error"); !strings.Contains(got, said) {
		t.Errorf("the last-error banner says %q, want the provider's answer %q", got, said)
	}
	a.open("/jobs?q=busy")
	a.waitView("jobs")
	if got := a.text("#jobs-count"); got != "1 job matches" {
		t.Errorf("a search for the provider's word: %q", got)
	}
	if got := a.text(fmt.Sprintf(`#jobs-table tr:has(a[href="/jobs/%d"]) .last-error`, delivered.ID)); !strings.Contains(got, said) {
		t.Errorf("the list's last result says %q, want %q", got, said)
	}
	if browsertest.Eval[bool](a.tab, `!!document.querySelector("#jobs-table img") || window.__xss === 1`) {
		t.Error("the list rendered the provider's answer as markup")
	}

	a.open(fmt.Sprintf("/jobs/%d", worked.ID))
	a.waitView("job")
	if n := browsertest.Eval[int](a.tab, `document.querySelectorAll("details.delivery").length`); n != 0 {
		t.Errorf("a worker's attempt shows %d delivery details, want none", n)
	}
}
