package engine

import (
	"context"
	"strconv"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// eventFact adds what a caller knows to an endpoint event: the acting key,
// a sentence, a number of the kind.
type eventFact func(ev *store.EndpointEvent)

// byActor names the key that acted, for a change by hand.
func byActor(actor string) eventFact { return func(ev *store.EndpointEvent) { ev.Actor = actor } }

// withDetail is the event's sentence for people.
func withDetail(detail string) eventFact { return func(ev *store.EndpointEvent) { ev.Detail = detail } }

// withFact records a number the kind has no column for (e.g. a ramp's
// allowed in flight, a learned limit), shown in the event's facts.
func withFact(name string, v int64) eventFact {
	return func(ev *store.EndpointEvent) {
		if ev.Facts == nil {
			ev.Facts = map[string]int64{}
		}
		ev.Facts[name] = v
	}
}

// endpointEvent writes a change of ep (of kind, at now) to the endpoint's
// event log in the change's own transaction q, so the log holds exactly the
// changes that committed. It is called with ep as the change left it: the
// circuit's count, threshold, opened-at and next probe are read from it,
// the scheduled jobs from the job counters. Alerts read the log
// (docs/alerts.md), and the console draws it as the outage's timeline.
func (e *Engine) endpointEvent(ctx context.Context, q store.Queries, ep *store.Endpoint, kind wire.EndpointEventKind, now int64, facts ...eventFact) error {
	ev := &store.EndpointEvent{ProjectID: ep.ProjectID, EndpointID: ep.ID, Endpoint: ep.Name, At: now, Kind: kind,
		Failures: ep.CircuitFailures, Threshold: ep.CircuitFailureThreshold, ProbeJob: ep.CircuitProbeJob}
	if ep.CircuitState == wire.CircuitOpen {
		ev.OpenedAt, ev.NextProbeAt = ep.CircuitOpenedAt, HalfOpensAt(ep)
	}
	var err error
	if ev.HeldJobs, err = scheduledJobs(ctx, q, ep); err != nil {
		return err
	}
	for _, f := range facts {
		f(ev)
	}
	return q.EndpointEventInsert(ctx, ev)
}

// EndpointEvents lists an endpoint's event log, newest first: events at or
// after since (0: all kept), with ids below afterID (0: from the newest).
func (e *Engine) EndpointEvents(ctx context.Context, p *Principal, name string, since, afterID int64, limit int) ([]store.EndpointEvent, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > wire.MaxListLimit {
		limit = wire.DefaultListLimit
	}
	var out []store.EndpointEvent
	err := e.st.Read(ctx, func(q store.Queries) error {
		ep, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ProjectID, Name: name})
		if err != nil {
			return err
		}
		out, err = q.EndpointEventList(ctx, &store.EndpointEventListParams{ProjectID: p.ProjectID, EndpointID: ep.ID, Since: since, AfterID: afterID, Limit: limit})
		return err
	})
	return out, storeErr(err, "endpoint "+strconv.Quote(name))
}

// pruneEndpointEvents deletes endpoint events older than the retention (at
// least 24 hours, as schedule ticks: an outage's timeline is read back
// over a day).
func (e *Engine) pruneEndpointEvents(ctx context.Context) (int64, error) {
	return e.pruneKept(ctx, func(q store.Queries, before int64, limit int) (int64, error) {
		return q.EndpointEventsPrune(ctx, &store.EndpointEventsPruneParams{Before: before, Limit: limit})
	})
}

// circuitEvent writes the change of ep's circuit from the state was to its
// state now, if it changed (or force: an owner opened an open circuit
// again, which starts its open time anew): circuit_opened,
// circuit_half_open or circuit_closed, with a sentence that carries the
// arithmetic.
func (e *Engine) circuitEvent(ctx context.Context, q store.Queries, ep *store.Endpoint, was wire.CircuitState, now int64, force bool, facts ...eventFact) error {
	if ep.CircuitState == was && !force {
		return nil
	}
	var kind wire.EndpointEventKind
	var detail string
	switch ep.CircuitState {
	case wire.CircuitOpen:
		kind = wire.EndpointCircuitOpened
		detail = "the circuit of endpoint " + ep.Name + " opened"
		if ep.CircuitOpenedBy != "" {
			detail += " by hand (" + ep.CircuitOpenedBy + ")"
		} else if was == wire.CircuitHalfOpen {
			detail += " again: its half-open probe failed"
		} else {
			detail += " after " + strconv.FormatInt(ep.CircuitFailures, 10) + " consecutive counted failures (threshold " +
				strconv.FormatInt(ep.CircuitFailureThreshold, 10) + ")"
		}
		detail += "; it half-opens at " + FormatTime(HalfOpensAt(ep))
	case wire.CircuitHalfOpen:
		kind = wire.EndpointCircuitHalfOpen
		detail = "the circuit of endpoint " + ep.Name + " half-opened: job " + strconv.FormatInt(ep.CircuitProbeJob, 10) + " probes the provider"
	default:
		kind = wire.EndpointCircuitClosed
		detail = "the circuit of endpoint " + ep.Name + " closed (it was " + string(was) + ")"
	}
	return e.endpointEvent(ctx, q, ep, kind, now, append([]eventFact{withDetail(detail)}, facts...)...)
}

// scheduledJobs counts the endpoint's scheduled jobs from the job
// counters (kept with every change of a job), not from the jobs.
func scheduledJobs(ctx context.Context, q store.Queries, ep *store.Endpoint) (int64, error) {
	counts, err := q.JobCountsByEndpoint(ctx, &store.JobCountsByEndpointParams{ProjectID: ep.ProjectID, EndpointID: ep.ID})
	var n int64
	for _, c := range counts {
		if c.State == wire.JobScheduled {
			n += c.Count
		}
	}
	return n, err
}
