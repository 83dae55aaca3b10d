package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// audit writes an operator action to the audit log in the action's
// transaction q, so the entry exists exactly when the action does. A nil
// principal is the engine's own work (HTTP delivery), not an operator's.
//
// It also counts the write on the project (store.ProjectNoteWrite), so a
// view shared between streams is read again after it, on every node.
func (e *Engine) audit(ctx context.Context, q store.Queries, p *Principal, now int64, action, target, detail string) error {
	if p == nil {
		return nil
	}
	if err := q.ProjectNoteWrite(ctx, p.ProjectID); err != nil {
		return err
	}
	return q.AuditInsert(ctx, &store.AuditEntry{ProjectID: p.ProjectID, At: now, Actor: p.Actor(), KeyPrefix: p.KeyPrefix,
		Action: action, Target: target, Detail: detail})
}

// lockEndpoint reads the project's endpoint by name and locks its row
// until commit, so an operator's change and the claims' gate decisions are
// serialised across nodes.
func lockEndpoint(ctx context.Context, q store.Queries, p *Principal, name string) (*store.Endpoint, error) {
	ep, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ProjectID, Name: name})
	if err != nil {
		return nil, err
	}
	return q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: ep.ID, Lock: true})
}

// checkReason validates a pause reason: at most wire.MaxPauseReasonLen
// characters of valid UTF-8 without control characters other than tab.
func checkReason(reason string) error {
	n := utf8.RuneCountInString(reason)
	show := strconv.Quote(reason)
	if n > 40 {
		show = "a reason of " + strconv.Itoa(n) + " characters"
	}
	if n > wire.MaxPauseReasonLen {
		return invalidField("reason", show, "must be at most "+strconv.Itoa(wire.MaxPauseReasonLen)+" characters")
	}
	if !utf8.ValidString(reason) || strings.IndexFunc(reason, func(r rune) bool { return r != '\t' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)) }) >= 0 {
		return invalidField("reason", show, "must be text: valid UTF-8 without control characters")
	}
	return nil
}

