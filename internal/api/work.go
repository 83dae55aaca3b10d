package api

// The workers' area: claims, heartbeats and reports.

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/wire"
)

func (a *API) claim(c *call[wire.ClaimRequest]) (*wire.ClaimResult, error) {
	start, req := time.Now(), c.in
	ctx, cancel := context.WithCancel(c.ctx())
	defer cancel()
	select {
	case <-a.draining:
		return &wire.ClaimResult{Jobs: []wire.ClaimedJob{}}, nil
	default:
	}
	go func() {
		select {
		case <-a.draining:
			cancel()
		case <-ctx.Done():
		}
	}()
	if req.WaitMs < 0 || req.WaitMs > wire.MaxWaitMs {
		return nil, field.New("waitMs", strconv.FormatInt(req.WaitMs, 10), "must be from 0 through 30000 milliseconds")
	}
	cs, err := a.e.Claim(ctx, c.p, engine.ClaimRequest{WorkerID: req.WorkerID, Tools: req.Tools, Max: req.Max, Wait: time.Duration(req.WaitMs) * time.Millisecond})
	if err != nil {
		return nil, err
	}
	out := &wire.ClaimResult{Jobs: make([]wire.ClaimedJob, len(cs))}
	for i, cl := range cs {
		out.Jobs[i] = claimedView(cl)
		a.traceClaim(c.r, start, req.WorkerID, cl, &out.Jobs[i])
	}
	return out, nil
}

func (a *API) heartbeat(c *call[wire.Heartbeat]) (*wire.HeartbeatResult, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	j, err := a.e.Heartbeat(c.ctx(), c.p, id, c.in.LeaseToken)
	if err != nil {
		return nil, err
	}
	return &wire.HeartbeatResult{LeaseExpiresAt: ft(j.LeaseExpiresAt), CancelRequested: j.CancelRequested}, nil
}

func reportRequest(b wire.Report, id int64) engine.ReportRequest {
	return engine.ReportRequest{JobID: id, LeaseToken: b.LeaseToken, Report: classify.Report{Success: b.Success, HTTPStatus: b.HTTPStatus, Headers: b.Headers,
		ErrorKind: b.ErrorKind, Retryable: b.Retryable, RetryAfterMs: b.RetryAfterMs, Message: b.Message}}
}

func (a *API) report(c *call[wire.Report]) (*wire.ReportResult, error) {
	start := time.Now()
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	if c.in.JobID != 0 && c.in.JobID != id {
		return nil, field.New("jobId", strconv.FormatInt(c.in.JobID, 10), "must be absent or equal the job id of the path ("+strconv.FormatInt(id, 10)+")")
	}
	res, err := a.e.Report(c.ctx(), c.p, reportRequest(c.in, id))
	if err != nil {
		return nil, err
	}
	a.traceReport(c.r, start, res)
	d := res.Decision
	return &wire.ReportResult{Job: jobView(res.Job, nil, nil, false), Duplicate: res.Duplicate,
		Decision: wire.Decision{Outcome: string(d.Outcome), Classification: d.Classification, RetryAfterMs: d.RetryAfterMs, CountsTowardCircuit: d.CountsTowardCircuit, Reason: d.Reason}}, nil
}

func (a *API) reportBatch(c *call[wire.ReportBatch]) (*wire.ReportBatchResult, error) {
	start := time.Now()
	if n := len(c.in.Reports); n == 0 || n > wire.MaxBatch {
		return nil, field.New("reports", strconv.Itoa(n)+" reports", "must hold 1 through 1000 reports")
	}
	var errs field.Errors
	rs := make([]engine.ReportRequest, len(c.in.Reports))
	for i, b := range c.in.Reports {
		if b.JobID <= 0 {
			errs.Add("reports["+strconv.Itoa(i)+"].jobId", strconv.FormatInt(b.JobID, 10), "required: the id of the claimed job")
		}
		rs[i] = reportRequest(b, b.JobID)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	items, err := a.e.ReportBatch(c.ctx(), c.p, rs)
	if err != nil {
		return nil, err
	}
	out := &wire.ReportBatchResult{Results: make([]wire.ReportBatchItem, len(items))}
	for i, it := range items {
		r := wire.ReportBatchItem{JobID: rs[i].JobID}
		if it.Err != nil {
			d := wire.ErrorDetail{Code: "conflict", Message: it.Err.Error()}
			var ee *engine.Error
			if errors.As(it.Err, &ee) && ee.Kind == engine.KindNotFound {
				d.Code = "not_found"
			} else if ee != nil && ee.Kind == engine.KindForbidden {
				d.Code = "forbidden"
			}
			r.Error = &d
			out.Results[i] = r
			continue
		}
		r.OK, r.State, r.Classification, r.Duplicate = true, it.Job.State, it.Decision.Classification, it.Duplicate
		a.traceReport(c.r, start, it.ReportResult)
		if it.Job.State == wire.JobScheduled {
			r.DueAt = ft(it.Job.DueAt)
		}
		out.Results[i] = r
	}
	return out, nil
}
