package wire

// AlertSinkKind is the body an alert sink receives (docs/alerts.md).
type AlertSinkKind string

// Alert sink kinds.
const (
	SinkWebhook AlertSinkKind = "webhook" // the alert as JSON, signed with Standard Webhooks
	SinkSlack   AlertSinkKind = "slack"   // a Slack incoming webhook: {"text", "blocks"}
	SinkTeams   AlertSinkKind = "teams"   // a Microsoft Teams incoming webhook (Workflows): a message with an Adaptive Card
)

// AlertSinkKinds lists every alert sink kind.
func AlertSinkKinds() []AlertSinkKind { return []AlertSinkKind{SinkWebhook, SinkSlack, SinkTeams} }

// AlertKind is what an alert reports.
type AlertKind string

// Alert kinds.
const (
	AlertCircuitOpened    AlertKind = "circuit_opened"    // an endpoint's circuit opened
	AlertCircuitHalfOpen  AlertKind = "circuit_half_open" // its circuit half-opened: a probe went to the provider
	AlertCircuitClosed    AlertKind = "circuit_closed"    // its circuit closed
	AlertPausedLong       AlertKind = "paused_long"       // an endpoint has been paused longer than pausedAfterMs
	AlertJobsExhausted    AlertKind = "jobs_exhausted"    // jobs of an endpoint were exhausted in a window (one alert per endpoint and window)
	AlertFailureRate      AlertKind = "failure_rate"      // an endpoint's failed attempts of a window reached failureRatePercent
	AlertLimitChanged     AlertKind = "limit_changed"     // the rate learned from the provider changed
	AlertBacklogRecovered AlertKind = "backlog_recovered" // a recovery ended: the backlog drained
	AlertSuppressed       AlertKind = "suppressed"        // the cap held back alerts of an endpoint in a window: how many
	AlertTest             AlertKind = "test"              // sent by hand to check a sink
)

// AlertKinds lists every alert kind.
func AlertKinds() []AlertKind {
	return []AlertKind{AlertCircuitOpened, AlertCircuitHalfOpen, AlertCircuitClosed, AlertPausedLong, AlertJobsExhausted, AlertFailureRate,
		AlertLimitChanged, AlertBacklogRecovered, AlertSuppressed, AlertTest}
}

// AlertDeliveryState is where an alert's delivery to a sink is.
type AlertDeliveryState string

// Alert delivery states.
const (
	AlertPending   AlertDeliveryState = "pending"   // not delivered yet: due at its time, retried with backoff
	AlertDelivered AlertDeliveryState = "delivered" // the sink answered 2xx
	AlertFailed    AlertDeliveryState = "failed"    // every attempt failed, or the sink refused it for good
)

// AlertDeliveryStates lists every alert delivery state.
func AlertDeliveryStates() []AlertDeliveryState {
	return []AlertDeliveryState{AlertPending, AlertDelivered, AlertFailed}
}

// Alert bounds and defaults (the settings of a project without its own).
const (
	MinAlertPausedAfterMs     = 60_000
	MaxAlertPausedAfterMs     = 7 * 24 * 3_600_000
	DefaultAlertPausedAfterMs = 15 * 60_000
	MinAlertFailureRate       = 1
	MaxAlertFailureRate       = 100
	DefaultAlertFailureRate   = 50
	MinAlertFailureRateMin    = 1
	MaxAlertFailureRateMin    = 1_000_000
	DefaultAlertFailureMin    = 20
	MinAlertWindowMs          = 60_000
	MaxAlertWindowMs          = 24 * 3_600_000
	DefaultAlertWindowMs      = 10 * 60_000
	MinAlertMaxPerWindow      = 1
	MaxAlertMaxPerWindow      = 100
	DefaultAlertMaxPerWindow  = 5
	MaxAlertSinks             = 20
	MaxAlertSinkNameLen       = 64
)

// AlertSettings are a project's alert thresholds: GET and PUT
// /v1/alerts/settings.
type AlertSettings struct {
	PausedAfterMs      int64 `json:"pausedAfterMs" bound:"alertPausedAfterMs" doc:"alert when an endpoint stays paused this long; default 900000 (15 minutes)"`
	FailureRatePercent int64 `json:"failureRatePercent" bound:"alertFailureRate" doc:"alert when this percentage of an endpoint's finished attempts of a window failed; default 50"`
	FailureRateMin     int64 `json:"failureRateMin" bound:"alertFailureRateMin" doc:"only when the window has at least this many finished attempts; default 20"`
	WindowMs           int64 `json:"windowMs" bound:"alertWindowMs" doc:"the window of the cap, of exhausted jobs and of the failure rate; default 600000 (10 minutes)"`
	MaxPerWindow       int64 `json:"maxPerWindow" bound:"alertMaxPerWindow" doc:"alerts per endpoint and window at most; the rest are counted in one suppressed alert at the window's end; default 5"`
}

