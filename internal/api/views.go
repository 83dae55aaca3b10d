package api

import (
	"encoding/json"
	"strconv"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// The views turn stored rows into the wire types of package wire.

var ft = engine.FormatTime

// endpointView renders an endpoint with its policy's schedule.
func endpointView(ep *store.Endpoint, now int64) wire.Endpoint {
	v := wire.Endpoint{Name: ep.Name, Version: ep.Version, EndpointSettings: ep.EndpointSettings, Schedule: []wire.ScheduleRow{},
		Circuit: wire.Circuit{State: ep.CircuitState, Failures: ep.CircuitFailures, ProbeJobID: ep.CircuitProbeJob}, CreatedAt: ft(ep.CreatedAt), UpdatedAt: ft(ep.UpdatedAt)}
	if ep.CircuitState != wire.CircuitClosed && ep.CircuitOpenedAt > 0 {
		v.Circuit.OpenedAt = ft(ep.CircuitOpenedAt)
		if ep.CircuitState == wire.CircuitOpen {
			v.Circuit.HalfOpensAt = ft(engine.HalfOpensAt(ep))
		}
		v.Circuit.OpenedBy = ep.CircuitOpenedBy
	}
	if ep.PausedAt != 0 {
		v.Paused = &wire.EndpointPause{At: ft(ep.PausedAt), By: ep.PausedBy, Reason: ep.PausedReason}
	}
	v.Recovery, v.Learned = engine.RecoveryView(ep, now), engine.LearnedView(ep, now)
	// A stored policy was validated when it was saved.
	if p, err := backoff.ParsePolicy(ep.Policy); err == nil {
		v.Policy, v.Schedule = p, schedule(p.Params())
	}
	return v
}

func schedule(p backoff.Params) []wire.ScheduleRow {
	rows := []wire.ScheduleRow{}
	for _, r := range p.Schedule().Rows {
		next := "attempt " + strconv.Itoa(r.NextAttempt)
		if r.Exhausted {
			next = "exhausted; no automatic attempt " + strconv.Itoa(r.NextAttempt)
		}
		rows = append(rows, wire.ScheduleRow{FailedAttempt: r.FailedAttempt, BaseDelayMs: r.BaseDelayMs, MinDelayMs: r.MinDelayMs, MaxDelayMs: r.MaxDelayMs, Next: next})
	}
	return rows
}

func toolView(t *store.Tool, endpoint string) wire.Tool {
	v := wire.Tool{Name: t.Name, Version: t.Version, Endpoint: endpoint, Description: t.Description, PayloadSchema: nullRaw(t.Schema),
		TimeoutMs: t.TimeoutMs, CreatedAt: ft(t.CreatedAt), FlowKeyFrom: t.FlowKeyFrom}
	if len(t.RetryPolicy) > 0 && string(t.RetryPolicy) != "null" {
		if p, err := backoff.ParsePolicy(t.RetryPolicy); err == nil {
			preset := p.Preset
			v.RetryPreset = &preset
			if p.Preset == backoff.Custom {
				v.RetryPolicy = &p
			}
		}
	}
	if d := engine.DeliveryOf(t); d != nil {
		// The secret is never shown here: publishTool adds it to its answer.
		v.Delivery = &wire.Delivery{Method: d.Method, URL: d.URL, Headers: map[string]string{}, Signed: d.Secret != ""}
		for k, val := range d.Headers {
			if engine.SecretHeader(k) {
				val = "(hidden)"
			}
			v.Delivery.Headers[k] = val
		}
	}
	return v
}

func nullRaw(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("null")
	}
	return r
}

