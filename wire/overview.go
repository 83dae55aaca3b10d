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
	Due            int64                    `json:"due" doc:"scheduled and due now: exact, unless dueCapped"`
	DueCapped      bool                     `json:"dueCapped" doc:"due is a lower bound: more than 10000 jobs are due and more than 10000 scheduled for later"`
	HeldBy         *Hold                    `json:"heldBy" doc:"the gate that holds the due jobs (then all due jobs are held); null when none does"`
	Dispatcher     *Dispatcher              `json:"dispatcher" doc:"set when Ratchet's own HTTP dispatcher delivers some of the endpoint's tools; null when workers run them all"`
	Outcomes5m     map[AttemptOutcome]int64 `json:"outcomes5m"`
	Outcomes1h     map[AttemptOutcome]int64 `json:"outcomes1h"`
}

// Dispatcher is what the overview says of Ratchet's own HTTP dispatcher
// for an endpoint with HTTP-delivered tools: due jobs no gate holds wait
// for it, not for a worker.
type Dispatcher struct {
	Concurrency int  `json:"concurrency" doc:"HTTP deliveries this node runs at once; 0 when this node runs none"`
	WorkerTools bool `json:"workerTools" doc:"some of the endpoint's tools are run by workers too"`
}

// ClockAdvance is POST /v1/dev/clock on a server started with --dev-clock:
// AdvanceMs moves its clock; the answer carries the new Now.
type ClockAdvance struct {
	AdvanceMs int64  `json:"advanceMs" minimum:"1" maximum:"2592000000" doc:"milliseconds, at most 30 days"`
	Now       string `json:"now,omitempty" format:"date-time"`
}
