package storetest

import (
	"fmt"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func testCountRunning(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	var js []*store.Job
	for range 4 {
		js = append(js, job(f.p, f.ep, f.tool, 1))
	}
	other := job(f.p, ep2, chat, 1)
	f.insert(t, s, append(js, other)...)
	claim(t, s, "w", "l", 10, js[0].ID, js[1].ID, js[2].ID)
	claim(t, s, "w", "l", 10, other.ID)
	read(t, s, func(q store.Queries) error {
		for _, c := range []struct{ limit, want int64 }{{10, 3}, {3, 3}, {2, 2}, {1, 1}} {
			n, err := q.CountRunning(ctx, &store.CountRunningParams{EndpointID: f.ep.ID, Limit: c.limit})
			if err != nil {
				return err
			}
			if n != c.want {
				t.Errorf("CountRunning(limit %d) = %d, want %d", c.limit, n, c.want)
			}
		}
		n, err := q.CountRunning(ctx, &store.CountRunningParams{EndpointID: ep2.ID + 100, Limit: 10})
		if err != nil {
			return err
		}
		if n != 0 {
			t.Errorf("CountRunning of an idle endpoint = %d", n)
		}
		return nil
	})
}

func testCountScheduled(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	v2 := newTool(t, s, f.p.ID, f.ep.ID, "charge", "v2")
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	// Scheduled due at 1000, 2000 (two tools), 3000; one running; one elsewhere.
	a, b, c, d := job(f.p, f.ep, f.tool, 1000), job(f.p, f.ep, v2, 2000), job(f.p, f.ep, f.tool, 3000), job(f.p, f.ep, f.tool, 500)
	other := job(f.p, ep2, chat, 1)
	f.insert(t, s, a, b, c, d, other)
	claim(t, s, "w", "l", 600, d.ID)
	read(t, s, func(q store.Queries) error {
		for _, c := range []struct{ dueBy, n, due int64 }{{999, 3, 0}, {1000, 3, 1}, {2500, 3, 2}, {3000, 3, 3}} {
			n, due, err := q.CountScheduled(ctx, &store.CountScheduledParams{EndpointID: f.ep.ID, DueBy: c.dueBy})
			if err != nil {
				return err
			}
			if n != c.n || due != c.due {
				t.Errorf("CountScheduled(due by %d) = %d, %d; want %d, %d", c.dueBy, n, due, c.n, c.due)
			}
		}
		n, due, err := q.CountScheduled(ctx, &store.CountScheduledParams{EndpointID: ep2.ID + 100, DueBy: 5000})
		if err != nil || n != 0 || due != 0 {
			t.Errorf("CountScheduled of an endpoint without jobs = %d, %d, %v", n, due, err)
		}
		return nil
	})
}

func testAttemptsFinishedSince(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	js := []*store.Job{job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1)}
	other := job(f.p, ep2, chat, 1)
	f.insert(t, s, append(js, other)...)
	claim(t, s, "w", "l", 10, js[0].ID, js[1].ID, js[2].ID, js[3].ID, other.ID)
	// Finished at 100, 200, 300; js[3] still running; one elsewhere at 200.
	for i, j := range js[:3] {
		setState(t, s, getJob(t, s, j.ID), wire.JobFailed, int64(100*(i+1)))
	}
	setState(t, s, getJob(t, s, other.ID), wire.JobFailed, 200)
	read(t, s, func(q store.Queries) error {
		for _, c := range []struct{ since, limit, want int64 }{{0, 10, 3}, {100, 10, 3}, {101, 10, 2}, {300, 10, 1}, {301, 10, 0}, {0, 2, 2}} {
			n, err := q.AttemptsFinishedSince(ctx, &store.AttemptsFinishedSinceParams{EndpointID: f.ep.ID, Since: c.since, Limit: c.limit})
			if err != nil {
				return err
			}
			if n != c.want {
				t.Errorf("AttemptsFinishedSince(since %d, limit %d) = %d, want %d", c.since, c.limit, n, c.want)
			}
		}
		return nil
	})
}

