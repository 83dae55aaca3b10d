package storetest

import (
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// testScheduleTicks pages a schedule's ticks, reads the latest ticks of
// several schedules at once, counts recent ticks by outcome, and prunes
// old ticks while keeping each schedule's newest.
func testScheduleTicks(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	a, b, c := newSchedule(p, "a", 1), newSchedule(p, "b", 1), newSchedule(p, "c", 1)
	outcomes := []wire.TickOutcome{wire.TickEnqueued, wire.TickSkipped, wire.TickFailed, wire.TickReplaced, wire.TickSkipped}
	tx(t, s, func(q store.Queries) error {
		for _, sc := range []*store.Schedule{a, b, c} {
			if err := q.ScheduleCreate(ctx, sc); err != nil {
				return err
			}
		}
		for i, o := range outcomes { // a: ticks 1000 … 5000
			tk := &store.ScheduleTick{ScheduleID: a.ID, TickAt: int64(i+1) * 1000, FireAt: 1, FiredAt: 1, Outcome: o, Overlap: wire.OverlapSkip, Missed: int64(i)}
			if err := q.ScheduleTickInsert(ctx, tk); err != nil {
				return err
			}
		}
		// b: one old tick, its newest
		return q.ScheduleTickInsert(ctx, &store.ScheduleTick{ScheduleID: b.ID, TickAt: 500, FireAt: 1, FiredAt: 1, Outcome: wire.TickEnqueued, Overlap: wire.OverlapSkip})
	})
	read(t, s, func(q store.Queries) error {
		page, err := q.ScheduleTickList(ctx, &store.ScheduleTickListParams{ScheduleID: a.ID, BeforeTick: 4000, Limit: 2})
		if err != nil || len(page) != 2 || page[0].TickAt != 3000 || page[1].TickAt != 2000 {
			t.Errorf("ScheduleTickList(before 4000, limit 2) = %+v, %v; want ticks 3000, 2000", page, err)
		}
		latest, err := q.ScheduleTicksLatest(ctx, &store.ScheduleTicksLatestParams{ScheduleIDs: []int64{a.ID, b.ID, c.ID}, PerSchedule: 2})
		got := []int64{}
		for _, tk := range latest {
			got = append(got, tk.ScheduleID, tk.TickAt)
		}
		if want := []int64{a.ID, 5000, a.ID, 4000, b.ID, 500}; err != nil || !equalInts(got, want) {
			t.Errorf("ScheduleTicksLatest = %v, %v; want (schedule, tick) %v", got, err, want)
		}
		counts, err := q.ScheduleTickCounts(ctx, &store.ScheduleTickCountsParams{ScheduleID: a.ID, Since: 2000})
		want := store.TickCounts{Ticks: 4, Enqueued: 0, Skipped: 2, Replaced: 1, Failed: 1, Missed: 1 + 2 + 3 + 4}
		if err != nil || *counts != want {
			t.Errorf("ScheduleTickCounts(since 2000) = %+v, %v; want %+v", counts, err, want)
		}
		counts, err = q.ScheduleTickCounts(ctx, &store.ScheduleTickCountsParams{ScheduleID: c.ID, Since: 0})
		if err != nil || *counts != (store.TickCounts{}) {
			t.Errorf("ScheduleTickCounts of a schedule without ticks = %+v, %v; want zeros", counts, err)
		}
		return nil
	})
	var n, m int64
	tx(t, s, func(q store.Queries) (err error) {
		if n, err = q.ScheduleTicksPrune(ctx, &store.ScheduleTicksPruneParams{TickBefore: 10_000, Limit: 3}); err != nil {
			return err
		}
		m, err = q.ScheduleTicksPrune(ctx, &store.ScheduleTicksPruneParams{TickBefore: 10_000, Limit: 100})
		return err
	})
	if n != 3 || m != 1 {
		t.Errorf("ScheduleTicksPrune = %d then %d, want 3 then 1 (a's four older ticks; never a schedule's newest)", n, m)
	}
	read(t, s, func(q store.Queries) error {
		for _, want := range []struct {
			id, tick int64
		}{{a.ID, 5000}, {b.ID, 500}} {
			left, err := q.ScheduleTickList(ctx, &store.ScheduleTickListParams{ScheduleID: want.id, Limit: 10})
			if err != nil || len(left) != 1 || left[0].TickAt != want.tick {
				t.Errorf("ticks of schedule %d after the prune = %+v, %v; want only its newest, %d", want.id, left, err, want.tick)
			}
		}
		return nil
	})
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