// PauseEndpoint pauses an endpoint: its due jobs are held by the gate
// "paused" (before every other gate of the endpoint), for workers and for
// HTTP delivery alike, and no attempt is spent. Pausing a paused endpoint
// keeps the first pause.
func (e *Engine) PauseEndpoint(ctx context.Context, p *Principal, name, reason string) (*store.Endpoint, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	if err := checkReason(reason); err != nil {
		return nil, err
	}
	var ep *store.Endpoint
	err := e.st.Tx(ctx, func(q store.Queries) (err error) {
		if ep, err = lockEndpoint(ctx, q, p, name); err != nil {
			return err
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		if ep.PausedAt != 0 {
			return e.audit(ctx, q, p, now, "endpoint.pause", "endpoint:"+name,
				fmt.Sprintf("endpoint %s was already paused by %s at %s; the first pause stays", name, ep.PausedBy, FormatTime(ep.PausedAt)))
		}
		ep.PausedAt, ep.PausedBy, ep.PausedReason, ep.UpdatedAt = now, p.Actor(), reason, now
		if err := q.EndpointUpdatePause(ctx, ep); err != nil {
			return err
		}
		detail := "paused endpoint " + name
		if reason != "" {
			detail += ": " + reason
		}
		if err := e.endpointEvent(ctx, q, ep, wire.EndpointPaused, now, byActor(p.Actor()), withDetail(detail)); err != nil {
			return err
		}
		return e.audit(ctx, q, p, now, "endpoint.pause", "endpoint:"+name, detail)
	})
	return ep, storeErr(err, "endpoint "+strconv.Quote(name))
}

// ResumeEndpoint lifts a pause; the endpoint's due jobs are claimable at
// once (as its other gates allow). Resuming an endpoint that is not paused
// changes nothing.
func (e *Engine) ResumeEndpoint(ctx context.Context, p *Principal, name string) (*store.Endpoint, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	var ep *store.Endpoint
	err := e.st.Tx(ctx, func(q store.Queries) (err error) {
		if ep, err = lockEndpoint(ctx, q, p, name); err != nil {
			return err
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		if ep.PausedAt == 0 {
			return e.audit(ctx, q, p, now, "endpoint.resume", "endpoint:"+name, "endpoint "+name+" was not paused; nothing changed")
		}
		detail := fmt.Sprintf("resumed endpoint %s (paused by %s at %s)", name, ep.PausedBy, FormatTime(ep.PausedAt))
		pausedAt := ep.PausedAt
		ep.PausedAt, ep.PausedBy, ep.PausedReason, ep.UpdatedAt = 0, "", "", now
		if err := q.EndpointUpdatePause(ctx, ep); err != nil {
			return err
		}
		if err := e.endpointEvent(ctx, q, ep, wire.EndpointResumed, now, byActor(p.Actor()), withDetail(detail),
			withFact("pausedMs", now-pausedAt)); err != nil {
			return err
		}
		// The held backlog goes out through the recovery ramp, not at once.
		ramp := ep.Recovery
		startRecovery(ep, now)
		if err := q.EndpointUpdateCircuit(ctx, ep); err != nil {
			return err
		}
		if err := e.recoveryEvent(ctx, q, ep, ramp, now); err != nil {
			return err
		}
		return e.audit(ctx, q, p, now, "endpoint.resume", "endpoint:"+name, detail)
	})
	if err != nil {
		return nil, storeErr(err, "endpoint "+strconv.Quote(name))
	}
	e.signal(ctx)
	return ep, nil
}

// CloseCircuit closes an endpoint's circuit by hand: claims go through at
// once and its count of consecutive failures starts again from zero. A
// half-open probe still running finishes as any attempt.
func (e *Engine) CloseCircuit(ctx context.Context, p *Principal, name string) (*store.Endpoint, error) {
	ep, err := e.setCircuit(ctx, p, name, "circuit.close", func(ep *store.Endpoint, now int64) string {
		before := ep.CircuitState
		ep.CircuitState, ep.CircuitFailures, ep.CircuitProbeJob, ep.CircuitOpenedBy = wire.CircuitClosed, 0, 0, ""
		if before != wire.CircuitClosed {
			startRecovery(ep, now)
		}
		return fmt.Sprintf("closed the circuit of endpoint %s by hand (it was %s)", name, before)
	})
	if err == nil {
		e.signal(ctx)
	}
	return ep, err
}

// OpenCircuit opens an endpoint's circuit by hand, now, for the policy's
// circuitOpenMs; then it half-opens as usual.
func (e *Engine) OpenCircuit(ctx context.Context, p *Principal, name string) (*store.Endpoint, error) {
	return e.setCircuit(ctx, p, name, "circuit.open", func(ep *store.Endpoint, now int64) string {
		before := ep.CircuitState
		ep.CircuitState, ep.CircuitOpenedAt, ep.CircuitProbeJob, ep.CircuitOpenedBy = wire.CircuitOpen, now, 0, p.Actor()
		ep.CircuitProbeAt, ep.Recovery = 0, store.Recovery{}
		return fmt.Sprintf("opened the circuit of endpoint %s by hand until %s (it was %s)", name, FormatTime(now+ep.CircuitOpenMs), before)
	})
}

func (e *Engine) setCircuit(ctx context.Context, p *Principal, name, action string, change func(ep *store.Endpoint, now int64) string) (*store.Endpoint, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	var ep *store.Endpoint
	err := e.st.Tx(ctx, func(q store.Queries) (err error) {
		if ep, err = lockEndpoint(ctx, q, p, name); err != nil {
			return err
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		was, ramp := ep.CircuitState, ep.Recovery
		detail := change(ep, now)
		if err := q.EndpointUpdateCircuit(ctx, ep); err != nil {
			return err
		}
		if err := e.circuitEvent(ctx, q, ep, was, now, action == "circuit.open", byActor(p.Actor())); err != nil {
			return err
		}
		if err := e.recoveryEvent(ctx, q, ep, ramp, now); err != nil {
			return err
		}
		e.log.Info("circuit changed by hand", "endpoint", name, "to", ep.CircuitState, "by", p.Actor())
		return e.audit(ctx, q, p, now, action, "endpoint:"+name, detail)
	})
	return ep, storeErr(err, "endpoint "+strconv.Quote(name))
}

// HeldJobs lists, newest first, the endpoint's due scheduled jobs while one
// of its gates (paused, circuit, maxConcurrent, rate limit) holds them, with
// that hold; none when its gates admit claims. Jobs not due yet are held by
// their due time and not listed.
func (e *Engine) HeldJobs(ctx context.Context, p *Principal, name string, afterID int64, limit int) ([]store.Job, *Hold, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, nil, err
	}
	if limit <= 0 || limit > wire.MaxListLimit {
		limit = wire.DefaultListLimit
	}
	var jobs []store.Job
	var h *Hold
	err := e.st.Read(ctx, func(q store.Queries) error {
		ep, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ProjectID, Name: name})
		if err != nil {
			return err
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		g := e.gates(ctx, q, ep, now)
		if g.err != nil {
			return g.err
		}
		if g.allowed > 0 {
			return nil
		}
		h = &Hold{Gate: g.gate, Detail: g.detail}
		if g.until > 0 {
			h.Until = FormatTime(g.until)
		}
		jobs, err = q.JobList(ctx, store.JobFilter{ProjectID: p.ProjectID, EndpointID: ep.ID, States: []wire.JobState{wire.JobScheduled},
			DueBefore: now, AfterID: afterID, Limit: limit})
		return err
	})
	return jobs, h, storeErr(err, "endpoint "+strconv.Quote(name))
}

// Writes is the project's count of operator writes (every audited action
// and every endpoint created). A view read after Writes returned n shows
// every operator write up to n, whichever node took it.
func (e *Engine) Writes(ctx context.Context, p *Principal) (int64, error) {
	var n int64
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		n, err = q.ProjectWrites(ctx, p.ProjectID)
		return err
	})
	return n, storeErr(err, "project")
}

