package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// Snapshot is the resolved policy copied into a job at enqueue. Later edits
// of the tool or endpoint never change it.
type Snapshot = wire.PolicySnapshot

// ParseSnapshot reads a job's stored snapshot.
func ParseSnapshot(raw json.RawMessage) (Snapshot, error) {
	var s Snapshot
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("policy snapshot: %w", err)
	}
	return s, nil
}

// EnqueueRequest is one job to enqueue.
type EnqueueRequest struct {
	Tool           string // "name@version"
	Payload        json.RawMessage
	IdempotencyKey string
	MaxAttempts    *int64
	RunID          int64
	RunAt          *time.Time
	// FlowKey is the tenant, account or resource the job is made for; ""
	// for none, or for the tool's flowKeyFrom to take it from the payload.
	FlowKey string
	// Traceparent and Tracestate are the W3C trace context the job keeps
	// and hands on to its attempts (internal/traceparent); "" for none.
	Traceparent, Tracestate string
}

// Limits of an enqueue.
const (
	MaxPayloadBytes      = wire.MaxPayloadBytes
	MaxIdempotencyKeyLen = wire.MaxIdempotencyKeyLen
	MaxBatch             = wire.MaxBatch
)

// resolve picks the policy: tool > endpoint > STANDARD; an explicit
// maxAttempts overrides the count only.
func resolve(t *store.Tool, ep *store.Endpoint, maxAttempts *int64) (Snapshot, error) {
	s := Snapshot{Source: "default", Preset: backoff.Standard}
	pol := backoff.PresetPolicy(backoff.Standard)
	if tp, err := toolPolicy(t); err != nil {
		return s, err
	} else if tp != nil {
		pol, s.Source = *tp, "tool"
	} else if len(ep.Policy) > 0 {
		p, err := backoff.ParsePolicy(ep.Policy)
		if err != nil {
			return s, err
		}
		pol, s.Source = p, "endpoint"
	}
	s.Preset = pol.Preset
	s.Params = pol.Params()
	if maxAttempts != nil {
		s.MaxAttempts = int(*maxAttempts)
		s.MaxAttemptsOverridden = true
	}
	s.TimeoutMs = ep.DefaultTimeoutMs
	if t.TimeoutMs != nil {
		s.TimeoutMs = *t.TimeoutMs
	}
	return s, nil
}

// validateEnqueue checks the parts of a request that need no database.
func validateEnqueue(r *EnqueueRequest, prefix string) field.Errors {
	var errs field.Errors
	add := func(name, value, allowed string) {
		errs.Add(prefix+name, value, allowed)
	}
	if r.Tool == "" {
		add("tool", field.Missing, `required: "name@version" of a published tool`)
	} else if _, _, err := ParseToolRef(r.Tool); err != nil {
		add("tool", strconv.Quote(r.Tool), `must be "name@version" of a published tool`)
	}
	if len(r.Payload) == 0 {
		r.Payload = json.RawMessage("{}")
	}
	if len(r.Payload) > MaxPayloadBytes {
		add("payload", strconv.Itoa(len(r.Payload))+" bytes", "must be at most 262144 bytes of JSON")
	} else if !json.Valid(r.Payload) {
		add("payload", "invalid JSON", "must be a JSON value")
	}
	if len(r.IdempotencyKey) > MaxIdempotencyKeyLen {
		add("idempotencyKey", "a key of "+strconv.Itoa(len(r.IdempotencyKey))+" bytes", "must be at most "+strconv.Itoa(MaxIdempotencyKeyLen)+" bytes")
	} else if !wire.HeaderValueOK(r.IdempotencyKey) {
		// It is sent to the provider as the Idempotency-Key header: a key
		// no HTTP client can send would fail every attempt of the job.
		add("idempotencyKey", strconv.QuoteToASCII(r.IdempotencyKey), wire.HeaderValueAllowed)
	}
	if !ValidFlowKey(r.FlowKey) {
		add("flowKey", showFlowKey(r.FlowKey), FlowKeyAllowed)
	}
	for _, e := range CheckTrace(r.Traceparent, r.Tracestate, "traceparent", "tracestate") {
		add(e.Field, e.Value, e.Allowed)
	}
	if r.MaxAttempts != nil && (*r.MaxAttempts < backoff.MinAttempts || *r.MaxAttempts > backoff.MaxAttempts) {
		add("maxAttempts", strconv.FormatInt(*r.MaxAttempts, 10), "must be an integer from 1 through 10")
	}
	return errs
}

