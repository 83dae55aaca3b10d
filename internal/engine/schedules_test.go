package engine_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/wire"
)

func schedHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.endpoint("stripe", seedEndpoint)
	h.tool(`{"name":"charge","version":"1","endpoint":"stripe"}`)
	return h
}

func (h *harness) schedule(in wire.ScheduleCreate) {
	h.t.Helper()
	if in.Tool == "" {
		in.Tool = "charge@1"
	}
	if _, err := h.e.CreateSchedule(h.ctx, h.owner, in); err != nil {
		h.t.Fatal(err)
	}
}

// fire advances the clock by d and fires due schedules; the jobs made.
func (h *harness) fire(d time.Duration) int {
	h.t.Helper()
	h.clk.Advance(d)
	n, err := h.e.FireSchedules(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

func (h *harness) ticks(name string) []wire.TickOutcome {
	h.t.Helper()
	d, err := h.e.Schedule(h.ctx, h.owner, name, 100)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []wire.TickOutcome
	for _, tk := range d.Ticks {
		out = append(out, tk.Outcome)
	}
	return out
}

func TestScheduleOneJobPerTick(t *testing.T) {
	h := schedHarness(t)
	h.schedule(wire.ScheduleCreate{Name: "sync", Cron: "*/5 * * * *", Payload: json.RawMessage(`{"at":"{{tickAt}}"}`), FlowKey: "acme", Overlap: wire.OverlapAllow})
	if n := h.fire(4 * time.Minute); n != 0 {
		t.Fatalf("before the tick: %d jobs", n)
	}
	if n := h.fire(time.Minute); n != 1 {
		t.Fatalf("at the tick: %d jobs, want 1", n)
	}
	if n := h.fire(0); n != 0 {
		t.Fatalf("the same tick again: %d jobs, want 0", n)
	}
	d, _ := h.e.Schedule(h.ctx, h.owner, "sync", 10)
	j, _ := h.job(d.Ticks[0].JobID)
	tick := t0.Add(5 * time.Minute)
	if j.DueAt != tick.UnixMilli() || string(j.Payload) != `{"at":"2026-12-02T09:05:00.000Z"}` || j.FlowKey != "acme" || j.IdempotencyKey == "" {
		t.Fatalf("tick job = due %d payload %s flow %q key %v; want due %d", j.DueAt, j.Payload, j.FlowKey, j.IdempotencyKey, tick.UnixMilli())
	}
	if d.Schedule.NextTickAt != tick.Add(5*time.Minute).UnixMilli() {
		t.Fatalf("next tick %d, want %d", d.Schedule.NextTickAt, tick.Add(5*time.Minute).UnixMilli())
	}
	// Enqueueing the tick's key again returns the tick's job.
	r, err := h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: "charge@1", IdempotencyKey: j.IdempotencyKey})
	if err != nil || r.Created || r.Job.ID != j.ID {
		t.Fatalf("enqueue with the tick's key: %+v, %v", r, err)
	}
}

func TestScheduleOverlap(t *testing.T) {
	h := schedHarness(t)
	h.schedule(wire.ScheduleCreate{Name: "skip", Cron: "@every 1m"})
	h.schedule(wire.ScheduleCreate{Name: "cancel", Cron: "@every 1m", Overlap: wire.OverlapCancelPrevious})
	h.fire(time.Minute)
	h.fire(time.Minute)
	if got := h.ticks("skip"); len(got) != 2 || got[0] != wire.TickSkipped || got[1] != wire.TickEnqueued {
		t.Fatalf("skip ticks (newest first) = %v", got)
	}
	d, _ := h.e.Schedule(h.ctx, h.owner, "cancel", 10)
	if got := h.ticks("cancel"); len(got) != 2 || got[0] != wire.TickReplaced || d.Ticks[0].PreviousJobID != d.Ticks[1].JobID {
		t.Fatalf("cancel ticks = %v %+v", got, d.Ticks)
	}
	if j, _ := h.job(d.Ticks[1].JobID); j.State != wire.JobCancelled {
		t.Fatalf("previous job %s, want cancelled", j.State)
	}
	// Once the skipped-over job finishes, the next tick makes a job.
	for range 2 {
		h.succeed(h.claimOne("charge@1"))
	}
	h.fire(time.Minute)
	if got := h.ticks("skip"); got[0] != wire.TickEnqueued {
		t.Fatalf("after the job finished: %v", got)
	}
}

