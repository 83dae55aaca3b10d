package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// ReportRequest is a worker's outcome for one leased job.
type ReportRequest struct {
	JobID      int64
	LeaseToken string
	classify.Report
	// detail is what the server's own delivery saw (ReportDelivery);
	// nil for a worker's report.
	detail *store.Attempt
	// unsendable: the server's own delivery could not build the request.
	unsendable bool
}

// ReportResult says what the report did.
type ReportResult struct {
	Job       *store.Job
	Attempt   *store.Attempt
	Decision  classify.Decision
	Duplicate bool // the same lease was already reported; nothing changed
}

// Heartbeat extends a lease by the job's timeout. It tells the worker when
// the job was cancelled so it can stop early.
func (e *Engine) Heartbeat(ctx context.Context, p *Principal, jobID int64, lease string) (*store.Job, error) {
	if err := p.Require(wire.ScopeWorker); err != nil {
		return nil, err
	}
	var j *store.Job
	err := e.st.Tx(ctx, func(q store.Queries) (err error) {
		if j, err = q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: p.ProjectID, ID: jobID}); err != nil {
			return err
		}
		if err := checkAllowed(p, j); err != nil {
			return err
		}
		if j.State != wire.JobRunning || j.LeaseToken != lease || lease == "" {
			return leaseLost(j)
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		j.LeaseExpiresAt, j.UpdatedAt = now+j.TimeoutMs, now
		return q.JobUpdate(ctx, j)
	})
	if err == nil {
		e.noteWorker(p.ProjectID, j.WorkerID, seenHeartbeat, e.nowMs())
	}
	return j, storeErr(err, "job "+strconv.FormatInt(jobID, 10))
}

func checkAllowed(p *Principal, j *store.Job) error {
	if p.Scope == wire.ScopeWorker {
		ref := j.Tool + "@" + j.Version
		for _, t := range p.Tools {
			if t == ref {
				return nil
			}
		}
		return forbidden("this worker key may not run %s", ref)
	}
	return nil
}

func leaseLost(j *store.Job) error {
	return &Error{Kind: KindConflict, Message: "the lease token is not the job's current lease (job " + strconv.FormatInt(j.ID, 10) + " is " + string(j.State) +
		"); the job was rescued, reclaimed or already reported, and nothing was changed"}
}

// Report records the outcome of one attempt.
func (e *Engine) Report(ctx context.Context, p *Principal, r ReportRequest) (ReportResult, error) {
	out, err := e.ReportBatch(ctx, p, []ReportRequest{r})
	if err != nil {
		return ReportResult{}, err
	}
	if out[0].Err != nil {
		return ReportResult{}, out[0].Err
	}
	return out[0].ReportResult, nil
}

// BatchItem is the result of one report of a batch: each report stands
// alone, so one stale lease does not undo the others.
type BatchItem struct {
	ReportResult
	Err error
}

// ReportBatch records many outcomes in one transaction.
func (e *Engine) ReportBatch(ctx context.Context, p *Principal, rs []ReportRequest) ([]BatchItem, error) {
	if err := p.Require(wire.ScopeWorker); err != nil {
		return nil, err
	}
	if len(rs) == 0 || len(rs) > MaxBatch {
		return nil, invalidField("reports", strconv.Itoa(len(rs))+" reports", "must hold 1 through 1000 reports")
	}
	for i, r := range rs {
		if err := classify.ValidateReport(r.Report); err != nil {
			prefix := ""
			if len(rs) > 1 {
				prefix = "reports[" + strconv.Itoa(i) + "]."
			}
			fields, ok := field.As(err)
			if !ok {
				fields = field.New("report", "invalid", err.Error())
			}
			fields = fields.Prefixed(prefix)
			return nil, invalid(fields)
		}
	}
	out := make([]BatchItem, len(rs))
	var changed bool
	// The jobs are read without locks and written only if unchanged since
	// (see batch): locking a thousand rows to read them cost as much as
	// writing them. A batch that lost such a race to another report, a
	// rescue or a cancel runs again, and then locks what it reads, so jobs
	// that keep changing cannot starve it.
	err := e.st.Tx(ctx, func(q store.Queries) error {
		changed = false
		return e.reportTx(ctx, q, p, rs, out, &changed, false)
	})
	if errors.Is(err, errRaced) {
		err = e.st.Tx(ctx, func(q store.Queries) error {
			changed = false
			return e.reportTx(ctx, q, p, rs, out, &changed, true)
		})
	}
	if err != nil {
		return nil, storeErr(err, "report")
	}
	if changed {
		e.signal(ctx)
	}
	nowMs := e.nowMs()
	for _, it := range out {
		if it.Err == nil && it.Attempt != nil {
			e.noteWorker(p.ProjectID, it.Attempt.WorkerID, seenReport, nowMs)
		}
	}
	if e.obs != nil {
		for _, it := range out {
			if it.Err == nil && !it.Duplicate {
				e.obs.Reported(it.Decision.Classification, string(it.Decision.Outcome))
			}
		}
	}
	return out, nil
}

