package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestHoldTextsReadAsTimes: the server's sentences about a pause and a
// circuit opened by hand carry RFC 3339 times; the overview and the job
// page show each as a relative time ("5 min ago", "in 1 h") whose tooltip
// is the exact time in UTC and local, never as the raw string (seen at
// 1280 px: "paused by ops at 2026-03-04T10:02:13.000Z").
func TestHoldTextsReadAsTimes(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, liveEnv, "--dev-clock")
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	for _, ep := range []string{"acts", "bank"} {
		must(c.CreateEndpoint(ctx, ep, client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, EndpointSettings: client.EndpointSettings{CircuitFailureThreshold: 5, CircuitOpenMs: 1_800_000}}))(t)
		must(c.PublishTool(ctx, client.ToolSpec{Name: ep + "-call", Version: "1", Endpoint: ep}))(t)
	}
	later := enqueue(t, c, client.EnqueueRequest{Tool: "acts-call@1", Payload: json.RawMessage(`{}`), RunAt: proctest.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	enqueue(t, c, client.EnqueueRequest{Tool: "acts-call@1", Payload: json.RawMessage(`{}`)})
	enqueue(t, c, client.EnqueueRequest{Tool: "bank-call@1", Payload: json.RawMessage(`{}`)})
	must(c.PauseEndpoint(ctx, "acts", "provider maintenance"))(t)
	must(c.OpenCircuit(ctx, "bank"))(t)

	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	setViewport(t, a.tab, 1280, 800)
	a.signIn(ownerKey)
	// times checks that the element's text has no raw RFC 3339 time and
	// at least n relative times whose tooltips say UTC.
	times := func(css string, n int) {
		t.Helper()
		got := browsertest.Eval[map[string]any](a.tab, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return {text: e.innerText,
			rel: Array.from(e.querySelectorAll("time.rel"), x => [x.textContent, x.title])}; })()`, css))
		text := got["text"].(string)
		if rawISO.MatchString(text) {
			t.Errorf("%s shows a raw time: %q", css, text)
		}
		rel := got["rel"].([]any)
		if len(rel) < n {
			t.Errorf("%s: %d relative times, want %d: %q", css, len(rel), n, text)
		}
		for _, r := range rel {
			pair := r.([]any)
			if !relText.MatchString(pair[0].(string)) || !utcTitle.MatchString(pair[1].(string)) {
				t.Errorf("%s: time %q with tooltip %q; want a relative time and the UTC time", css, pair[0], pair[1])
			}
		}
	}
	a.tab.WaitFor(`!!document.querySelector('article[data-endpoint="bank"] .held-gated')`)
	times(`article[data-endpoint="acts"] .held-gated`, 1)
	times(`article[data-endpoint="bank"] .held-gated`, 1)
	a.shot("overview-1280")

	a.open(fmt.Sprintf("/jobs/%d", later.ID))
	a.waitView("job")
	// "scheduled to run in 1 h; and then held by its endpoint: endpoint acts
	// was paused by … 0 s ago: provider maintenance."
	times("#held-by", 2)
	if txt := a.text("#held-by"); !inOneHour.MatchString(txt) {
		t.Errorf("the hold banner says %q; want the run time as \"in 1 h\" or \"in 5x min …\"", txt)
	}
	a.shot("job-paused-1280")
}

var (
	rawISO    = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}`)
	relText   = regexp.MustCompile(`^(now|in .+|.+ ago)$`)
	utcTitle  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} UTC`)
	inOneHour = regexp.MustCompile(`scheduled to run in (1 h|[45]\d min)`)
)