func TestScheduleCatchUp(t *testing.T) {
	for _, c := range []struct {
		policy       wire.ScheduleCatchUp
		jobs, missed int
	}{{wire.CatchUpNone, 0, 0}, {wire.CatchUpLatest, 1, 9}, {wire.CatchUpAll, 3, 7}} {
		t.Run(string(c.policy), func(t *testing.T) {
			h := schedHarness(t)
			h.schedule(wire.ScheduleCreate{Name: "s", Cron: "@every 5m", CatchUp: c.policy, CatchUpLimit: 3, Overlap: wire.OverlapAllow})
			// Ten ticks missed, the latest two minutes ago: "none" counts
			// it missed too (later than a minute).
			if n := h.fire(52 * time.Minute); n != c.jobs {
				t.Fatalf("after 10 missed ticks: %d jobs, want %d", n, c.jobs)
			}
			d, _ := h.e.Schedule(h.ctx, h.owner, "s", 10)
			if c.jobs > 0 && (d.Ticks[len(d.Ticks)-1].Missed != int64(c.missed) || d.Ticks[0].TickAt != t0.Add(50*time.Minute).UnixMilli()) {
				t.Fatalf("ticks %+v: want the latest at 09:50 and %d missed", d.Ticks, c.missed)
			}
			if want := t0.Add(55 * time.Minute).UnixMilli(); d.Schedule.NextTickAt != want {
				t.Fatalf("next tick %d, want %d", d.Schedule.NextTickAt, want)
			}
		})
	}
}

func TestSchedulePausedAndResumed(t *testing.T) {
	h := schedHarness(t)
	h.schedule(wire.ScheduleCreate{Name: "s", Cron: "@every 1m", Paused: true})
	if n := h.fire(5 * time.Minute); n != 0 {
		t.Fatalf("paused: %d jobs", n)
	}
	s, err := h.e.SetSchedulePaused(h.ctx, h.owner, "s", false)
	if err != nil || s.NextTickAt != t0.Add(6*time.Minute).UnixMilli() {
		t.Fatalf("resumed: %+v %v; want the next tick after now", s, err)
	}
	if n := h.fire(time.Minute); n != 1 {
		t.Fatalf("resumed: %d jobs at the tick, want 1", n)
	}
}

// TestScheduleSpread: the offset is the same every tick, inside the
// window, different between schedules, and the job is due at tick+offset.
func TestScheduleSpread(t *testing.T) {
	h := schedHarness(t)
	offsets := map[int64]bool{}
	for _, name := range []string{"a", "b", "c", "d"} {
		h.schedule(wire.ScheduleCreate{Name: name, Cron: "@every 5m", SpreadMs: 60_000})
		ticks, off, err := h.e.PreviewSchedule(h.ctx, h.owner, name, 3)
		if err != nil || len(ticks) != 3 || off < 0 || off >= 60_000 {
			t.Fatalf("preview %s: %v %d %v", name, ticks, off, err)
		}
		offsets[off] = true
	}
	if len(offsets) < 3 {
		t.Fatalf("offsets %v: want them spread", offsets)
	}
	d, _ := h.e.Schedule(h.ctx, h.owner, "a", 0)
	h.fire(5*time.Minute + time.Duration(d.Schedule.SpreadOffsetMs-1)*time.Millisecond)
	if d, _ = h.e.Schedule(h.ctx, h.owner, "a", 10); len(d.Ticks) != 0 {
		t.Fatalf("fired before tick+offset: %+v", d.Ticks)
	}
	h.fire(time.Millisecond)
	d, _ = h.e.Schedule(h.ctx, h.owner, "a", 10)
	j, _ := h.job(d.Ticks[0].JobID)
	if j.DueAt != d.Ticks[0].TickAt+d.Schedule.SpreadOffsetMs || d.Ticks[0].FireAt != j.DueAt {
		t.Fatalf("job due %d, tick %+v offset %d", j.DueAt, d.Ticks[0], d.Schedule.SpreadOffsetMs)
	}
	h2 := schedHarness(t)
	h2.schedule(wire.ScheduleCreate{Name: "a", Cron: "@every 5m", SpreadMs: 60_000})
	d2, _ := h2.e.Schedule(h2.ctx, h2.owner, "a", 0)
	if d2.Schedule.SpreadOffsetMs != d.Schedule.SpreadOffsetMs {
		t.Fatalf("same project and name, offsets %d and %d", d2.Schedule.SpreadOffsetMs, d.Schedule.SpreadOffsetMs)
	}
}

