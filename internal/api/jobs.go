package api

// The jobs area: enqueue, list, read, explain, cancel, replay, run now and bulk actions.

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// enqueueRequest turns one wire enqueue into the engine's; prefix names the
// job within a batch ("jobs[3].").
func enqueueRequest(req wire.JobEnqueue, prefix string) (engine.EnqueueRequest, error) {
	out := engine.EnqueueRequest{Tool: req.Tool, Payload: req.Payload, IdempotencyKey: req.IdempotencyKey, MaxAttempts: req.MaxAttempts, RunID: req.RunID,
		FlowKey: req.FlowKey, Traceparent: req.Traceparent, Tracestate: req.Tracestate}
	if req.RunAt != "" {
		t, err := time.Parse(time.RFC3339Nano, req.RunAt)
		if err != nil {
			return out, field.New(prefix+"runAt", strconv.Quote(req.RunAt), "must be an RFC 3339 time, e.g. 2026-12-02T09:00:00Z")
		}
		out.RunAt = &t
	}
	return out, nil
}

func (a *API) enqueue(c *call[wire.JobEnqueue]) (*wire.Job, error) {
	start := time.Now()
	if h := c.r.Header.Get("Idempotency-Key"); h != "" {
		if badText(h) {
			return nil, field.New("Idempotency-Key", showText(h), textAllowed)
		}
		if c.in.IdempotencyKey != "" && c.in.IdempotencyKey != h {
			return nil, field.New("idempotencyKey", strconv.Quote(c.in.IdempotencyKey), "must equal the Idempotency-Key header ("+strconv.Quote(h)+") when both are given")
		}
		c.in.IdempotencyKey = h
	}
	er, err := enqueueRequest(c.in, "")
	if err != nil {
		return nil, err
	}
	reqs := []engine.EnqueueRequest{er}
	spans, err := a.traceEnqueue(c.r, reqs, start)
	if err != nil {
		return nil, err
	}
	res, err := a.e.Enqueue(c.ctx(), c.p, reqs[0])
	endEnqueue(spans, []engine.Enqueued{res}, err)
	if err != nil {
		return nil, err
	}
	if !res.Created {
		c.status = http.StatusOK
	}
	v := jobView(res.Job, nil, nil, true)
	return &v, nil
}

func (a *API) enqueueBatch(c *call[wire.JobBatch]) (*wire.JobBatchResult, error) {
	start := time.Now()
	if n := len(c.in.Jobs); n == 0 || n > wire.MaxBatch {
		return nil, field.New("jobs", strconv.Itoa(n)+" jobs", "must hold 1 through 1000 jobs")
	}
	reqs := make([]engine.EnqueueRequest, len(c.in.Jobs))
	var errs field.Errors
	for i, j := range c.in.Jobs {
		er, err := enqueueRequest(j, "jobs["+strconv.Itoa(i)+"].")
		errs.Merge(err)
		reqs[i] = er
	}
	if len(errs) > 0 {
		return nil, errs
	}
	spans, err := a.traceEnqueue(c.r, reqs, start)
	if err != nil {
		return nil, err
	}
	res, err := a.e.EnqueueBatch(c.ctx(), c.p, reqs)
	endEnqueue(spans, res, err)
	if err != nil {
		return nil, err
	}
	out := &wire.JobBatchResult{Jobs: make([]wire.JobBatchItem, len(res))}
	for i, x := range res {
		out.Jobs[i] = wire.JobBatchItem{ID: x.Job.ID, State: x.Job.State, Created: x.Created, DueAt: ft(x.Job.DueAt)}
	}
	return out, nil
}