// Audit lists the project's audit log, newest first.
func (e *Engine) Audit(ctx context.Context, p *Principal, target string, afterID int64, limit int) ([]store.AuditEntry, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > wire.MaxListLimit {
		limit = wire.DefaultListLimit
	}
	var out []store.AuditEntry
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		out, err = q.AuditList(ctx, &store.AuditListParams{ProjectID: p.ProjectID, Target: target, AfterID: afterID, Limit: limit})
		return err
	})
	return out, storeErr(err, "audit")
}

// RunNow makes a scheduled job due now: its due time becomes the
// transaction's time, its attempt count stays, and the gates still apply (a
// paused endpoint or an open circuit still holds it). A job in any other
// state is a conflict naming the state.
func (e *Engine) RunNow(ctx context.Context, p *Principal, id int64) (*store.Job, error) {
	return e.runNow(ctx, p, id, true)
}

func (e *Engine) runNow(ctx context.Context, p *Principal, id int64, audit bool) (*store.Job, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	var j *store.Job
	err := e.st.Tx(ctx, func(q store.Queries) (err error) {
		if j, err = q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: p.ProjectID, ID: id}); err != nil {
			return err
		}
		if j.State != wire.JobScheduled {
			return conflict("job %d is %s; only a scheduled job can be run now", id, j.State)
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		was := j.DueAt
		if j.DueAt > now {
			j.DueAt = now
		}
		j.UpdatedAt = now
		if err := q.JobUpdate(ctx, j); err != nil || !audit {
			return err
		}
		return e.audit(ctx, q, p, now, "job.run_now", "job:"+strconv.FormatInt(id, 10),
			fmt.Sprintf("job %d made due now (was due %s)", id, FormatTime(was)))
	})
	if err != nil {
		return nil, storeErr(err, "job "+strconv.FormatInt(id, 10))
	}
	e.signal(ctx)
	return j, nil
}

// BulkResult is what a bulk action did: the ids acted on (for replay, the
// new jobs) and, per job it could not act on, why.
type BulkResult struct {
	Done   []int64
	Failed []BulkFailure
}

// BulkFailure is a job a bulk action could not act on.
type BulkFailure struct {
	ID  int64
	Err *Error
}

// Bulk cancels, replays or runs now ("cancel", "replay", "run_now") each
// job of ids, each in its own transaction, and writes one audit entry
// (bulk.cancel, bulk.replay, bulk.run_now) for the whole action. A job it
// cannot act on is a failure of that job; a database failure ends it.
func (e *Engine) Bulk(ctx context.Context, p *Principal, action wire.BulkAction, ids []int64) (*BulkResult, error) {
	scope := wire.ScopeProducer
	if action == wire.BulkRunNow {
		scope = wire.ScopeOwner
	}
	if err := p.Require(scope); err != nil {
		return nil, err
	}
	out := &BulkResult{Done: []int64{}}
	for _, id := range ids {
		var j *store.Job
		var err error
		switch action {
		case wire.BulkCancel:
			j, err = e.cancel(ctx, p, id, false)
		case wire.BulkReplay:
			j, err = e.replay(ctx, p, id, false, false)
		case wire.BulkRunNow:
			j, err = e.runNow(ctx, p, id, false)
		default:
			return nil, invalidField("action", strconv.Quote(string(action)), "must be "+wire.JoinOr(wire.BulkActions()))
		}
		if err != nil {
			var ee *Error
			if !errors.As(err, &ee) || ee.Kind == KindUnavailable {
				return nil, err // the database failed: not this job's fault
			}
			out.Failed = append(out.Failed, BulkFailure{ID: id, Err: ee})
			continue
		}
		out.Done = append(out.Done, j.ID)
	}
	detail := fmt.Sprintf("%s: %d of %d jobs", action, len(out.Done), len(ids))
	if len(out.Done) > 0 {
		detail += " (" + idList(out.Done, 20) + ")"
	}
	if len(out.Failed) > 0 {
		failed := make([]int64, len(out.Failed))
		for i, f := range out.Failed {
			failed[i] = f.ID
		}
		detail += "; not acted on: " + idList(failed, 20)
	}
	err := e.st.Tx(ctx, func(q store.Queries) error {
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		return e.audit(ctx, q, p, now, "bulk."+string(action), "jobs", detail)
	})
	return out, storeErr(err, "audit")
}

// idList shows up to n ids, and how many more.
func idList(ids []int64, n int) string {
	var b strings.Builder
	for i, id := range ids {
		if i == n {
			fmt.Fprintf(&b, " and %d more", len(ids)-n)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}
