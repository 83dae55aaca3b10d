package storetest

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func testAttempts(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	j := job(f.p, f.ep, f.tool, 1)
	f.insert(t, s, j)
	claim(t, s, "w-1", "lease-1", 1000, j.ID)
	done := &store.Attempt{JobID: j.ID, Number: 1, EndpointID: f.ep.ID, WorkerID: "w-1", LeaseToken: "lease-1", ClaimedAt: 1000,
		FinishedAt: 1500, Outcome: "failed", Classification: "http_status", HTTPStatus: 503, RetryAfterMs: 60_000, Message: "upstream \"down\"",
		BaseDelayMs: 10_000.5, JitterSample: 0.123456789, MinDelayMs: 8000, MaxDelayMs: 12_000, SelectedMs: 60_000, NextDueAt: 61_500, Counted: true,
		RequestMs: 412, ResponseHeaders: `{"Retry-After":"60"}`, ResponseExcerpt: "{\"error\":\"down\"} é"}
	tx(t, s, func(q store.Queries) error {
		if err := q.AttemptFinish(ctx, done); err != nil {
			return err
		}
		jj, err := q.JobGetAnyProject(ctx, j.ID)
		if err != nil {
			return err
		}
		jj.State, jj.DueAt = wire.JobScheduled, 61_500
		return q.JobUpdate(ctx, jj)
	})
	claim(t, s, "w-2", "lease-2", 62_000, j.ID)
	read(t, s, func(q store.Queries) error {
		got, err := q.AttemptGet(ctx, &store.AttemptGetParams{JobID: j.ID, Number: 1})
		if err != nil {
			return err
		}
		if *got != *done {
			t.Errorf("AttemptGet after finish:\n got %+v\nwant %+v", *got, *done)
		}
		_, err = q.AttemptGet(ctx, &store.AttemptGetParams{JobID: j.ID, Number: 3})
		wantErr(t, "AttemptGet missing", err, store.ErrNotFound)
		list, err := q.AttemptList(ctx, j.ID)
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0] != *done || list[1].Number != 2 || list[1].FinishedAt != 0 || list[1].Counted {
			t.Errorf("AttemptList = %+v", list)
		}
		return nil
	})
	txErr(t, s, "AttemptFinish of a missing attempt", store.ErrNotFound, func(q store.Queries) error {
		missing := *done
		missing.Number = 9
		return q.AttemptFinish(ctx, &missing)
	})
}

// testAttemptsBatch holds AttemptsByKeys and AttemptsFinish to AttemptGet
// and AttemptFinish.
func testAttemptsBatch(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	var js []*store.Job
	for range 600 {
		js = append(js, job(f.p, f.ep, f.tool, 1))
	}
	f.insert(t, s, js...)
	claim(t, s, "w-1", "lease-1", 1000, ids(derefJobs(js))...)
	// A second attempt for the first ten jobs: attempt 1 finished (failed
	// at 1500), attempt 2 running. Of those, AttemptsByKeys reads attempt 1
	// of the odd ones and attempt 2 of the even ones; AttemptsFinish
	// finishes the running attempts read.
	for _, j := range js[:10] {
		reschedule(t, s, j.ID, 1500)
	}
	claim(t, s, "w-2", "lease-2", 2000, ids(derefJobs(js[:10]))...)
	var keys []store.AttemptKey
	var fin []*store.Attempt
	for i, j := range js {
		n := int64(1)
		if i < 10 && i%2 == 0 {
			n = 2
		}
		keys = append(keys, store.AttemptKey{JobID: j.ID, Number: n})
		if i < 10 && n == 1 {
			continue // finished already; only read
		}
		a := &store.Attempt{JobID: j.ID, Number: n, EndpointID: f.ep.ID, WorkerID: "w-1", LeaseToken: "lease-1", ClaimedAt: 1000,
			FinishedAt: int64(1500 + i), Outcome: "failed", Classification: "http_status", HTTPStatus: 503, RetryAfterMs: int64(i), Message: fmt.Sprintf("m %d \"q\"", i),
			BaseDelayMs: 10_000.5 + float64(i), JitterSample: 0.123456789, MinDelayMs: 8000, MaxDelayMs: 12_000, SelectedMs: 60_000, NextDueAt: 61_500, Counted: i%2 == 0}
		if n == 2 {
			a.WorkerID, a.LeaseToken, a.ClaimedAt = "w-2", "lease-2", 2000
		}
		if i%3 == 0 {
			a.Outcome, a.Classification, a.HTTPStatus, a.Message, a.Counted = "succeeded", "success", 200, "", false
		}
		fin = append(fin, a)
	}
	missingKeys := append(slices.Clone(keys), store.AttemptKey{JobID: js[20].ID, Number: 2}, store.AttemptKey{JobID: js[0].ID + 10_000, Number: 1})
	tx(t, s, func(q store.Queries) error {
		got, err := q.AttemptsByKeys(ctx, missingKeys)
		if err != nil {
			return err
		}
		if len(got) != len(keys) {
			t.Errorf("AttemptsByKeys = %d attempts, want %d", len(got), len(keys))
		}
		for i := range got {
			want, err := q.AttemptGet(ctx, &store.AttemptGetParams{JobID: got[i].JobID, Number: got[i].Number})
			if err != nil {
				return err
			}
			if got[i] != *want {
				t.Errorf("AttemptsByKeys row %+v, AttemptGet %+v", got[i], *want)
			}
		}
		if none, err := q.AttemptsByKeys(ctx, nil); err != nil || len(none) != 0 {
			t.Errorf("AttemptsByKeys(no keys) = %v, %v", none, err)
		}
		if err := q.AttemptsFinish(ctx, fin); err != nil {
			return err
		}
		return q.AttemptsFinish(ctx, nil)
	})
	read(t, s, func(q store.Queries) error {
		for _, a := range fin {
			got, err := q.AttemptGet(ctx, &store.AttemptGetParams{JobID: a.JobID, Number: a.Number})
			if err != nil {
				return err
			}
			if *got != *a {
				t.Errorf("after AttemptsFinish:\n got %+v\nwant %+v", *got, *a)
			}
		}
		// The other attempt of the first ten jobs is untouched.
		got, err := q.AttemptGet(ctx, &store.AttemptGetParams{JobID: js[0].ID, Number: 1})
		if err != nil {
			return err
		}
		if want := (store.Attempt{JobID: js[0].ID, Number: 1, EndpointID: f.ep.ID, WorkerID: "w-1", LeaseToken: "lease-1", ClaimedAt: 1000,
			FinishedAt: 1500, Outcome: "failed"}); *got != want {
			t.Errorf("attempt 1 of job %d = %+v, want %+v", js[0].ID, *got, want)
		}
		return nil
	})
	// A finished attempt is not finished again, even while its job is
	// still running (here it is: nothing moved it on).
	txErr(t, s, "AttemptFinish of a finished attempt", store.ErrNotFound, func(q store.Queries) error {
		again := *fin[0]
		again.Outcome = "timed_out"
		return q.AttemptFinish(ctx, &again)
	})
	txErr(t, s, "AttemptsFinish with a missing attempt", store.ErrNotFound, func(q store.Queries) error {
		a, missing := *fin[0], *fin[1]
		a.Outcome, missing.Number = "timed_out", 9
		return q.AttemptsFinish(ctx, []*store.Attempt{&a, &missing})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.AttemptGet(ctx, &store.AttemptGetParams{JobID: fin[0].JobID, Number: fin[0].Number})
		if err == nil && *got != *fin[0] {
			t.Errorf("attempt changed by a refused AttemptsFinish: %+v", got)
		}
		return err
	})
}

