package storetest

import (
	"slices"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// testJobsFailed: JobsFailed lists only failed and exhausted jobs of the
// project, latest failure first (ties by id, descending), with the
// classification and message of the attempt that ended each and whether a
// job replays it; the endpoint, state and failure-time filters narrow it,
// and the limit bounds it. JobReplayedBy names the job that replays one,
// in the project only.
func testJobsFailed(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	other := newEndpoint(t, s, f.p.ID, "openai")
	otherTool := newTool(t, s, f.p.ID, other.ID, "chat", "v1")
	stranger := newProject(t, s, "stranger")
	strangerEp := newEndpoint(t, s, stranger.ID, "stripe")
	strangerTool := newTool(t, s, stranger.ID, strangerEp.ID, "charge", "v1")

	failed := func(ep *store.Endpoint, tl *store.Tool, p *store.Project, state wire.JobState, at int64, class, msg string) *store.Job {
		j := job(p, ep, tl, 100)
		f.insert(t, s, j)
		j.LastClassification, j.LastError = class, msg
		setState(t, s, j, state, at)
		return j
	}
	a := failed(f.ep, f.tool, f.p, wire.JobFailed, 5000, "bad_request", "no such customer \"cus_1\" — é")
	b := failed(f.ep, f.tool, f.p, wire.JobExhausted, 6000, "server_error", "HTTP 503")
	c := failed(f.ep, f.tool, f.p, wire.JobExhausted, 6000, "server_error", "HTTP 502")
	d := failed(other, otherTool, f.p, wire.JobFailed, 5500, "worker_fail", "")
	failed(strangerEp, strangerTool, stranger, wire.JobFailed, 5200, "bad_request", "not ours")
	done := job(f.p, f.ep, f.tool, 100)
	f.insert(t, s, done)
	setState(t, s, done, wire.JobSucceeded, 7000)
	f.insert(t, s, job(f.p, f.ep, f.tool, 100)) // scheduled
	replay := job(f.p, f.ep, f.tool, 100)
	replay.ReplayOf = a.ID
	f.insert(t, s, replay)

	list := func(p store.JobsFailedParams) []store.FailedJob {
		t.Helper()
		var got []store.FailedJob
		read(t, s, func(q store.Queries) (err error) {
			got, err = q.JobsFailed(ctx, &p)
			return err
		})
		return got
	}
	idsOf := func(fs []store.FailedJob) []int64 {
		out := make([]int64, len(fs))
		for i, x := range fs {
			out[i] = x.ID
		}
		return out
	}
	all := list(store.JobsFailedParams{ProjectID: f.p.ID, Limit: 10})
	if got, want := idsOf(all), []int64{c.ID, b.ID, d.ID, a.ID}; !slices.Equal(got, want) {
		t.Fatalf("failed jobs of the project = %v, want %v (latest failure first, ties by id descending)", got, want)
	}
	wantA := store.FailedJob{ID: a.ID, EndpointID: f.ep.ID, Endpoint: "stripe", State: wire.JobFailed, Classification: "bad_request",
		Message: "no such customer \"cus_1\" — é", FinishedAt: 5000, Replayed: true}
	if all[3] != wantA {
		t.Errorf("failed job a = %+v\nwant %+v", all[3], wantA)
	}
	if all[0].Replayed || all[0].State != wire.JobExhausted || all[0].Message != "HTTP 502" || all[0].Classification != "server_error" {
		t.Errorf("failed job c = %+v", all[0])
	}
	for _, c := range []struct {
		what string
		p    store.JobsFailedParams
		want []int64
	}{
		{"one endpoint", store.JobsFailedParams{EndpointID: f.ep.ID}, []int64{c.ID, b.ID, a.ID}},
		{"failed only", store.JobsFailedParams{State: wire.JobFailed}, []int64{d.ID, a.ID}},
		{"exhausted of one endpoint", store.JobsFailedParams{EndpointID: f.ep.ID, State: wire.JobExhausted}, []int64{c.ID, b.ID}},
		{"from 5500", store.JobsFailedParams{FinishedFrom: 5500}, []int64{c.ID, b.ID, d.ID}},
		{"before 6000", store.JobsFailedParams{FinishedBefore: 6000}, []int64{d.ID, a.ID}},
		{"from 5000 before 5500", store.JobsFailedParams{FinishedFrom: 5000, FinishedBefore: 5500}, []int64{a.ID}},
		{"limit 2", store.JobsFailedParams{Limit: 2}, []int64{c.ID, b.ID}},
		{"an endpoint of another project", store.JobsFailedParams{EndpointID: strangerEp.ID}, nil},
	} {
		p := c.p
		p.ProjectID = f.p.ID
		if p.Limit == 0 {
			p.Limit = 10
		}
		if got := idsOf(list(p)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.what, got, c.want)
		}
	}
	read(t, s, func(q store.Queries) error {
		for _, c := range []struct{ project, id, want int64 }{
			{f.p.ID, a.ID, replay.ID}, {f.p.ID, b.ID, 0}, {stranger.ID, a.ID, 0}, {f.p.ID, 0, 0},
		} {
			if got, err := q.JobReplayedBy(ctx, c.project, c.id); err != nil || got != c.want {
				t.Errorf("JobReplayedBy(project %d, job %d) = %d, %v; want %d", c.project, c.id, got, err, c.want)
			}
		}
		if _, err := q.JobsFailed(ctx, &store.JobsFailedParams{ProjectID: f.p.ID}); err == nil {
			t.Error("JobsFailed with no limit: no error")
		}
		return nil
	})
}
