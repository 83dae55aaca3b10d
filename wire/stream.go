package wire

// StreamQuery is GET /v1/stream: server-sent events (text/event-stream) for
// one job (job=ID), the overview (view=overview) or a jobs list
// (view=jobs, with the filters of GET /v1/jobs). The server re-reads the
// view at most once per second and sends an event only when it changed:
// "job" (a Job as GET /v1/jobs/{id} shows it), "overview" (an Overview) or
// "jobs" (a StreamJobs). The first event describes the view as it is when
// the stream opens. A comment line ": ping" comes every 15 s so clients and
// proxies know the stream is alive. At most 8 streams per key and 256 per
// server node (429 beyond); streams end when the server shuts down.
type StreamQuery struct {
	Job  string `json:"job,omitempty" query:"id" doc:"a job id: the stream sends event job when the job changes"`
	View string `json:"view,omitempty" doc:"overview, or jobs (then the filters of GET /v1/jobs may follow: state, tool, endpoint, runId, flowKey, createdAfter, createdBefore, limit)"`
}

// StreamJobs is the data of a "jobs" event of GET /v1/stream?view=jobs:
// the list's first page or its counts changed since the last event
// (Changed is false only in the first event), and the counts per state of
// the jobs the filters other than state select.
type StreamJobs struct {
	Changed bool               `json:"changed" doc:"false only in the first event; true: refetch the first page"`
	Counts  map[JobState]int64 `json:"counts" doc:"jobs per state under the filters other than state"`
	Total   int64              `json:"total" doc:"the sum of counts"`
	Capped  bool               `json:"capped" doc:"true when a text search stopped at the newest 50000 jobs of the other filters: the counts are of those"`
}
