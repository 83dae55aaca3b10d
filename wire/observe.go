package wire

// WorkerList is GET /v1/workers: the project's workers seen in the last 24
// hours, latest activity first.
type WorkerList struct {
	Workers []WorkerStatus `json:"workers"`
}

// WorkerStatus is one worker id as the servers saw it claim, heartbeat and
// report, with the running jobs it holds now. The times are recorded at
// most once per second per worker by each node.
type WorkerStatus struct {
	WorkerID        string  `json:"workerId"`
	FirstSeenAt     string  `json:"firstSeenAt" format:"date-time"`
	LastClaimAt     *string `json:"lastClaimAt" format:"date-time" doc:"null when never seen claiming"`
	LastHeartbeatAt *string `json:"lastHeartbeatAt" format:"date-time" doc:"null when never seen heartbeating"`
	LastReportAt    *string `json:"lastReportAt" format:"date-time" doc:"null when never seen reporting"`
	Holding         int64   `json:"holding" doc:"running jobs leased to this worker now"`
	Jobs            []int64 `json:"jobs" maxItems:"20" doc:"ids of up to 20 of those jobs, newest first"`
}

// HistoryQuery is the query of GET /v1/history.
type HistoryQuery struct {
	Endpoint string `json:"endpoint,omitempty" doc:"one endpoint's name; default every endpoint"`
	Hours    string `json:"hours,omitempty" query:"historyHours" doc:"how far back: 1–48 hours, default 6"`
	Minutes  string `json:"minutes,omitempty" query:"historyMinutes" doc:"how far back in minutes, 15–2880, instead of hours: 15 shows an outage minute by minute"`
}

// History is GET /v1/history: per-minute roll-ups of each endpoint's
// claims, outcomes and due-to-claim lag over [from, to). A minute is
// rolled up once it has closed; minutes without activity have no point.
type History struct {
	MinuteMs int64           `json:"minuteMs" doc:"the length of one point: 60000"`
	From     string          `json:"from" format:"date-time"`
	To       string          `json:"to" format:"date-time" doc:"the start of the current minute (exclusive)"`
	Series   []HistorySeries `json:"series"`
}

// HistorySeries is one endpoint's points, oldest first, with the detail
// the roll-ups do not keep, read from the range's attempts and the audit
// log: failures by class, latency, and markers.
type HistorySeries struct {
	Endpoint string          `json:"endpoint"`
	Points   []HistoryPoint  `json:"points"`
	Detail   []HistoryDetail `json:"detail" doc:"minutes with finished attempts from detailFrom on, oldest first"`
	Markers  []HistoryMarker `json:"markers" doc:"the endpoint's events in the range (its circuit's changes, pauses, recovery ramp, learned limits), oldest first"`
	// DetailFrom is where Detail starts: From, or later when the range
	// held more attempts than History reads (the latest 20000).
	DetailFrom string `json:"detailFrom" format:"date-time" doc:"detail covers [detailFrom, to): from, or later when more than 20000 attempts finished in the range (the latest are read)"`
}

// HistoryDetail is one endpoint's minute as an outage is read: its
// finished attempts, the failed ones by class, and the provider's latency.
type HistoryDetail struct {
	At           string           `json:"at" format:"date-time" doc:"the minute's start"`
	Attempts     int64            `json:"attempts" doc:"attempts finished in the minute"`
	Failures     map[string]int64 `json:"failures" doc:"failed and timed-out attempts by class: throttled, server_error, network, timeout, client_error, worker, other (classification codes grouped; docs/dashboard.md)"`
	LatencyP50Ms int64            `json:"latencyP50Ms" doc:"median duration of the attempts the provider answered (an HTTP delivery's request, else claim to report); 0 when none"`
	LatencyP95Ms int64            `json:"latencyP95Ms" doc:"95th percentile of the same durations"`
}

// HistoryMarker is a moment of an endpoint's history: an entry of its
// event log (GET /v1/endpoints/{name}/events) — a change of its circuit,
// a pause or resume, its recovery ramp, a learned limit.
type HistoryMarker struct {
	At     string            `json:"at" format:"date-time"`
	Kind   EndpointEventKind `json:"kind"`
	Detail string            `json:"detail" doc:"who (for a change by hand) and what, in a sentence"`
}

// HistoryPoint is one endpoint's minute.
type HistoryPoint struct {
	At        string `json:"at" format:"date-time" doc:"the minute's start"`
	Claims    int64  `json:"claims" doc:"attempts claimed in the minute"`
	Succeeded int64  `json:"succeeded" doc:"attempts that succeeded in the minute"`
	Failed    int64  `json:"failed" doc:"attempts reported failed in the minute"`
	TimedOut  int64  `json:"timedOut" doc:"attempts whose lease expired in the minute"`
	LagAvgMs  int64  `json:"lagAvgMs" doc:"average due-to-claim lag of the minute's claims (claim time minus due time)"`
	LagMaxMs  int64  `json:"lagMaxMs" doc:"largest due-to-claim lag of the minute's claims"`
}

// Bounds of GET /v1/history.
const (
	HistoryMinHours     = 1
	HistoryMaxHours     = 48
	HistoryDefaultHours = 6
	// HistoryMinMinutes and HistoryMaxMinutes bound the minutes query.
	HistoryMinMinutes = 15
	HistoryMaxMinutes = HistoryMaxHours * 60
	// WorkerJobsShown is how many running job ids a worker lists.
	WorkerJobsShown = 20
)
