package engine

import (
	"context"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// EndpointOverview is the live state of one endpoint for the dashboard.
type EndpointOverview struct {
	Endpoint       *store.Endpoint
	Running        int64
	ClaimsInWindow int64 // claims in the last 60 s (the rate window)
	Scheduled      int64
	Due            int64     // scheduled and due now (dueCount)
	DueCapped      bool      // Due is a lower bound: more than OverviewDueLimit are due and as many scheduled later
	HeldBy         wire.Gate // the gate holding its due jobs, "" when none
	HeldUntil      int64     // when that gate opens, 0 if unknown
	HeldDetail     string
	// HTTPTools and WorkerTools count the endpoint's tools that Ratchet's
	// own dispatcher delivers over HTTP and that workers run: due jobs no
	// gate holds wait for the one or the other.
	HTTPTools, WorkerTools int
	Outcomes5m             map[wire.AttemptOutcome]int64 // attempt outcomes finished in the last 5 minutes
	Outcomes1h             map[wire.AttemptOutcome]int64 // and in the last hour
}

// OverviewDueLimit is how many index entries counting an endpoint's due
// jobs reads at each end (dueCount): the count reads them one by one, and
// past this both ways the dashboard needs to know that there is a
// backlog, not its exact size.
const OverviewDueLimit = 10_000

// Overview reads every endpoint of the project with its gates and recent
// outcomes.
func (e *Engine) Overview(ctx context.Context, p *Principal) ([]EndpointOverview, error) {
	var out []EndpointOverview
	err := e.st.Read(ctx, func(q store.Queries) error {
		eps, err := q.EndpointList(ctx, p.ProjectID)
		if err != nil {
			return err
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		// Scheduled and running come from the counters kept with every
		// change of a job: counting them read every such job (a second
		// and more at a million jobs).
		counts, err := q.JobCountsByEndpoint(ctx, &store.JobCountsByEndpointParams{ProjectID: p.ProjectID})
		if err != nil {
			return err
		}
		tools, err := q.ToolList(ctx, p.ProjectID)
		if err != nil {
			return err
		}
		byEndpoint := map[int64]map[wire.JobState]int64{}
		for _, c := range counts {
			if byEndpoint[c.EndpointID] == nil {
				byEndpoint[c.EndpointID] = map[wire.JobState]int64{}
			}
			byEndpoint[c.EndpointID][c.State] = c.Count
		}
		for i := range eps {
			ep := &eps[i]
			o := EndpointOverview{Endpoint: ep, Running: byEndpoint[ep.ID][wire.JobRunning], Scheduled: byEndpoint[ep.ID][wire.JobScheduled]}
			o.HTTPTools, o.WorkerTools = toolsOf(tools, ep.ID)
			if o.ClaimsInWindow, _, err = q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: ep.ID, Since: now - RateWindowMs + 1, Limit: 1 << 40}); err != nil {
				return err
			}
			if o.Scheduled > 0 {
				if o.Due, o.DueCapped, err = dueCount(ctx, q, ep.ID, o.Scheduled, now); err != nil {
					return err
				}
			}
			// A pause shows whether or not jobs are due: it is the
			// endpoint's state, set by a person, and the page says who.
			if o.Due > 0 || ep.PausedAt != 0 {
				if g := e.gates(ctx, q, ep, now); g.err != nil {
					return g.err
				} else if g.allowed <= 0 {
					o.HeldBy, o.HeldUntil, o.HeldDetail = g.gate, g.until, g.detail
				}
			}
			if o.Outcomes5m, err = q.AttemptOutcomes(ctx, &store.AttemptOutcomesParams{EndpointID: ep.ID, Since: now - int64(5*time.Minute/time.Millisecond)}); err != nil {
				return err
			}
			if o.Outcomes1h, err = q.AttemptOutcomes(ctx, &store.AttemptOutcomesParams{EndpointID: ep.ID, Since: now - int64(time.Hour/time.Millisecond)}); err != nil {
				return err
			}
			out = append(out, o)
		}
		return nil
	})
	return out, storeErr(err, "overview")
}