// jobView renders a job; hold and attempts are given when the job is read
// by id.
func jobView(j *store.Job, attempts []store.Attempt, hold *wire.Hold, withPayload bool) wire.Job {
	v := wire.Job{ID: j.ID, State: j.State, Tool: j.Tool, Version: j.Version, Endpoint: j.Endpoint, Attempt: j.Attempt, MaxAttempts: j.MaxAttempts,
		Throttles: j.Throttles, DueAt: ft(j.DueAt), HeldBy: hold, CancelRequested: j.CancelRequested, CreatedAt: ft(j.CreatedAt), UpdatedAt: ft(j.UpdatedAt),
		FinishedAt: ft(j.FinishedAt), Attempts: []wire.Attempt{}, FlowKey: j.FlowKey, Traceparent: j.Traceparent, Tracestate: j.Tracestate}
	if snap, err := engine.ParseSnapshot(j.Policy); err == nil {
		v.Policy = snap
	}
	if j.IdempotencyKey != "" {
		k := j.IdempotencyKey
		v.IdempotencyKey = &k
	}
	if j.RunID != 0 {
		v.RunID = &j.RunID
	}
	if j.ReplayOf != 0 {
		v.ReplayOf = &j.ReplayOf
	}
	if j.State == wire.JobRunning {
		v.WorkerID, v.LeaseExpiresAt = j.WorkerID, ft(j.LeaseExpiresAt)
	}
	v.LastClassification, v.LastError = j.LastClassification, j.LastError
	if withPayload {
		v.Payload = j.Payload
	} else {
		v.LastError = cutChars(v.LastError, wire.MaxListErrorChars)
	}
	for _, a := range attempts {
		v.Attempts = append(v.Attempts, attemptView(a))
	}
	return v
}

func attemptView(a store.Attempt) wire.Attempt {
	v := wire.Attempt{Number: a.Number, WorkerID: a.WorkerID, ClaimedAt: ft(a.ClaimedAt), FinishedAt: ft(a.FinishedAt), Outcome: a.Outcome,
		Classification: a.Classification, CountsTowardCircuit: a.Counted, ThrottleFree: a.ThrottleFree, Message: a.Message}
	if a.Outcome == "" {
		v.Outcome = wire.OutcomeRunning
	}
	if a.FinishedAt > 0 {
		d := a.FinishedAt - a.ClaimedAt
		v.DurationMs = &d
	}
	if a.HTTPStatus != 0 {
		v.HTTPStatus = &a.HTTPStatus
	}
	if a.RetryAfterMs != 0 {
		v.RetryAfterMs = &a.RetryAfterMs
	}
	if a.RequestMs > 0 {
		v.RequestMs = &a.RequestMs
	}
	if a.ResponseHeaders != "" {
		_ = json.Unmarshal([]byte(a.ResponseHeaders), &v.ResponseHeaders) // written by the engine from a map
	}
	v.ResponseExcerpt = a.ResponseExcerpt
	if a.NextDueAt != 0 {
		v.BaseDelayMs, v.JitterSample, v.MinDelayMs, v.MaxDelayMs, v.SelectedDelayMs = &a.BaseDelayMs, &a.JitterSample, &a.MinDelayMs, &a.MaxDelayMs, &a.SelectedMs
		n := ft(a.NextDueAt)
		v.NextDueAt = &n
	}
	return v
}

func keyView(k *store.APIKey, secret string) wire.Key {
	return wire.Key{ID: k.ID, Name: k.Name, Scope: k.Scope, Prefix: k.Prefix, Tools: orEmpty(k.Tools), CreatedAt: ft(k.CreatedAt), RevokedAt: ft(k.RevokedAt), Secret: secret}
}

func runView(r *store.Run, steps []store.Job) wire.Run {
	v := wire.Run{ID: r.ID, Name: r.Name, State: r.State, CreatedAt: ft(r.CreatedAt), FinishedAt: ft(r.FinishedAt), Steps: []wire.Job{}, Counts: map[wire.JobState]int64{}}
	for i := range steps {
		v.Steps = append(v.Steps, jobView(&steps[i], nil, nil, false))
		v.Counts[steps[i].State]++
	}
	return v
}