// Enqueued is the result of one enqueue.
type Enqueued struct {
	Job     *store.Job
	Created bool // false when the idempotency key returned an existing job
}

// Enqueue stores one job.
func (e *Engine) Enqueue(ctx context.Context, p *Principal, r EnqueueRequest) (Enqueued, error) {
	out, err := e.EnqueueBatch(ctx, p, []EnqueueRequest{r})
	if err != nil {
		var ee *Error
		if errors.As(err, &ee) && ee.Kind == KindInvalid {
			for _, f := range ee.Fields { // single enqueue: no "jobs[0]." prefix
				if len(f.Field) > 8 && f.Field[:8] == "jobs[0]." {
					f.Field = f.Field[8:]
				}
			}
		}
		return Enqueued{}, err
	}
	return out[0], nil
}

// EnqueueBatch stores many jobs in one transaction: all or none.
func (e *Engine) EnqueueBatch(ctx context.Context, p *Principal, reqs []EnqueueRequest) ([]Enqueued, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	if len(reqs) == 0 || len(reqs) > MaxBatch {
		return nil, invalidField("jobs", strconv.Itoa(len(reqs))+" jobs", "must hold 1 through 1000 jobs")
	}
	var errs field.Errors
	for i := range reqs {
		errs = append(errs, validateEnqueue(&reqs[i], "jobs["+strconv.Itoa(i)+"].")...)
	}
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	if err := e.compileSchemas(ctx, p, reqs); err != nil {
		return nil, storeErr(err, "enqueue")
	}
	var b *enqueueBatch
	err := e.st.Tx(ctx, func(q store.Queries) error {
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		b = &enqueueBatch{e: e, p: p, q: q, now: now, out: make([]Enqueued, len(reqs)),
			tools: map[string]resolvedTool{}, runs: map[int64]bool{}}
		for i := range reqs {
			if err := b.add(ctx, i, &reqs[i]); err != nil {
				return err
			}
		}
		if len(b.errs) > 0 {
			return invalid(b.errs)
		}
		if len(b.plain) > 0 {
			b.created = true
		}
		return q.JobsInsert(ctx, b.plain)
	})
	if err != nil {
		return nil, storeErr(err, "enqueue")
	}
	if b.created {
		e.signal(ctx)
	}
	return b.out, nil
}

// enqueueBatch is one EnqueueBatch transaction: the jobs made so far, the
// field errors found, and what the jobs refer to, read once per batch.
type enqueueBatch struct {
	e       *Engine
	p       *Principal
	q       store.Queries
	now     int64
	out     []Enqueued
	plain   []*store.Job // jobs without a key, inserted in one go at the end
	created bool
	errs    field.Errors
	tools   map[string]resolvedTool
	runs    map[int64]bool // open runs of the project
}

// resolvedTool is a tool of the batch and its endpoint.
type resolvedTool struct {
	t  *store.Tool
	ep *store.Endpoint
}

