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
