package wire

import "encoding/json"

// Limits of a schedule (docs/schedules.md).
const (
	// MinEverySeconds is the shortest interval of an "@every" schedule. A
	// cron expression fires at most once a minute by its form (five
	// fields, the first the minute).
	MinEverySeconds = 10
	// MaxSpreadMs is the longest spread window; a window must also be
	// shorter than the schedule's shortest interval.
	MaxSpreadMs = 86_400_000
	// MaxCatchUpLimit is the most missed ticks catch-up "all" fires.
	MaxCatchUpLimit = 100
	// DefaultCatchUpLimit is catchUpLimit when catch-up "all" names none.
	DefaultCatchUpLimit = 10
	// MaxCronLen is the longest cron expression, in bytes.
	MaxCronLen = 200
	// MaxTimeZoneLen is the longest IANA zone name, in bytes.
	MaxTimeZoneLen = 64
	// MaxPreviewCount is the most fire times a preview lists.
	MaxPreviewCount = 100
	// DefaultPreviewCount is the fire times a preview lists by default.
	DefaultPreviewCount = 10
	// TickPlaceholder is replaced, wherever it appears in a schedule's
	// payload, by the tick time (RFC 3339 UTC with milliseconds).
	TickPlaceholder = "{{tickAt}}"
)

// ScheduleCreate is POST /v1/schedules.
type ScheduleCreate struct {
	Name         string          `json:"name" pattern:"name"`
	Cron         string          `json:"cron" maxLength:"200" doc:"five cron fields (minute hour day-of-month month day-of-week, 0 or 7 for Sunday; when either day field starts with *, a day must match both, as in Vixie cron and cronie), or @yearly, @monthly, @weekly, @daily, @hourly, or @every <duration> of at least 10s in whole seconds"`
	TimeZone     string          `json:"timeZone,omitempty" maxLength:"64" doc:"the IANA time zone the cron fields are read in; default UTC"`
	Tool         string          `json:"tool" pattern:"toolRef"`
	Payload      json.RawMessage `json:"payload,omitempty" doc:"the payload of every tick's job; the text {{tickAt}} in it becomes the tick time (RFC 3339 UTC); with every {{tickAt}} so replaced it must stay within the payload limit, and each tick's job keeps every rule of POST /v1/jobs"`
	FlowKey      string          `json:"flowKey,omitempty" maxLength:"128" doc:"the flow key of every tick's job (docs/flow-control.md); absent for none"`
	Paused       bool            `json:"paused,omitempty" doc:"create it paused; default active"`
	Overlap      ScheduleOverlap `json:"overlap,omitempty" doc:"what a tick does while the previous tick's job has not finished; default skip"`
	CatchUp      ScheduleCatchUp `json:"catchUp,omitempty" doc:"which ticks missed while no node ran fire late; default latest"`
	CatchUpLimit int64           `json:"catchUpLimit,omitempty" bound:"catchUpLimit" doc:"with catchUp all, the most missed ticks fired (the latest ones); default 10"`
	SpreadMs     int64           `json:"spreadMs,omitempty" bound:"spreadMs" doc:"a window after each tick; the schedule fires at the same offset in it every tick, from a hash of the project and the name; shorter than the shortest interval; default 0"`
}