// add makes job i of the batch, or notes why it cannot be made. A job whose
// idempotency key is taken is the existing job; a keyed job is inserted at
// once (so the same key twice in one batch is one job), a key-less one with
// the rest at the end.
func (b *enqueueBatch) add(ctx context.Context, i int, r *EnqueueRequest) error {
	prefix := "jobs[" + strconv.Itoa(i) + "]."
	res, ok, err := b.tool(ctx, prefix, r.Tool)
	if !ok || err != nil {
		return err
	}
	if ok, err := b.run(ctx, prefix, r.RunID); !ok || err != nil {
		return err
	}
	if ok, err := b.payloadValid(prefix, r, res.t); !ok || err != nil {
		return err
	}
	flowKey, ok := b.flowKey(prefix, r, res.t)
	if !ok {
		return nil
	}
	if r.IdempotencyKey != "" {
		existing, err := b.q.JobByIdempotencyKey(ctx, b.p.ProjectID, r.IdempotencyKey)
		if err == nil {
			b.out[i] = Enqueued{Job: existing}
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	snap, err := resolve(res.t, res.ep, r.MaxAttempts)
	if err != nil {
		return err
	}
	policy, _ := json.Marshal(snap)
	due := b.now
	if r.RunAt != nil && r.RunAt.UnixMilli() > b.now {
		due = r.RunAt.UnixMilli()
	}
	j := &store.Job{ProjectID: b.p.ProjectID, ToolID: res.t.ID, Tool: res.t.Name, Version: res.t.Version, EndpointID: res.ep.ID, Endpoint: res.ep.Name,
		RunID: r.RunID, Payload: compactPayload(r.Payload), IdempotencyKey: r.IdempotencyKey, Policy: policy, MaxAttempts: int64(snap.MaxAttempts),
		TimeoutMs: snap.TimeoutMs, State: wire.JobScheduled, DueAt: due, CreatedAt: b.now, UpdatedAt: b.now, FlowKey: flowKey,
		Traceparent: r.Traceparent, Tracestate: r.Tracestate}
	if r.IdempotencyKey == "" { // stored together at the end
		b.out[i] = Enqueued{Job: j, Created: true}
		b.plain = append(b.plain, j)
		return nil
	}
	if err := b.q.JobInsert(ctx, j); err != nil {
		if errors.Is(err, store.ErrConflict) { // same key twice in one batch
			existing, err2 := b.q.JobByIdempotencyKey(ctx, b.p.ProjectID, r.IdempotencyKey)
			if err2 != nil {
				return err
			}
			b.out[i] = Enqueued{Job: existing}
			return nil
		}
		return err
	}
	b.out[i] = Enqueued{Job: j, Created: true}
	b.created = true
	return nil
}

// tool resolves a job's tool reference and its endpoint, once per batch;
// ok is false (and a field error noted) when the project has no such tool.
func (b *enqueueBatch) tool(ctx context.Context, prefix, ref string) (res resolvedTool, ok bool, err error) {
	if res, ok := b.tools[ref]; ok {
		return res, true, nil
	}
	name, version, _ := ParseToolRef(ref)
	t, err := b.q.ToolGetInProject(ctx, &store.ToolGetInProjectParams{ProjectID: b.p.ProjectID, Name: name, Version: version})
	if errors.Is(err, store.ErrNotFound) {
		b.errs = append(b.errs, &field.Error{Field: prefix + "tool", Value: strconv.Quote(ref), Allowed: "must name a published tool of this project"})
		return res, false, nil
	}
	if err != nil {
		return res, false, err
	}
	ep, err := b.q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: t.EndpointID})
	if err != nil {
		return res, false, err
	}
	res = resolvedTool{t, ep}
	b.tools[ref] = res
	return res, true, nil
}

