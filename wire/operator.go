package wire

// EndpointPause says who paused an endpoint, when and why.
type EndpointPause struct {
	At     string `json:"at" format:"date-time"`
	By     string `json:"by" doc:"the acting key's name, or its prefix when it has none"`
	Reason string `json:"reason" doc:"the reason given; empty for none"`
}

// EndpointPauseRequest is POST /v1/endpoints/{name}/pause. Pausing a
// paused endpoint answers 200 and keeps the first pause.
type EndpointPauseRequest struct {
	Reason string `json:"reason,omitempty" maxLength:"500" doc:"free text for the people who see the pause; at most 500 characters"`
}

// HeldList is GET /v1/endpoints/{name}/held: a page of the endpoint's held
// jobs and how many are held in all, the same count as the overview's.
type HeldList struct {
	JobList
	Due        int64       `json:"due" doc:"the endpoint's due jobs, held or not: the overview's due"`
	Held       int64       `json:"held" doc:"due jobs the endpoint's gates hold now, all pages together: due when a gate holds them, 0 when none does"`
	HeldCapped bool        `json:"heldCapped" doc:"due and held are lower bounds (the overview's dueCapped)"`
	Dispatcher *Dispatcher `json:"dispatcher" doc:"as in the overview: set when Ratchet's HTTP dispatcher delivers some of the endpoint's tools"`
}

// HeldQuery is the query of GET /v1/endpoints/{name}/held.
type HeldQuery struct {
	Cursor string `json:"cursor,omitempty" doc:"nextCursor of the previous page"`
	Limit  string `json:"limit,omitempty" query:"listLimit" doc:"1–500, default 100"`
}

// DefaultKeysLimit and MaxKeysLimit are how many flow keys GET
// /v1/endpoints/{name}/keys lists without a limit, and at most.
const (
	DefaultKeysLimit = 10
	MaxKeysLimit     = 100
)

// FlowKeysQuery is the query of GET /v1/endpoints/{name}/keys.
type FlowKeysQuery struct {
	Limit string `json:"limit,omitempty" query:"keysLimit" doc:"1–100, default 10"`
}

// FlowKeyList is GET /v1/endpoints/{name}/keys: the endpoint's flow keys
// with the most running and scheduled jobs, most first.
type FlowKeyList struct {
	Endpoint string        `json:"endpoint"`
	Keyed    bool          `json:"keyed" doc:"the endpoint has limits per key (keyMaxConcurrent, keyRateLimitPerMinute, keyOrdered or fairKeys)"`
	Keys     []FlowKeyLoad `json:"keys"`
	Capped   bool          `json:"capped" doc:"the endpoint has more than 200,000 running or scheduled keyed jobs: the counts are of the first 200,000 of each state read"`
	Now      string        `json:"now" format:"date-time"`
}

// FlowKeyLoad is one flow key's jobs on an endpoint and what holds them.
type FlowKeyLoad struct {
	Key       string `json:"key"`
	Running   int64  `json:"running"`
	Scheduled int64  `json:"scheduled"`
	Due       int64  `json:"due" doc:"scheduled jobs whose due time has passed"`
	Held      int64  `json:"held" doc:"due jobs that a limit of this key holds now (the endpoint's own gates aside)"`
	HeldBy    *Hold  `json:"heldBy" doc:"the key's limit that holds them (key_order, key_concurrency or key_rate); null when none"`
}

// AuditQuery is the query of GET /v1/audit.
type AuditQuery struct {
	Target string `json:"target,omitempty" doc:"only entries about this target, e.g. endpoint:payments or job:42"`
	Cursor string `json:"cursor,omitempty" doc:"nextCursor of the previous page"`
	Limit  string `json:"limit,omitempty" query:"listLimit" doc:"1–500, default 100"`
}

// AuditEntry is one operator action.
type AuditEntry struct {
	ID        int64  `json:"id"`
	At        string `json:"at" format:"date-time"`
	Actor     string `json:"actor" doc:"the acting key's name, or its prefix when it has none"`
	KeyPrefix string `json:"keyPrefix" doc:"the acting key's prefix"`
	Action    string `json:"action" doc:"endpoint.pause, endpoint.resume, circuit.close, circuit.open, job.run_now, job.cancel, job.replay, bulk.cancel, bulk.replay, bulk.run_now, failures.replay, schedule.fire_now, policy.update, key.create, key.revoke, alert.sink.create, alert.sink.delete, alert.settings, alert.test or key.recover (a new owner key made on the database by ratchet keys recover, its actor \"offline recovery\")"`
	Target    string `json:"target" doc:"what it acted on, e.g. endpoint:payments or job:42"`
	Detail    string `json:"detail" doc:"one sentence for people"`
}

// AuditList is GET /v1/audit: newest first; NextCursor is null on the last
// page.
type AuditList struct {
	Entries    []AuditEntry `json:"entries"`
	NextCursor *string      `json:"nextCursor"`
}