// Schedule is a recurring job: one job per tick of its cron expression.
type Schedule struct {
	Name           string          `json:"name"`
	Cron           string          `json:"cron"`
	TimeZone       string          `json:"timeZone"`
	Tool           string          `json:"tool"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	FlowKey        string          `json:"flowKey" doc:"empty for none"`
	Paused         bool            `json:"paused"`
	Overlap        ScheduleOverlap `json:"overlap"`
	CatchUp        ScheduleCatchUp `json:"catchUp"`
	CatchUpLimit   int64           `json:"catchUpLimit"`
	SpreadMs       int64           `json:"spreadMs"`
	SpreadOffsetMs int64           `json:"spreadOffsetMs" doc:"where in the spread window this schedule fires, every tick"`
	NextTickAt     string          `json:"nextTickAt,omitempty" format:"date-time" doc:"the next tick; absent while paused"`
	NextFireAt     string          `json:"nextFireAt,omitempty" format:"date-time" doc:"the next tick plus the spread offset: when its job is due; absent while paused"`
	CreatedAt      string          `json:"createdAt" format:"date-time"`
	LastTicks      []ScheduleTick  `json:"lastTicks" doc:"the latest ticks, newest first"`
	Last24h        *TickCounts     `json:"last24h,omitempty" doc:"its ticks over the last 24 hours by outcome; in a read of one schedule only"`
}

// TickCounts counts a schedule's ticks since a time.
type TickCounts struct {
	Since    string `json:"since" format:"date-time" doc:"ticks at or after this time count"`
	Ticks    int64  `json:"ticks" doc:"ticks recorded (the cron's ticks that fired, skipped or failed, and ticks fired by hand)"`
	Enqueued int64  `json:"enqueued"`
	Skipped  int64  `json:"skipped" doc:"overlap skip: the previous job had not finished"`
	Replaced int64  `json:"replaced"`
	Failed   int64  `json:"failed" doc:"no job could be made"`
	Missed   int64  `json:"missed" doc:"ticks the catch-up policy dropped after no node ran"`
}

// ScheduleQuery is the query of GET /v1/schedules.
type ScheduleQuery struct {
	Cursor string `json:"cursor,omitempty" doc:"nextCursor of the previous page"`
	Limit  string `json:"limit,omitempty" query:"listLimit" doc:"1–500, default 100"`
}

// ScheduleList is GET /v1/schedules: by name; NextCursor is null on the
// last page.
type ScheduleList struct {
	Schedules  []Schedule `json:"schedules"`
	NextCursor *string    `json:"nextCursor"`
}

// ScheduleTickQuery is the query of GET /v1/schedules/{name}/ticks.
type ScheduleTickQuery struct {
	Cursor string `json:"cursor,omitempty" doc:"nextCursor of the previous page"`
	Limit  string `json:"limit,omitempty" query:"listLimit" doc:"1–500, default 100"`
}

// ScheduleTickList is GET /v1/schedules/{name}/ticks: newest first;
// NextCursor is null on the last page.
type ScheduleTickList struct {
	Ticks      []ScheduleTick `json:"ticks"`
	NextCursor *string        `json:"nextCursor"`
}

// ScheduleTick is one tick of a schedule and what it did.
type ScheduleTick struct {
	TickAt        string          `json:"tickAt" format:"date-time"`
	FireAt        string          `json:"fireAt" format:"date-time" doc:"tickAt plus the spread offset; the job's due time"`
	FiredAt       string          `json:"firedAt" format:"date-time" doc:"when a node handled the tick"`
	Outcome       TickOutcome     `json:"outcome"`
	Overlap       ScheduleOverlap `json:"overlap" doc:"the overlap policy the tick applied"`
	JobID         int64           `json:"jobId,omitzero" doc:"the tick's job; absent when skipped or failed"`
	PreviousJobID int64           `json:"previousJobId,omitzero" doc:"the unfinished job of an earlier tick that was skipped over or cancelled"`
	Missed        int64           `json:"missed,omitzero" doc:"ticks before this one that the catch-up policy dropped"`
	Error         string          `json:"error,omitempty" doc:"why a failed tick made no job"`
}

// SchedulePreview is GET /v1/schedules/{name}/preview.
type SchedulePreview struct {
	Count string `json:"count,omitempty" query:"previewCount" doc:"how many fire times; default 10"`
}

// ScheduleFires is the answer of a preview: the next fire times.
type ScheduleFires struct {
	Fires []ScheduleFire `json:"fires"`
}

// ScheduleFire is one coming tick.
type ScheduleFire struct {
	TickAt string `json:"tickAt" format:"date-time"`
	FireAt string `json:"fireAt" format:"date-time" doc:"tickAt plus the spread offset"`
}

// ScheduleOverlap is what a tick does while the previous tick's job has
// not finished.
type ScheduleOverlap string

// Overlap policies.
const (
	OverlapSkip           ScheduleOverlap = "skip"            // the tick makes no job
	OverlapAllow          ScheduleOverlap = "allow"           // the tick makes its job anyway
	OverlapCancelPrevious ScheduleOverlap = "cancel_previous" // the previous job is cancelled, then the tick's job made
)

// ScheduleOverlaps lists every overlap policy.
func ScheduleOverlaps() []ScheduleOverlap {
	return []ScheduleOverlap{OverlapSkip, OverlapAllow, OverlapCancelPrevious}
}

// ScheduleCatchUp is which missed ticks fire after no node ran.
type ScheduleCatchUp string

// Catch-up policies.
const (
	CatchUpNone   ScheduleCatchUp = "none"   // missed ticks are dropped
	CatchUpLatest ScheduleCatchUp = "latest" // the latest missed tick fires
	CatchUpAll    ScheduleCatchUp = "all"    // every missed tick fires, up to catchUpLimit (the latest)
)

// ScheduleCatchUps lists every catch-up policy.
func ScheduleCatchUps() []ScheduleCatchUp {
	return []ScheduleCatchUp{CatchUpNone, CatchUpLatest, CatchUpAll}
}

// TickOutcome is what a tick did.
type TickOutcome string

// Tick outcomes.
const (
	TickEnqueued TickOutcome = "enqueued" // its job was made
	TickSkipped  TickOutcome = "skipped"  // overlap skip: the previous job had not finished
	TickReplaced TickOutcome = "replaced" // overlap cancel_previous: the previous job was cancelled, its job made
	TickFailed   TickOutcome = "failed"   // no job could be made (see error)
)

// TickOutcomes lists every tick outcome.
func TickOutcomes() []TickOutcome {
	return []TickOutcome{TickEnqueued, TickSkipped, TickReplaced, TickFailed}
}