// run checks that a job's run, if it names one, is an open run of the
// project; ok is false (and a field error noted) when it is not.
func (b *enqueueBatch) run(ctx context.Context, prefix string, id int64) (ok bool, err error) {
	if id == 0 || b.runs[id] {
		return true, nil
	}
	run, err := b.q.RunGetInProject(ctx, &store.RunGetInProjectParams{ProjectID: b.p.ProjectID, ID: id})
	if errors.Is(err, store.ErrNotFound) {
		b.errs = append(b.errs, &field.Error{Field: prefix + "runId", Value: strconv.FormatInt(id, 10), Allowed: "must name a run of this project"})
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if run.State != wire.RunOpen {
		b.errs = append(b.errs, &field.Error{Field: prefix + "runId", Value: strconv.FormatInt(id, 10), Allowed: "the run is finished; start a new run"})
		return false, nil
	}
	b.runs[id] = true
	return true, nil
}

// payloadValid checks a job's payload against its tool's schema, if the
// tool has one; ok is false (and a field error noted per failing property)
// when it breaks it.
func (b *enqueueBatch) payloadValid(prefix string, r *EnqueueRequest, t *store.Tool) (ok bool, err error) {
	sch, err := b.e.schemaFor(t)
	if err != nil {
		return false, fmt.Errorf("schema of %s: %w", r.Tool, err)
	}
	if sch == nil {
		return true, nil
	}
	problems := sch.validate(r.Payload)
	for _, pr := range problems {
		b.errs = append(b.errs, &field.Error{Field: prefix + "payload" + pr.path, Value: pr.value, Allowed: pr.allowed + " (payload schema of " + r.Tool + ")"})
	}
	return len(problems) == 0, nil
}

// flowKey is job's flow key: the one the request gives, else the one the
// tool's flowKeyFrom points at in the payload, else none. ok is false (and
// a field error noted, naming the payload member) when the tool's pointer
// finds no string or integer, or one that is not a valid key.
func (b *enqueueBatch) flowKey(prefix string, r *EnqueueRequest, t *store.Tool) (key string, ok bool) {
	if r.FlowKey != "" || t.FlowKeyFrom == "" {
		return r.FlowKey, true
	}
	tokens, err := ParsePointer(t.FlowKeyFrom)
	if err != nil { // checked at publish; kept from breaking an enqueue all the same
		return "", true
	}
	name := prefix + "payload" + fieldPath(tokens)
	of := " (flowKeyFrom " + strconv.Quote(t.FlowKeyFrom) + " of " + r.Tool + `); or give "flowKey" in the request`
	key, shown, found := flowKeyAt(r.Payload, tokens)
	switch {
	case !found:
		b.errs = append(b.errs, &field.Error{Field: name, Value: shown, Allowed: "must be a string or an integer, the job's flow key" + of})
	case shown != "": // found, but not the text it spells
		b.errs = append(b.errs, &field.Error{Field: name, Value: shown, Allowed: "is the job's flow key" + of + ": " + FlowKeyAllowed})
	case !ValidFlowKey(key):
		b.errs = append(b.errs, &field.Error{Field: name, Value: showFlowKey(key), Allowed: "is the job's flow key" + of + ": " + FlowKeyAllowed})
	default:
		return key, true
	}
	return "", false
}

func compactPayload(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// schemaProblem is one place where a payload breaks its tool's schema:
// path is where, as a field suffix (".items[0].sku"; "" for the payload
// itself), value the value found there, allowed what the schema wants.
type schemaProblem struct{ path, value, allowed string }

// maxSchemaProblems bounds the problems one payload reports.
const maxSchemaProblems = 20

// validate checks payload against the schema and names every property that
// breaks it, each with its value and what the schema allows, so a person
// fixes them all in one round.
func (c *compiledSchema) validate(payload json.RawMessage) []schemaProblem {
	inst, err := jsonschemaUnmarshal(payload)
	if err != nil {
		return []schemaProblem{{"", backoff.ShowJSON(payload), "must be JSON: " + err.Error()}}
	}
	err = c.s.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil
	}
	if !errors.As(err, &ve) {
		return []schemaProblem{{"", backoff.ShowJSON(payload), "must match: " + firstLine(err.Error())}}
	}
	var out []schemaProblem
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(out) >= maxSchemaProblems {
			return
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		if req, ok := e.ErrorKind.(*kind.Required); ok {
			for _, m := range req.Missing {
				out = appendProblem(out, seen, schemaProblem{fieldPath(append(slices.Clone(e.InstanceLocation), m)), field.Missing, "required"})
			}
			return
		}
		out = appendProblem(out, seen, schemaProblem{fieldPath(e.InstanceLocation), showValue(inst, e.InstanceLocation), e.ErrorKind.LocalizedString(schemaPrinter)})
	}
	walk(ve)
	return out
}

var schemaPrinter = message.NewPrinter(language.English)

func appendProblem(out []schemaProblem, seen map[string]bool, p schemaProblem) []schemaProblem {
	if k := p.path + "\x00" + p.allowed; !seen[k] && len(out) < maxSchemaProblems {
		seen[k] = true
		out = append(out, p)
	}
	return out
}

// fieldPath writes an instance location as a field suffix: ".orderId",
// ".items[0].sku", `["a b"]` for a name that is not an identifier.
func fieldPath(loc []string) string {
	var b strings.Builder
	for _, seg := range loc {
		switch {
		case seg != "" && strings.Trim(seg, "0123456789") == "":
			b.WriteString("[" + seg + "]")
		case identifier.MatchString(seg):
			b.WriteString("." + seg)
		default:
			b.WriteString("[" + strconv.QuoteToASCII(seg) + "]")
		}
	}
	return b.String()
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// showValue is the JSON of the value at loc in inst, shortened.
func showValue(inst any, loc []string) string {
	v := inst
	for _, seg := range loc {
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return "?"
			}
			v = x[i]
		default:
			return "?"
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return backoff.ShowJSON(b)
}

// Job reads a job of the project with its attempts and, while it is
// scheduled, the gate that holds it (nil otherwise), in one snapshot.
func (e *Engine) Job(ctx context.Context, p *Principal, id int64) (*store.Job, []store.Attempt, *Hold, error) {
	var j *store.Job
	var as []store.Attempt
	var h *Hold
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		if j, err = q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: p.ProjectID, ID: id}); err != nil {
			return err
		}
		if as, err = q.AttemptList(ctx, id); err != nil {
			return err
		}
		h, err = e.explain(ctx, q, j)
		return err
	})
	return j, as, h, storeErr(err, "job "+strconv.FormatInt(id, 10))
}

