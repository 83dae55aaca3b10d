package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestJobsSortInBrowser: 55 jobs fail in an order unlike their ids (the
// server's development clock moves 10 ms between failures, so no two share
// a millisecond). At 1280 px the failed tab lists them latest failure
// first, its Ended header says so with aria-sort, and the next page (by
// the composite cursor) holds the 5 earliest failures. Pressing the
// header flips the order (and aria-sort), the sort stays in the URL
// through a reload and a page turn, and the Job header, worked from the
// keyboard, sorts by id. Screenshots of the failed tab at 1280 and 390 px.
func TestJobsSortInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", liveEnv, "--bootstrap-key", ownerKey, "--dev-clock")
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	must(c.CreateEndpoint(ctx, "sorts", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, EndpointSettings: client.EndpointSettings{MaxConcurrent: 60}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "pay", Version: "1", Endpoint: "sorts"}))(t)
	const n = 55
	one := int64(1)
	var ids []int64
	for i := range n {
		j := enqueue(t, c, client.EnqueueRequest{Tool: "pay@1", Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), MaxAttempts: &one})
		ids = append(ids, j.ID)
	}
	tokens := map[int64]string{}
	for len(tokens) < n {
		got := must(c.Claim(ctx, client.ClaimRequest{WorkerID: "w", Tools: []string{"pay@1"}, Max: 10}))(t)
		if len(got) == 0 {
			t.Fatalf("claimed %d of %d jobs, then none", len(tokens), n)
		}
		for _, j := range got {
			tokens[j.ID] = j.LeaseToken
		}
	}
	// Fail them in the order 0, 23, 46, 14, ... (23 and 55 are coprime, so
	// every job once): the finish order is not the id order.
	for k := range n {
		id := ids[(k*23)%n]
		if err := c.AdvanceClock(ctx, 10*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		must(c.ReportOne(ctx, client.Report{JobID: id, LeaseToken: tokens[id], HTTPStatus: 402, Message: "card declined"}))(t)
	}
	// The order the failed tab must show, from each job's own finish time.
	state := must(c.GetJob(ctx, ids[0]))(t).State
	type ended struct {
		id int64
		at time.Time
	}
	var byFinish []ended
	for _, id := range ids {
		j := must(c.GetJob(ctx, id))(t)
		at, err := time.Parse(time.RFC3339Nano, j.FinishedAt)
		if err != nil || j.State != state {
			t.Fatalf("job %d: state %s, finished %q (%v); want %s and a time", id, j.State, j.FinishedAt, err, state)
		}
		byFinish = append(byFinish, ended{id, at})
	}
	slices.SortFunc(byFinish, func(x, y ended) int {
		if c := y.at.Compare(x.at); c != 0 {
			return c
		}
		return int(y.id - x.id)
	})
	latestFirst := make([]int64, n)
	for i, e := range byFinish {
		latestFirst[i] = e.id
	}
	earliestFirst := slices.Clone(latestFirst)
	slices.Reverse(earliestFirst)
	newestFirst := slices.Clone(ids)
	slices.Reverse(newestFirst)
	if slices.Equal(latestFirst, newestFirst) {
		t.Fatal("the finish order is the id order; the test would prove nothing")
	}

	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	setViewport(t, a.tab, 1280, 900)
	a.signIn(ownerKey)
	rows := func() []int64 {
		t.Helper()
		return browsertest.Eval[[]int64](a.tab, `Array.from(document.querySelectorAll("#jobs-table tbody tr"), (r) => Number(r.dataset.job))`)
	}
	// waitRows waits for the table to show want (the list draws, then
	// live updates may redraw it).
	waitRows := func(what string, want []int64) {
		t.Helper()
		js, _ := json.Marshal(want)
		cond := fmt.Sprintf(`JSON.stringify(Array.from(document.querySelectorAll("#jobs-table tbody tr"), (r) => Number(r.dataset.job))) === %q`, string(js))
		wctx, cancel := context.WithTimeout(a.tab.Ctx, 10*time.Second)
		defer cancel()
		if _, err := chromedp.Run(wctx, browsertest.Poll(cond)); err != nil {
			t.Fatalf("%s: rows %v, want %v", what, rows(), want)
		}
	}
	ariaSort := func() map[string]string {
		t.Helper()
		return browsertest.Eval[map[string]string](a.tab, `Object.fromEntries(Array.from(document.querySelectorAll("#jobs-table thead th"), (th) => [th.textContent.replace(/[↑↓↕]/g, "").trim() || "(select)", th.getAttribute("aria-sort") || ""]))`)
	}
	url := func() string { return browsertest.Eval[string](a.tab, `location.pathname + location.search`) }

	// The failed tab: latest failure first, said by the Ended header.
	a.open("/jobs?state=" + string(state))
	a.waitView("jobs")
	waitRows("the failed tab", latestFirst[:50])
	if got := ariaSort(); got["Ended"] != "descending" || got["Job"] != "" || got["Created"] != "" {
		t.Errorf("aria-sort of the headers = %v; want Ended descending, no other", got)
	}
	for _, col := range []string{"Job", "Ended"} {
		if !browsertest.Eval[bool](a.tab, fmt.Sprintf(`Array.from(document.querySelectorAll("#jobs-table thead th")).some((th) => th.textContent.includes(%q) && th.querySelector("button") && th.querySelector("button").type === "button")`, col)) {
			t.Errorf("the %s header holds no button", col)
		}
	}
	if browsertest.Eval[bool](a.tab, `Array.from(document.querySelectorAll("#jobs-table thead th")).some((th) => th.textContent.includes("Created") && th.querySelector("button"))`) {
		t.Error("the Created header is sortable, but no index orders jobs by creation")
	}
	a.shot("jobs-sort-failed-1280")

	// The next page continues by the composite cursor: the 5 earliest.
	a.press("#next-page")
	waitRows("page 2 of the failed tab", latestFirst[50:])
	if u := url(); !strings.Contains(u, "cursor=finished_desc") {
		t.Errorf("page 2 url %q carries no finished_desc cursor", u)
	}
	a.press("#prev-page")
	waitRows("back to page 1", latestFirst[:50])

	// Pressing Ended flips the order, keeps focus on the header, and puts
	// the sort in the URL.
	a.press("#jobs-table thead th button[data-sort-col=finished]")
	a.waitView("jobs")
	waitRows("ended, earliest first", earliestFirst[:50])
	if got := ariaSort(); got["Ended"] != "ascending" || got["Job"] != "" {
		t.Errorf("after pressing Ended, aria-sort = %v; want Ended ascending", got)
	}
	if u := url(); !strings.Contains(u, "sort=finished_asc") {
		t.Errorf("url %q does not keep the sort", u)
	}
	if !browsertest.Eval[bool](a.tab, `document.activeElement && document.activeElement.matches("#jobs-table thead th button[data-sort-col=finished]")`) {
		t.Errorf("focus after sorting is on %s, not the Ended header", browsertest.Eval[string](a.tab, `document.activeElement ? document.activeElement.outerHTML.slice(0, 120) : "nothing"`))
	}
	// A reload keeps it; the next page keeps it too.
	a.open(url())
	a.waitView("jobs")
	waitRows("ended, earliest first, reloaded", earliestFirst[:50])
	a.press("#next-page")
	waitRows("ended, earliest first, page 2", earliestFirst[50:])
	if u := url(); !strings.Contains(u, "sort=finished_asc") || !strings.Contains(u, "cursor=finished_asc") {
		t.Errorf("page 2 url %q lost the sort or its cursor", u)
	}

	// The Job header from the keyboard: focus it, press Enter: newest
	// first; Space: oldest first.
	a.open("/jobs?state=" + string(state))
	a.waitView("jobs")
	waitRows("the failed tab again", latestFirst[:50])
	browsertest.Eval[chromedp.Void](a.tab, `document.querySelector("#jobs-table thead th button[data-sort-col=id]").focus()`)
	a.tab.Do("press Enter", chromedp.KeyEvent(kb.Enter))
	a.waitView("jobs")
	waitRows("job, newest first", newestFirst[:50])
	if got := ariaSort(); got["Job"] != "descending" || got["Ended"] != "" {
		t.Errorf("after Enter on Job, aria-sort = %v; want Job descending", got)
	}
	a.tab.Do("press Space", chromedp.KeyEvent(" "))
	a.waitView("jobs")
	waitRows("job, oldest first", ids[:50])
	if got := ariaSort(); got["Job"] != "ascending" {
		t.Errorf("after Space on Job, aria-sort = %v; want Job ascending", got)
	}

	// The failed tab at 1280 and 390 px.
	a.open("/jobs?state=" + string(state))
	a.waitView("jobs")
	waitRows("the failed tab for the screenshots", latestFirst[:50])
	browsertest.Eval[chromedp.Void](a.tab, `document.querySelector("#jobs-table thead th button[data-sort-col=finished]").focus()`)
	a.shot("jobs-sort-failed-focus-1280")
	if browsertest.Eval[bool](a.tab, `Array.from(document.querySelectorAll("#jobs-table thead th")).some((th) => th.getBoundingClientRect().height > 40)`) {
		t.Error("a header wraps at 1280 px")
	}
	setViewport(t, a.tab, 390, 844)
	noSideScroll(t, a.tab, "the failed tab at 390 px")
	if !a.visible("#jobs-table thead th button[data-sort-col=finished]") {
		t.Error("at 390 px the sort buttons are hidden (and still focusable)")
	}
	a.shot("jobs-sort-failed-390")
	setViewport(t, a.tab, 1280, 900)
}
