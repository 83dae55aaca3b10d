package wire

// FailureScanBound is how many failed and exhausted jobs (latest failure
// first) a failure view or a replay by filter reads at most; Capped says
// the bound was reached, so older failures in the range were not read.
const FailureScanBound = 10_000

// DefaultFailureBuckets and MaxFailureBuckets are how many time buckets a
// failure group's sparkline has without buckets, and at most.
const (
	DefaultFailureBuckets = 24
	MaxFailureBuckets     = 96
)

// FailureGroupsQuery is the query of GET /v1/endpoints/{name}/failures.
type FailureGroupsQuery struct {
	Since   string `json:"since,omitempty" doc:"RFC 3339 time, inclusive: failures at or after it; default 24 hours before until"`
	Until   string `json:"until,omitempty" doc:"RFC 3339 time, exclusive: failures before it; default now"`
	Buckets string `json:"buckets,omitempty" doc:"time buckets of each sparkline, 1–96, default 24"`
}

// FailureGroupList is GET /v1/endpoints/{name}/failures: the endpoint's
// failed and exhausted jobs of a time range grouped by classification and
// message fingerprint, the largest group first.
type FailureGroupList struct {
	Endpoint string         `json:"endpoint"`
	Since    string         `json:"since" format:"date-time"`
	Until    string         `json:"until" format:"date-time"`
	BucketMs int64          `json:"bucketMs" doc:"the width of one sparkline bucket; bucket 0 starts at since"`
	Groups   []FailureGroup `json:"groups"`
	Scanned  int64          `json:"scanned" doc:"failed and exhausted jobs read"`
	Capped   bool           `json:"capped" doc:"more than 10,000 jobs failed in the range: the groups are of the latest 10,000"`
}

// FailureGroup is failures of one classification whose messages have one
// fingerprint (numbers, hex ids, UUIDs, times and quoted values taken
// out).
type FailureGroup struct {
	Group          string  `json:"group" doc:"12 hex digits naming the classification and fingerprint; the group filter of a replay"`
	Classification string  `json:"classification"`
	Fingerprint    string  `json:"fingerprint" doc:"the message with what varies replaced: <n>, <hex>, <id>, <uuid>, <time>, \"…\""`
	Example        string  `json:"example" doc:"the message of the latest failure of the group"`
	Count          int64   `json:"count"`
	Failed         int64   `json:"failed" doc:"of count, jobs failed (not retryable)"`
	Exhausted      int64   `json:"exhausted" doc:"of count, jobs that used up their attempts"`
	Replayed       int64   `json:"replayed" doc:"of count, jobs a job replays already; a replay of the group skips them"`
	FirstSeen      string  `json:"firstSeen" format:"date-time"`
	LastSeen       string  `json:"lastSeen" format:"date-time"`
	Sparkline      []int64 `json:"sparkline" doc:"failures per time bucket, oldest first"`
}

// FailureReplay is POST /v1/failures/replay: replay, as new jobs, the
// failed and exhausted jobs a filter selects that no job replays yet. With
// preview it only counts them. Otherwise ExpectedCount is the count the
// person confirmed: when the selection holds another count nothing is done
// (409); a replay takes at most 1000 jobs. The new jobs are due at once
// and wait, like any job, for their endpoint's gates (pause, circuit,
// maxConcurrent, rate and key limits).
type FailureReplay struct {
	Endpoint       string `json:"endpoint,omitempty" doc:"only this endpoint's jobs"`
	State          string `json:"state,omitempty" doc:"failed or exhausted; default both"`
	Classification string `json:"classification,omitempty" maxLength:"64" doc:"only jobs whose last attempt had this classification"`
	Group          string `json:"group,omitempty" doc:"only jobs of this failure group (12 hex digits, FailureGroup.group)"`
	Since          string `json:"since,omitempty" doc:"RFC 3339 time, inclusive: jobs that failed at or after it"`
	Until          string `json:"until,omitempty" doc:"RFC 3339 time, exclusive: jobs that failed before it"`
	Preview        bool   `json:"preview,omitempty" doc:"count only; change nothing"`
	ExpectedCount  *int64 `json:"expectedCount,omitempty" minimum:"0" doc:"required without preview: the count the person confirmed"`
}

// FailureReplayResult answers POST /v1/failures/replay.
type FailureReplayResult struct {
	Preview  bool            `json:"preview"`
	Count    int64           `json:"count" doc:"jobs selected (with preview: that a replay would replay now)"`
	Skipped  int64           `json:"skipped" doc:"jobs the filter matches that a job replays already"`
	Scanned  int64           `json:"scanned" doc:"failed and exhausted jobs read"`
	Capped   bool            `json:"capped" doc:"more than 10,000 jobs matched the endpoint, state and time range: only the latest 10,000 were read"`
	Replayed int64           `json:"replayed" doc:"jobs replayed (0 with preview)"`
	Jobs     []int64         `json:"jobs" doc:"the new jobs"`
	Failed   []JobBulkFailed `json:"failed" doc:"jobs that could not be replayed, and why"`
}