// claimedView renders a claimed job for its worker.
func claimedView(c engine.Claimed) wire.ClaimedJob {
	return wire.ClaimedJob{ID: c.Job.ID, Tool: c.Job.Tool, Version: c.Job.Version, Endpoint: c.Job.Endpoint, Attempt: c.Job.Attempt, MaxAttempts: c.Job.MaxAttempts,
		Payload: c.Job.Payload, IdempotencyKey: c.IdempotencyKey, LeaseToken: c.LeaseToken, LeaseExpiresAt: ft(c.LeaseExpiresAt),
		TimeoutMs: c.Job.TimeoutMs, RunID: c.Job.RunID, FlowKey: c.Job.FlowKey, Traceparent: c.Job.Traceparent, Tracestate: c.Job.Tracestate}
}

// decodeString and decodeInt read one member of a body parsed field by field.
func decodeString(raw json.RawMessage, dst *string) bool { return json.Unmarshal(raw, dst) == nil }

func decodeInt(raw json.RawMessage, dst *int64) bool { return json.Unmarshal(raw, dst) == nil }

// ftOrNull is a time, or null for 0 (never).
func ftOrNull(ms int64) *string {
	if ms == 0 {
		return nil
	}
	s := ft(ms)
	return &s
}

func workerView(w *store.Worker) wire.WorkerStatus {
	jobs := w.JobIDs
	if jobs == nil {
		jobs = []int64{}
	}
	return wire.WorkerStatus{WorkerID: w.WorkerID, FirstSeenAt: ft(w.FirstSeenAt), LastClaimAt: ftOrNull(w.LastClaimAt),
		LastHeartbeatAt: ftOrNull(w.LastHeartbeatAt), LastReportAt: ftOrNull(w.LastReportAt), Holding: w.Holding, Jobs: jobs}
}

func historyView(r *engine.HistoryResult) *wire.History {
	out := &wire.History{MinuteMs: 60_000, From: ft(r.From), To: ft(r.To), Series: []wire.HistorySeries{}}
	index := map[string]int{}
	for _, name := range r.Endpoints {
		index[name] = len(out.Series)
		out.Series = append(out.Series, wire.HistorySeries{Endpoint: name, Points: []wire.HistoryPoint{}})
	}
	for _, h := range r.Points {
		i, ok := index[h.Endpoint]
		if !ok {
			index[h.Endpoint] = len(out.Series)
			i = len(out.Series)
			out.Series = append(out.Series, wire.HistorySeries{Endpoint: h.Endpoint, Points: []wire.HistoryPoint{}})
		}
		var avg int64
		if h.LagCount > 0 {
			avg = h.LagSumMs / h.LagCount
		}
		out.Series[i].Points = append(out.Series[i].Points, wire.HistoryPoint{At: ft(h.Minute), Claims: h.Claims, Succeeded: h.Succeeded,
			Failed: h.Failed, TimedOut: h.TimedOut, LagAvgMs: avg, LagMaxMs: h.LagMaxMs})
	}
	return out
}

func endpointEventView(ev *store.EndpointEvent) wire.EndpointEvent {
	return wire.EndpointEvent{ID: ev.ID, Endpoint: ev.Endpoint, At: ft(ev.At), Kind: ev.Kind, Failures: ev.Failures, Threshold: ev.Threshold,
		OpenedAt: ftOrNull(ev.OpenedAt), NextProbeAt: ftOrNull(ev.NextProbeAt), ProbeJob: ev.ProbeJob, HeldJobs: ev.HeldJobs, Actor: ev.Actor, Detail: ev.Detail,
		Facts: orEmptyMap(ev.Facts)}
}

func auditView(a *store.AuditEntry) wire.AuditEntry {
	return wire.AuditEntry{ID: a.ID, At: ft(a.At), Actor: a.Actor, KeyPrefix: a.KeyPrefix, Action: a.Action, Target: a.Target, Detail: a.Detail}
}

// cutChars cuts s to at most n characters (runes), on a character
// boundary.
func cutChars(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
