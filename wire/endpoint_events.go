package wire

// EndpointEventKind is what happened to an endpoint in its event log: a
// change of its circuit, a pause or resume, and the recovery and learned
// limits of issue 41. Each is written in the transaction of the change,
// so the log is exactly the endpoint's history; alerts read it.
type EndpointEventKind string

// Endpoint event kinds.
const (
	EndpointCircuitOpened   EndpointEventKind = "circuit_opened"    // the circuit opened: counted failures reached the threshold, a probe failed, or an owner opened it
	EndpointCircuitHalfOpen EndpointEventKind = "circuit_half_open" // the open time passed and a claim took the probe
	EndpointCircuitClosed   EndpointEventKind = "circuit_closed"    // a probe's answer or an owner closed the circuit
	EndpointPaused          EndpointEventKind = "paused"            // an owner paused the endpoint
	EndpointResumed         EndpointEventKind = "resumed"           // an owner resumed it
	EndpointRecoveryStarted EndpointEventKind = "recovery_started"  // admission started to ramp up after a closed circuit, a resume or a raised limit
	EndpointRecoveryEnded   EndpointEventKind = "recovery_ended"    // the ramp reached the configured limits: the backlog drained at the provider's pace
	EndpointLimitLearned    EndpointEventKind = "limit_learned"     // the rate learned from the provider's headers changed
)

// EndpointEventKinds lists every endpoint event kind.
func EndpointEventKinds() []EndpointEventKind {
	return []EndpointEventKind{EndpointCircuitOpened, EndpointCircuitHalfOpen, EndpointCircuitClosed, EndpointPaused, EndpointResumed,
		EndpointRecoveryStarted, EndpointRecoveryEnded, EndpointLimitLearned}
}

// EndpointEventsQuery is the query of GET /v1/endpoints/{name}/events.
type EndpointEventsQuery struct {
	Since  string `json:"since,omitempty" doc:"RFC 3339 time, inclusive: events at or after it; default: all kept"`
	Cursor string `json:"cursor,omitempty" doc:"nextCursor of the previous page"`
	Limit  string `json:"limit,omitempty" query:"listLimit" doc:"1–500, default 100"`
}

// EndpointEvent is one entry of an endpoint's event log, with the facts
// known at the change. Facts that do not apply to the kind are 0, empty or
// null.
type EndpointEvent struct {
	ID          int64             `json:"id"`
	Endpoint    string            `json:"endpoint"`
	At          string            `json:"at" format:"date-time"`
	Kind        EndpointEventKind `json:"kind"`
	Failures    int64             `json:"failures" doc:"consecutive counted failures of the circuit at the change"`
	Threshold   int64             `json:"threshold" doc:"the circuit's failure threshold (circuitFailureThreshold) at the change"`
	OpenedAt    *string           `json:"openedAt" format:"date-time" doc:"when the circuit opened; null when it is not open"`
	NextProbeAt *string           `json:"nextProbeAt" format:"date-time" doc:"when the circuit half-opens and a claim probes; null when it is not open"`
	ProbeJob    int64             `json:"probeJob" doc:"the half-open probe's job; 0 for none"`
	HeldJobs    int64             `json:"heldJobs" doc:"the endpoint's scheduled jobs at the change"`
	Actor       string            `json:"actor" doc:"the key that acted, for changes by hand; empty for Ratchet's own"`
	Detail      string            `json:"detail" doc:"one sentence for people"`
	Facts       map[string]int64  `json:"facts" doc:"numbers of the kind that have no field of their own (e.g. a ramp's allowed in flight, a learned limit); empty for none"`
}

// EndpointEventList is GET /v1/endpoints/{name}/events: newest first;
// NextCursor is null on the last page.
type EndpointEventList struct {
	Events     []EndpointEvent `json:"events"`
	NextCursor *string         `json:"nextCursor"`
}
