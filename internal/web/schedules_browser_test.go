package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

// TestSchedulesPage: schedules made through the API are listed with their
// next fire time and their latest ticks, the first linking to its job (a
// later one, skipped while that job waits, to the job it waited on); Pause
// pauses one. The page fits a phone's width.
func TestSchedulesPage(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, nil, "--dev-clock")
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	must(c.CreateEndpoint(ctx, "partners", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "sync", Version: "1", Endpoint: "partners"}))(t)
	must(c.CreateSchedule(ctx, client.ScheduleCreate{Name: "partner-sync", Cron: "@every 1m", Tool: "sync@1", SpreadMs: 30_000}))(t)
	must(c.CreateSchedule(ctx, client.ScheduleCreate{Name: "nightly-charge", Cron: "0 2 * * *", TimeZone: "America/New_York", Tool: "sync@1",
		Overlap: wire.OverlapCancelPrevious}))(t)
	must(struct{}{}, c.AdvanceClock(ctx, 2*time.Minute))(t)
	var jobID int64
	for deadline := time.Now().Add(30 * time.Second); jobID == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if s := must(c.GetSchedule(ctx, "partner-sync"))(t); len(s.LastTicks) > 0 {
			jobID = s.LastTicks[0].JobID
		}
	}
	if jobID == 0 {
		t.Fatal("partner-sync made no job within 30 s of its tick")
	}

	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	a.signIn(ownerKey)
	for _, vp := range viewports {
		setViewport(t, a.tab, vp.w, vp.h)
		a.click(`.site-nav a[href="/schedules"]`)
		a.waitView("schedules")
		a.tab.WaitFor(`document.querySelector('#schedules-table tr[data-schedule="partner-sync"] .tick a') !== null`)
		if got := a.texts("#schedules-table tbody th"); strings.Join(got, ",") != "nightly-charge,partner-sync" {
			t.Errorf("%s: schedules listed %v", vp.name, got)
		}
		if got := a.text(`tr[data-schedule="partner-sync"] .tick:last-child > a`); got != fmt.Sprintf("#%d", jobID) {
			t.Errorf("%s: the tick links %q, want #%d", vp.name, got, jobID)
		}
		if got := a.text(`tr[data-schedule="partner-sync"] .tick:last-child .status`); got != "enqueued" {
			t.Errorf("%s: the tick reads %q, want enqueued", vp.name, got)
		}
		if got := a.text(`tr[data-schedule="nightly-charge"] td:nth-child(5)`); !strings.Contains(got, "UTC") && !strings.Contains(got, "20") {
			t.Errorf("%s: nightly-charge's next fire reads %q", vp.name, got)
		}
		noSideScroll(t, a.tab, "schedules "+vp.name)
		a.shot("schedules-" + vp.name)
	}
	a.click(`tr[data-schedule="nightly-charge"] button[data-action="pause"]`)
	a.tab.WaitFor(`document.querySelector('tr[data-schedule="nightly-charge"] button[data-action="resume"]') !== null`)
	if s := must(c.GetSchedule(ctx, "nightly-charge"))(t); !s.Paused {
		t.Error("Pause did not pause nightly-charge")
	}
	a.click(fmt.Sprintf(`#schedules-table a[href="/jobs/%d"]`, jobID))
	a.waitView("job")
}