// Jobs lists jobs in f.Sort's order (newest first by default).
func (e *Engine) Jobs(ctx context.Context, p *Principal, f store.JobFilter) ([]store.Job, error) {
	f.ProjectID = p.ProjectID
	if f.Limit <= 0 || f.Limit > 500 {
		f.Limit = 100
	}
	var out []store.Job
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		out, err = q.JobList(ctx, f)
		return err
	})
	return out, storeErr(err, "jobs")
}

// SearchScanLimit is how many jobs (newest first, of the other filters)
// one page of a text search reads at most: a search that finds little
// costs this many rows, not the table. The page's next cursor continues
// below them.
const SearchScanLimit = 20_000

// ListJobs is Jobs with what holds each scheduled job (nil for the
// others), read in the same snapshot: the gates of each endpoint on the
// page are evaluated once, and each job adds only its due time. next is
// the cursor of the next page in f.Sort's order, the zero key on the
// last: the last job's key on a full page, or where a text search stopped
// reading (SearchScanLimit).
func (e *Engine) ListJobs(ctx context.Context, p *Principal, f store.JobFilter) (jobs []store.Job, holds []*Hold, next store.JobKey, err error) {
	f.ProjectID = p.ProjectID
	if f.Limit <= 0 || f.Limit > 500 {
		f.Limit = 100
	}
	// A page never searches more jobs than a count does (a window shrunk
	// below SearchScanLimit, in tests, shrinks the page's too).
	f.ScanLimit = min(SearchScanLimit, e.cfg.SearchWindow)
	var out []store.Job
	err = e.st.Read(ctx, func(q store.Queries) (err error) {
		if out, err = q.JobList(ctx, f); err != nil {
			return err
		}
		if len(out) == f.Limit {
			next = store.JobKeyOf(&out[len(out)-1], f.Sort)
		} else if next, err = q.JobScanEnd(ctx, f); err != nil {
			return err
		}
		holds = make([]*Hold, len(out))
		var now int64
		gates := map[int64]*gate{}
		for i := range out {
			if out[i].State != wire.JobScheduled {
				continue
			}
			if now == 0 {
				if now, err = e.txNow(ctx, q); err != nil {
					return err
				}
			}
			if holds[i], err = e.holdOf(ctx, q, &out[i], now, gates); err != nil {
				return err
			}
		}
		return nil
	})
	return out, holds, next, storeErr(err, "jobs")
}

