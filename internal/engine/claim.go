package engine

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// ClaimRequest asks for due jobs.
type ClaimRequest struct {
	WorkerID string
	Tools    []string // "name@version"; empty means the worker key's whole allowlist
	Max      int
	Wait     time.Duration // long poll: wait up to this long for a job
}

// Claimed is one leased job handed to a worker.
type Claimed struct {
	Job            *store.Job
	LeaseToken     string
	LeaseExpiresAt int64
	IdempotencyKey string // the job's key, or "ratchet-job-<id>" when it has none
}

// Claim hands out up to Max due jobs, each with a lease. With Wait it waits
// for work: until a job becomes due (by timer, not by polling), something
// changes (an enqueue, a report that frees capacity) or the wait ends.
func (e *Engine) Claim(ctx context.Context, p *Principal, r ClaimRequest) ([]Claimed, error) {
	if err := p.Require(wire.ScopeWorker); err != nil {
		return nil, err
	}
	if r.WorkerID == "" || len(r.WorkerID) > 200 {
		return nil, invalidField("workerId", strconv.Quote(r.WorkerID), "required: 1–200 characters naming the worker")
	}
	if r.Max == 0 {
		r.Max = 1
	}
	if r.Max < 1 || r.Max > e.cfg.MaxClaim {
		return nil, invalidField("max", strconv.Itoa(r.Max), "must be an integer from 1 through "+strconv.Itoa(e.cfg.MaxClaim))
	}
	if r.Wait < 0 || r.Wait > e.cfg.MaxWait {
		return nil, invalidField("waitMs", strconv.FormatInt(r.Wait.Milliseconds(), 10), "must be from 0 through "+strconv.FormatInt(e.cfg.MaxWait.Milliseconds(), 10)+" milliseconds")
	}
	refs := r.Tools
	if len(refs) == 0 {
		if p.Scope != wire.ScopeWorker {
			return nil, invalidField("tools", "[]", `required: the "name@version" tools this worker runs`)
		}
		refs = p.Tools
	}
	for i, ref := range refs {
		if _, _, err := ParseToolRef(ref); err != nil {
			return nil, invalidField("tools["+strconv.Itoa(i)+"]", strconv.Quote(ref), `must be "name@version"`)
		}
		if p.Scope == wire.ScopeWorker && !slices.Contains(p.Tools, ref) {
			return nil, forbidden("this worker key may not run %s; its allowlist is %v", ref, p.Tools)
		}
	}
	toolIDs, err := e.toolIDs(ctx, p.ProjectID, refs)
	if err != nil {
		return nil, err
	}
	e.noteWorker(p.ProjectID, r.WorkerID, seenClaim, e.nowMs())
	return e.longPoll(ctx, r.Wait, func() ([]Claimed, time.Time, error) {
		jobs, wakeAt, err := e.tryClaim(ctx, p, r, toolIDs)
		return jobs, wakeTime(wakeAt), err
	})
}

// longPoll is the wait of every claim, a worker's and the dispatcher's:
// it calls try until try hands out jobs or fails, or wait is over, in
// between sleeping until the earliest of the deadline, the next time try
// asked to look again (zero: none) and a wake-up (an enqueue, a report
// that frees capacity). With wait 0 it tries once. A cancelled ctx ends
// the wait with nothing.
func (e *Engine) longPoll(ctx context.Context, wait time.Duration, try func() ([]Claimed, time.Time, error)) ([]Claimed, error) {
	deadline := e.clk.Now().Add(wait)
	for {
		woken := e.waitCh() // taken before looking, so no wake-up is missed
		jobs, wakeAt, err := try()
		if err != nil || len(jobs) > 0 || wait == 0 {
			return jobs, err
		}
		now := e.clk.Now()
		if !now.Before(deadline) {
			return nil, nil
		}
		until := deadline
		if !wakeAt.IsZero() && wakeAt.Before(until) {
			until = wakeAt
		}
		t := e.clk.NewTimer(until.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-woken:
			t.Stop()
		case <-t.C():
		}
	}
}

