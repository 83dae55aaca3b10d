package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestThrottleNotCountedOnTheJobPage: a job throttled by its provider (a
// 429) shows the throttle in its attempt table as not counted, and its
// attempt line counts only the counted attempts against maxAttempts.
func TestThrottleNotCountedOnTheJobPage(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, liveEnv, "--dev-clock")
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	must(c.CreateEndpoint(ctx, "acts", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, EndpointSettings: client.EndpointSettings{CircuitFailureThreshold: 100, CircuitOpenMs: 60_000}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "charge", Version: "1", Endpoint: "acts"}))(t)
	wk := must(c.CreateKey(ctx, "worker", "worker", []string{"charge@1"}))(t)
	w := client.New(srv.URL, wk.Secret)
	two := int64(2)
	j := enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{}`), MaxAttempts: &two})
	cl := must(w.Claim(ctx, client.ClaimRequest{WorkerID: "w", Tools: []string{"charge@1"}, Max: 1}))(t)
	r := must(w.ReportOne(ctx, client.Report{JobID: cl[0].ID, LeaseToken: cl[0].LeaseToken, HTTPStatus: 429, Headers: map[string]string{"Retry-After": "1"}}))(t)
	if r.Job.Throttles != 1 || len(r.Job.Attempts) > 0 && !r.Job.Attempts[0].ThrottleFree {
		t.Fatalf("after a 429: job throttles %d", r.Job.Throttles)
	}

	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	setViewport(t, a.tab, 1280, 800)
	a.signIn(ownerKey)
	a.open(fmt.Sprintf("/jobs/%d", j.ID))
	a.waitView("job")
	a.tab.WaitFor(`!!document.querySelector('tr[data-attempt="1"] .throttle-free')`)
	if txt := a.text(`tr[data-attempt="1"]`); !strings.Contains(txt, "throttle, not counted") {
		t.Errorf("attempt row says %q; want it marked \"throttle, not counted\"", txt)
	}
	if txt := a.text(".job-split"); !strings.Contains(txt, "0 of 2 counted, and 1 throttle not counted") {
		t.Errorf("the job's facts say %q; want \"0 of 2 counted, and 1 throttle not counted\"", txt)
	}
	a.shot("job-throttled-1280")
	setViewport(t, a.tab, 390, 844)
	a.shot("job-throttled-390")
}
