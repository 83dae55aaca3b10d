package storetest

import (
	"reflect"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func newSchedule(p *store.Project, name string, next int64) *store.Schedule {
	return &store.Schedule{ProjectID: p.ID, Name: name, Cron: "*/5 * * * *", TimeZone: "Europe/London", Tool: "t@1",
		Payload: []byte(`{"at":"{{tickAt}}"}`), FlowKey: "acme", Overlap: wire.OverlapSkip, CatchUp: wire.CatchUpAll, CatchUpLimit: 3,
		SpreadMs: 60_000, SpreadOffsetMs: 1234, NextTickAt: next, NextFireAt: next + 1234, CreatedAt: 1000, UpdatedAt: 1000}
}

// testSchedules stores, reads, lists, pauses and deletes schedules, and
// finds the due ones across projects.
func testSchedules(t *testing.T, s store.Store) {
	ctx := t.Context()
	p, other := newProject(t, s, "a"), newProject(t, s, "b")
	a, b, c := newSchedule(p, "b-nightly", 10_000), newSchedule(p, "a-sync", 20_000), newSchedule(other, "b-nightly", 5_000)
	tx(t, s, func(q store.Queries) error {
		for _, sc := range []*store.Schedule{a, b, c} {
			if err := q.ScheduleCreate(ctx, sc); err != nil {
				return err
			}
		}
		return nil
	})
	txErr(t, s, "ScheduleCreate of a taken name", store.ErrConflict, func(q store.Queries) error {
		return q.ScheduleCreate(ctx, newSchedule(p, "b-nightly", 1))
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.ScheduleGetInProject(ctx, &store.ScheduleGetInProjectParams{ProjectID: p.ID, Name: "b-nightly"})
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(got, a) {
			t.Errorf("ScheduleGetInProject = %+v, want %+v", got, a)
		}
		_, err = q.ScheduleGetInProject(ctx, &store.ScheduleGetInProjectParams{ProjectID: other.ID, Name: "a-sync"})
		wantErr(t, "ScheduleGetInProject from another project", err, store.ErrNotFound)
		list, err := q.ScheduleList(ctx, &store.ScheduleListParams{ProjectID: p.ID, Limit: 10})
		if err != nil || len(list) != 2 || list[0].Name != "a-sync" || list[1].Name != "b-nightly" {
			t.Errorf("ScheduleList = %+v, %v; want a-sync, b-nightly", list, err)
		}
		list, err = q.ScheduleList(ctx, &store.ScheduleListParams{ProjectID: p.ID, Limit: 1})
		if err != nil || len(list) != 1 || list[0].Name != "a-sync" {
			t.Errorf("ScheduleList(limit 1) = %+v, %v; want a-sync", list, err)
		}
		list, err = q.ScheduleList(ctx, &store.ScheduleListParams{ProjectID: p.ID, AfterName: "a-sync", Limit: 1})
		if err != nil || len(list) != 1 || list[0].Name != "b-nightly" {
			t.Errorf("ScheduleList(after a-sync) = %+v, %v; want b-nightly", list, err)
		}
		due, err := q.SchedulesDue(ctx, &store.SchedulesDueParams{Now: 11_234, Limit: 10})
		if err != nil || len(due) != 2 || due[0].ID != c.ID || due[1].ID != a.ID {
			t.Errorf("SchedulesDue = %+v, %v; want %d then %d", due, err, c.ID, a.ID)
		}
		return nil
	})
	tx(t, s, func(q store.Queries) error {
		return q.ScheduleSetPaused(ctx, &store.ScheduleSetPausedParams{ProjectID: other.ID, Name: "b-nightly", Paused: true, NextTickAt: 7, NextFireAt: 8, Now: 2000})
	})
	txErr(t, s, "ScheduleSetPaused of a missing schedule", store.ErrNotFound, func(q store.Queries) error {
		return q.ScheduleSetPaused(ctx, &store.ScheduleSetPausedParams{ProjectID: other.ID, Name: "a-sync", Paused: true})
	})
	read(t, s, func(q store.Queries) error {
		due, err := q.SchedulesDue(ctx, &store.SchedulesDueParams{Now: 1 << 50, Limit: 10})
		if err != nil || len(due) != 2 || due[0].ID != a.ID || due[1].ID != b.ID {
			t.Errorf("SchedulesDue with one paused = %+v, %v; want %d then %d", due, err, a.ID, b.ID)
		}
		got, err := q.ScheduleGetInProject(ctx, &store.ScheduleGetInProjectParams{ProjectID: other.ID, Name: "b-nightly"})
		if err != nil || !got.Paused || got.NextTickAt != 7 || got.NextFireAt != 8 || got.UpdatedAt != 2000 {
			t.Errorf("paused schedule = %+v, %v", got, err)
		}
		return nil
	})
	txErr(t, s, "ScheduleAdvance of a paused schedule", store.ErrConflict, func(q store.Queries) error {
		return q.ScheduleAdvance(ctx, &store.ScheduleAdvanceParams{ID: c.ID, FromTickAt: 7, NextTickAt: 9, NextFireAt: 10, Now: 3000})
	})
	testScheduleAdvance(t, s, a)
	tx(t, s, func(q store.Queries) error {
		return q.ScheduleDelete(ctx, &store.ScheduleGetInProjectParams{ProjectID: p.ID, Name: "b-nightly"})
	})
	txErr(t, s, "ScheduleDelete twice", store.ErrNotFound, func(q store.Queries) error {
		return q.ScheduleDelete(ctx, &store.ScheduleGetInProjectParams{ProjectID: p.ID, Name: "b-nightly"})
	})
	read(t, s, func(q store.Queries) error {
		ticks, err := q.ScheduleTickList(ctx, &store.ScheduleTickListParams{ScheduleID: a.ID, Limit: 10})
		if err != nil || len(ticks) != 0 {
			t.Errorf("ticks of a deleted schedule = %+v, %v; want none", ticks, err)
		}
		return nil
	})
}

// testScheduleAdvance moves a schedule by compare-and-set and records its
// ticks.
func testScheduleAdvance(t *testing.T, s store.Store, a *store.Schedule) {
	ctx := t.Context()
	adv := &store.ScheduleAdvanceParams{ID: a.ID, FromTickAt: a.NextTickAt, NextTickAt: 310_000, NextFireAt: 311_234, LastJobID: 42, Now: 3000}
	tx(t, s, func(q store.Queries) error { return q.ScheduleAdvance(ctx, adv) })
	txErr(t, s, "ScheduleAdvance from a moved tick", store.ErrConflict, func(q store.Queries) error { return q.ScheduleAdvance(ctx, adv) })
	ticks := []*store.ScheduleTick{
		{ScheduleID: a.ID, TickAt: 10_000, FireAt: 11_234, FiredAt: 11_300, Outcome: wire.TickEnqueued, Overlap: wire.OverlapSkip, JobID: 42},
		{ScheduleID: a.ID, TickAt: 20_000, FireAt: 21_234, FiredAt: 21_300, Outcome: wire.TickSkipped, Overlap: wire.OverlapSkip, PreviousJobID: 42, Missed: 2, Error: "é"},
	}
	tx(t, s, func(q store.Queries) error {
		for _, tk := range ticks {
			if err := q.ScheduleTickInsert(ctx, tk); err != nil {
				return err
			}
		}
		return nil
	})
	txErr(t, s, "ScheduleTickInsert of a tick twice", store.ErrConflict, func(q store.Queries) error {
		return q.ScheduleTickInsert(ctx, &store.ScheduleTick{ScheduleID: a.ID, TickAt: 10_000, Outcome: wire.TickFailed, Overlap: wire.OverlapAllow})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.ScheduleGetInProject(ctx, &store.ScheduleGetInProjectParams{ProjectID: a.ProjectID, Name: a.Name})
		if err != nil || got.NextTickAt != 310_000 || got.NextFireAt != 311_234 || got.LastJobID != 42 || got.UpdatedAt != 3000 {
			t.Errorf("advanced schedule = %+v, %v", got, err)
		}
		list, err := q.ScheduleTickList(ctx, &store.ScheduleTickListParams{ScheduleID: a.ID, Limit: 1})
		if err != nil || len(list) != 1 || !reflect.DeepEqual(list[0], *ticks[1]) {
			t.Errorf("ScheduleTickList = %+v, %v; want %+v", list, err, *ticks[1])
		}
		return nil
	})
}
