package engine

import (
	"context"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// JobCounts counts the project's jobs per state, of one endpoint when
// f.EndpointID is set (-1: an endpoint that does not exist, no jobs). Without
// a tool it reads the counters the store keeps with every change of a job
// (store.Queries.JobCountsByEndpoint), never the jobs; with f.Tool it counts
// the tool's jobs through an index. Other fields of f are ignored.
func (e *Engine) JobCounts(ctx context.Context, p *Principal, f store.JobFilter) (map[wire.JobState]int64, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	out := map[wire.JobState]int64{}
	if f.EndpointID < 0 {
		return out, nil
	}
	err := e.st.Read(ctx, func(q store.Queries) error {
		if f.Tool != "" {
			m, err := q.JobCountGroupByState(ctx, store.JobFilter{ProjectID: p.ProjectID, Tool: f.Tool, Version: f.Version, EndpointID: f.EndpointID})
			out = m
			return err
		}
		cs, err := q.JobCountsByEndpoint(ctx, &store.JobCountsByEndpointParams{ProjectID: p.ProjectID, EndpointID: f.EndpointID})
		for _, c := range cs {
			out[c.State] += c.Count
		}
		return err
	})
	return out, storeErr(err, "job counts")
}