// errRaced says a job or attempt of a report batch changed between the
// batch's read and its write.
var errRaced = errors.New("a job of the batch changed while the batch was decided")

// reportTx decides and writes a report batch in transaction q, filling out.
// With lock it locks the jobs it reads.
func (e *Engine) reportTx(ctx context.Context, q store.Queries, p *Principal, rs []ReportRequest, out []BatchItem, changed *bool, lock bool) error {
	nowMs, err := e.txNow(ctx, q)
	if err != nil {
		return err
	}
	now := time.UnixMilli(nowMs)
	ids := make([]int64, len(rs))
	for i, r := range rs {
		ids[i] = r.JobID
	}
	b, err := e.loadBatch(ctx, q, p.ProjectID, ids, lock)
	if err != nil {
		return err
	}
	for i, r := range rs {
		res, err := e.reportOne(ctx, q, p, r, now, b)
		if err != nil {
			var ee *Error
			if !errors.As(err, &ee) {
				return err // a store failure aborts the whole batch
			}
			out[i] = BatchItem{Err: err}
			continue
		}
		out[i] = BatchItem{ReportResult: res}
		*changed = *changed || !res.Duplicate
	}
	return b.flush(ctx, q)
}

// batch is what one transaction of reports (or rescues) has read and is
// going to write. The jobs and their current attempts are read with one
// query each up front, changed in memory as each report is decided, and
// written with one statement each at the end (flush): four statements per
// report made the report path the bulk of the burn-down's cost. A job
// reported twice in a batch is the same *store.Job both times, so the second
// report sees what the first did, exactly as when each was read and written
// in turn.
type batch struct {
	eps  endpointCache
	jobs map[int64]*store.Job
	// guards holds each job's guard as read, when the jobs were read
	// without locks (reports); flush writes a job only if its row still
	// holds it. Rescues lock the rows they read and have none.
	guards   map[int64]store.JobGuard
	attempts map[store.AttemptKey]*store.Attempt
	// What flush writes, each row once, in the order it was changed.
	dirtyJobs     []*store.Job
	dirtyAttempts []*store.Attempt
}

// loadBatch reads the project's jobs with these ids and their current
// attempts.
func (e *Engine) loadBatch(ctx context.Context, q store.Queries, projectID int64, ids []int64, lock bool) (*batch, error) {
	b := &batch{eps: endpointCache{}, jobs: make(map[int64]*store.Job, len(ids)), attempts: make(map[store.AttemptKey]*store.Attempt, len(ids))}
	uniq := make([]int64, 0, len(ids))
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	jobs, err := q.JobsGetInProject(ctx, &store.JobsGetInProjectParams{ProjectID: projectID, IDs: uniq, Lock: lock})
	if err != nil {
		return nil, err
	}
	b.guards = make(map[int64]store.JobGuard, len(jobs))
	for i := range jobs {
		b.jobs[jobs[i].ID] = &jobs[i]
		b.guards[jobs[i].ID] = store.GuardOf(&jobs[i])
	}
	if err := b.lockEndpoints(ctx, q, jobs); err != nil {
		return nil, err
	}
	return b, b.loadAttempts(ctx, q, jobs)
}

