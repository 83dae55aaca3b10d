package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestSelectionSurvivesLiveUpdates (defect 15, at 1280 px): a checked job
// that new jobs push off the first page stays selected, and the selection
// bar says it is no longer on the page (it was dropped silently); live
// updates can be paused, the list then stays as it is and says it changed,
// and resuming shows the new jobs.
func TestSelectionSurvivesLiveUpdates(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, liveEnv, "--dev-clock")
	seedJobs(t, srv.URL, 49) // with the failed one, a full first page of 50
	c := client.New(srv.URL, ownerKey)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	setViewport(t, a.tab, 1280, 800)
	a.signIn(ownerKey)
	a.open("/jobs")
	a.waitView("jobs")
	a.tab.WaitFor(`document.getElementById("refresh").dataset.state === "live" && document.querySelectorAll("#jobs-table tbody tr").length === 50`)
	last := browsertest.Eval[int64](a.tab, `Number(document.querySelector("#jobs-table tbody tr:last-child .row-select").dataset.id)`)
	a.press("#jobs-table tbody tr:last-child .row-select")
	a.tab.WaitFor(`!document.getElementById("selection-bar").hidden`)
	enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":500}`)})
	a.tab.WaitFor(fmt.Sprintf(`!document.querySelector('#jobs-table .row-select[data-id="%d"]')`, last))
	got := a.text("#selection-count")
	if !strings.HasPrefix(got, "1 selected") || !strings.Contains(got, "no longer on this page") || !strings.Contains(got, fmt.Sprintf("#%d", last)) {
		t.Errorf("after live updates pushed the checked job #%d off the page the selection says %q", last, got)
	}
	// It can still be acted on: the failed job can be replayed.
	if got := a.text("#sel-replay"); got != "Replay 1…" || browsertest.Eval[bool](a.tab, `document.getElementById("sel-replay").disabled`) {
		t.Errorf("the replay button for the job off the page reads %q or is disabled", got)
	}
	a.shot("selection-off-page-1280")

	// Paused: a new job does not move the list; the page says it changed.
	a.press("#live-toggle")
	if got := a.text("#refresh-state"); got != "Paused" {
		t.Errorf("after pausing live updates the line says %q", got)
	}
	top := a.text("#jobs-table tbody tr:first-child td.job-id")
	fresh := enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":600}`)})
	a.tab.WaitFor(`!!document.getElementById("jobs-held")`)
	if now := a.text("#jobs-table tbody tr:first-child td.job-id"); now != top {
		t.Errorf("with live updates paused the first row became %s (was %s)", now, top)
	}
	a.shot("paused-1280")
	a.press("#live-toggle")
	a.tab.WaitFor(fmt.Sprintf(`!!document.querySelector('#jobs-table tbody tr:first-child .row-select[data-id="%d"]')`, fresh.ID))
	if got := a.text("#refresh-state"); got != "Live" {
		t.Errorf("after resuming the line says %q", got)
	}
}
