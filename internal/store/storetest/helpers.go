package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// tx runs fn in a write transaction and fails the test on error.
func tx(t *testing.T, s store.Store, fn func(q store.Queries) error) {
	t.Helper()
	if err := s.Tx(t.Context(), fn); err != nil {
		t.Fatalf("tx: %v", err)
	}
}

// read runs fn in a read transaction and fails the test on error.
func read(t *testing.T, s store.Store, fn func(q store.Queries) error) {
	t.Helper()
	if err := s.Read(t.Context(), fn); err != nil {
		t.Fatalf("read: %v", err)
	}
}

// wantErr fails unless err matches target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// txErr runs fn in its own transaction and expects it to fail with target.
func txErr(t *testing.T, s store.Store, what string, target error, fn func(q store.Queries) error) {
	t.Helper()
	wantErr(t, what, s.Tx(t.Context(), fn), target)
}

func ptr(v int64) *int64 { return &v }

// fixture is a project with one endpoint and one tool bound to it.
type fixture struct {
	p    *store.Project
	ep   *store.Endpoint
	tool *store.Tool
}

func newProject(t *testing.T, s store.Store, name string) *store.Project {
	t.Helper()
	p := &store.Project{Name: name, Plan: wire.PlanPro, CreatedAt: 1000}
	tx(t, s, func(q store.Queries) error { return q.ProjectCreate(t.Context(), p) })
	return p
}

func newEndpoint(t *testing.T, s store.Store, projectID int64, name string) *store.Endpoint {
	t.Helper()
	ep := &store.Endpoint{ProjectID: projectID, Name: name, Policy: json.RawMessage(`{"preset":"STANDARD"}`), EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 30_000, MaxConcurrent: 10, CircuitFailureThreshold: 5, CircuitOpenMs: 60_000}, Version: 1, CreatedAt: 1000, UpdatedAt: 1000, CircuitState: wire.CircuitClosed}
	tx(t, s, func(q store.Queries) error { return q.EndpointCreate(t.Context(), ep) })
	return ep
}

func newTool(t *testing.T, s store.Store, projectID, endpointID int64, name, version string) *store.Tool {
	t.Helper()
	tl := &store.Tool{ProjectID: projectID, Name: name, Version: version, EndpointID: endpointID, Description: "d", CreatedAt: 1000}
	tx(t, s, func(q store.Queries) error { return q.ToolCreate(t.Context(), tl) })
	return tl
}

func newFixture(t *testing.T, s store.Store) *fixture {
	t.Helper()
	f := &fixture{p: newProject(t, s, "acme")}
	f.ep = newEndpoint(t, s, f.p.ID, "stripe")
	f.tool = newTool(t, s, f.p.ID, f.ep.ID, "charge", "v1")
	return f
}

// job returns a scheduled job of the tool, not yet inserted.
func job(p *store.Project, ep *store.Endpoint, tl *store.Tool, dueAt int64) *store.Job {
	return &store.Job{ProjectID: p.ID, ToolID: tl.ID, Tool: tl.Name, Version: tl.Version, EndpointID: ep.ID, Endpoint: ep.Name,
		Payload: json.RawMessage(`{"amount":100}`), Policy: json.RawMessage(`{"preset":"STANDARD","maxAttempts":5}`), MaxAttempts: 5,
		TimeoutMs: 30_000, State: wire.JobScheduled, DueAt: dueAt, CreatedAt: 1000, UpdatedAt: 1000}
}

func (f *fixture) insert(t *testing.T, s store.Store, jobs ...*store.Job) {
	t.Helper()
	tx(t, s, func(q store.Queries) error {
		for _, j := range jobs {
			if err := q.JobInsert(t.Context(), j); err != nil {
				return err
			}
		}
		return nil
	})
}

// setState writes a job's state (and finish time for finished states).
// setState moves a job to a state. A running job's attempt is finished
// first (as failed, at finishedAt), as the engine always does: an attempt
// is stored when it ends, and until then it is the running job's.
func setState(t *testing.T, s store.Store, j *store.Job, state wire.JobState, finishedAt int64) {
	t.Helper()
	tx(t, s, func(q store.Queries) error {
		if err := endAttempt(t.Context(), q, j.ID, state, finishedAt); err != nil {
			return err
		}
		j.State, j.FinishedAt = state, finishedAt
		return q.JobUpdate(t.Context(), j)
	})
}

// endAttempt finishes the running attempt of a job that is leaving
// running for state.
func endAttempt(ctx context.Context, q store.Queries, id int64, state wire.JobState, at int64) error {
	cur, err := q.JobGetAnyProject(ctx, id)
	if err != nil || cur.State != wire.JobRunning || state == wire.JobRunning || cur.Attempt == 0 {
		return err
	}
	a := store.RunningAttempt(cur)
	a.FinishedAt, a.Outcome = max(at, cur.ClaimedAt), "failed"
	return q.AttemptFinish(ctx, &a)
}