// lockEndpoints reads the endpoints of the jobs in ascending id order, the
// order claims lock them in (DueEndpoints). The read takes no lock: only a
// report that may change a circuit locks its endpoint (updateCircuit), so
// ordinary batches never wait on claims. A batch that must lock two
// endpoints in the other order than a claim can still deadlock on
// PostgreSQL, which aborts one transaction; the driver runs it again.
func (b *batch) lockEndpoints(ctx context.Context, q store.Queries, jobs []store.Job) error {
	ids := make([]int64, 0, 2)
	for i := range jobs {
		if !slices.Contains(ids, jobs[i].EndpointID) {
			ids = append(ids, jobs[i].EndpointID)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		if _, err := b.eps.get(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}

// loadAttempts reads the current attempt of each job that has one. A
// running job's attempt is its claim columns (store.RunningAttempt); only
// the others (a repeated report of a finished attempt) are read.
func (b *batch) loadAttempts(ctx context.Context, q store.Queries, jobs []store.Job) error {
	var keys []store.AttemptKey
	for i := range jobs {
		j := &jobs[i]
		switch {
		case j.State == wire.JobRunning:
			a := store.RunningAttempt(j)
			b.attempts[store.AttemptKey{JobID: j.ID, Number: j.Attempt}] = &a
		case j.Attempt > 0:
			keys = append(keys, store.AttemptKey{JobID: j.ID, Number: j.Attempt})
		}
	}
	if len(keys) == 0 {
		return nil
	}
	as, err := q.AttemptsByKeys(ctx, keys)
	if err != nil {
		return err
	}
	for i := range as {
		b.attempts[store.AttemptKey{JobID: as[i].JobID, Number: as[i].Number}] = &as[i]
	}
	return nil
}

// attempt returns the job's attempt number n as read (and changed) in this
// batch; one that was not read up front is read now.
func (b *batch) attempt(ctx context.Context, q store.Queries, jobID, n int64) (*store.Attempt, error) {
	k := store.AttemptKey{JobID: jobID, Number: n}
	if a, ok := b.attempts[k]; ok {
		return a, nil
	}
	a, err := q.AttemptGet(ctx, &store.AttemptGetParams{JobID: jobID, Number: n})
	if err != nil {
		return nil, err
	}
	b.attempts[k] = a
	return a, nil
}

// flush writes the changed jobs and attempts. With guards, an attempt
// that is no longer running or a job no longer as read means another
// transaction got there first: errRaced.
func (b *batch) flush(ctx context.Context, q store.Queries) error {
	var guards []store.JobGuard
	if b.guards != nil {
		guards = make([]store.JobGuard, len(b.dirtyJobs))
		for i, j := range b.dirtyJobs {
			guards[i] = b.guards[j.ID]
		}
	}
	err := q.AttemptsFinish(ctx, b.dirtyAttempts)
	if err == nil {
		err = q.JobsUpdate(ctx, b.dirtyJobs, guards)
	}
	if guards != nil && (errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict)) {
		return fmt.Errorf("%w: %w", errRaced, err)
	}
	return err
}

func (e *Engine) reportOne(ctx context.Context, q store.Queries, p *Principal, r ReportRequest, now time.Time, b *batch) (ReportResult, error) {
	j, ok := b.jobs[r.JobID]
	if !ok {
		return ReportResult{}, notFound("job %d not found", r.JobID)
	}
	if err := checkAllowed(p, j); err != nil {
		return ReportResult{}, err
	}
	if r.LeaseToken == "" || j.LeaseToken != r.LeaseToken {
		return ReportResult{}, leaseLost(j)
	}
	if j.State != wire.JobRunning {
		// The same lease was reported already (or rescued): repeating a
		// report is harmless and returns the job as it is.
		a, err := b.attempt(ctx, q, j.ID, j.Attempt)
		if err != nil {
			return ReportResult{}, err
		}
		if a.LeaseToken != r.LeaseToken || a.Outcome == wire.OutcomeTimedOut || a.FinishedAt == 0 {
			return ReportResult{}, leaseLost(j)
		}
		if r.Success != (a.Outcome == wire.OutcomeSucceeded) {
			return ReportResult{}, conflict("job %d attempt %d was already reported as %s; a lease is reported once", j.ID, a.Number, a.Outcome)
		}
		return ReportResult{Job: j, Attempt: a, Duplicate: true, Decision: classify.Decision{Classification: a.Classification}}, nil
	}
	d := classify.Classify(r.Report, now)
	if r.unsendable {
		d = classify.RequestInvalid(r.Message)
	}
	if r.detail != nil && r.detail.ResponseExcerpt != "" {
		r.Message = withResponse(r.Message, d, r.detail.ResponseExcerpt)
	}
	res, err := e.finishAttempt(ctx, q, j, d, r.Report, now, b)
	if err == nil && r.detail != nil {
		res.Attempt.RequestMs, res.Attempt.ResponseHeaders, res.Attempt.ResponseExcerpt = r.detail.RequestMs, r.detail.ResponseHeaders, r.detail.ResponseExcerpt
	}
	return res, err
}

// finishAttempt applies a decision to a running job: the attempt row, the
// job's next state and due time, and the endpoint's circuit. The job and the
// attempt are written when the batch is flushed; the circuit at once.
func (e *Engine) finishAttempt(ctx context.Context, q store.Queries, j *store.Job, d classify.Decision, rep classify.Report, now time.Time, b *batch) (ReportResult, error) {
	nowMs := now.UnixMilli()
	a, err := b.attempt(ctx, q, j.ID, j.Attempt)
	if err != nil {
		return ReportResult{}, err
	}
	a.FinishedAt = nowMs
	a.Classification = d.Classification
	a.HTTPStatus = int64(rep.HTTPStatus)
	a.RetryAfterMs = d.RetryAfterMs
	a.Counted = d.CountsTowardCircuit
	a.Message = truncate(CleanText(rep.Message), wire.MaxMessageBytes)
	if a.Message == "" {
		a.Message = d.Reason
	}
	// The job row keeps the last decision and the last failure's message,
	// for lists and search (wire.Job.LastClassification, LastError).
	j.LastClassification = d.Classification
	if d.Outcome != classify.Succeeded {
		j.LastError = a.Message
	}
	j.LeaseExpiresAt = 0
	var event wire.JobEvent
	switch {
	case d.Outcome == classify.Succeeded:
		a.Outcome, event = wire.OutcomeSucceeded, wire.EventSucceed
	case j.CancelRequested:
		a.Outcome, event = outcomeOf(d), wire.EventCancel
	case d.Outcome == classify.Fail:
		a.Outcome, event = outcomeOf(d), wire.EventFail
	default:
		a.Outcome = outcomeOf(d)
		snap, err := ParseSnapshot(j.Policy)
		if err != nil {
			return ReportResult{}, err
		}
		if freeThrottle(j, d, rep.HTTPStatus) {
			j.Throttles, a.ThrottleFree = j.Throttles+1, true
		}
		// The seeds' arithmetic selects the delay after attempt n; the
		// throttles not counted move the last attempt further out.
		params := snap.Params
		params.MaxAttempts = int(j.MaxAttempts + j.Throttles)
		u := e.rnd()
		dec, err := params.Delay(int(j.Attempt), u, d.RetryAfterMs)
		if err != nil {
			return ReportResult{}, err
		}
		if dec.Exhausted {
			event = wire.EventExhaust
			break
		}
		a.BaseDelayMs, a.JitterSample, a.MinDelayMs, a.MaxDelayMs, a.SelectedMs = dec.BaseDelayMs, u, dec.MinDelayMs, dec.MaxDelayMs, dec.SelectedMs
		a.NextDueAt = nowMs + dec.SelectedMs
		j.DueAt, event = a.NextDueAt, wire.EventRetry
	}
	if err := moveJob(j, event, nowMs); err != nil {
		return ReportResult{}, err
	}
	// A running job is finished at most once per batch: afterwards it is no
	// longer running, so neither row is queued twice.
	b.dirtyAttempts = append(b.dirtyAttempts, a)
	b.dirtyJobs = append(b.dirtyJobs, j)
	if err := e.updateCircuit(ctx, q, j, d, nowMs, b.eps); err != nil {
		return ReportResult{}, err
	}
	if err := e.updateRecovery(ctx, q, j.EndpointID, a.ClaimedAt, d, rep.HTTPStatus, nowMs, b.eps); err != nil {
		return ReportResult{}, err
	}
	if err := e.learnLimit(ctx, q, j.EndpointID, rep.Headers, nowMs, b.eps); err != nil {
		return ReportResult{}, err
	}
	return ReportResult{Job: j, Attempt: a, Decision: d}, nil
}

func outcomeOf(d classify.Decision) wire.AttemptOutcome {
	if d.Classification == classify.CodeTimedOut {
		return wire.OutcomeTimedOut
	}
	return wire.OutcomeFailed
}

// updateCircuit moves the endpoint's breaker after an attempt:
//
//	closed:    a counted failure adds one; at the threshold the circuit opens;
//	           a success resets the count.
//	open:      claims are refused until circuitOpenMs has passed, then the next
//	           claim is the half-open probe.
//	half_open: the probe's result decides: a counted failure opens it again,
//	           anything else (the provider answered) closes it.
func (e *Engine) updateCircuit(ctx context.Context, q store.Queries, j *store.Job, d classify.Decision, now int64, eps endpointCache) error {
	ep, err := eps.get(ctx, q, j.EndpointID)
	if err != nil {
		return err
	}
	// Most reports change nothing (a success while the circuit is closed
	// with no failures). Only a report that may change the circuit locks
	// the endpoint row, so report batches do not queue behind claims on
	// PostgreSQL; the decision is then taken again on the locked row.
	if !circuitMayChange(ep, j.ID, d) {
		return nil
	}
	if ep, err = eps.lock(ctx, q, j.EndpointID); err != nil {
		return err
	}
	before := *ep
	isProbe := ep.CircuitProbeJob == j.ID
	switch {
	case d.Classification == classify.CodeRequestInvalid:
		// Nothing was sent, so the probe learned nothing of the provider:
		// the circuit stays half-open and the next claim probes.
		if !isProbe {
			return nil
		}
		ep.CircuitProbeJob = 0
	case !d.CountsTowardCircuit && d.Outcome != classify.Succeeded:
		// Not a provider-health signal, unless this was the probe: the
		// provider answered, so the circuit closes.
		if !isProbe {
			return nil
		}
		ep.CircuitState, ep.CircuitFailures, ep.CircuitProbeJob = wire.CircuitClosed, 0, 0
	case d.Outcome == classify.Succeeded:
		if ep.CircuitState == wire.CircuitClosed || isProbe {
			ep.CircuitState, ep.CircuitFailures, ep.CircuitProbeJob = wire.CircuitClosed, 0, 0
		}
	case isProbe:
		ep.CircuitState, ep.CircuitOpenedAt, ep.CircuitProbeJob, ep.CircuitOpenedBy = wire.CircuitOpen, now, 0, ""
		ep.CircuitFailures++
	case ep.CircuitState == wire.CircuitClosed:
		ep.CircuitFailures++
		if ep.CircuitFailures >= ep.CircuitFailureThreshold {
			ep.CircuitState, ep.CircuitOpenedAt, ep.CircuitOpenedBy = wire.CircuitOpen, now, ""
		}
	}
	switch {
	case ep.CircuitState == wire.CircuitOpen && before.CircuitState != wire.CircuitOpen:
		// Opened: the provider's Retry-After, if any, sets the probe's time
		// (at least a second away); the ramp, if any, starts again when
		// the circuit closes.
		ep.CircuitProbeAt, ep.Recovery = 0, store.Recovery{}
		if d.RetryAfterMs > 0 {
			ep.CircuitProbeAt = now + max(d.RetryAfterMs, wire.MinCircuitOpenMs)
		}
	case ep.CircuitState == wire.CircuitClosed && before.CircuitState != wire.CircuitClosed:
		startRecovery(ep, now)
	}
	if ep.CircuitState == before.CircuitState && ep.CircuitFailures == before.CircuitFailures &&
		ep.CircuitOpenedAt == before.CircuitOpenedAt && ep.CircuitProbeJob == before.CircuitProbeJob {
		return nil
	}
	if ep.CircuitState != before.CircuitState {
		e.log.Info("circuit changed", "endpoint", ep.Name, "from", before.CircuitState, "to", ep.CircuitState, "failures", ep.CircuitFailures)
	}
	if err := q.EndpointUpdateCircuit(ctx, ep); err != nil {
		return err
	}
	if err := e.circuitEvent(ctx, q, ep, before.CircuitState, now, false); err != nil {
		return err
	}
	return e.recoveryEvent(ctx, q, ep, before.Recovery, now)
}

// circuitMayChange reports, from a possibly unlocked read, whether the
// decision could move the endpoint's breaker.
func circuitMayChange(ep *store.Endpoint, jobID int64, d classify.Decision) bool {
	isProbe := ep.CircuitProbeJob == jobID
	switch {
	case !d.CountsTowardCircuit && d.Outcome != classify.Succeeded:
		return isProbe
	case d.Outcome == classify.Succeeded:
		return isProbe || ep.CircuitState == wire.CircuitClosed && ep.CircuitFailures > 0
	default:
		return isProbe || ep.CircuitState == wire.CircuitClosed
	}
}

// endpointCache holds the endpoint rows one transaction has read, by id.
// get reads without a lock; lock re-reads the row locking it (on
// PostgreSQL) until commit. Within the transaction only updateCircuit
// changes a row, on its locked copy, in place before writing it, so a batch
// of reports reads each endpoint once instead of once per report.
type endpointCache map[int64]*cachedEndpoint

type cachedEndpoint struct {
	ep     *store.Endpoint
	locked bool
}

func (c endpointCache) get(ctx context.Context, q store.Queries, id int64) (*store.Endpoint, error) {
	if ce, ok := c[id]; ok {
		return ce.ep, nil
	}
	ep, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: id})
	if err != nil {
		return nil, err
	}
	c[id] = &cachedEndpoint{ep: ep}
	return ep, nil
}