// wakeTime is a claim's next time to look, in Unix milliseconds (0:
// none), as a time (zero: none).
func wakeTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// toolRef names a tool of a project as a claim asks for it.
type toolRef struct {
	projectID int64
	ref       string
}

// toolIDs resolves "name@version" refs to tool ids, skipping tools not
// published (yet). Every claim asks, so published ones are remembered: a
// tool is never changed or deleted once published, and a read transaction
// per claim added to the due-to-claim lag.
func (e *Engine) toolIDs(ctx context.Context, projectID int64, refs []string) ([]int64, error) {
	ids := make([]int64, 0, len(refs))
	var missing []string
	for _, ref := range refs {
		// A tool Ratchet delivers itself is never claimed by workers;
		// whether a tool is one is remembered with its id.
		if id, ok := e.toolIDCache.Load(toolRef{projectID, ref}); ok {
			if _, known := e.delivery.isHTTP.Load(id); known {
				if !e.isDeliveryTool(id.(int64)) {
					ids = append(ids, id.(int64))
				}
				continue
			}
		}
		missing = append(missing, ref)
	}
	if len(missing) == 0 {
		return ids, nil
	}
	err := e.st.Read(ctx, func(q store.Queries) error {
		for _, ref := range missing {
			name, version, _ := ParseToolRef(ref)
			t, err := q.ToolGetInProject(ctx, &store.ToolGetInProjectParams{ProjectID: projectID, Name: name, Version: version})
			if err != nil {
				continue // not published (yet): nothing to claim for it
			}
			e.toolIDCache.Store(toolRef{projectID, ref}, t.ID)
			e.noteTool(t)
			if len(t.Delivery) > 0 {
				continue // Ratchet delivers this tool itself; workers never claim it
			}
			ids = append(ids, t.ID)
		}
		return nil
	})
	return ids, storeErr(err, "tools")
}

// errOptimisticMiss takes back a transaction whose optimistic claim the
// gates did not confirm; the claim runs again on the locked path.
var errOptimisticMiss = errors.New("optimistic claim not confirmed")

// optimisticBackoffMs is how long an endpoint whose optimistic claim was
// taken back is claimed on the locked path only.
const optimisticBackoffMs = 1000

func (e *Engine) tryClaim(ctx context.Context, p *Principal, r ClaimRequest, toolIDs []int64) ([]Claimed, int64, error) {
	if len(toolIDs) == 0 {
		return nil, 0, nil
	}
	out, wakeAt, err := e.claimTx(ctx, r, toolIDs, e.st.ConcurrentWriters())
	if errors.Is(err, errOptimisticMiss) {
		out, wakeAt, err = e.claimTx(ctx, r, toolIDs, false)
	}
	if err != nil {
		return nil, 0, storeErr(err, "claim")
	}
	if e.obs != nil && len(out) > 0 {
		byEndpoint := map[string][]time.Duration{}
		for _, c := range out {
			lag := time.Duration(c.Job.ClaimedAt-c.Job.DueAt) * time.Millisecond
			byEndpoint[c.Job.Endpoint] = append(byEndpoint[c.Job.Endpoint], lag)
		}
		for ep, lags := range byEndpoint {
			e.obs.Claimed(ep, len(lags), lags)
		}
	}
	return out, wakeAt, nil
}

// optimistic claims an endpoint's due jobs before locking its row, then
// locks it and confirms the gates would have admitted them. Claims of one
// endpoint then run side by side, and its row is held only for the
// confirmation and the commit, where the locked path holds it through the
// whole claim: with every claim of an endpoint in line behind that lock,
// the claim statement's own time bounded the burn-down.
//
// Only an endpoint whose circuit is closed is claimed this way. It returns
// errOptimisticMiss when the gates do not confirm the claim; the caller
// rolls the transaction back and claims on the locked path.
func (e *Engine) optimistic(ctx context.Context, q store.Queries, ep *store.Endpoint, params *store.JobsClaimDueParams) ([]store.Job, error) {
	jobs, err := q.JobsClaimDue(ctx, params)
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	locked, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: ep.ID, Lock: true})
	if err != nil {
		return nil, err
	}
	ok, err := e.confirm(ctx, q, locked, params.Now)
	if err != nil {
		return nil, err
	}
	if !ok {
		e.optimisticMiss.Store(ep.ID, params.Now)
		return nil, errOptimisticMiss
	}
	return jobs, nil
}

