package api

import (
	"regexp"
	"strconv"
	"time"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/wire"
)

// classificationRE is the form of a classification code (classify.Code…,
// network_<kind>): what a filter may name.
var classificationRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// rfc3339Param parses an optional RFC 3339 time into unix milliseconds.
func rfc3339Param(errs *field.Errors, name, s string) int64 {
	if s == "" {
		return 0
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.UnixMilli() <= 0 {
		errs.Add(name, showText(s), "must be an RFC 3339 time after 1970, e.g. 2026-12-06T09:00:00Z")
		return 0
	}
	return t.UnixMilli()
}

// sinceUntil checks that a time range, when both ends are given, is not
// empty.
func sinceUntil(errs *field.Errors, sinceText string, since, until int64) {
	if since != 0 && until != 0 && since >= until {
		errs.Add("since", showText(sinceText), "must be before until")
	}
}

func (a *API) failureGroups(c *call[wire.FailureGroupsQuery]) (*wire.FailureGroupList, error) {
	var errs field.Errors
	since := rfc3339Param(&errs, "since", c.in.Since)
	until := rfc3339Param(&errs, "until", c.in.Until)
	sinceUntil(&errs, c.in.Since, since, until)
	buckets := wire.DefaultFailureBuckets
	if c.in.Buckets != "" {
		v, err := strconv.Atoi(c.in.Buckets)
		if err != nil || v < 1 || v > wire.MaxFailureBuckets {
			errs.Add("buckets", showText(c.in.Buckets), "must be an integer from 1 through "+strconv.Itoa(wire.MaxFailureBuckets))
		}
		buckets = v
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return a.e.FailureGroups(c.ctx(), c.p, c.r.PathValue("name"), since, until, buckets)
}

// failureFilter checks a replay's filter; every refusal names the field,
// the value and what is allowed.
func failureFilter(req *wire.FailureReplay) (engine.FailureFilter, error) {
	var errs field.Errors
	f := engine.FailureFilter{Endpoint: req.Endpoint, Classification: req.Classification, Group: req.Group}
	if len(req.Endpoint) > 200 || badText(req.Endpoint) {
		errs.Add("endpoint", showText(cutChars(req.Endpoint, 40)), "must be an endpoint name (text of at most 200 bytes)")
	}
	if req.State != "" {
		s := wire.JobState(req.State)
		if !s.Unsuccessful() {
			errs.Add("state", showText(req.State), "must be "+wire.JoinOr(wire.JobStatesWhere(wire.JobState.Unsuccessful))+", or empty for both")
		}
		f.State = s
	}
	if req.Classification != "" && !classificationRE.MatchString(req.Classification) {
		errs.Add("classification", showText(cutChars(req.Classification, 40)), "must be a classification code such as server_error: a lowercase letter, then lowercase letters, digits or underscores, at most 64 in all")
	}
	if req.Group != "" && !classify.ValidGroupID(req.Group) {
		errs.Add("group", showText(cutChars(req.Group, 40)), "must be a failure group: 12 lowercase hex digits, as GET /v1/endpoints/{name}/failures lists")
	}
	f.Since = rfc3339Param(&errs, "since", req.Since)
	f.Until = rfc3339Param(&errs, "until", req.Until)
	sinceUntil(&errs, req.Since, f.Since, f.Until)
	switch {
	case !req.Preview && req.ExpectedCount == nil:
		errs.Add("expectedCount", field.Missing, "required without preview: the count the person confirmed")
	case req.ExpectedCount != nil && *req.ExpectedCount < 0:
		errs.Add("expectedCount", strconv.FormatInt(*req.ExpectedCount, 10), "must be 0 or more")
	}
	return f, errs.Err()
}

// replayFailures previews or replays the failed jobs a filter selects.
func (a *API) replayFailures(c *call[wire.FailureReplay]) (*wire.FailureReplayResult, error) {
	f, err := failureFilter(&c.in)
	if err != nil {
		return nil, err
	}
	var expected int64
	if c.in.ExpectedCount != nil {
		expected = *c.in.ExpectedCount
	}
	res, err := a.e.ReplayFailures(c.ctx(), c.p, f, c.in.Preview, expected)
	if err != nil {
		return nil, err
	}
	out := &wire.FailureReplayResult{Preview: c.in.Preview, Count: res.Count, Skipped: res.Skipped, Scanned: res.Scanned, Capped: res.Capped,
		Replayed: int64(len(res.Done)), Jobs: res.Done, Failed: []wire.JobBulkFailed{}}
	for _, f := range res.Failed {
		out.Failed = append(out.Failed, wire.JobBulkFailed{ID: f.ID, Error: f.Err.Error()})
	}
	return out, nil
}