// jobFilter checks a job query and resolves it to a store filter. An
// endpoint that does not exist selects no jobs; any other failure to look it
// up is an error, not an empty list.
func (a *API) jobFilter(ctx context.Context, p *engine.Principal, q wire.JobQuery) (store.JobFilter, error) {
	var f store.JobFilter
	var errs field.Errors
	if q.State != "" {
		for _, st := range strings.Split(q.State, ",") {
			if !slices.Contains(wire.JobStates(), wire.JobState(st)) {
				errs.Add("state", strconv.Quote(st), "must be one of "+strings.Join(strs(wire.JobStates()), ", "))
			}
			f.States = append(f.States, wire.JobState(st))
		}
	}
	if q.Tool != "" {
		f.Tool, f.Version, _ = strings.Cut(q.Tool, "@")
	}
	if !engine.ValidFlowKey(q.FlowKey) { // no job has such a key: say why rather than list none
		errs.Add("flowKey", strconv.QuoteToASCII(q.FlowKey), engine.FlowKeyAllowed)
	}
	f.FlowKey = q.FlowKey
	if q.Endpoint != "" {
		ep, err := a.e.Endpoint(ctx, p, q.Endpoint)
		var ee *engine.Error
		switch {
		case err == nil:
			f.EndpointID = ep.ID
		case errors.As(err, &ee) && ee.Kind == engine.KindNotFound:
			f.EndpointID = -1 // no such endpoint: an empty list, not an error
		default:
			return f, err
		}
	}
	intParam := func(name, s string, lo, hi int64, dst *int64) {
		if s == "" {
			return
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < lo || v > hi {
			errs.Add(name, strconv.Quote(s), "must be an integer from "+strconv.FormatInt(lo, 10)+" through "+strconv.FormatInt(hi, 10))
			return
		}
		*dst = v
	}
	intParam("runId", q.RunID, 1, 1<<62, &f.RunID)
	switch {
	case q.Sort == "":
	case !slices.Contains(wire.JobSorts(), q.Sort):
		errs.Add("sort", strconv.QuoteToASCII(cutChars(string(q.Sort), 40)), "must be "+wire.JoinOr(wire.JobSorts()))
	case q.Sort.ByFinish() && (len(f.States) == 0 || !allUnsuccessful(f.States)):
		// Only failed and exhausted jobs are in an index by finish time
		// (internal/store/sqlstore/jobs_list.go, jobOrder); another
		// state would read and sort all its jobs for every page.
		errs.Add("sort", string(q.Sort), "needs a state filter of "+wire.JoinOr(wire.JobStatesWhere(wire.JobState.Unsuccessful))+" or both (the states an index orders by finish time); state is "+strconv.Quote(q.State)+"; sort by "+wire.JoinOr(idSorts)+" instead")
	default:
		f.Sort = q.Sort
	}
	if q.Cursor != "" {
		k, err := parseJobCursor(q.Cursor, q.Sort)
		if fes, ok := field.As(err); ok {
			errs = append(errs, fes...)
		}
		f.AfterID, f.AfterFinishedAt = k.ID, k.FinishedAt
	}
	limit := int64(wire.DefaultListLimit)
	intParam("limit", q.Limit, 1, wire.MaxListLimit, &limit)
	f.Limit = int(limit)
	timeParam := func(name, s string, dst *int64) {
		if s == "" {
			return
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			errs.Add(name, strconv.Quote(s), "must be an RFC 3339 time")
			return
		}
		*dst = t.UnixMilli()
	}
	if n := utf8.RuneCountInString(q.Q); n > wire.MaxSearchChars {
		errs.Add("q", strconv.Quote(cutChars(q.Q, 40)+"…"), "search text of at most "+strconv.Itoa(wire.MaxSearchChars)+" characters")
	} else {
		f.Q = strings.TrimSpace(q.Q)
	}
	timeParam("createdAfter", q.CreatedAfter, &f.CreatedAfter)
	timeParam("createdBefore", q.CreatedBefore, &f.CreatedBefore)
	return f, errs.Err()
}

// allUnsuccessful says whether every state is failed or exhausted.
func allUnsuccessful(states []wire.JobState) bool {
	for _, s := range states {
		if !s.Unsuccessful() {
			return false
		}
	}
	return true
}

func (a *API) listJobs(c *call[wire.JobQuery]) (*wire.JobList, error) {
	f, err := a.jobFilter(c.ctx(), c.p, c.in)
	if err != nil {
		return nil, err
	}
	jobs, holds, next, err := a.e.ListJobs(c.ctx(), c.p, f)
	if err != nil {
		return nil, err
	}
	out := &wire.JobList{Jobs: []wire.Job{}}
	for i := range jobs {
		out.Jobs = append(out.Jobs, jobView(&jobs[i], nil, holds[i], false))
	}
	if s := formatJobCursor(next, f.Sort); s != "" {
		out.NextCursor = &s
	}
	return out, nil
}

func (a *API) countJobs(c *call[wire.JobQuery]) (*wire.JobCount, error) {
	f, err := a.jobFilter(c.ctx(), c.p, c.in)
	if err != nil {
		return nil, err
	}
	f.AfterID, f.Limit = 0, 0
	n, capped, err := a.e.CountJobs(c.ctx(), c.p, f)
	if err != nil {
		return nil, err
	}
	return &wire.JobCount{Count: n, Capped: capped}, nil
}

func (a *API) jobCounts(c *call[wire.JobCountsQuery]) (*wire.JobCounts, error) {
	f, err := a.jobFilter(c.ctx(), c.p, wire.JobQuery{Endpoint: c.in.Endpoint, Tool: c.in.Tool})
	if err != nil {
		return nil, err
	}
	counts, err := a.e.JobCounts(c.ctx(), c.p, f)
	if err != nil {
		return nil, err
	}
	out := &wire.JobCounts{}
	for _, s := range wire.JobStates() {
		out.Counts.Set(s, counts[s])
		out.Total += counts[s]
	}
	return out, nil
}

func (a *API) getJob(c *call[none]) (*wire.Job, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	j, as, hold, err := a.e.Job(c.ctx(), c.p, id)
	if err != nil {
		return nil, err
	}
	v := jobView(j, as, hold, true)
	return &v, nil
}

func (a *API) explain(c *call[none]) (*wire.Hold, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	return a.e.Explain(c.ctx(), c.p, id)
}

func (a *API) cancel(c *call[none]) (*wire.Job, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	j, err := a.e.Cancel(c.ctx(), c.p, id)
	if err != nil {
		return nil, err
	}
	v := jobView(j, nil, nil, false)
	return &v, nil
}

func (a *API) replay(c *call[none]) (*wire.Job, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	j, err := a.e.Replay(c.ctx(), c.p, id)
	if err != nil {
		return nil, err
	}
	v := jobView(j, nil, nil, false)
	return &v, nil
}

func (a *API) runNow(c *call[none]) (*wire.Job, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	j, err := a.e.RunNow(c.ctx(), c.p, id)
	if err != nil {
		return nil, err
	}
	v := jobView(j, nil, nil, false)
	return &v, nil
}

// bulk cancels, replays or runs now every job matching a filter or listed
// by id. For a filter the caller first counts (GET /v1/jobs/count) and
// sends that count; if the set changed in between, nothing is done and the
// new count comes back as a conflict. For ids the count is the number of
// ids, which the person confirmed.
func (a *API) bulk(c *call[wire.JobBulk]) (*wire.JobBulkResult, error) {
	req := c.in
	var errs field.Errors
	switch req.Action {
	case wire.BulkCancel, wire.BulkReplay:
	case wire.BulkRunNow:
		if err := c.p.Require(wire.ScopeOwner); err != nil {
			return nil, err
		}
	default:
		errs.Add("action", strconv.Quote(string(req.Action)), "must be "+wire.JoinOr(wire.BulkActions()))
	}
	if req.ExpectedCount == nil {
		errs.Add("expectedCount", field.Missing, "required: the count shown to the person who confirmed")
	}
	if req.Filter != nil && req.IDs != nil {
		errs.Add("ids", strconv.Itoa(len(req.IDs))+" ids", "give either filter or ids, not both")
	}
	var ids []int64
	if req.IDs != nil {
		if n := len(req.IDs); n == 0 || n > wire.MaxBatch {
			errs.Add("ids", strconv.Itoa(n)+" ids", "must hold 1 through 1000 job ids")
		}
		seen := make(map[int64]bool, len(req.IDs))
		for i, id := range req.IDs {
			switch {
			case id < 1:
				errs.Add("ids["+strconv.Itoa(i)+"]", strconv.FormatInt(id, 10), "must be a job id (1 or more)")
			case seen[id]:
				errs.Add("ids["+strconv.Itoa(i)+"]", strconv.FormatInt(id, 10), "must not repeat an id")
			}
			seen[id] = true
		}
		if req.ExpectedCount != nil && *req.ExpectedCount != int64(len(req.IDs)) {
			errs.Add("expectedCount", strconv.FormatInt(*req.ExpectedCount, 10), "must equal the number of ids ("+strconv.Itoa(len(req.IDs))+")")
		}
		if len(errs) > 0 {
			return nil, errs
		}
		ids = req.IDs
	} else {
		var q wire.JobQuery
		if req.Filter != nil {
			q = *req.Filter
		}
		// The order of a list does not change its selection: a bulk
		// action acts on the filter, newest first, whatever the sort.
		q.Cursor, q.Limit, q.Sort = "", "", ""
		f, err := a.jobFilter(c.ctx(), c.p, q)
		if fes, ok := field.As(err); ok {
			errs = append(errs, fes.Prefixed("filter.")...)
		} else if err != nil {
			return nil, err
		}
		if len(errs) > 0 {
			return nil, errs
		}
		if ids, err = a.bulkSelect(c, f, *req.ExpectedCount); err != nil {
			return nil, err
		}
	}
	res, err := a.e.Bulk(c.ctx(), c.p, req.Action, ids)
	if err != nil {
		return nil, err
	}
	out := &wire.JobBulkResult{Action: req.Action, Count: len(res.Done), Jobs: res.Done, Failed: []wire.JobBulkFailed{}}
	for _, f := range res.Failed {
		out.Failed = append(out.Failed, wire.JobBulkFailed{ID: f.ID, Error: f.Err.Error()})
	}
	return out, nil
}

// bulkSelect resolves a bulk action's filter to job ids, newest first,
// after checking the confirmed count.
func (a *API) bulkSelect(c *call[wire.JobBulk], f store.JobFilter, expected int64) ([]int64, error) {
	f.AfterID, f.Limit = 0, 0
	n, _, err := a.e.CountJobs(c.ctx(), c.p, f)
	if err != nil {
		return nil, err
	}
	if n != expected {
		return nil, &engine.Error{Kind: engine.KindConflict, Message: "the selection now holds " + strconv.FormatInt(n, 10) + " jobs, not " + strconv.FormatInt(expected, 10) + "; nothing was done, confirm the new count"}
	}
	if n > wire.MaxBatch {
		return nil, field.New("filter", strconv.FormatInt(n, 10)+" jobs", "a bulk action takes at most 1000 jobs; narrow the filter")
	}
	// The jobs the count counted: a text search acts within the same
	// window of the newest jobs (engine.Config.SearchWindow).
	f.Limit, f.ScanLimit = wire.MaxBatch, a.e.SearchWindow()
	jobs, err := a.e.Jobs(c.ctx(), c.p, f)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(jobs))
	for i := range jobs {
		ids[i] = jobs[i].ID
	}
	return ids, nil
}
