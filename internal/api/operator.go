package api

// The operator's controls: pause and resume, the circuit by hand, flow keys, held jobs, the audit log and the test clock.

import (
	"strconv"
	"time"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/wire"
)

func (a *API) pauseEndpoint(c *call[wire.EndpointPauseRequest]) (*wire.Endpoint, error) {
	return a.endpointResult(a.e.PauseEndpoint(c.ctx(), c.p, c.r.PathValue("name"), c.in.Reason))
}

func (a *API) resumeEndpoint(c *call[none]) (*wire.Endpoint, error) {
	return a.endpointResult(a.e.ResumeEndpoint(c.ctx(), c.p, c.r.PathValue("name")))
}

func (a *API) closeCircuit(c *call[none]) (*wire.Endpoint, error) {
	return a.endpointResult(a.e.CloseCircuit(c.ctx(), c.p, c.r.PathValue("name")))
}

func (a *API) openCircuit(c *call[none]) (*wire.Endpoint, error) {
	return a.endpointResult(a.e.OpenCircuit(c.ctx(), c.p, c.r.PathValue("name")))
}

func (a *API) flowKeys(c *call[wire.FlowKeysQuery]) (*wire.FlowKeyList, error) {
	var errs field.Errors
	n := limitParam(&errs, c.in.Limit, wire.DefaultKeysLimit, wire.MaxKeysLimit)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return a.e.FlowKeys(c.ctx(), c.p, c.r.PathValue("name"), n)
}

func (a *API) heldJobs(c *call[wire.HeldQuery]) (*wire.JobList, error) {
	after, limit, err := pageParams(c.in.Cursor, c.in.Limit)
	if err != nil {
		return nil, err
	}
	jobs, hold, err := a.e.HeldJobs(c.ctx(), c.p, c.r.PathValue("name"), after, limit)
	if err != nil {
		return nil, err
	}
	out := &wire.JobList{Jobs: []wire.Job{}}
	for i := range jobs {
		out.Jobs = append(out.Jobs, jobView(&jobs[i], nil, hold, false))
	}
	if len(jobs) == limit {
		next := strconv.FormatInt(jobs[len(jobs)-1].ID, 10)
		out.NextCursor = &next
	}
	return out, nil
}

func (a *API) endpointEvents(c *call[wire.EndpointEventsQuery]) (*wire.EndpointEventList, error) {
	after, limit, err := pageParams(c.in.Cursor, c.in.Limit)
	errs, _ := field.As(err)
	since := rfc3339Param(&errs, "since", c.in.Since)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	evs, err := a.e.EndpointEvents(c.ctx(), c.p, c.r.PathValue("name"), since, after, limit)
	if err != nil {
		return nil, err
	}
	out := &wire.EndpointEventList{Events: []wire.EndpointEvent{}}
	for i := range evs {
		out.Events = append(out.Events, endpointEventView(&evs[i]))
	}
	if len(evs) == limit {
		next := strconv.FormatInt(evs[len(evs)-1].ID, 10)
		out.NextCursor = &next
	}
	return out, nil
}

func (a *API) audit(c *call[wire.AuditQuery]) (*wire.AuditList, error) {
	after, limit, err := pageParams(c.in.Cursor, c.in.Limit)
	if len(c.in.Target) > 300 || badText(c.in.Target) {
		errs, _ := field.As(err)
		errs.Add("target", showText(c.in.Target), "must be a target such as endpoint:payments or job:42 (at most 300 characters of text)")
		err = errs
	}
	if err != nil {
		return nil, err
	}
	entries, err := a.e.Audit(c.ctx(), c.p, c.in.Target, after, limit)
	if err != nil {
		return nil, err
	}
	out := &wire.AuditList{Entries: []wire.AuditEntry{}}
	for i := range entries {
		out.Entries = append(out.Entries, auditView(&entries[i]))
	}
	if len(entries) == limit {
		next := strconv.FormatInt(entries[len(entries)-1].ID, 10)
		out.NextCursor = &next
	}
	return out, nil
}

func (a *API) advanceClock(c *call[wire.ClockAdvance]) (*wire.ClockAdvance, error) {
	// Checked in milliseconds, as given: a value past what a
	// time.Duration holds would wrap when converted, and the error would
	// show the wrapped value.
	if c.in.AdvanceMs < 1 || c.in.AdvanceMs > engine.MaxClockAdvanceMs {
		return nil, field.New("advanceMs", strconv.FormatInt(c.in.AdvanceMs, 10), engine.ClockAdvanceAllowed)
	}
	if err := a.e.AdvanceClock(c.ctx(), time.Duration(c.in.AdvanceMs)*time.Millisecond); err != nil {
		return nil, err
	}
	return &wire.ClockAdvance{AdvanceMs: c.in.AdvanceMs, Now: ft(a.e.Clock().Now().UnixMilli())}, nil
}
