package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestJobsRows covers the jobs list's rows: per-row actions by state (run
// now for owners only), a selection acted on with POST /v1/jobs/bulk and
// ids, the search box in the URL, and the columns last result and held by.
func TestJobsRows(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, liveEnv, "--dev-clock")
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	one := int64(1)
	must(c.CreateEndpoint(ctx, "acts", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, EndpointSettings: client.EndpointSettings{CircuitFailureThreshold: 100, CircuitOpenMs: 60_000}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "charge", Version: "1", Endpoint: "acts"}))(t)
	wk := must(c.CreateKey(ctx, "worker", "worker", []string{"charge@1"}))(t)
	w := client.New(srv.URL, wk.Secret)

	failed := enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":1}`), MaxAttempts: &one})
	cl := must(w.Claim(ctx, client.ClaimRequest{WorkerID: "w", Tools: []string{"charge@1"}, Max: 1}))(t)
	longErr := "card declined: insufficient funds on card ending 4242 " + strings.Repeat("and more detail ", 8)
	must(w.ReportOne(ctx, client.Report{JobID: cl[0].ID, LeaseToken: cl[0].LeaseToken, HTTPStatus: 402, Message: longErr}))(t)
	s1 := enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":2}`)})
	s2 := enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":3}`)})
	later := enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":4}`), RunAt: proctest.Now().Add(time.Hour).UTC().Format(time.RFC3339)})

	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	a.signIn(ownerKey)
	row := func(id int64) string { return fmt.Sprintf(`#jobs-table tr[data-job="%d"]`, id) }
	actions := func(id int64) []string { return a.texts(row(id) + " [data-action]") }
	// selectRow ticks a row's box by the element (press): the list
	// updates itself, and a selection of two by mouse came out as one
	// under load.
	selectRow := func(id int64) {
		box := row(id) + " .row-select"
		a.press(box)
		a.tab.WaitFor(`document.querySelector('` + box + `').checked`)
	}

	t.Run("columns: last result and held by", func(t *testing.T) {
		a.t = t
		a.open("/jobs?endpoint=acts")
		a.waitView("jobs")
		if got := a.text(row(failed.ID) + " .last-col .last-class"); got == "" || got == "—" {
			t.Errorf("no last classification for the exhausted job: %q", got)
		}
		errText := a.text(row(failed.ID) + " .last-error")
		title := browsertest.Eval[string](a.tab, `document.querySelector('`+row(failed.ID)+` .last-error').title`)
		// Cut by the row's width (text-overflow), whole in the title.
		if !strings.HasPrefix(errText, "card declined: insufficient funds") || browsertest.Eval[string](a.tab, `getComputedStyle(document.querySelector('`+row(failed.ID)+` .last-error')).textOverflow`) != "ellipsis" {
			t.Errorf("last error cell = %q (want it cut with an ellipsis)", errText)
		}
		if !strings.HasPrefix(title, "card declined: insufficient funds on card ending 4242") {
			t.Errorf("last error title = %q", title)
		}
		if got := a.text(row(later.ID) + " .held-col"); !strings.HasPrefix(got, "due time in ") || !strings.Contains(browsertest.Eval[string](a.tab, `document.querySelector('`+row(later.ID)+` .held-col time').title`), "UTC") {
			t.Errorf("held by of a job due in an hour = %q", got)
		}
		a.shot("jobs-columns-1280")
		setViewport(t, a.tab, 390, 844)
		noSideScroll(t, a.tab, "jobs list with its new columns at 390 px")
		a.shot("jobs-columns-390")
		setViewport(t, a.tab, 1280, 900)
	})

	t.Run("per-row actions", func(t *testing.T) {
		a.t = t
		if got := strings.Join(actions(later.ID), ","); got != "Run now,Cancel" {
			t.Errorf("a scheduled job offers %q", got)
		}
		if got := strings.Join(actions(failed.ID), ","); got != "Replay" {
			t.Errorf("an exhausted job offers %q", got)
		}
		a.click(row(later.ID) + ` [data-action="run-now"]`)
		deadline := time.Now().Add(10 * time.Second)
		for {
			j := must(c.GetJob(ctx, later.ID))(t)
			due, _ := time.Parse(time.RFC3339Nano, j.DueAt)
			if due.Sub(proctest.Now()) < time.Minute {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run now did not make job #%d due: due %s", later.ID, j.DueAt)
			}
			time.Sleep(50 * time.Millisecond)
		}
		// (With no job held, the column is left out.)
		a.tab.WaitFor(`!(document.querySelector('` + row(later.ID) + ` .held-col') || {textContent: ""}).textContent.includes("due time")`)
	})

	t.Run("selection and bulk by ids", func(t *testing.T) {
		a.t = t
		selectRow(s1.ID)
		selectRow(s2.ID)
		a.tab.WaitFor(`!document.getElementById("selection-bar").hidden`)
		if got := a.text("#selection-count"); got != "2 selected on this page" {
			t.Errorf("selection line = %q", got)
		}
		if got := a.text("#sel-cancel"); got != "Cancel 2…" {
			t.Errorf("cancel button = %q", got)
		}
		if !browsertest.Eval[bool](a.tab, `document.getElementById("sel-replay").disabled`) {
			t.Error("replay is offered for two scheduled jobs")
		}
		a.shot("jobs-selection")
		a.click("#sel-cancel")
		a.tab.WaitFor(`document.getElementById("confirm").open`)
		if got := a.text("#confirm-title"); got != "Cancel 2 jobs?" {
			t.Errorf("dialog = %q", got)
		}
		a.click("#confirm-yes")
		a.tab.WaitFor(fmt.Sprintf(`document.querySelector('%s').dataset.state === "cancelled" && document.querySelector('%s').dataset.state === "cancelled"`, row(s1.ID), row(s2.ID)))
		for _, id := range []int64{s1.ID, s2.ID} {
			if j := must(c.GetJob(ctx, id))(t); j.State != "cancelled" {
				t.Errorf("job #%d is %s", id, j.State)
			}
		}
		if a.visible("#selection-bar") {
			t.Error("the selection outlives the action")
		}
		// A mixed selection acts on the jobs the action applies to and says
		// which it leaves out.
		selectRow(failed.ID)
		selectRow(later.ID)
		if got := a.text("#sel-replay"); got != "Replay 1 of 2…" {
			t.Errorf("replay button on a mixed selection = %q", got)
		}
		a.click("#sel-replay")
		a.tab.WaitFor(`document.getElementById("confirm").open`)
		if got := a.text("#confirm-body"); !strings.Contains(got, fmt.Sprintf("#%d", failed.ID)) || !strings.Contains(got, "1 selected job is left out") {
			t.Errorf("mixed dialog = %q", got)
		}
		a.click("#confirm-yes")
		a.tab.WaitFor(`document.querySelector('#state-tabs [data-state="all"] .tab-count').textContent === "5"`)
	})

	t.Run("search is in the URL", func(t *testing.T) {
		a.t = t
		a.setValue("flt-q", "insufficient")
		a.click("#apply-filters")
		a.tab.WaitFor(`document.documentElement.dataset.ready === "true" && location.search.includes("q=insufficient")`)
		a.waitView("jobs")
		ids := a.texts("#jobs-table tbody tr td.job-id > a")
		if strings.Join(ids, ",") != fmt.Sprintf("#%d", failed.ID) {
			t.Errorf("search for a word of the last error lists %q", ids)
		}
		if got := a.text("#bulk-scope"); !strings.Contains(got, "matching “insufficient”") {
			t.Errorf("bulk scope = %q", got)
		}
		if href := browsertest.Eval[string](a.tab, `document.querySelector('#state-tabs [data-state="exhausted"]').getAttribute("href")`); !strings.Contains(href, "q=insufficient") {
			t.Errorf("a state tab drops the search: %s", href)
		}
		a.open(fmt.Sprintf("/jobs?q=%d", s1.ID))
		a.waitView("jobs")
		if got := a.texts("#jobs-table tbody tr td.job-id > a"); strings.Join(got, ",") != fmt.Sprintf("#%d", s1.ID) {
			t.Errorf("search by id lists %q", got)
		}
		if got := browsertest.Eval[string](a.tab, `document.getElementById("flt-q").value`); got != fmt.Sprint(s1.ID) {
			t.Errorf("search box after a load = %q", got)
		}
		a.shot("jobs-search")
	})

	t.Run("producers see no owner-only buttons", func(t *testing.T) {
		a.t = t
		pk := must(c.CreateKey(ctx, "reader", "producer", nil))(t)
		p := &dash{t: t, tab: b.NewIsolatedTab(t), base: srv.URL, dir: shots}
		p.signIn(pk.Secret)
		p.open("/jobs?endpoint=acts&state=scheduled")
		p.waitView("jobs")
		if n := browsertest.Eval[int](p.tab, `document.querySelectorAll('[data-action="run-now"]').length`); n != 0 {
			t.Errorf("a producer sees %d run-now buttons", n)
		}
		if n := browsertest.Eval[int](p.tab, `document.querySelectorAll('[data-action="cancel"]').length`); n == 0 {
			t.Error("a producer cannot cancel a scheduled job from the list")
		}
		browsertest.Eval[chromedp.Void](p.tab, `document.querySelector(".row-select").click()`)
		p.tab.WaitFor(`!document.getElementById("selection-bar").hidden`)
		if p.visible("#sel-run_now") {
			t.Error("a producer's selection offers run now")
		}
	})
}
