package engine

import (
	"context"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// JobCounts counts the project's jobs per state, of one endpoint when
// f.EndpointID is set (-1: an endpoint that does not exist, no jobs) and of
// one tool when f.Tool is (and f.Version). It reads the counters the store
// keeps, per endpoint, tool and state, with every change of a job
// (store.Queries.JobCountsByEndpoint), never the jobs. Other fields of f
// are ignored.
func (e *Engine) JobCounts(ctx context.Context, p *Principal, f store.JobFilter) (map[wire.JobState]int64, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	out := map[wire.JobState]int64{}
	if f.EndpointID < 0 {
		return out, nil
	}
	err := e.st.Read(ctx, func(q store.Queries) error {
		cs, err := q.JobCountsByEndpoint(ctx, &store.JobCountsByEndpointParams{ProjectID: p.ProjectID, EndpointID: f.EndpointID, Tool: f.Tool, Version: f.Version})
		for _, c := range cs {
			out[c.State] += c.Count
		}
		return err
	})
	return out, storeErr(err, "job counts")
}

// dueCount is how many of an endpoint's scheduled jobs are due at now:
// the one count of due (and so of held) jobs that the overview and the
// endpoint's held list both show. It reads at most OverviewDueLimit index
// entries at each end of the endpoint's range of jobs_due: the due ones,
// and when those pass the limit the ones due later, which the scheduled
// counter (kept with every change of a job) less gives the due count
// exactly. Only when both ends pass the limit is the count capped: at
// least OverviewDueLimit. At a backlog of a million due jobs it reads
// 10,000 entries, not a million (docs/dashboard.md has the figures).
func dueCount(ctx context.Context, q store.Queries, endpointID, scheduled, now int64) (n int64, capped bool, err error) {
	if scheduled <= 0 {
		return 0, false, nil
	}
	if n, err = q.CountDue(ctx, &store.CountDueParams{EndpointID: endpointID, Now: now, Limit: OverviewDueLimit}); err != nil || n < OverviewDueLimit {
		return n, false, err
	}
	later, err := q.CountDue(ctx, &store.CountDueParams{EndpointID: endpointID, Now: now, Limit: OverviewDueLimit, Later: true})
	if err != nil || later >= OverviewDueLimit {
		return OverviewDueLimit, true, err
	}
	// The counter and the index are read in one transaction; on a
	// database that reads each statement's own snapshot the two may
	// differ by the jobs changed in between, never below what was read.
	return max(n, scheduled-later), false, nil
}

// endpointDue is dueCount for one endpoint, its scheduled count read from
// the counters.
func (e *Engine) endpointDue(ctx context.Context, q store.Queries, projectID, endpointID, now int64) (int64, bool, error) {
	cs, err := q.JobCountsByEndpoint(ctx, &store.JobCountsByEndpointParams{ProjectID: projectID, EndpointID: endpointID})
	if err != nil {
		return 0, false, err
	}
	var scheduled int64
	for _, c := range cs {
		if c.State == wire.JobScheduled {
			scheduled += c.Count
		}
	}
	return dueCount(ctx, q, endpointID, scheduled, now)
}

// toolsOf counts an endpoint's tools (of the project's tools) that
// Ratchet's dispatcher delivers over HTTP and those that workers run.
func toolsOf(tools []store.Tool, endpointID int64) (http, worker int) {
	for _, t := range tools {
		switch {
		case t.EndpointID != endpointID:
		case len(t.Delivery) > 0:
			http++
		default:
			worker++
		}
	}
	return http, worker
}
