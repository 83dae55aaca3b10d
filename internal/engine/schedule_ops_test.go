package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func (h *harness) tickTimes(name string) []time.Time {
	h.t.Helper()
	ticks, err := h.e.ScheduleTicks(h.ctx, h.owner, name, 0, 500)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []time.Time
	for _, tk := range ticks {
		out = append(out, time.UnixMilli(tk.TickAt).UTC())
	}
	return out
}

// TestScheduleTicksPruned: ticks older than the retention go with the
// finished jobs, but never those of the last 24 hours (the console counts
// them) nor a schedule's newest tick (a schedule that no longer fires
// still shows when it last did).
func TestScheduleTicksPruned(t *testing.T) {
	h := schedHarness(t)
	short, err := engine.New(engine.Config{Store: h.st, Clock: h.clk, Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	h.schedule(wire.ScheduleCreate{Name: "hourly", Cron: "@hourly", Overlap: wire.OverlapAllow})
	for range 30 {
		h.fire(time.Hour)
	}
	if got := h.tickTimes("hourly"); len(got) != 30 {
		t.Fatalf("%d ticks after 30 hours, want 30", len(got))
	}
	if _, err := short.Prune(h.ctx); err != nil {
		t.Fatal(err)
	}
	got := h.tickTimes("hourly")
	if len(got) != 25 || !got[len(got)-1].Equal(t0.Add(6*time.Hour)) {
		t.Fatalf("after a prune with a retention of 1 h, %d ticks, oldest %v; want the 25 of the last 24 hours, oldest %v", len(got), got, t0.Add(6*time.Hour))
	}
	if _, err := h.e.SetSchedulePaused(h.ctx, h.owner, "hourly", true); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(72 * time.Hour)
	if _, err := short.Prune(h.ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.tickTimes("hourly"); len(got) != 1 || !got[0].Equal(t0.Add(30*time.Hour)) {
		t.Fatalf("ticks of a schedule paused for 3 days after a prune: %v; want only its newest, %v", got, t0.Add(30*time.Hour))
	}
}

// TestSchedulesListPaged: the list comes a page at a time by name, each
// schedule with its own latest ticks.
func TestSchedulesListPaged(t *testing.T) {
	h := schedHarness(t)
	for _, n := range []string{"e", "c", "a", "d", "b"} {
		h.schedule(wire.ScheduleCreate{Name: n, Cron: "@hourly", Overlap: wire.OverlapAllow})
	}
	h.fire(time.Hour)
	h.fire(time.Hour)
	h.fire(time.Hour)
	var pages [][]string
	for after := ""; ; {
		list, err := h.e.Schedules(h.ctx, h.owner, after, 2, 2)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range list {
			names = append(names, d.Schedule.Name)
			if len(d.Ticks) != 2 || d.Ticks[0].ScheduleID != d.Schedule.ID || d.Ticks[0].TickAt != t0.Add(3*time.Hour).UnixMilli() {
				t.Errorf("schedule %s listed with ticks %+v; want its own 2 latest, newest first", d.Schedule.Name, d.Ticks)
			}
		}
		pages = append(pages, names)
		if len(list) < 2 {
			break
		}
		after = names[len(names)-1]
	}
	if got := strings.Join(joinPages(pages), "|"); got != "a,b|c,d|e" {
		t.Fatalf("pages %s, want a,b|c,d|e", got)
	}
}

func joinPages(pages [][]string) []string {
	var out []string
	for _, p := range pages {
		out = append(out, strings.Join(p, ","))
	}
	return out
}

// TestFireScheduleNow: an owner fires a tick now, paused or not: one job
// due now, a tick recorded, an audit entry; the schedule's own next tick
// stays, and, on an active schedule with overlap skip, waits for that job.
// A producer may not.
func TestFireScheduleNow(t *testing.T) {
	h := schedHarness(t)
	h.schedule(wire.ScheduleCreate{Name: "nightly", Cron: "0 2 * * *", Paused: true})
	h.schedule(wire.ScheduleCreate{Name: "hourly", Cron: "@hourly"})
	producer := &engine.Principal{ProjectID: h.owner.ProjectID, Scope: wire.ScopeProducer, KeyPrefix: "rk_p"}
	var ee *engine.Error
	if _, err := h.e.FireScheduleNow(h.ctx, producer, "nightly"); !errors.As(err, &ee) || ee.Kind != engine.KindForbidden {
		t.Fatalf("a producer fired a schedule: %v, want forbidden", err)
	}
	if _, err := h.e.FireScheduleNow(h.ctx, h.owner, "none"); !errors.As(err, &ee) || ee.Kind != engine.KindNotFound {
		t.Fatalf("fire a missing schedule: %v, want not found", err)
	}
	h.clk.Advance(10 * time.Minute)
	now := h.clk.Now().UnixMilli()
	tk, err := h.e.FireScheduleNow(h.ctx, h.owner, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	j, _ := h.job(tk.JobID)
	if tk.TickAt != now+1 || tk.FireAt != now || tk.Outcome != wire.TickEnqueued || j == nil || j.DueAt != now || j.State != wire.JobScheduled {
		t.Fatalf("fired tick %+v, job %+v; want a job due now, its tick a millisecond past the whole second", tk, j)
	}
	// Again in the same millisecond: another tick and job, not a conflict.
	again, err := h.e.FireScheduleNow(h.ctx, h.owner, "nightly")
	if err != nil || again.TickAt != now+2 || again.JobID == j.ID {
		t.Fatalf("a second fire in the same millisecond: %+v %v; want tick %d and a new job", again, err, now+2)
	}
	d, err := h.e.Schedule(h.ctx, h.owner, "nightly", 10)
	if err != nil || !d.Schedule.Paused || len(d.Ticks) != 2 || d.Ticks[1].JobID != j.ID {
		t.Fatalf("nightly after fire now: %+v %v", d, err)
	}
	audit, err := h.e.Audit(h.ctx, h.owner, "schedule:nightly", 0, 10)
	if err != nil || len(audit) != 2 || audit[0].Action != "schedule.fire_now" || !strings.Contains(audit[0].Detail, "job ") {
		t.Fatalf("audit of fire now: %+v %v", audit, err)
	}
	// An active schedule with overlap skip, fired by hand at the very
	// millisecond of its next tick: the ticker still fires that tick, and
	// it waits for the job fired by hand.
	h.clk.Advance(50 * time.Minute) // t0 + 1 h: hourly's next tick
	fired, err := h.e.FireScheduleNow(h.ctx, h.owner, "hourly")
	if err != nil {
		t.Fatal(err)
	}
	h.fire(0)
	d, _ = h.e.Schedule(h.ctx, h.owner, "hourly", 10)
	if len(d.Ticks) != 2 || d.Ticks[1].Outcome != wire.TickSkipped || d.Ticks[1].PreviousJobID != fired.JobID || d.Ticks[1].TickAt != t0.Add(time.Hour).UnixMilli() {
		t.Fatalf("hourly's tick after a fire now: %+v; want skipped over job %d", d.Ticks, fired.JobID)
	}
}

// TestScheduleTickCounts: a read of a schedule counts its ticks of the
// last 24 hours by outcome, and the missed ticks they name.
func TestScheduleTickCounts(t *testing.T) {
	h := schedHarness(t)
	h.schedule(wire.ScheduleCreate{Name: "hourly", Cron: "@hourly", CatchUp: wire.CatchUpLatest})
	h.fire(time.Hour)     // enqueued
	h.fire(time.Hour)     // skipped: the first job waits
	h.fire(5 * time.Hour) // the latest of five due ticks fires (skipped), four missed
	d, err := h.e.Schedule(h.ctx, h.owner, "hourly", 100)
	if err != nil {
		t.Fatal(err)
	}
	var missed int64
	for _, tk := range d.Ticks {
		missed += tk.Missed
	}
	want := store.TickCounts{Ticks: 3, Enqueued: 1, Skipped: 2, Missed: missed}
	if d.Counts == nil || *d.Counts != want || missed == 0 || d.Since != h.clk.Now().Add(-24*time.Hour).UnixMilli() {
		t.Fatalf("counts %+v since %d; want %+v since 24 h ago", d.Counts, d.Since, want)
	}
	h.clk.Advance(22 * time.Hour) // the first two ticks are now over 24 hours old
	h.e.SetSchedulePaused(h.ctx, h.owner, "hourly", true)
	d, _ = h.e.Schedule(h.ctx, h.owner, "hourly", 100)
	if want := (store.TickCounts{Ticks: 1, Skipped: 1, Missed: d.Ticks[0].Missed}); d.Counts == nil || *d.Counts != want {
		t.Fatalf("counts a day on %+v, want %+v", d.Counts, want)
	}
}

// tickObserver records the ticks the engine reports.
type tickObserver struct {
	outcomes []wire.TickOutcome
	missed   int64
	lags     []time.Duration
}

func (o *tickObserver) Claimed(string, int, []time.Duration) {}
func (o *tickObserver) Reported(string, string)              {}
func (o *tickObserver) GateHeld(wire.Gate)                   {}
func (o *tickObserver) QuotaIgnored(string)                  {}
func (o *tickObserver) Ticked(out wire.TickOutcome, missed int64, lag time.Duration) {
	o.outcomes, o.missed, o.lags = append(o.outcomes, out), o.missed+missed, append(o.lags, lag)
}

// TestScheduleTicksObserved: every tick fired is reported for metrics with
// its outcome, the ticks it says were missed, and its lag.
func TestScheduleTicksObserved(t *testing.T) {
	h := schedHarness(t)
	obs := &tickObserver{}
	e, err := engine.New(engine.Config{Store: h.st, Clock: h.clk, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	h.schedule(wire.ScheduleCreate{Name: "hourly", Cron: "@hourly"})
	h.clk.Advance(time.Hour + 3*time.Second)
	if _, err := e.FireSchedules(h.ctx); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(3 * time.Hour)
	if _, err := e.FireSchedules(h.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.FireScheduleNow(h.ctx, h.owner, "hourly"); err != nil {
		t.Fatal(err)
	}
	got := []wire.TickOutcome{wire.TickEnqueued, wire.TickSkipped, wire.TickEnqueued}
	if strings.Join(outcomeStrings(obs.outcomes), ",") != strings.Join(outcomeStrings(got), ",") || obs.missed != 2 || obs.lags[0] != 3*time.Second {
		t.Fatalf("observed %v missed %d lags %v; want %v, 2 missed, a first lag of 3 s", obs.outcomes, obs.missed, obs.lags, got)
	}
}

func outcomeStrings(list []wire.TickOutcome) []string {
	var out []string
	for _, o := range list {
		out = append(out, string(o))
	}
	return out
}