// AlertSinkCreate is POST /v1/alerts/sinks.
type AlertSinkCreate struct {
	Name string        `json:"name" maxLength:"64" doc:"1–64 of a-z, 0-9, '.', '_', '-', starting with a letter or digit"`
	Kind AlertSinkKind `json:"kind"`
	URL  string        `json:"url" maxLength:"2048" doc:"the incoming-webhook URL: absolute http or https; an address deliveries may reach (--delivery-allow)"`
}

// AlertSink is a project's alert sink. Secret is set once, in the answer
// to its creation (a webhook sink's Standard Webhooks signing secret).
type AlertSink struct {
	Name      string        `json:"name"`
	Kind      AlertSinkKind `json:"kind"`
	URL       string        `json:"url"`
	CreatedAt string        `json:"createdAt" format:"date-time"`
	Secret    *string       `json:"secret,omitempty" doc:"the signing secret (whsec_...) of a webhook sink: shown once, at creation"`
}

// AlertSinkList is GET /v1/alerts/sinks.
type AlertSinkList struct {
	Sinks    []AlertSink   `json:"sinks"`
	Settings AlertSettings `json:"settings"`
}

// AlertTestResult is POST /v1/alerts/sinks/{name}/test: a test alert is
// queued for the sink and sent as any alert.
type AlertTestResult struct {
	Alert int64  `json:"alert" doc:"the test alert's id"`
	Sink  string `json:"sink"`
}

// Alert is what a sink receives: the body of a webhook sink's delivery
// ({"type": "ratchet.alert.<kind>", "timestamp", "data": Alert}), the
// text of a Slack or Teams message. Facts that do not apply are 0, empty
// or null.
type Alert struct {
	ID             int64            `json:"id"`
	Kind           AlertKind        `json:"kind"`
	Project        string           `json:"project"`
	Endpoint       string           `json:"endpoint" doc:"empty for a test alert"`
	At             string           `json:"at" format:"date-time" doc:"when the change happened"`
	Summary        string           `json:"summary" doc:"one line for people"`
	Detail         string           `json:"detail" doc:"the change's sentence, with its arithmetic"`
	Failures       int64            `json:"failures" doc:"consecutive counted failures of the circuit"`
	Threshold      int64            `json:"threshold" doc:"the circuit's failure threshold"`
	OpenedAt       *string          `json:"openedAt" format:"date-time"`
	NextProbeAt    *string          `json:"nextProbeAt" format:"date-time"`
	HeldJobs       int64            `json:"heldJobs" doc:"the endpoint's scheduled jobs"`
	Count          int64            `json:"count" doc:"what the alert groups: exhausted jobs, failed attempts, alerts suppressed"`
	DrainPerMinute int64            `json:"drainPerMinute" doc:"attempts claimed in the last minute: the pace the backlog drains at; 0 when unknown"`
	DrainEndsAt    *string          `json:"drainEndsAt" format:"date-time" doc:"heldJobs at drainPerMinute from at; null when unknown"`
	Facts          map[string]int64 `json:"facts" doc:"the event's own numbers (a learned limit, a ramp)"`
	Link           string           `json:"link" doc:"the endpoint's page in the console; empty when the server has no --public-url"`
}

// AlertDelivery is one alert's delivery to one sink.
type AlertDelivery struct {
	ID          int64              `json:"id"`
	Sink        string             `json:"sink"`
	State       AlertDeliveryState `json:"state"`
	Attempts    int64              `json:"attempts"`
	DueAt       string             `json:"dueAt" format:"date-time" doc:"when it is (or was last) due"`
	LastStatus  int64              `json:"lastStatus" doc:"the sink's HTTP status of the last attempt; 0 when none came"`
	LastError   string             `json:"lastError" doc:"what went wrong in the last attempt; empty when none"`
	DeliveredAt *string            `json:"deliveredAt" format:"date-time"`
	Alert       Alert              `json:"alert"`
}

// AlertDeliveryList is GET /v1/alerts: the project's latest alert
// deliveries, newest first.
type AlertDeliveryList struct {
	Deliveries []AlertDelivery `json:"deliveries"`
}

// AlertsQuery is the query of GET /v1/alerts.
type AlertsQuery struct {
	Limit string `json:"limit,omitempty" query:"listLimit" doc:"1–500, default 100"`
}