func TestScheduleBadInput(t *testing.T) {
	h := schedHarness(t)
	for _, c := range []struct {
		in    wire.ScheduleCreate
		field string
	}{
		{wire.ScheduleCreate{Name: "x", Cron: "61 * * * *"}, "cron"},
		{wire.ScheduleCreate{Name: "x", Cron: "@every 5s"}, "cron"},
		{wire.ScheduleCreate{Name: "x", Cron: "@every 1500ms"}, "cron"},
		{wire.ScheduleCreate{Name: "x", Cron: "TZ=UTC * * * * *"}, "cron"},
		{wire.ScheduleCreate{Name: "x", Cron: "0 0 30 2 *"}, "cron"},
		{wire.ScheduleCreate{Name: "x", Cron: "* * * * *", TimeZone: "Mars/Olympus"}, "timeZone"},
		{wire.ScheduleCreate{Name: "x", Cron: "*/5 * * * *", SpreadMs: 300_000}, "spreadMs"},
		{wire.ScheduleCreate{Name: "x", Cron: "0,1 * * * *", SpreadMs: 60_000}, "spreadMs"},
		{wire.ScheduleCreate{Name: "x", Cron: "@hourly", Tool: "nope@1"}, "tool"},
		{wire.ScheduleCreate{Name: "x", Cron: "@hourly", Overlap: "queue"}, "overlap"},
		{wire.ScheduleCreate{Name: "x", Cron: "@hourly", CatchUpLimit: 101}, "catchUpLimit"},
		{wire.ScheduleCreate{Name: "X y", Cron: "@hourly"}, "name"},
	} {
		if c.in.Tool == "" {
			c.in.Tool = "charge@1"
		}
		_, err := h.e.CreateSchedule(h.ctx, h.owner, c.in)
		fe, ok := field.As(err)
		if !ok || fe[0].Field != c.field || !strings.Contains(fe[0].Allowed, "must") {
			t.Errorf("%+v: %v; want a field error on %s", c.in, err, c.field)
		}
	}
	if list, _ := h.e.Schedules(h.ctx, h.owner, "", 0, 0); len(list) != 0 {
		t.Fatalf("stored %d schedules after bad input", len(list))
	}
	h.schedule(wire.ScheduleCreate{Name: "x", Cron: "@hourly"})
	var ee *engine.Error
	if _, err := h.e.CreateSchedule(h.ctx, h.owner, wire.ScheduleCreate{Name: "x", Cron: "@hourly", Tool: "charge@1"}); !errors.As(err, &ee) || ee.Kind != engine.KindConflict {
		t.Fatalf("a taken name: %v, want a conflict", err)
	}
}

// TestScheduleFiresThroughDaylightSaving runs the ticker every 10 minutes
// of fake time across New York's changes: the skipped 02:30 fires once at
// 03:00 EDT, the repeated 01:30 once at its first occurrence (EDT).
func TestScheduleFiresThroughDaylightSaving(t *testing.T) {
	for _, c := range []struct {
		name, cron, from string
		want             []string
	}{
		// 2027: clocks spring forward on 14 March and fall back on 7 November.
		{"skipped hour", "30 2 * * *", "2027-03-13T12:00:00Z", []string{"2027-03-14T07:00:00.000Z", "2027-03-15T06:30:00.000Z"}},
		{"repeated hour", "30 1 * * *", "2027-11-06T12:00:00Z", []string{"2027-11-07T05:30:00.000Z", "2027-11-08T06:30:00.000Z"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := schedHarness(t)
			from, _ := time.Parse(time.RFC3339, c.from)
			h.clk.Set(from)
			h.schedule(wire.ScheduleCreate{Name: "s", Cron: c.cron, TimeZone: "America/New_York", Overlap: wire.OverlapAllow})
			for range 2 * 24 * 6 {
				h.fire(10 * time.Minute)
			}
			d, _ := h.e.Schedule(h.ctx, h.owner, "s", 10)
			var got []string
			for i := len(d.Ticks) - 1; i >= 0; i-- {
				got = append(got, engine.FormatTime(d.Ticks[i].TickAt))
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Fatalf("ticks %v, want %v", got, c.want)
			}
		})
	}
}
