package engine

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// History's detail: what the per-minute roll-ups do not keep, read from
// the attempts of the range and the endpoint's event log when History is
// asked. An
// outage is read minute by minute: which failures (by class, the
// classification codes grouped as classify.ClassOf does), how long the
// provider took (p50 and p95 of the attempts' durations), and when the
// endpoint was paused or its circuit changed.

// historyDetailLimit is the most attempts of one endpoint a History reads
// for its detail, the latest: at 100 attempts a second that is the last
// 3 minutes, and 15 minutes at 20 a second. Older minutes of the range
// then have no detail (EndpointDetail.Capped).
const historyDetailLimit = 20_000

// historyMarkerLimit is the most events of one endpoint a History reads
// for its markers, the latest.
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
	Kind   string // a wire.EndpointEventKind
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

// historyMarkers are an endpoint's events in [from, to] (its event log,
// written with each change: the circuit's states and probes, pauses, the
// recovery ramp and learned limits), oldest first.
func historyMarkers(ctx context.Context, q store.Queries, projectID int64, ep *store.Endpoint, from, to int64) ([]Marker, error) {
	evs, err := q.EndpointEventList(ctx, &store.EndpointEventListParams{ProjectID: projectID, EndpointID: ep.ID, Since: from, Limit: historyMarkerLimit})
	if err != nil {
		return nil, err
	}
	out := make([]Marker, 0, len(evs))
	for i := len(evs) - 1; i >= 0; i-- {
		ev := &evs[i]
		if ev.At >= to+minuteMs {
			continue
		}
		detail := ev.Detail
		if ev.Actor != "" {
			detail = ev.Actor + ": " + detail
		}
		if ev.Kind == wire.EndpointCircuitHalfOpen && ev.ProbeJob != 0 && !strings.Contains(detail, "job ") {
			detail += " (probe job " + strconv.FormatInt(ev.ProbeJob, 10) + ")"
		}
		out = append(out, Marker{At: ev.At, Kind: string(ev.Kind), Detail: detail})
	}
	return out, nil
}
