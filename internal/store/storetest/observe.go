package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// --- workers ---

func testWorkers(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	other := newProject(t, s, "other")
	touch := func(ws ...store.WorkerSeen) {
		t.Helper()
		tx(t, s, func(q store.Queries) error { return q.WorkersTouch(ctx, &store.WorkersTouchParams{Workers: ws}) })
	}
	list := func(p *store.WorkerListParams) []store.Worker {
		t.Helper()
		var out []store.Worker
		read(t, s, func(q store.Queries) (err error) {
			out, err = q.WorkerList(ctx, p)
			return err
		})
		return out
	}
	touch(store.WorkerSeen{ProjectID: f.p.ID, WorkerID: "a", ClaimAt: 1000, FirstAt: 1000},
		store.WorkerSeen{ProjectID: f.p.ID, WorkerID: "b", ClaimAt: 2000, HeartbeatAt: 2500, FirstAt: 2000},
		store.WorkerSeen{ProjectID: other.ID, WorkerID: "a", ReportAt: 9000, FirstAt: 9000})
	// An older time never replaces a newer one; 0 leaves a time as it is;
	// first seen keeps the earliest.
	touch(store.WorkerSeen{ProjectID: f.p.ID, WorkerID: "a", ClaimAt: 500, ReportAt: 3000, FirstAt: 500})
	touch(store.WorkerSeen{ProjectID: f.p.ID, WorkerID: "b", HeartbeatAt: 2400, FirstAt: 2400})

	// Jobs: two running for a (ids ascending), one for b, one for a in the
	// other project (not counted), one scheduled.
	js := []*store.Job{job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1)}
	f.insert(t, s, js...)
	claim(t, s, "a", "l1", 100, js[0].ID, js[1].ID)
	claim(t, s, "b", "l2", 100, js[2].ID)

	got := list(&store.WorkerListParams{ProjectID: f.p.ID, SeenSince: 0, Limit: 10, JobsPerWorker: 20})
	want := []store.Worker{
		{ProjectID: f.p.ID, WorkerID: "a", FirstSeenAt: 500, LastClaimAt: 1000, LastReportAt: 3000, LastSeenAt: 3000, Holding: 2, JobIDs: []int64{js[1].ID, js[0].ID}},
		{ProjectID: f.p.ID, WorkerID: "b", FirstSeenAt: 2000, LastClaimAt: 2000, LastHeartbeatAt: 2500, LastSeenAt: 2500, Holding: 1, JobIDs: []int64{js[2].ID}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("WorkerList =\n%v\nwant\n%v", got, want)
	}
	// Limits: one job id per worker, one worker, and the seen bound.
	got = list(&store.WorkerListParams{ProjectID: f.p.ID, Limit: 1, JobsPerWorker: 1})
	if len(got) != 1 || got[0].WorkerID != "a" || got[0].Holding != 2 || !slices.Equal(got[0].JobIDs, []int64{js[1].ID}) {
		t.Errorf("WorkerList(limit 1, 1 job) = %v", got)
	}
	got = list(&store.WorkerListParams{ProjectID: f.p.ID, SeenSince: 2600, Limit: 10, JobsPerWorker: 20})
	if len(got) != 1 || got[0].WorkerID != "a" {
		t.Errorf("WorkerList(seen since 2600) = %v, want only a", got)
	}
	if got := list(&store.WorkerListParams{ProjectID: other.ID, Limit: 10, JobsPerWorker: 20}); len(got) != 1 || got[0].LastReportAt != 9000 || got[0].Holding != 0 {
		t.Errorf("WorkerList(other project) = %v", got)
	}

	// Prune: last seen before 2600 goes (b, 2500); a (3000) and the other
	// project's a (9000) stay.
	var n int64
	tx(t, s, func(q store.Queries) (err error) {
		n, err = q.WorkersPrune(ctx, &store.WorkersPruneParams{SeenBefore: 2600})
		return err
	})
	if n != 1 {
		t.Errorf("WorkersPrune = %d, want 1", n)
	}
	if got := list(&store.WorkerListParams{ProjectID: f.p.ID, Limit: 10, JobsPerWorker: 20}); len(got) != 1 || got[0].WorkerID != "a" {
		t.Errorf("after prune WorkerList = %v, want only a", got)
	}
}