// claimPass is what one claim transaction gathers as it walks the due
// endpoints.
type claimPass struct {
	r         ClaimRequest
	toolIDs   []int64
	lease     string
	now       int64 // the transaction's latest reading of the clock
	remaining int64 // jobs the claim may still take
	out       []Claimed
	wakeAt    int64 // the soonest time a gate that held may open
	held      []wire.Gate
}

// soonest keeps t as the wake-up time if it is the earliest so far.
func (p *claimPass) soonest(t int64) {
	if t > 0 && (p.wakeAt == 0 || t < p.wakeAt) {
		p.wakeAt = t
	}
}

// hold notes a gate that held an endpoint back.
func (p *claimPass) hold(g gate) {
	p.held = append(p.held, g.gate)
	p.soonest(g.until)
}

// take adds claimed jobs to the pass.
func (p *claimPass) take(jobs []store.Job) {
	p.out = appendClaimed(p.out, jobs, p.lease)
	p.remaining -= int64(len(jobs))
}

// claimTx claims in one transaction, optimistically where allowed.
func (e *Engine) claimTx(ctx context.Context, r ClaimRequest, toolIDs []int64, optimistic bool) ([]Claimed, int64, error) {
	p := &claimPass{r: r, toolIDs: toolIDs, lease: token()}
	err := e.st.Tx(ctx, func(q store.Queries) (err error) {
		*p = claimPass{r: r, toolIDs: toolIDs, lease: p.lease, remaining: int64(r.Max), out: p.out[:0], held: p.held[:0]}
		if p.now, err = e.txNow(ctx, q); err != nil {
			return err
		}
		eps, err := q.DueEndpoints(ctx, &store.DueEndpointsParams{ToolIDs: toolIDs, Now: p.now})
		if err != nil {
			return err
		}
		for _, id := range eps {
			if p.remaining == 0 {
				break
			}
			if optimistic {
				done, err := e.claimUnlocked(ctx, q, p, id)
				if err != nil {
					return err
				}
				if done {
					continue
				}
			}
			if err := e.claimLocked(ctx, q, p, id); err != nil {
				return err
			}
		}
		if len(p.out) == 0 && len(p.held) == 0 {
			next, err := q.NextDueAt(ctx, toolIDs)
			if err != nil {
				return err
			}
			if next > p.now {
				p.soonest(next)
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	wakeAt := p.wakeAt
	if e.cfg.DatabaseClock && wakeAt > 0 {
		// The claim loop waits on this node's timers: the same wait from
		// this node's clock.
		wakeAt += e.nowMs() - p.now
	}
	if e.obs != nil {
		for _, g := range p.held {
			e.obs.GateHeld(g)
		}
	}
	return p.out, wakeAt, nil
}

// claimUnlocked claims from endpoint id without locking its row, when its
// unlocked read shows every gate open (confirmed after the claim, see
// optimistic), or skips it when that read shows a gate shut. done is false
// when the locked path must decide.
func (e *Engine) claimUnlocked(ctx context.Context, q store.Queries, p *claimPass, id int64) (done bool, err error) {
	ep, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: id})
	if err != nil {
		return false, err
	}
	miss, _ := e.optimisticMiss.Load(id)
	if open, limit := fastOpen(ep, p.remaining, p.now); open && (miss == nil || p.now-miss.(int64) >= optimisticBackoffMs) {
		if p.now, err = e.txNow(ctx, q); err != nil {
			return false, err
		}
		jobs, err := e.optimistic(ctx, q, ep, &store.JobsClaimDueParams{EndpointID: id, ToolIDs: p.toolIDs,
			Limit: int(limit), WorkerID: p.r.WorkerID, LeaseToken: p.lease, Now: p.now})
		if err != nil {
			return false, err
		}
		p.take(jobs)
		return true, nil
	}
	// Shut even by this unlocked read: skip the endpoint without locking
	// its row. A claim that waited for the lock only to find the gate shut
	// would hold, meanwhile, the rows it locked for the endpoints before
	// it: with one endpoint's rate limit spent, every claim of its tools
	// went through that lock one at a time, and the claims of the other
	// endpoints with them. A gate shut by committed claims stays shut
	// until its until time or until a report, rescue or cancel wakes the
	// claimers, so nothing is missed; the locked path decides whenever the
	// gates may be open.
	g := e.gates(ctx, q, ep, p.now)
	if g.err != nil {
		return false, g.err
	}
	if g.allowed <= 0 {
		p.hold(g)
		return true, nil
	}
	return false, nil
}

// claimLocked claims from endpoint id with its row locked: the gates are
// decided on the locked row and the jobs claimed under them.
func (e *Engine) claimLocked(ctx context.Context, q store.Queries, p *claimPass, id int64) error {
	ep, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: id, Lock: true})
	if err != nil {
		return err
	}
	// Read the clock again with the endpoint's row locked: under
	// contention the wait for the lock is long, and the claim happens now.
	// Stamped with the earlier time, its attempt would read as running
	// before the jobs it saw finish had finished (maxConcurrent overrun in
	// the attempts table), its lease would be cut short by the wait, and
	// the rate limit's window would release the claim early.
	if p.now, err = e.txNow(ctx, q); err != nil {
		return err
	}
	g := e.gates(ctx, q, ep, p.now)
	if g.err != nil {
		return g.err
	}
	if g.allowed <= 0 {
		p.hold(g)
		return nil
	}
	// And once more after the gates counted: report batches do not lock
	// the endpoint, so one may commit between that read and the count.
	// Stamped before the count, the claim would read as overlapping
	// attempts whose end it had already seen.
	if p.now, err = e.txNow(ctx, q); err != nil {
		return err
	}
	// One statement claims and returns the jobs as claimed (oldest due
	// first), where a SELECT and an UPDATE by id read them twice. A keyed
	// endpoint's jobs are handed out key by key.
	var jobs []store.Job
	if keyed(ep) {
		jobs, err = e.claimKeyed(ctx, q, p, ep, min(p.remaining, g.allowed))
	} else {
		jobs, err = q.JobsClaimDue(ctx, &store.JobsClaimDueParams{EndpointID: id, ToolIDs: p.toolIDs, Limit: int(min(p.remaining, g.allowed)),
			WorkerID: p.r.WorkerID, LeaseToken: p.lease, Now: p.now})
	}
	if err != nil || len(jobs) == 0 {
		return err
	}
	if g.halfOpen {
		was := ep.CircuitState
		ep.CircuitState, ep.CircuitProbeJob = wire.CircuitHalfOpen, jobs[0].ID
		if err := q.EndpointUpdateCircuit(ctx, ep); err != nil {
			return err
		}
		if err := e.circuitEvent(ctx, q, ep, was, p.now, false); err != nil {
			return err
		}
	}
	p.take(jobs)
	return nil
}

func appendClaimed(out []Claimed, jobs []store.Job, lease string) []Claimed {
	for i := range jobs {
		j := &jobs[i]
		key := j.IdempotencyKey
		if key == "" {
			key = "ratchet-job-" + strconv.FormatInt(j.ID, 10)
		}
		out = append(out, Claimed{Job: j, LeaseToken: lease, LeaseExpiresAt: j.LeaseExpiresAt, IdempotencyKey: key})
	}
	return out
}

// FormatTime renders unix milliseconds as RFC 3339 UTC with milliseconds.
func FormatTime(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