// testAttemptOutcomes counts an endpoint's finished attempts by outcome
// from a time on: each attempt of a job counts, running attempts and other
// endpoints' do not, and the time is inclusive.
func testAttemptOutcomes(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	js := []*store.Job{job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1)}
	other := job(f.p, ep2, chat, 1)
	f.insert(t, s, append(js, other)...)
	claim(t, s, "w", "l", 10, js[0].ID, js[1].ID, js[2].ID, js[3].ID, js[4].ID, other.ID)
	// finish ends the running attempt of job id with outcome at time at,
	// and schedules the job again.
	finish := func(id int64, outcome wire.AttemptOutcome, at int64) {
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
			j.State, j.DueAt, j.LeaseToken, j.UpdatedAt = wire.JobScheduled, at, "", at
			return q.JobUpdate(ctx, j)
		})
	}
	// On f.ep: succeeded at 100; failed at 200, then its second attempt
	// succeeded at 350; failed at 300; timed out at 400; js[4] running.
	// On ep2: succeeded at 300.
	finish(js[0].ID, wire.OutcomeSucceeded, 100)
	finish(js[1].ID, wire.OutcomeFailed, 200)
	claim(t, s, "w", "l2", 250, js[1].ID)
	finish(js[1].ID, wire.OutcomeSucceeded, 350)
	finish(js[2].ID, wire.OutcomeFailed, 300)
	finish(js[3].ID, wire.OutcomeTimedOut, 400)
	finish(other.ID, wire.OutcomeSucceeded, 300)
	type counts = map[wire.AttemptOutcome]int64
	cases := []struct {
		name     string
		endpoint int64
		since    int64
		want     counts
	}{
		{"every attempt", f.ep.ID, 0, counts{wire.OutcomeSucceeded: 2, wire.OutcomeFailed: 2, wire.OutcomeTimedOut: 1}},
		{"since is inclusive", f.ep.ID, 200, counts{wire.OutcomeSucceeded: 1, wire.OutcomeFailed: 2, wire.OutcomeTimedOut: 1}},
		{"after the first failure", f.ep.ID, 201, counts{wire.OutcomeSucceeded: 1, wire.OutcomeFailed: 1, wire.OutcomeTimedOut: 1}},
		{"the last one", f.ep.ID, 400, counts{wire.OutcomeTimedOut: 1}},
		{"none since", f.ep.ID, 401, counts{}},
		{"another endpoint", ep2.ID, 0, counts{wire.OutcomeSucceeded: 1}},
		{"an endpoint without attempts", ep2.ID + 100, 0, counts{}},
	}
	read(t, s, func(q store.Queries) error {
		for _, c := range cases {
			got, err := q.AttemptOutcomes(ctx, &store.AttemptOutcomesParams{EndpointID: c.endpoint, Since: c.since})
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			if !maps.Equal(got, c.want) {
				t.Errorf("AttemptOutcomes %s (since %d) = %v, want %v", c.name, c.since, got, c.want)
			}
		}
		return nil
	})
}

func derefJobs(js []*store.Job) []store.Job {
	out := make([]store.Job, len(js))
	for i, j := range js {
		out[i] = *j
	}
	return out
}
