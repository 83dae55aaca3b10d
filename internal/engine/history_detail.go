package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// History's detail: what the per-minute roll-ups do not keep, read from
// the attempts of the range and the audit log when History is asked. An
// outage is read minute by minute: which failures (by class, the
// classification codes grouped as classify.ClassOf does), how long the
// provider took (p50 and p95 of the attempts' durations), and when the
// endpoint was paused or its circuit changed.

// historyDetailLimit is the most attempts of one endpoint a History reads
// for its detail, the latest: at 100 attempts a second that is the last
// 3 minutes, and 15 minutes at 20 a second. Older minutes of the range
// then have no detail (EndpointDetail.Capped).
const historyDetailLimit = 20_000

// historyMarkerLimit is the most audit entries of one endpoint a History
// reads for its markers, the latest.
const historyMarkerLimit = 200

// EndpointDetail is one endpoint's detail over a History's range.
type EndpointDetail struct {
	Minutes []MinuteDetail // minutes with finished attempts, oldest first
	Markers []Marker       // oldest first
	// Capped says more attempts finished in the range than were read:
	// minutes before DetailFrom have none.
	Capped     bool
	DetailFrom int64
}

// MinuteDetail is one endpoint's minute: its finished attempts, the
// failed and timed-out ones by class, and the latency of those the
// provider answered (not the leases that expired), in milliseconds.
type MinuteDetail struct {
	Minute    int64
	Attempts  int64
	Failures  map[string]int64
	P50, P95  int64
	Answered  int64 // the attempts the latency is taken from
	durations []int64
}

// Marker is a moment of an endpoint's history an operator looks for.
type Marker struct {
	At     int64
	Kind   string // wire.MarkerKinds
	Detail string
}

// historyDetail reads an endpoint's detail over [from, to).
func historyDetail(ctx context.Context, q store.Queries, projectID int64, ep *store.Endpoint, from, to int64) (EndpointDetail, error) {
	d := EndpointDetail{DetailFrom: from}
	as, err := q.AttemptsFinishedIn(ctx, &store.AttemptsFinishedInParams{EndpointID: ep.ID, From: from, To: to, Limit: historyDetailLimit})
	if err != nil {
		return d, err
	}
	if len(as) == historyDetailLimit {
		// The earliest minute read may be partial: start at the next one.
		d.Capped, d.DetailFrom = true, as[len(as)-1].FinishedAt/minuteMs*minuteMs+minuteMs
	}
	d.Minutes = minuteDetails(as, d.DetailFrom)
	d.Markers, err = historyMarkers(ctx, q, projectID, ep, from, to)
	return d, err
}

// minuteDetails groups attempts (latest first) by minute from from on,
// oldest minute first.
func minuteDetails(as []store.AttemptStat, from int64) []MinuteDetail {
	by := map[int64]*MinuteDetail{}
	for _, a := range as {
		if a.FinishedAt < from {
			continue
		}
		m := a.FinishedAt / minuteMs * minuteMs
		md := by[m]
		if md == nil {
			md = &MinuteDetail{Minute: m, Failures: map[string]int64{}}
			by[m] = md
		}
		md.Attempts++
		switch a.Outcome {
		case wire.OutcomeFailed:
			md.Failures[classify.ClassOf(a.Classification, int(a.HTTPStatus))]++
		case wire.OutcomeTimedOut:
			md.Failures[classify.ClassTimeout]++
			continue // the lease's length, not the provider's answer
		}
		ms := a.RequestMs
		if ms <= 0 {
			ms = a.FinishedAt - a.ClaimedAt
		}
		md.durations = append(md.durations, max(ms, 0))
	}
	out := make([]MinuteDetail, 0, len(by))
	for _, md := range by {
		slices.Sort(md.durations)
		if n := len(md.durations); n > 0 {
			md.Answered, md.P50, md.P95 = int64(n), percentile(md.durations, 50), percentile(md.durations, 95)
		}
		md.durations = nil
		out = append(out, *md)
	}
	slices.SortFunc(out, func(a, b MinuteDetail) int { return int(a.Minute - b.Minute) })
	return out
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []int64, p int) int64 {
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

// auditMarkers are the audit actions that mark an endpoint's history.
var auditMarkers = map[string]string{
	"endpoint.pause":  wire.MarkerPaused,
	"endpoint.resume": wire.MarkerResumed,
	"circuit.open":    wire.MarkerCircuitOpened,
	"circuit.close":   wire.MarkerCircuitClosed,
}

// historyMarkers are an endpoint's pauses and circuit changes in [from,
// to]: those made by hand from the audit log, and the opening of a circuit
// that failures opened and that is open still.
func historyMarkers(ctx context.Context, q store.Queries, projectID int64, ep *store.Endpoint, from, to int64) ([]Marker, error) {
	entries, err := q.AuditList(ctx, &store.AuditListParams{ProjectID: projectID, Target: "endpoint:" + ep.Name, Limit: historyMarkerLimit})
	if err != nil {
		return nil, err
	}
	var out []Marker
	slices.Reverse(entries) // oldest first: a pause and its resume in one millisecond keep their order
	for _, a := range entries {
		kind, ok := auditMarkers[a.Action]
		if !ok || a.At < from || a.At >= to+minuteMs || strings.Contains(a.Detail, "nothing changed") {
			continue
		}
		out = append(out, Marker{At: a.At, Kind: kind, Detail: a.Actor + ": " + a.Detail})
	}
	if ep.CircuitState != wire.CircuitClosed && ep.CircuitOpenedBy == "" && ep.CircuitOpenedAt >= from {
		out = append(out, Marker{At: ep.CircuitOpenedAt, Kind: wire.MarkerCircuitOpened, Detail: "failures opened the circuit"})
	}
	slices.SortStableFunc(out, func(a, b Marker) int { return int(a.At - b.At) })
	return out, nil
}