// SearchWindow is how many jobs, newest first, a text search counts or
// acts on in bulk (Config.SearchWindow).
func (e *Engine) SearchWindow() int { return e.cfg.SearchWindow }

// CountJobs counts jobs matching a filter (for bulk actions: the count a
// person confirms). A text search counts within the newest SearchWindow
// jobs of the other filters (Config); capped says older jobs were left
// unsearched.
func (e *Engine) CountJobs(ctx context.Context, p *Principal, f store.JobFilter) (n int64, capped bool, err error) {
	capped, err = e.countIn(ctx, p, f, func(q store.Queries, f store.JobFilter) (err error) {
		n, err = q.JobCount(ctx, f)
		return err
	})
	return n, capped, err
}

// CountJobsByState is CountJobs per state, in one read of the jobs.
func (e *Engine) CountJobsByState(ctx context.Context, p *Principal, f store.JobFilter) (counts map[wire.JobState]int64, capped bool, err error) {
	capped, err = e.countIn(ctx, p, f, func(q store.Queries, f store.JobFilter) (err error) {
		counts, err = q.JobCountGroupByState(ctx, f)
		return err
	})
	return counts, capped, err
}

// countIn runs count on f bounded to the project and the search window,
// and says whether the window left older jobs unsearched.
func (e *Engine) countIn(ctx context.Context, p *Principal, f store.JobFilter, count func(store.Queries, store.JobFilter) error) (capped bool, err error) {
	f.ProjectID = p.ProjectID
	// A count's window is the newest jobs whatever order a list shows
	// them in: a sort never changes which jobs are counted or acted on
	// in bulk (and a finished order would count failed jobs only).
	f.Sort, f.AfterID, f.AfterFinishedAt = "", 0, 0
	f.ScanLimit = e.cfg.SearchWindow
	err = e.st.Read(ctx, func(q store.Queries) error {
		if err := count(q, f); err != nil {
			return err
		}
		end, err := q.JobScanEnd(ctx, f)
		capped = end != (store.JobKey{})
		return err
	})
	return capped, storeErr(err, "jobs")
}

// Cancel stops a scheduled job at once; a running one is flagged and ends
// when its worker next heartbeats or reports (or its lease expires).
func (e *Engine) Cancel(ctx context.Context, p *Principal, id int64) (*store.Job, error) {
	return e.cancel(ctx, p, id, true)
}

// cancel is Cancel; audit says whether it writes its own audit entry (a
// bulk action writes one for all its jobs).
func (e *Engine) cancel(ctx context.Context, p *Principal, id int64, audit bool) (*store.Job, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	var j *store.Job
	err := e.st.Tx(ctx, func(q store.Queries) (err error) {
		if j, err = q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: p.ProjectID, ID: id}); err != nil {
			return err
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		switch {
		case j.State == wire.JobRunning:
			// The running attempt ends the job (EventCancel) when it is
			// reported or its lease expires; the worker learns of the
			// request from its heartbeats.
			j.CancelRequested, j.UpdatedAt = true, now
		case j.State.Cancellable():
			if err := moveJob(j, wire.EventCancel, now); err != nil {
				return err
			}
		default:
			return conflict("job %d is %s; only %s jobs can be cancelled", id, j.State, wire.JoinOr(wire.JobStatesWhere(wire.JobState.Cancellable)))
		}
		if err := q.JobUpdate(ctx, j); err != nil {
			return err
		}
		if !audit {
			return nil
		}
		detail := "cancelled job " + strconv.FormatInt(id, 10)
		if j.State == wire.JobRunning {
			detail = "asked running job " + strconv.FormatInt(id, 10) + " to cancel"
		}
		return e.audit(ctx, q, p, now, "job.cancel", "job:"+strconv.FormatInt(id, 10), detail)
	})
	return j, storeErr(err, "job "+strconv.FormatInt(id, 10))
}

// Replay enqueues a job in a replayable state (wire.JobState.Replayable)
// again as a new job linked to the old one. The new job resolves the policy afresh (the tool
// and endpoint as they are now), keeps an explicit maxAttempts override and
// gets no idempotency key of its own, so the destination sees a new key.
func (e *Engine) Replay(ctx context.Context, p *Principal, id int64) (*store.Job, error) {
	return e.replay(ctx, p, id, true, false)
}

