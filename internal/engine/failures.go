package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// DefaultFailureWindowMs is the time range FailureGroups reads without a
// since: the 24 hours before until.
const DefaultFailureWindowMs = 24 * 3600 * 1000

// FailureFilter selects failed and exhausted jobs for a replay by filter.
// Zero values select everything: every endpoint, both states, any
// classification and group, all time.
type FailureFilter struct {
	Endpoint       string        // endpoint name, "" for any
	State          wire.JobState // wire.JobFailed or wire.JobExhausted, "" for both
	Classification string        // the last attempt's classification, "" for any
	Group          string        // a classify.GroupID, "" for any
	Since, Until   int64         // failed at or after Since, before Until (unix ms); 0 for no bound
}

// describe is the filter in words, for the audit log.
func (f FailureFilter) describe() string {
	var parts []string
	add := func(name, v string) {
		if v != "" {
			parts = append(parts, name+" "+v)
		}
	}
	add("endpoint", f.Endpoint)
	add("state", string(f.State))
	add("classification", f.Classification)
	add("group", f.Group)
	if f.Since != 0 {
		add("since", FormatTime(f.Since))
	}
	if f.Until != 0 {
		add("until", FormatTime(f.Until))
	}
	if len(parts) == 0 {
		return "every failed and exhausted job"
	}
	return strings.Join(parts, ", ")
}

// scanFailures reads the failed and exhausted jobs of the filter's
// endpoint, state and time range, latest failure first, at most
// wire.FailureScanBound of them (capped: there were more).
func scanFailures(ctx context.Context, q store.Queries, p *Principal, f FailureFilter) (jobs []store.FailedJob, capped bool, err error) {
	params := &store.JobsFailedParams{ProjectID: p.ProjectID, State: f.State, FinishedFrom: f.Since, FinishedBefore: f.Until,
		Limit: wire.FailureScanBound + 1}
	if f.Endpoint != "" {
		ep, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ProjectID, Name: f.Endpoint})
		if err != nil {
			return nil, false, err
		}
		params.EndpointID = ep.ID
	}
	if jobs, err = q.JobsFailed(ctx, params); err != nil {
		return nil, false, err
	}
	if len(jobs) > wire.FailureScanBound {
		return jobs[:wire.FailureScanBound], true, nil
	}
	return jobs, false, nil
}

// groupOf is the failure group of a failed job.
func groupOf(j *store.FailedJob) (id, fingerprint string) {
	fp := classify.Fingerprint(j.Message)
	return classify.GroupID(j.Classification, fp), fp
}

// FailureGroups groups the endpoint's failed and exhausted jobs that
// failed in [since, until) by classification and message fingerprint
// (classify.Fingerprint), the largest group first, each with a sparkline
// of buckets counts over the range. until 0 is now; since 0 is
// DefaultFailureWindowMs before until. At most wire.FailureScanBound jobs,
// the latest, are read.
func (e *Engine) FailureGroups(ctx context.Context, p *Principal, endpoint string, since, until int64, buckets int) (*wire.FailureGroupList, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	if buckets < 1 || buckets > wire.MaxFailureBuckets {
		buckets = wire.DefaultFailureBuckets
	}
	var out *wire.FailureGroupList
	err := e.st.Read(ctx, func(q store.Queries) error {
		if until == 0 {
			now, err := e.txNow(ctx, q)
			if err != nil {
				return err
			}
			until = now + 1 // a failure at now is in the range
		}
		if since == 0 {
			since = until - DefaultFailureWindowMs
		}
		if since >= until {
			return invalidField("since", FormatTime(since), "must be before until ("+FormatTime(until)+")")
		}
		jobs, capped, err := scanFailures(ctx, q, p, FailureFilter{Endpoint: endpoint, Since: since, Until: until})
		if err != nil {
			return err
		}
		out = groupFailures(jobs, since, until, buckets)
		out.Endpoint, out.Capped = endpoint, capped
		return nil
	})
	return out, storeErr(err, "endpoint "+strconv.Quote(endpoint))
}

// groupFailures groups jobs (latest failure first) as FailureGroups says.
func groupFailures(jobs []store.FailedJob, since, until int64, buckets int) *wire.FailureGroupList {
	width := max(1, (until-since+int64(buckets)-1)/int64(buckets))
	out := &wire.FailureGroupList{Since: FormatTime(since), Until: FormatTime(until), BucketMs: width, Groups: []wire.FailureGroup{},
		Scanned: int64(len(jobs))}
	byID := map[string]int{}
	first := map[string]int64{}
	for i := range jobs {
		j := &jobs[i]
		id, fp := groupOf(j)
		k, ok := byID[id]
		if !ok {
			k = len(out.Groups)
			byID[id] = k
			out.Groups = append(out.Groups, wire.FailureGroup{Group: id, Classification: j.Classification, Fingerprint: fp,
				Example: cutMessage(j.Message), LastSeen: FormatTime(j.FinishedAt), Sparkline: make([]int64, buckets)})
		}
		g := &out.Groups[k]
		g.Count++
		first[id] = j.FinishedAt // the jobs come latest first
		switch j.State {
		case wire.JobFailed:
			g.Failed++
		case wire.JobExhausted:
			g.Exhausted++
		}
		if j.Replayed {
			g.Replayed++
		}
		b := min(int64(buckets-1), max(0, (j.FinishedAt-since)/width))
		g.Sparkline[b]++
	}
	for i := range out.Groups {
		out.Groups[i].FirstSeen = FormatTime(first[out.Groups[i].Group])
	}
	slices.SortStableFunc(out.Groups, func(a, b wire.FailureGroup) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(b.LastSeen, a.LastSeen) // the order read: latest first
	})
	return out
}