// TestSchedulePage: the list comes 100 schedules a page, with Next page
// and First page links; a schedule's name opens its page: the counts of its
// ticks over 24 h as the API gives them, its tick history a page of 50 at
// a time (Older and Newer ticks), and Fire now, which makes a job at once
// (a paused schedule too) and shows its tick at the top. A producer key
// sees the page without the owner's buttons. Both widths fit.
func TestSchedulePage(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, nil)
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	must(c.CreateEndpoint(ctx, "partners", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "sync", Version: "1", Endpoint: "partners"}))(t)
	must(c.CreateSchedule(ctx, client.ScheduleCreate{Name: "ledger-close", Cron: "0 2 * * *", Tool: "sync@1", Paused: true, Overlap: wire.OverlapAllow}))(t)
	var first int64
	for i := range 51 {
		tk := must(c.FireSchedule(ctx, "ledger-close"))(t)
		if i == 0 {
			first = tk.JobID
		}
	}

	// 101 schedules: the list shows 100 a page.
	for i := range 100 {
		must(c.CreateSchedule(ctx, client.ScheduleCreate{Name: fmt.Sprintf("z-%03d", i), Cron: "0 3 * * *", Tool: "sync@1", Paused: true}))(t)
	}

	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	a.signIn(ownerKey)
	a.click(`.site-nav a[href="/schedules"]`)
	a.waitView("schedules")
	if n := len(a.texts("#schedules-table tbody tr")); n != 100 {
		t.Errorf("the first page of the list has %d schedules, want 100", n)
	}
	a.press("#schedules-next")
	a.tab.WaitFor(`location.search === "?after=z-098" && document.documentElement.dataset.ready === "true" && document.querySelectorAll("#schedules-table tbody tr").length === 1`)
	if got := a.texts("#schedules-table tbody th"); len(got) != 1 || got[0] != "z-099" || a.visible("#schedules-next") {
		t.Errorf("the second page lists %v (a next link: %v), want z-099 and no next page", got, a.visible("#schedules-next"))
	}
	a.press("#schedules-first")
	a.waitView("schedules")
	a.tab.WaitFor(`location.search === "" && document.querySelectorAll("#schedules-table tbody tr").length === 100`)
	a.click(`#schedules-table tr[data-schedule="ledger-close"] th a`)
	a.waitView("schedule")
	api := must(c.GetSchedule(ctx, "ledger-close"))(t)
	if got, want := a.texts(".tick-counts dd"), []string{"51", "0", "0", "0"}; strings.Join(got, ",") != strings.Join(want, ",") || api.Last24h.Ticks != 51 {
		t.Errorf("counts read %v, want ticks, missed, skipped, failed %v (API: %+v)", got, want, api.Last24h)
	}
	if n := len(a.texts("#ticks-table tbody tr")); n != 50 {
		t.Errorf("the first page of the history has %d ticks, want 50", n)
	}
	a.press("#ticks-older")
	a.tab.WaitFor(`document.querySelectorAll("#ticks-table tbody tr").length === 1`)
	if got := a.text("#ticks-table tbody tr td:nth-child(3)"); got != fmt.Sprintf("#%d", first) {
		t.Errorf("the oldest tick's job reads %q, want #%d", got, first)
	}
	if !browsertest.Eval[bool](a.tab, `document.getElementById("ticks-older").disabled`) {
		t.Error("Older ticks is enabled on the last page")
	}
	a.press("#ticks-newer")
	a.tab.WaitFor(`document.querySelectorAll("#ticks-table tbody tr").length === 50`)
	for _, vp := range viewports {
		setViewport(t, a.tab, vp.w, vp.h)
		noSideScroll(t, a.tab, "schedule "+vp.name)
		checkAxe(t, a.tab, "schedule "+vp.name)
		a.shot("schedule-" + vp.name)
	}
	a.press("#fire-now")
	a.tab.WaitFor(`document.querySelector(".tick-counts .ticks dd").textContent === "52"`)
	s := must(c.GetSchedule(ctx, "ledger-close"))(t)
	top := s.LastTicks[0]
	if top.JobID == 0 {
		t.Fatalf("after Fire now the newest tick has no job: %+v", top)
	}
	// The counts and the history are drawn from two answers: wait for the
	// history's newest row too (it failed once reading the row before it
	// was drawn, and then printed it drawn).
	a.tab.WaitFor(fmt.Sprintf(`document.querySelector("#ticks-table tbody tr td:nth-child(3)").textContent === "#%d"`, top.JobID))
	if audit := must(c.Audit(ctx, "schedule:ledger-close", "", 100))(t); len(audit.Entries) != 52 || audit.Entries[0].Action != "schedule.fire_now" {
		t.Errorf("audit after Fire now: %d entries, newest %+v", len(audit.Entries), audit.Entries[0])
	}

	pk := must(c.CreateKey(ctx, "reader", "producer", nil))(t)
	p := &dash{t: t, tab: b.NewIsolatedTab(t), base: srv.URL, dir: shots}
	p.signIn(pk.Secret)
	p.open("/schedules/ledger-close")
	p.waitView("schedule")
	if p.visible("#fire-now") || !strings.Contains(p.text("#schedule-summary"), "Only an owner key") {
		t.Error("a producer key sees Fire now")
	}
}