// replay is Replay; audit as for cancel. With once, a job that a job
// replays already is a conflict naming that job: the replayed job's row is
// locked first, so two such replays of one job at once make one new job.
func (e *Engine) replay(ctx context.Context, p *Principal, id int64, audit, once bool) (*store.Job, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	var nj *store.Job
	err := e.st.Tx(ctx, func(q store.Queries) error {
		j, err := q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: p.ProjectID, ID: id})
		if err != nil {
			return err
		}
		if !j.State.Replayable() {
			return conflict("job %d is %s; only %s jobs can be replayed", id, j.State, wire.JoinOr(wire.JobStatesWhere(wire.JobState.Replayable)))
		}
		if once {
			if by, err := q.JobReplayedBy(ctx, p.ProjectID, id); err != nil || by != 0 {
				return cmp.Or(err, conflict("job %d was replayed already, as job %d", id, by))
			}
		}
		t, err := q.ToolGetAnyProject(ctx, j.ToolID)
		if err != nil {
			return err
		}
		ep, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: j.EndpointID})
		if err != nil {
			return err
		}
		old, err := ParseSnapshot(j.Policy)
		if err != nil {
			return err
		}
		var override *int64
		if old.MaxAttemptsOverridden {
			v := int64(old.MaxAttempts)
			override = &v
		}
		snap, err := resolve(t, ep, override)
		if err != nil {
			return err
		}
		policy, _ := json.Marshal(snap)
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		nj = &store.Job{ProjectID: p.ProjectID, ToolID: t.ID, Tool: t.Name, Version: t.Version, EndpointID: ep.ID, Endpoint: ep.Name, RunID: j.RunID,
			Payload: j.Payload, Policy: policy, MaxAttempts: int64(snap.MaxAttempts), TimeoutMs: snap.TimeoutMs, State: wire.JobScheduled,
			DueAt: now, ReplayOf: j.ID, CreatedAt: now, UpdatedAt: now, FlowKey: j.FlowKey,
			Traceparent: j.Traceparent, Tracestate: j.Tracestate}
		if err := q.JobInsert(ctx, nj); err != nil || !audit {
			return err
		}
		return e.audit(ctx, q, p, now, "job.replay", "job:"+strconv.FormatInt(id, 10),
			fmt.Sprintf("replayed %s job %d as job %d", j.State, id, nj.ID))
	})
	if err != nil {
		return nil, storeErr(err, "job "+strconv.FormatInt(id, 10))
	}
	e.signal(ctx)
	return nj, nil
}

// Hold says which gate keeps a scheduled job from being claimed now.
type Hold = wire.Hold

// Explain reports what holds a job now. A job that is not scheduled is held
// by nothing (gate "none", saying its state); a due job with open gates
// waits for a worker whose allowlist includes its tool.
func (e *Engine) Explain(ctx context.Context, p *Principal, id int64) (*Hold, error) {
	var h *Hold
	err := e.st.Read(ctx, func(q store.Queries) error {
		j, err := q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: p.ProjectID, ID: id})
		if err != nil {
			return err
		}
		if h, err = e.explain(ctx, q, j); err == nil && h == nil {
			h = &Hold{Gate: wire.GateNone, Detail: "the job is " + string(j.State) + ", not waiting to be claimed"}
		}
		return err
	})
	return h, storeErr(err, "job "+strconv.FormatInt(id, 10))
}

func (e *Engine) explain(ctx context.Context, q store.Queries, j *store.Job) (*Hold, error) {
	if j.State != wire.JobScheduled {
		return nil, nil
	}
	now, err := e.txNow(ctx, q)
	if err != nil {
		return nil, err
	}
	return e.holdOf(ctx, q, j, now, map[int64]*gate{})
}

