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
	"github.com/getratchet/ratchet/wire"
)

// TestConsoleSmallFixes covers what testers found on a first use: the
// state filter takes several states, a skip link reaches the jobs, a
// delivered tool shows its target, the run page links its endpoint and
// says each step's error and due time, the endpoint's retry table is not
// named like the Schedules page, and at 390 px the flow key is whole and
// "Sign out" is one line.
func TestConsoleSmallFixes(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	freeKey := prepareDB(t, dir)
	srv := proctest.Start(t, dir, nil, "--dev-clock")
	fx := seedDashboard(t, srv.URL, freeKey)
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "notify", Version: "1", Endpoint: "slack",
		Delivery: &wire.DeliveryTarget{Method: "PUT", URL: "https://hooks.example.com/notify/{channel}", Headers: map[string]string{"X-Team": "ops"}, GenerateSecret: true}}))(t)
	const key = "tenant_4711_eu"
	enqueue(t, c, client.EnqueueRequest{Tool: "post@1", FlowKey: key, Payload: json.RawMessage(`{"text":"hi"}`)})

	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	setViewport(t, a.tab, 1280, 900)
	a.signIn(ownerKey)

	t.Run("the state filter takes several states", func(t *testing.T) {
		a.t = t
		a.open("/jobs")
		a.waitView("jobs")
		if n := browsertest.Eval[int](a.tab, `document.querySelectorAll('#flt-state input[type="checkbox"]').length`); n != 6 {
			t.Fatalf("the state filter has %d checkboxes, want one per state (6)", n)
		}
		a.pickStates("failed", "exhausted")
		if got := a.text("#flt-state summary"); got != "failed, exhausted" {
			t.Errorf("the state filter's button says %q", got)
		}
		a.click("#apply-filters")
		a.tab.WaitFor(`document.documentElement.dataset.ready === "true" && location.search.includes("state=failed%2Cexhausted")`)
		if got := a.text("#jobs-count"); got != fmt.Sprintf("%d jobs match", len(fx.exhausted)) {
			t.Errorf("failed or exhausted: %q", got)
		}
		checkAxe(t, a.tab, "jobs with two states chosen")
		a.shot("states-1280")
	})

	t.Run("a skip link reaches the first job", func(t *testing.T) {
		a.t = t
		a.open("/jobs")
		a.waitView("jobs")
		k := &keyboard{dash: a}
		k.tabTo("#skip-view", 2)
		k.enter()
		k.tabTo("#jobs-table tbody tr:first-child td.job-id > a", 5)
		if k.tabs > 7 {
			t.Errorf("%d Tabs to the first job (%s)", k.tabs, strings.Join(k.steps, "; "))
		}
	})

	t.Run("a delivered tool shows its target", func(t *testing.T) {
		a.t = t
		a.open("/tools")
		a.waitView("tools")
		got := a.text(`[data-tool="notify@1"] dl`)
		for _, want := range []string{"PUT https://hooks.example.com/notify/{channel}", "Standard Webhooks signature", "X-Team"} {
			if !strings.Contains(got, want) {
				t.Errorf("the delivered tool's facts %q lack %q", got, want)
			}
		}
		if strings.Contains(got, "ops") {
			t.Errorf("the facts show a header's value: %q", got)
		}
		if got := a.text(`[data-tool="post@1"] dl`); !strings.Contains(got, "workers") {
			t.Errorf("a worker tool's facts %q do not say workers run it", got)
		}
		a.shot("tools-1280")
	})

	t.Run("the run page links the endpoint and says each step's error and due time", func(t *testing.T) {
		a.t = t
		a.open(fmt.Sprintf("/runs/%d", fx.runID))
		a.waitView("run")
		if got := browsertest.Eval[string](a.tab, `(() => { const e = document.querySelector('#steps-table a[href^="/endpoints/"]'); return e ? e.getAttribute("href") : "no link"; })()`); got != "/endpoints/stripe" {
			t.Errorf("the step's endpoint links to %q", got)
		}
		row := browsertest.Eval[string](a.tab, fmt.Sprintf(`document.querySelector('#steps-table a[href="/jobs/%d"]').closest("tr").textContent`, fx.chargeIDs[0]))
		if !strings.Contains(row, "provider said 503") || !strings.Contains(row, "in ") {
			t.Errorf("a failed step waiting for its retry reads %q: want its error and when it is due", row)
		}
		a.shot("run-1280")
	})

	t.Run("the endpoint's retry table is not called a schedule", func(t *testing.T) {
		a.t = t
		a.open("/endpoints/openai")
		a.waitView("endpoint")
		if got := a.text("#preview-title"); got != "Retry schedule" {
			t.Errorf("the retry table is titled %q", got)
		}
	})

	t.Run("at 390 px the flow key is whole and Sign out one line", func(t *testing.T) {
		a.t = t
		setViewport(t, a.tab, 390, 844)
		defer setViewport(t, a.tab, 1280, 900)
		a.open("/jobs?flowKey=" + key)
		a.waitView("jobs")
		if cut := browsertest.Eval[[]string](a.tab, `Array.from(document.querySelectorAll("#jobs-table .flow-key"), e => e.scrollWidth > e.clientWidth + 1 || e.textContent.includes("…") ? e.textContent : "").filter(Boolean)`); len(cut) > 0 {
			t.Errorf("flow keys cut at 390 px: %q", cut)
		}
		if lines := browsertest.Eval[int](a.tab, `(() => { const r = document.createRange(); r.selectNodeContents(document.getElementById("signout")); return new Set(Array.from(r.getClientRects(), x => Math.round(x.top))).size; })()`); lines != 1 {
			t.Errorf("Sign out takes %d lines at 390 px", lines)
		}
		a.shot("jobs-390")
	})
}
