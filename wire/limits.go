package wire

import "github.com/getratchet/ratchet/backoff"

// Limits the server enforces at the edge. The engine validates with these
// constants, the OpenAPI document publishes them (through the `bound` tags
// of the wire types) and the pages read them from there, so a limit is
// written once. Retry-policy limits are the backoff package's.
const (
	MinTimeoutMs          = 1_000      // a lease (defaultTimeoutMs, a tool's timeoutMs)
	MaxTimeoutMs          = 43_200_000 // 12 hours
	MinMaxConcurrent      = 1
	MaxMaxConcurrent      = 100_000
	MinRateLimitPerMinute = 1
	MaxRateLimitPerMinute = 1_000_000
	MinCircuitThreshold   = 1
	MaxCircuitThreshold   = 1_000
	MinCircuitOpenMs      = 1_000
	MaxCircuitOpenMs      = 86_400_000
	MinDailyCallBudget    = 1
	MaxDailyCallBudget    = 100_000_000 // a claim counts the day's claims up to the budget, so it bounds that count
	MinMonthlyCallBudget  = 1
	MaxMonthlyCallBudget  = 100_000_000 // counted like the day's: it bounds the count a claim makes
	MaxQuietHoursLen      = 11          // "HH:MM-HH:MM"
	MaxNameLen            = 200         // key, run and worker names
	MaxDescriptionLen     = 4_000       // a tool's description, in characters
	MaxMessageBytes       = 2_000       // a report's message as stored, cut on a character boundary
	MaxFreeThrottles      = 20          // a job's provider throttles (429, 503 with Retry-After) not counted against its maxAttempts; later ones count
	MaxIdempotencyKeyLen  = 255
	MaxFlowKeyLen         = 128 // a job's flow key, in bytes (docs/flow-control.md)
	MaxFlowKeyFromLen     = 200 // a tool's flowKeyFrom JSON Pointer, in bytes
	MaxPayloadBytes       = 256 << 10
	MaxBatch              = 1_000 // jobs of a batch enqueue, reports of a batch report, jobs of a claim or bulk action
	MaxWaitMs             = 30_000
	MaxListLimit          = 500
	MaxPauseReasonLen     = 500 // the reason of an endpoint pause, in characters
	DefaultListLimit      = 100
	MaxSearchChars        = 200 // the q search text of a job query
	MaxListErrorChars     = 200 // a job's lastError as shown in lists

	// NamePattern is an endpoint or tool name; VersionPattern a tool version.
	NamePattern    = `^[a-z0-9][a-z0-9._-]{0,63}$`
	VersionPattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$`
	// ToolRefPattern is "name@version".
	ToolRefPattern = `^[a-z0-9][a-z0-9._-]{0,63}@[A-Za-z0-9][A-Za-z0-9._-]{0,31}$`
)

// A query parameter is text in the URL; a field whose tag says
// query:"BOUND" is an integer in that bound's range, and the OpenAPI
// document types it so.

// Range is an inclusive numeric range.
type Range struct{ Min, Max float64 }

// bounds are the ranges the `bound` struct tags name.
var bounds = map[string]Range{
	"maxAttempts":             {backoff.MinAttempts, backoff.MaxAttempts},
	"initialDelayMs":          {backoff.MinInitialDelayMs, backoff.MaxInitialDelayMs},
	"multiplier":              {backoff.MinMultiplier, backoff.MaxMultiplier},
	"maxDelayMs":              {backoff.MinInitialDelayMs, backoff.MaxMaxDelayMs},
	"jitterPercent":           {backoff.MinJitterPercent, backoff.MaxJitterPercent},
	"timeoutMs":               {MinTimeoutMs, MaxTimeoutMs},
	"maxConcurrent":           {MinMaxConcurrent, MaxMaxConcurrent},
	"rateLimitPerMinute":      {MinRateLimitPerMinute, MaxRateLimitPerMinute},
	"circuitFailureThreshold": {MinCircuitThreshold, MaxCircuitThreshold},
	"circuitOpenMs":           {MinCircuitOpenMs, MaxCircuitOpenMs},
	"dailyCallBudget":         {MinDailyCallBudget, MaxDailyCallBudget},
	"monthlyCallBudget":       {MinMonthlyCallBudget, MaxMonthlyCallBudget},
	"timeZoneLen":             {1, MaxTimeZoneLen},
	"quietHoursLen":           {0, MaxQuietHoursLen},
	"claimMax":                {1, MaxBatch},
	"waitMs":                  {0, MaxWaitMs},
	"id":                      {1, 1 << 53},
	"httpStatus":              {0, 599},
	"retryAfterMs":            {0, 1 << 53},
	"listLimit":               {1, MaxListLimit},
	"keysLimit":               {1, MaxKeysLimit},
	"historyHours":            {HistoryMinHours, HistoryMaxHours},
	"historyMinutes":          {HistoryMinMinutes, HistoryMaxMinutes},
	"catchUpLimit":            {1, MaxCatchUpLimit},
	"spreadMs":                {0, MaxSpreadMs},
	"previewCount":            {1, MaxPreviewCount},
	"alertPausedAfterMs":      {MinAlertPausedAfterMs, MaxAlertPausedAfterMs},
	"alertFailureRate":        {MinAlertFailureRate, MaxAlertFailureRate},
	"alertFailureRateMin":     {MinAlertFailureRateMin, MaxAlertFailureRateMin},
	"alertWindowMs":           {MinAlertWindowMs, MaxAlertWindowMs},
	"alertMaxPerWindow":       {MinAlertMaxPerWindow, MaxAlertMaxPerWindow},
}

// Bound is the range a `bound` tag names.
func Bound(name string) (Range, bool) {
	r, ok := bounds[name]
	return r, ok
}