// cutMessage keeps the start of a message for display: 300 characters.
func cutMessage(s string) string {
	r := []rune(s)
	if len(r) <= 300 {
		return s
	}
	return string(r[:300]) + "…"
}

// FailureReplayResult is what ReplayFailures selected and did.
type FailureReplayResult struct {
	Count, Skipped, Scanned int64
	Capped                  bool
	BulkResult
}

// ReplayFailures replays, as new jobs (Replay), the failed and exhausted
// jobs the filter selects that no job replays yet, the earliest failure
// first; with preview it only counts them. Otherwise expected is the count
// the person confirmed: another count is a conflict and changes nothing;
// more than wire.MaxBatch jobs is refused. The new jobs are due at once,
// so the endpoint's gates (pause, circuit, maxConcurrent, rate and key
// limits) pace them as any job. One audit entry (failures.replay) names
// the filter and what was done.
func (e *Engine) ReplayFailures(ctx context.Context, p *Principal, f FailureFilter, preview bool, expected int64) (*FailureReplayResult, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	if f.Since != 0 && f.Until != 0 && f.Since >= f.Until {
		return nil, invalidField("since", FormatTime(f.Since), "must be before until ("+FormatTime(f.Until)+")")
	}
	ids, out, err := e.selectFailures(ctx, p, f)
	if err != nil {
		return nil, err
	}
	out.Count = int64(len(ids))
	if preview {
		return out, nil
	}
	if out.Count != expected {
		return nil, conflict("the selection now holds %d jobs, not %d; nothing was done, confirm the new count", out.Count, expected)
	}
	if out.Count == 0 {
		return out, nil // nothing to replay, nothing to audit
	}
	if out.Count > wire.MaxBatch {
		return nil, invalidField("filter", strconv.FormatInt(out.Count, 10)+" jobs", "a replay takes at most 1000 jobs; narrow since and until, or the group")
	}
	if err := e.replayEach(ctx, p, ids, &out.BulkResult); err != nil {
		return nil, err
	}
	return out, e.auditReplay(ctx, p, f, len(ids), out)
}

// replayEach replays each job in its own transaction (as Bulk does),
// recording per job what it did; a database failure ends it.
func (e *Engine) replayEach(ctx context.Context, p *Principal, ids []int64, out *BulkResult) error {
	for _, id := range ids {
		j, err := e.replay(ctx, p, id, false, true)
		if err != nil {
			var ee *Error
			if !errors.As(err, &ee) || ee.Kind == KindUnavailable {
				return err
			}
			out.Failed = append(out.Failed, BulkFailure{ID: id, Err: ee})
			continue
		}
		out.Done = append(out.Done, j.ID)
	}
	return nil
}

// selectFailures reads the ids of the jobs a replay by filter would
// replay, the earliest failure first, and counts what it read.
func (e *Engine) selectFailures(ctx context.Context, p *Principal, f FailureFilter) ([]int64, *FailureReplayResult, error) {
	var ids []int64
	out := &FailureReplayResult{BulkResult: BulkResult{Done: []int64{}}}
	err := e.st.Read(ctx, func(q store.Queries) error {
		jobs, capped, err := scanFailures(ctx, q, p, f)
		if err != nil {
			return err
		}
		out.Scanned, out.Capped = int64(len(jobs)), capped
		for i := len(jobs) - 1; i >= 0; i-- { // the earliest failure first
			j := &jobs[i]
			if f.Classification != "" && j.Classification != f.Classification {
				continue
			}
			if id, _ := groupOf(j); f.Group != "" && id != f.Group {
				continue
			}
			if j.Replayed {
				out.Skipped++
				continue
			}
			ids = append(ids, j.ID)
		}
		return nil
	})
	return ids, out, storeErr(err, "endpoint "+strconv.Quote(f.Endpoint))
}

// auditReplay writes the audit entry of a replay by filter that selected
// selected jobs.
func (e *Engine) auditReplay(ctx context.Context, p *Principal, f FailureFilter, selected int, out *FailureReplayResult) error {
	detail := fmt.Sprintf("replayed %d of %d failed jobs (%s)", len(out.Done), selected, f.describe())
	if len(out.Done) > 0 {
		detail += " as jobs " + idList(out.Done, 20)
	}
	if out.Skipped > 0 {
		detail += fmt.Sprintf("; %d already replayed, skipped", out.Skipped)
	}
	target := "jobs"
	if f.Endpoint != "" {
		target = "endpoint:" + f.Endpoint
	}
	err := e.st.Tx(ctx, func(q store.Queries) error {
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		return e.audit(ctx, q, p, now, "failures.replay", target, detail)
	})
	return storeErr(err, "audit")
}
