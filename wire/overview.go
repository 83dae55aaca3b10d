package wire

// Overview is GET /v1/overview: per-endpoint live state for the dashboard.
type Overview struct {
	Now       string             `json:"now" format:"date-time"`
	Endpoints []OverviewEndpoint `json:"endpoints"`
}

// OverviewEndpoint is an endpoint with its live counts and what holds its
// due jobs.
type OverviewEndpoint struct {
	Endpoint
	Running        int64                    `json:"running"`
	ClaimsInWindow int64                    `json:"claimsInWindow" doc:"claims in the last 60 s"`
	Scheduled      int64                    `json:"scheduled"`
	Due            int64                    `json:"due" doc:"scheduled and due now, counted up to 10000"`
	HeldBy         *Hold                    `json:"heldBy"`
	Outcomes5m     map[AttemptOutcome]int64 `json:"outcomes5m"`
	Outcomes1h     map[AttemptOutcome]int64 `json:"outcomes1h"`
}

// ClockAdvance is POST /v1/dev/clock on a server started with --dev-clock:
// AdvanceMs moves its clock; the answer carries the new Now.
type ClockAdvance struct {
	AdvanceMs int64  `json:"advanceMs" minimum:"1" maximum:"2592000000" doc:"milliseconds, at most 30 days"`
	Now       string `json:"now,omitempty" format:"date-time"`
}
