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

// HistorySeries is one endpoint's points, oldest first.
type HistorySeries struct {
	Endpoint string         `json:"endpoint"`
	Points   []HistoryPoint `json:"points"`
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
	// WorkerJobsShown is how many running job ids a worker lists.
	WorkerJobsShown = 20
)