// --- history ---

func testHistoryCursor(t *testing.T, s store.Store) {
	ctx := t.Context()
	read(t, s, func(q store.Queries) error {
		got, err := q.HistoryCursorGet(ctx)
		if err != nil || got != 0 {
			t.Errorf("HistoryCursorGet on a new store = %d, %v; want 0", got, err)
		}
		return nil
	})
	tx(t, s, func(q store.Queries) error {
		if _, err := q.HistoryCursorGet(ctx); err != nil {
			return err
		}
		return q.HistoryCursorSet(ctx, 120_000)
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.HistoryCursorGet(ctx)
		if err != nil || got != 120_000 {
			t.Errorf("HistoryCursorGet = %d, %v; want 120000", got, err)
		}
		return nil
	})
}

func testHistoryRollUp(t *testing.T, s store.Store) {
	ctx := t.Context()
	const m = 60_000
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	other := newProject(t, s, "other")
	oep := newEndpoint(t, s, other.ID, "stripe")
	otool := newTool(t, s, other.ID, oep.ID, "charge", "v1")

	// finish ends job id's running attempt with outcome at time at and
	// schedules the job again, due at due.
	finish := func(id int64, outcome wire.AttemptOutcome, at, due int64) {
		t.Helper()
		tx(t, s, func(q store.Queries) error {
			j, err := q.JobGetAnyProject(ctx, id)
			if err != nil {
				return err
			}
			a := store.RunningAttempt(j)
			a.FinishedAt, a.Outcome = at, outcome
			if err := q.AttemptFinish(ctx, &a); err != nil {
				return err
			}
			j.State, j.DueAt, j.LeaseToken, j.UpdatedAt = wire.JobScheduled, due, "", at
			return q.JobUpdate(ctx, j)
		})
	}
	// Minute 1 (60,000–119,999) on stripe: a claimed at 61,000 (due
	// 60,000: lag 1,000), succeeded at 70,000; b claimed at 65,000 (due
	// 60,000: lag 5,000), failed at 125,000 (minute 2), claimed again at
	// 130,000 (due 127,000: lag 3,000), still running; c claimed at
	// 119,999 (due 119,000: lag 999), timed out at 121,000 (minute 2).
	// Minute 1 on openai: d claimed at 100,000 (due 100,000: lag 0),
	// failed at 110,000. Minute 3 idle. Minute 4: the other project's e
	// claimed at 250,000 (due 200,000), running.
	a, b, c := job(f.p, f.ep, f.tool, 60_000), job(f.p, f.ep, f.tool, 60_000), job(f.p, f.ep, f.tool, 119_000)
	d, e := job(f.p, ep2, chat, 100_000), job(other, oep, otool, 200_000)
	f.insert(t, s, a, b, c, d, e)
	claim(t, s, "w", "la", 61_000, a.ID)
	claim(t, s, "w", "lb", 65_000, b.ID)
	claim(t, s, "w", "lc", 119_999, c.ID)
	claim(t, s, "w", "ld", 100_000, d.ID)
	claim(t, s, "w", "le", 250_000, e.ID)
	finish(a.ID, wire.OutcomeSucceeded, 70_000, 999_999)
	finish(d.ID, wire.OutcomeFailed, 110_000, 999_999)
	finish(b.ID, wire.OutcomeFailed, 125_000, 127_000)
	claim(t, s, "w", "lb2", 130_000, b.ID)
	finish(c.ID, wire.OutcomeTimedOut, 121_000, 999_999)

	// rollUp computes the minutes in a Read and stores them in a Tx, as
	// the engine does.
	rollUp := func(from, to int64) int64 {
		t.Helper()
		var points []store.HistoryPoint
		read(t, s, func(q store.Queries) (err error) {
			points, err = q.HistoryCompute(ctx, &store.HistoryComputeParams{From: from, To: to})
			return err
		})
		var n int64
		tx(t, s, func(q store.Queries) (err error) {
			n, err = q.HistoryInsert(ctx, points)
			return err
		})
		return n
	}
	list := func(p *store.HistoryListParams) string {
		t.Helper()
		var out []store.HistoryPoint
		read(t, s, func(q store.Queries) (err error) {
			out, err = q.HistoryList(ctx, p)
			return err
		})
		return fmt.Sprint(out)
	}
	// Minute 0 had nothing: no row.
	if n := rollUp(0, m); n != 0 {
		t.Errorf("HistoryRollUp(idle minute) inserted %d rows, want 0", n)
	}
	if n := rollUp(m, 2*m); n != 2 {
		t.Errorf("HistoryRollUp(minute 1) inserted %d rows, want 2", n)
	}
	// Again: the rows exist, nothing changes.
	if n := rollUp(m, 2*m); n != 0 {
		t.Errorf("HistoryRollUp(minute 1 again) inserted %d rows, want 0", n)
	}
	// Minutes 2 through 4 in one call; minute 3 is idle.
	if n := rollUp(2*m, 5*m); n != 2 {
		t.Errorf("HistoryRollUp(minutes 2-4) inserted %d rows, want 2", n)
	}
	want := fmt.Sprint([]store.HistoryPoint{
		{ProjectID: f.p.ID, EndpointID: ep2.ID, Endpoint: "openai", Minute: m, Claims: 1, Failed: 1, LagSumMs: 0, LagCount: 1, LagMaxMs: 0},
		{ProjectID: f.p.ID, EndpointID: f.ep.ID, Endpoint: "stripe", Minute: m, Claims: 3, Succeeded: 1, LagSumMs: 6_999, LagCount: 3, LagMaxMs: 5_000},
		{ProjectID: f.p.ID, EndpointID: f.ep.ID, Endpoint: "stripe", Minute: 2 * m, Claims: 1, Failed: 1, TimedOut: 1, LagSumMs: 3_000, LagCount: 1, LagMaxMs: 3_000},
	})
	if got := list(&store.HistoryListParams{ProjectID: f.p.ID, From: 0, To: 10 * m}); got != want {
		t.Errorf("HistoryList =\n%s\nwant\n%s", got, want)
	}
	wantStripe := fmt.Sprint([]store.HistoryPoint{
		{ProjectID: f.p.ID, EndpointID: f.ep.ID, Endpoint: "stripe", Minute: 2 * m, Claims: 1, Failed: 1, TimedOut: 1, LagSumMs: 3_000, LagCount: 1, LagMaxMs: 3_000},
	})
	if got := list(&store.HistoryListParams{ProjectID: f.p.ID, EndpointID: f.ep.ID, From: 2 * m, To: 3 * m}); got != wantStripe {
		t.Errorf("HistoryList(stripe, minute 2) =\n%s\nwant\n%s", got, wantStripe)
	}
	wantOther := fmt.Sprint([]store.HistoryPoint{
		{ProjectID: other.ID, EndpointID: oep.ID, Endpoint: "stripe", Minute: 4 * m, Claims: 1, LagSumMs: 50_000, LagCount: 1, LagMaxMs: 50_000},
	})
	if got := list(&store.HistoryListParams{ProjectID: other.ID, From: 0, To: 10 * m}); got != wantOther {
		t.Errorf("HistoryList(other project) =\n%s\nwant\n%s", got, wantOther)
	}

	// Pruning removes minutes before the bound, in every project, and
	// the rows outlive the attempts they came from.
	tx(t, s, func(q store.Queries) error {
		_, err := q.JobsPrune(ctx, &store.JobsPruneParams{FinishedBefore: 1 << 50, Limit: 100})
		return err
	})
	var n int64
	tx(t, s, func(q store.Queries) (err error) {
		n, err = q.HistoryPrune(ctx, &store.HistoryPruneParams{Before: 2 * m})
		return err
	})
	if n != 2 {
		t.Errorf("HistoryPrune(before minute 2) = %d, want 2", n)
	}
	if got := list(&store.HistoryListParams{ProjectID: f.p.ID, From: 0, To: 10 * m}); got != wantStripe {
		t.Errorf("after prune HistoryList =\n%s\nwant\n%s", got, wantStripe)
	}
}
