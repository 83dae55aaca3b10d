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
