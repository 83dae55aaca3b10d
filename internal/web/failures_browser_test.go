package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestFailuresCardInBrowser: the endpoint page's Failures card groups the
// endpoint's failures by classification and fingerprint, largest first,
// with counts, first and last seen and a sparkline; "Replay group…"
// previews, asks with the count and what paces the new jobs, and replays
// that many, which the server's audit log and gates then show; pressed
// again it says the group was replayed and asks nothing. "Replay all in
// range…" replays the range's other failures the same way, with one audit
// entry naming the range. At 390 px the card fits the window.
func TestFailuresCardInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey)
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	must(c.CreateEndpoint(ctx, "payments", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, EndpointSettings: client.EndpointSettings{MaxConcurrent: 2}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "pay", Version: "1", Endpoint: "payments"}))(t)
	one := int64(1)
	fail := func(status int, msg string) {
		t.Helper()
		enqueue(t, c, client.EnqueueRequest{Tool: "pay@1", Payload: json.RawMessage(`{}`), MaxAttempts: &one})
		got := must(c.Claim(ctx, client.ClaimRequest{WorkerID: "w", Tools: []string{"pay@1"}, Max: 1}))(t)
		if len(got) != 1 {
			t.Fatalf("claimed %d jobs, want 1", len(got))
		}
		must(c.ReportOne(ctx, client.Report{JobID: got[0].ID, LeaseToken: got[0].LeaseToken, HTTPStatus: status, Message: msg}))(t)
	}
	fail(402, `card "4242" declined`)
	fail(402, `card "0341" declined`)
	for _, ms := range []int{3012, 2990, 3105} {
		fail(504, fmt.Sprintf("timeout after %dms on req %04x", ms, ms))
	}
	groups := must(c.Failures(ctx, "payments", time.Time{}, time.Time{}, 0))(t)
	timeouts := groups.Groups[0].Group

	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	a.signIn(ownerKey)
	a.open("/endpoints/payments")
	a.waitView("endpoint")
	a.tab.WaitFor(`document.querySelectorAll("#failures-table tbody tr").length === 2`)
	rows := a.texts("#failures-table tbody tr .fail-fp")
	if want := []string{"timeout after <n>ms on req <hex>", `card "…" declined`}; strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("groups = %q, want %q", rows, want)
	}
	row := fmt.Sprintf(`#failures-table tr[data-group=%q]`, timeouts)
	if got := a.text(row + " .fail-count"); got != "3" {
		t.Errorf("count of the timeouts = %q", got)
	}
	if got := a.text(row + " .fail-meta"); got != "server_error · 3 exhausted" {
		t.Errorf("meta of the timeouts = %q", got)
	}
	if got := a.text("#failures-note"); got != "5 jobs in 2 groups" {
		t.Errorf("note = %q", got)
	}
	label := browsertest.Eval[string](a.tab, `document.querySelector('`+row+` svg.spark').getAttribute("aria-label")`)
	if !strings.HasPrefix(label, "failures per hour, oldest first: 0, 0,") || !strings.HasSuffix(label, ", 3") || strings.Count(label, ",") != 24 {
		t.Errorf("sparkline label = %q", label)
	}
	if n := browsertest.Eval[int](a.tab, `document.querySelectorAll('`+row+` svg.spark rect.spark-bar').length`); n != 1 {
		t.Errorf("sparkline bars = %d, want 1 (every failure in the last hour)", n)
	}
	a.shot("failures-01-card-1280")

	a.press(row + " [data-replay]")
	a.tab.WaitFor(`document.getElementById("confirm").open`)
	if got := a.text("#confirm-title"); got != "Replay 3 failed jobs?" {
		t.Errorf("confirm title = %q", got)
	}
	if got := a.text("#confirm-body"); !strings.Contains(got, "timeout after <n>ms on req <hex>") || !strings.Contains(got, "at most 2 run at a time") {
		t.Errorf("confirm body = %q", got)
	}
	a.shot("failures-02-confirm-1280")
	a.press("#confirm-yes")
	a.tab.WaitFor(`(document.querySelector('` + row + ` .fail-meta') || {}).textContent?.includes("3 replayed")`)
	pre := must(c.PreviewReplayFailures(ctx, client.FailureFilter{Endpoint: "payments", Group: timeouts}))(t)
	if pre.Count != 0 || pre.Skipped != 3 {
		t.Errorf("after the replay the server counts %d to replay, %d replayed", pre.Count, pre.Skipped)
	}
	audit := must(c.Audit(ctx, "endpoint:payments", "", 5))(t)
	if len(audit.Entries) == 0 || audit.Entries[0].Action != "failures.replay" || !strings.HasPrefix(audit.Entries[0].Detail, "replayed 3 of 3 failed jobs") {
		t.Errorf("audit = %+v", audit.Entries)
	}
	// The endpoint's gates pace the new jobs: two at a time.
	if got := must(c.Claim(ctx, client.ClaimRequest{WorkerID: "w2", Tools: []string{"pay@1"}, Max: 10}))(t); len(got) != 2 {
		t.Errorf("claimed %d replayed jobs at once on an endpoint with maxConcurrent 2", len(got))
	}
	// Pressed again, the preview finds nothing to replay: no dialog.
	a.press(row + " [data-replay]")
	a.tab.WaitFor(`document.getElementById("toast").textContent.startsWith("Every job of this group was replayed already")`)
	if browsertest.Eval[bool](a.tab, `document.getElementById("confirm").open`) {
		t.Error("a group with nothing to replay asked to confirm")
	}

	// "Replay all in range…" replays the rest of the range's failures,
	// leaving out the group replayed already.
	a.press("#failures-replay-all")
	a.tab.WaitFor(`document.getElementById("confirm").open`)
	if got := a.text("#confirm-title"); got != "Replay 2 failed jobs?" {
		t.Errorf("replay all: confirm title = %q", got)
	}
	if got := a.text("#confirm-body"); !strings.Contains(got, "every failed job of payments in the last 24 hours") || !strings.Contains(got, "3 already replayed are left out") {
		t.Errorf("replay all: confirm body = %q", got)
	}
	a.press("#confirm-yes")
	a.tab.WaitFor(`document.getElementById("toast").textContent === "Replayed 2 jobs"`)
	all := must(c.PreviewReplayFailures(ctx, client.FailureFilter{Endpoint: "payments"}))(t)
	if all.Count != 0 || all.Skipped != 5 {
		t.Errorf("after replaying the range the server counts %d to replay, %d replayed", all.Count, all.Skipped)
	}
	audit = must(c.Audit(ctx, "endpoint:payments", "", 5))(t)
	if len(audit.Entries) < 2 || audit.Entries[0].Action != "failures.replay" || !strings.HasPrefix(audit.Entries[0].Detail, "replayed 2 of 2 failed jobs (endpoint payments, since ") {
		t.Errorf("audit after replaying the range = %+v", audit.Entries)
	}
	// The operator controls' "Recent actions" on the same page shows the
	// replays without a reload.
	a.tab.WaitFor(`document.querySelectorAll('#ops-audit li[data-action="failures.replay"]').length === 2`)
	a.shot("failures-04-replayed-1280")

	setViewport(t, a.tab, 390, 844)
	a.tab.WaitFor(`!!document.querySelector("#failures-table")`)
	noSideScroll(t, a.tab, "the endpoint page with the Failures card at 390 px")
	browsertest.Eval[bool](a.tab, `(document.getElementById("failures").scrollIntoView(), true)`)
	a.shot("failures-03-card-390")
	setViewport(t, a.tab, 1280, 900)
}