// reschedule finishes a running job's attempt and schedules the job again.
func reschedule(t *testing.T, s store.Store, id, dueAt int64) {
	t.Helper()
	tx(t, s, func(q store.Queries) error {
		if err := endAttempt(t.Context(), q, id, wire.JobScheduled, dueAt); err != nil {
			return err
		}
		j, err := q.JobGetAnyProject(t.Context(), id)
		if err != nil {
			return err
		}
		j.State, j.DueAt, j.LeaseToken = wire.JobScheduled, dueAt, ""
		return q.JobUpdate(t.Context(), j)
	})
}

func claim(t *testing.T, s store.Store, workerID, lease string, now int64, ids ...int64) {
	t.Helper()
	tx(t, s, func(q store.Queries) error {
		return q.JobsClaim(t.Context(), &store.JobsClaimParams{IDs: ids, WorkerID: workerID, LeaseToken: lease, Now: now})
	})
}

func ids(jobs []store.Job) []int64 {
	out := make([]int64, len(jobs))
	for i := range jobs {
		out[i] = jobs[i].ID
	}
	return out
}

func getJob(t *testing.T, s store.Store, id int64) *store.Job {
	t.Helper()
	var j *store.Job
	read(t, s, func(q store.Queries) (err error) {
		j, err = q.JobGetAnyProject(t.Context(), id)
		return err
	})
	return j
}

func eqPtr(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func names(eps []store.Endpoint) []string {
	var out []string
	for _, e := range eps {
		out = append(out, e.Name)
	}
	return out
}

func sameJob(t *testing.T, what string, got, want *store.Job) {
	t.Helper()
	g, w := *got, *want
	if string(g.Payload) != string(w.Payload) || string(g.Policy) != string(w.Policy) {
		t.Errorf("%s: payload %s policy %s, want %s and %s", what, g.Payload, g.Policy, w.Payload, w.Policy)
	}
	g.Payload, g.Policy, w.Payload, w.Policy = nil, nil, nil, nil
	if fmt.Sprintf("%+v", g) != fmt.Sprintf("%+v", w) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, g, w)
	}
}

// checkCounters compares the counters (JobCountsByEndpoint,
// JobCountsByState) with counts of the jobs themselves, per endpoint and
// state, in every project given.
func checkCounters(t *testing.T, s store.Store, projects ...*store.Project) {
	t.Helper()
	ctx := t.Context()
	read(t, s, func(q store.Queries) error {
		for _, p := range projects {
			eps, err := q.EndpointList(ctx, p.ID)
			if err != nil {
				return err
			}
			counters, err := q.JobCountsByEndpoint(ctx, &store.JobCountsByEndpointParams{ProjectID: p.ID})
			if err != nil {
				return err
			}
			got := map[string]int64{}
			for _, c := range counters {
				got[fmt.Sprintf("endpoint %d %s", c.EndpointID, c.State)] = c.Count
			}
			want := map[string]int64{}
			total := map[wire.JobState]int64{}
			for _, ep := range eps {
				for _, st := range wire.JobStates() {
					n, err := q.JobCount(ctx, store.JobFilter{ProjectID: p.ID, EndpointID: ep.ID, States: []wire.JobState{st}})
					if err != nil {
						return err
					}
					if n != 0 {
						want[fmt.Sprintf("endpoint %d %s", ep.ID, st)] = n
						total[st] += n
					}
				}
				one, err := q.JobCountsByEndpoint(ctx, &store.JobCountsByEndpointParams{ProjectID: p.ID, EndpointID: ep.ID})
				if err != nil {
					return err
				}
				for _, c := range one {
					if c.EndpointID != ep.ID || got[fmt.Sprintf("endpoint %d %s", c.EndpointID, c.State)] != c.Count {
						t.Errorf("project %d: counters of endpoint %d alone: %+v, not as in the project's", p.ID, ep.ID, c)
					}
				}
			}
			if !maps.Equal(got, want) {
				t.Errorf("project %d: counters %v, but the jobs count %v", p.ID, got, want)
			}
			byState, err := q.JobCountsByState(ctx, p.ID)
			if err != nil {
				return err
			}
			if !maps.Equal(byState, total) {
				t.Errorf("project %d: JobCountsByState %v, want %v", p.ID, byState, total)
			}
			grouped, err := q.JobCountGroupByState(ctx, store.JobFilter{ProjectID: p.ID})
			if err != nil {
				return err
			}
			if !maps.Equal(grouped, total) {
				t.Errorf("project %d: JobCountGroupByState %v, want %v", p.ID, grouped, total)
			}
		}
		return nil
	})
}