// testAttemptsFinishedIn: the endpoint's attempts finished in [From, To),
// latest first, up to the limit, with what History reads of them.
func testAttemptsFinishedIn(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	js := []*store.Job{job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1)}
	other := job(f.p, ep2, chat, 1)
	f.insert(t, s, append(js, other)...)
	claim(t, s, "w", "l", 10, js[0].ID, js[1].ID, js[2].ID, js[3].ID, other.ID)
	// Finished at 100, 200, 300 (the last a 503 after a 40 ms request);
	// js[3] still running; one elsewhere at 200.
	for i, j := range js[:3] {
		tx(t, s, func(q store.Queries) error {
			cur, err := q.JobGetAnyProject(ctx, j.ID)
			if err != nil {
				return err
			}
			a := store.RunningAttempt(cur)
			a.FinishedAt, a.Outcome, a.Classification = int64(100*(i+1)), wire.OutcomeFailed, "worker_fail"
			if i == 2 {
				a.Classification, a.HTTPStatus, a.RequestMs = "server_error", 503, 40
			}
			return q.AttemptFinish(ctx, &a)
		})
	}
	setState(t, s, getJob(t, s, other.ID), wire.JobFailed, 200)
	read(t, s, func(q store.Queries) error {
		for _, c := range []struct {
			from, to int64
			limit    int
			want     []int64
		}{{0, 1000, 10, []int64{300, 200, 100}}, {100, 300, 10, []int64{200, 100}}, {101, 301, 10, []int64{300, 200}}, {0, 1000, 2, []int64{300, 200}}, {301, 1000, 10, nil}} {
			as, err := q.AttemptsFinishedIn(ctx, &store.AttemptsFinishedInParams{EndpointID: f.ep.ID, From: c.from, To: c.to, Limit: c.limit})
			if err != nil {
				return err
			}
			var got []int64
			for _, a := range as {
				got = append(got, a.FinishedAt)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("AttemptsFinishedIn(%d, %d, limit %d) finished at %v, want %v", c.from, c.to, c.limit, got, c.want)
			}
		}
		as, err := q.AttemptsFinishedIn(ctx, &store.AttemptsFinishedInParams{EndpointID: f.ep.ID, From: 300, To: 301, Limit: 1})
		if err == nil && (len(as) != 1 || as[0] != store.AttemptStat{ClaimedAt: 10, FinishedAt: 300, Outcome: wire.OutcomeFailed, Classification: "server_error", HTTPStatus: 503, RequestMs: 40}) {
			t.Errorf("the 503 reads %+v", as)
		}
		return err
	})
}

func testClaimsSince(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	js := []*store.Job{job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1), job(f.p, f.ep, f.tool, 1)}
	other := job(f.p, ep2, chat, 1)
	f.insert(t, s, append(js, other)...)
	// Claims at 3000, 1000, 2000 (not in time order) and one elsewhere at 1500.
	claim(t, s, "w", "l", 3000, js[0].ID)
	claim(t, s, "w", "l", 1000, js[1].ID)
	claim(t, s, "w", "l", 2000, js[2].ID)
	claim(t, s, "w", "l", 1500, other.ID)
	cases := []struct {
		since, limit, n, earliest int64
	}{
		{0, 10, 3, 1000},
		{1000, 10, 3, 1000}, // since is inclusive
		{1001, 10, 2, 2000},
		{2000, 10, 2, 2000},
		{3000, 10, 1, 3000},
		{3001, 10, 0, 0},
		{0, 2, 2, 1000}, // stops at limit, still reports the earliest
		{1001, 1, 1, 2000},
	}
	read(t, s, func(q store.Queries) error {
		for _, c := range cases {
			n, earliest, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: f.ep.ID, Since: c.since, Limit: c.limit})
			if err != nil {
				return err
			}
			if n != c.n || earliest != c.earliest {
				t.Errorf("ClaimsSince(since %d, limit %d) = %d, %d; want %d, %d", c.since, c.limit, n, earliest, c.n, c.earliest)
			}
		}
		return nil
	})
}

func testNextDueAt(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	v2 := newTool(t, s, f.p.ID, f.ep.ID, "charge", "v2")
	early := job(f.p, f.ep, f.tool, 100)
	f.insert(t, s, early, job(f.p, f.ep, f.tool, 3000), job(f.p, f.ep, v2, 2000))
	check := func(what string, tools []int64, want int64) {
		t.Helper()
		read(t, s, func(q store.Queries) error {
			got, err := q.NextDueAt(ctx, tools)
			if err != nil {
				return err
			}
			if got != want {
				t.Errorf("NextDueAt %s = %d, want %d", what, got, want)
			}
			return nil
		})
	}
	check("all", []int64{f.tool.ID, v2.ID}, 100)
	check("v2", []int64{v2.ID}, 2000)
	check("no tools", nil, 0)
	check("unknown tool", []int64{v2.ID + 100}, 0)
	setState(t, s, early, wire.JobRunning, 0) // only scheduled jobs count
	check("after the earliest runs", []int64{f.tool.ID, v2.ID}, 2000)
}

// testCountDue: only scheduled jobs due by Now count (with Later: due
// after Now), across the endpoint's tools, up to the limit.
func testCountDue(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	v2 := newTool(t, s, f.p.ID, f.ep.ID, "charge", "v2")
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	f.insert(t, s, job(f.p, f.ep, f.tool, 10), job(f.p, f.ep, v2, 20), job(f.p, f.ep, v2, 30), job(f.p, f.ep, f.tool, 100), job(f.p, ep2, chat, 10))
	running := job(f.p, f.ep, f.tool, 5)
	f.insert(t, s, running)
	claim(t, s, "w", "l", 6, running.ID)
	for _, tc := range []struct {
		now, limit, want int64
		later            bool
	}{{30, 100, 3, false}, {9, 100, 0, false}, {1000, 100, 4, false}, {1000, 2, 2, false},
		{30, 100, 1, true}, {9, 100, 4, true}, {1000, 100, 0, true}, {9, 2, 2, true}} {
		var n int64
		read(t, s, func(q store.Queries) (err error) {
			n, err = q.CountDue(ctx, &store.CountDueParams{EndpointID: f.ep.ID, Now: tc.now, Limit: tc.limit, Later: tc.later})
			return err
		})
		if n != tc.want {
			t.Errorf("CountDue(now %d, limit %d, later %v) = %d, want %d", tc.now, tc.limit, tc.later, n, tc.want)
		}
	}
}