func (c endpointCache) lock(ctx context.Context, q store.Queries, id int64) (*store.Endpoint, error) {
	if ce, ok := c[id]; ok && ce.locked {
		return ce.ep, nil
	}
	ep, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: id, Lock: true})
	if err != nil {
		return nil, err
	}
	c[id] = &cachedEndpoint{ep: ep, locked: true}
	return ep, nil
}

// Rescue turns every expired lease into a timed_out failed attempt, which is
// retried (or exhausted) by the job's policy. It returns how many it rescued.
func (e *Engine) Rescue(ctx context.Context) (int, error) {
	total := 0
	for {
		n := 0
		err := e.st.Tx(ctx, func(q store.Queries) error {
			// With DatabaseClock a lease is judged by the database's clock,
			// the one that stamped it: a node whose clock runs ahead would
			// otherwise take leases away before they end.
			nowMs, err := e.txNow(ctx, q)
			if err != nil {
				return err
			}
			now := time.UnixMilli(nowMs)
			jobs, err := q.ExpiredLeases(ctx, &store.ExpiredLeasesParams{Now: nowMs, Limit: 200})
			if err != nil {
				return err
			}
			b := &batch{eps: endpointCache{}, attempts: make(map[store.AttemptKey]*store.Attempt, len(jobs))}
			if err := b.lockEndpoints(ctx, q, jobs); err != nil {
				return err
			}
			if err := b.loadAttempts(ctx, q, jobs); err != nil {
				return err
			}
			for i := range jobs {
				if _, err := e.finishAttempt(ctx, q, &jobs[i], classify.LeaseExpired(), classify.Report{}, now, b); err != nil {
					return err
				}
			}
			n = len(jobs)
			return b.flush(ctx, q)
		})
		if err != nil {
			return total, err
		}
		total += n
		if n > 0 {
			e.signal(ctx)
			if e.obs != nil {
				for range n {
					e.obs.Reported(classify.CodeTimedOut, string(classify.Retry))
				}
			}
		}
		if n < 200 {
			return total, nil
		}
	}
}

// Prune deletes finished jobs older than the retention, and then schedule
// ticks and endpoint events older than it (pruneTicks,
// pruneEndpointEvents); it returns how many jobs went.
func (e *Engine) Prune(ctx context.Context) (int64, error) {
	if e.cfg.Retention < 0 {
		return 0, nil
	}
	// Every closed minute is rolled up before the attempts it counts may
	// go; without that, nothing is pruned.
	if _, err := e.RollUpHistory(ctx); err != nil {
		return 0, err
	}
	var total int64
	for {
		var n int64
		err := e.st.Tx(ctx, func(q store.Queries) (err error) {
			now, err := e.txNow(ctx, q)
			if err != nil {
				return err
			}
			before := now - e.cfg.Retention.Milliseconds()
			n, err = q.JobsPrune(ctx, &store.JobsPruneParams{FinishedBefore: before, Limit: 500})
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < 500 {
			break
		}
	}
	if _, err := e.pruneTicks(ctx); err != nil {
		return total, err
	}
	_, err := e.pruneEndpointEvents(ctx)
	return total, err
}