// holdOf says what holds a scheduled job at now: its due time (and, when
// its endpoint is paused or its circuit open, that too), else the gates of
// its endpoint, evaluated once per endpoint in gates (a list shares one map
// for the whole page).
func (e *Engine) holdOf(ctx context.Context, q store.Queries, j *store.Job, now int64, gates map[int64]*gate) (*Hold, error) {
	g, err := e.endpointGate(ctx, q, j.EndpointID, now, gates)
	if err != nil {
		return nil, err
	}
	if j.DueAt > now {
		return dueHold(j, g), nil
	}
	if g.allowed <= 0 {
		return g.hold(), nil
	}
	if keyed(g.ep) && j.FlowKey != "" {
		kg, err := e.keyHold(ctx, q, g.ep, j, now)
		if err != nil || kg != nil {
			return kg, err
		}
	}
	if http, err := e.httpTool(ctx, q, j.ToolID); err != nil || http {
		return &Hold{Gate: wire.GateNone, Detail: e.dispatcherBehind()}, err
	}
	return &Hold{Gate: wire.GateNone, Detail: fmt.Sprintf("due and claimable: waiting for a worker allowed to run %s@%s", j.Tool, j.Version)}, nil
}

// httpTool says whether Ratchet's dispatcher delivers the tool over HTTP,
// from what the engine knows of tools (they never change) or, the first
// time, from the store.
func (e *Engine) httpTool(ctx context.Context, q store.Queries, toolID int64) (bool, error) {
	if v, ok := e.delivery.isHTTP.Load(toolID); ok {
		return v.(bool), nil
	}
	t, err := q.ToolGetAnyProject(ctx, toolID)
	if err != nil {
		return false, err
	}
	e.noteTool(t)
	return len(t.Delivery) > 0, nil
}

// dispatcherBehind is what holds a due HTTP-delivered job that no gate
// holds: no worker runs it, the dispatcher has not reached it yet.
func (e *Engine) dispatcherBehind() string {
	if e.cfg.DeliveryConcurrency <= 0 {
		return "due and claimable: waiting for the HTTP dispatcher, which runs on other nodes (none on this one)"
	}
	return "due and claimable: the HTTP dispatcher is behind (delivery concurrency " + strconv.Itoa(e.cfg.DeliveryConcurrency) + " on this node); it sends the job when a request slot frees"
}

// DeliveryConcurrency is how many HTTP deliveries this node runs at once,
// 0 when it runs none (Config.DeliveryConcurrency).
func (e *Engine) DeliveryConcurrency() int { return e.cfg.DeliveryConcurrency }

// endpointGate evaluates the gates of an endpoint at now once per
// endpoint, keeping the result in gates.
func (e *Engine) endpointGate(ctx context.Context, q store.Queries, endpointID, now int64, gates map[int64]*gate) (*gate, error) {
	if g, ok := gates[endpointID]; ok {
		return g, nil
	}
	ep, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: endpointID})
	if err != nil {
		return nil, err
	}
	v := e.gates(ctx, q, ep, now)
	if v.err != nil {
		return nil, v.err
	}
	v.ep = ep
	gates[endpointID] = &v
	return &v, nil
}

// dueHold is the hold of a job not due yet. A job never tried (attempt 0)
// waits for the time it was scheduled for (runAt); a retry for its backoff
// delay, or the provider's Retry-After hint when it was longer. A pause or an open circuit of its endpoint is said too: it will
// still hold the job when the time comes, unless someone acts.
func dueHold(j *store.Job, g *gate) *Hold {
	detail := "not due yet: the backoff delay has not passed"
	if j.LastClassification == classify.CodeRetryAfter {
		// The delay chosen was the longer of the backoff and the hint.
		detail = "not due yet: the provider's Retry-After hint or the backoff delay, whichever was longer, has not passed"
	}
	if j.Attempt == 0 {
		detail = "not due yet: scheduled to run at " + FormatTime(j.DueAt)
	}
	if g.allowed <= 0 && (g.gate == wire.GatePaused || g.gate == wire.GateCircuit) {
		detail += "; and then held by its endpoint: " + g.detail
	}
	return &Hold{Gate: wire.GateDueTime, Until: FormatTime(j.DueAt), Detail: detail}
}
