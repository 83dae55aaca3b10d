package wire

import (
	"encoding/json"

	"github.com/getratchet/ratchet/backoff"
)

// EndpointPolicy is everything an owner sets on an endpoint, flat as the
// API takes it: the retry policy's fields (a preset, or CUSTOM with every
// field) beside the endpoint's settings. In a request every setting is
// optional (the embedding says required:"false"): zero ones are left out
// and take the server's defaults on create; an update must carry the
// settings tagged update:"required" (and the policy), while the others
// left out stay.
type EndpointPolicy struct {
	Policy           backoff.Policy `json:"-" schema:"inline"`
	EndpointSettings `required:"false"`
}

// EndpointSettings are an endpoint's settings besides its retry policy:
// lease, concurrency, rate limit, circuit, limits per flow key, and what
// comes next. They are written once, here, and embedded by every layer:
// the engine's policy and the store's row embed this struct, and the
// API's decoder, the store's columns, the CLI's flags and the console's
// editor read these tags (wire.SettingFields), so a new setting is a
// field here and a column in a migration per driver.
//
// Tags: json (the member), bound (the wire/limits.go range of an
// integer), doc, db (the endpoints table column), flag (the `ratchet
// endpoints create/update` flag) and help (its usage; the CLI adds the
// range), label, units and hint (the console's editor: the field's
// label, what its number counts, the help under it), update:"required" (an update must carry
// it; one without keeps its current value when left out). A pointer is
// nullable: null for no limit. In responses every member is present.
type EndpointSettings struct {
	DefaultTimeoutMs        int64  `json:"defaultTimeoutMs" bound:"timeoutMs" db:"default_timeout_ms" flag:"timeout-ms" help:"lease (default timeout) in ms" update:"required" unit:"milliseconds" doc:"the lease of a claim; default 30000" label:"Lease timeout" units:"ms" hint:"How long a worker holds a claimed job before it counts as timed out."`
	MaxConcurrent           int64  `json:"maxConcurrent" bound:"maxConcurrent" db:"max_concurrent" flag:"max-concurrent" help:"most running jobs" update:"required" doc:"running jobs at most; default 10" label:"Max concurrent" units:"jobs" hint:"Running jobs at once against this endpoint."`
	RateLimitPerMinute      *int64 `json:"rateLimitPerMinute" bound:"rateLimitPerMinute" db:"rate_limit_per_minute" flag:"rate-limit" help:"claims per minute" update:"required" doc:"claims per 60 s at most; null for no limit (required in an update)" label:"Rate limit" units:"claims / minute" hint:"Empty for no limit."`
	CircuitFailureThreshold int64  `json:"circuitFailureThreshold" bound:"circuitFailureThreshold" db:"circuit_threshold" flag:"circuit-threshold" help:"provider-unhealthy failures that open the circuit" doc:"consecutive provider-unhealthy failures that open the circuit; default 5" label:"Circuit threshold" units:"failures" hint:"Consecutive provider-unhealthy failures that open the circuit."`
	CircuitOpenMs           int64  `json:"circuitOpenMs" bound:"circuitOpenMs" db:"circuit_open_ms" flag:"circuit-open-ms" help:"how long the circuit stays open in ms" unit:"milliseconds" doc:"how long the circuit stays open before a half-open probe, unless the provider's Retry-After says otherwise; default 5000" label:"Circuit open for" units:"ms" hint:"How long an open circuit blocks claims before a probe."`
	DailyCallBudget         *int64 `json:"dailyCallBudget" bound:"dailyCallBudget" db:"daily_call_budget" flag:"daily-budget" help:"claims per day in the budget time zone" doc:"claims per day at most, from midnight in budgetTimeZone; null for no budget" label:"Daily call budget" units:"claims / day" hint:"Claims in one day, counted from midnight in the budget time zone. Empty for no budget."`
	MonthlyCallBudget       *int64 `json:"monthlyCallBudget" bound:"monthlyCallBudget" db:"monthly_call_budget" flag:"monthly-budget" help:"claims per calendar month in the budget time zone" doc:"claims per calendar month at most, from midnight of the 1st in budgetTimeZone; null for no budget" label:"Monthly call budget" units:"claims / month" hint:"Claims in one calendar month, counted from midnight on the 1st in the budget time zone. Empty for no budget."`
	BudgetTimeZone          string `json:"budgetTimeZone" bound:"timeZoneLen" text:"zone" default:"UTC" db:"budget_time_zone" flag:"budget-zone" help:"IANA time zone of the budgets' days and months and of the quiet hours" doc:"the IANA time zone whose midnights renew the budgets (per endpoint and per key) and whose wall clock reads quietHours; default UTC" label:"Budget time zone" units:"IANA zone" hint:"Days, months and quiet hours follow this zone's calendar, daylight saving included, e.g. Europe/Paris."`
	QuietHours              string `json:"quietHours" bound:"quietHoursLen" text:"window" db:"quiet_hours" flag:"quiet-hours" help:"daily window HH:MM-HH:MM when claims are held" doc:"a daily window \"HH:MM-HH:MM\" on the budget time zone's clock during which claims are held (across midnight when the end is earlier); \"\" for none" label:"Quiet hours" units:"daily" hint:"Claims wait from the start to the end every day, e.g. 22:00-07:00. Empty for none."`
	KeyLimits
}

// KeyLimits are an endpoint's limits per flow key (docs/flow-control.md).
// Each is optional, in an update too: one left out stays as it is.
type KeyLimits struct {
	KeyMaxConcurrent      *int64 `json:"keyMaxConcurrent" required:"false" bound:"maxConcurrent" db:"key_max_concurrent" flag:"key-max-concurrent" help:"most running jobs per flow key" doc:"running jobs per flow key at most; null for no limit" label:"Max concurrent per key" units:"jobs" hint:"Running jobs of one flow key at once. Empty for no limit."`
	KeyRateLimitPerMinute *int64 `json:"keyRateLimitPerMinute" required:"false" bound:"rateLimitPerMinute" db:"key_rate_limit_per_minute" flag:"key-rate-limit" help:"claims per minute per flow key" doc:"claims per flow key per 60 s at most; null for no limit" label:"Rate limit per key" units:"claims / minute" hint:"Claims of one flow key in any 60 seconds. Empty for no limit."`
	KeyDailyCallBudget    *int64 `json:"keyDailyCallBudget" required:"false" bound:"dailyCallBudget" db:"key_daily_call_budget" flag:"key-daily-budget" help:"claims per day per flow key" doc:"claims per flow key per day (from midnight in budgetTimeZone) at most; null for no budget" label:"Daily budget per key" units:"claims / day" hint:"Claims of one flow key in a day of the budget time zone. Empty for no budget."`
	KeyMonthlyCallBudget  *int64 `json:"keyMonthlyCallBudget" required:"false" bound:"monthlyCallBudget" db:"key_monthly_call_budget" flag:"key-monthly-budget" help:"claims per calendar month per flow key" doc:"claims per flow key per calendar month (from the 1st in budgetTimeZone) at most; null for no budget" label:"Monthly budget per key" units:"claims / month" hint:"Claims of one flow key in a calendar month of the budget time zone. Empty for no budget."`
	KeyOrdered            bool   `json:"keyOrdered" required:"false" db:"key_ordered" flag:"key-ordered" help:"one job in flight per flow key, in enqueue order" doc:"one job in flight per flow key, in enqueue order" label:"Ordered per key" hint:"One job of a key in flight at a time, in the order they were enqueued."`
	FairKeys              bool   `json:"fairKeys" required:"false" db:"fair_keys" flag:"fair-keys" help:"claims take turns across flow keys" doc:"claims take turns across flow keys, longest waiting first (on whenever a key limit is set)" label:"Fair across keys" hint:"Claims take turns across keys, longest waiting first. Always so while a limit per key is set."`
}

// fields renders the flat object, with extra members (name, expectedVersion).
func (p EndpointPolicy) fields(extra map[string]any) ([]byte, error) {
	m := map[string]json.RawMessage{}
	if p.Policy.Preset != "" {
		b, err := json.Marshal(p.Policy)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
	}
	b, err := json.Marshal(p.EndpointSettings)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	// A zero integer setting is one the request leaves to the server, and
	// so is an empty text that has a default (the budget time zone).
	for _, f := range SettingFields() {
		if (f.Kind == SettingInt || f.Kind == SettingText && f.Default != "") && f.Value(&p.EndpointSettings).IsZero() {
			delete(m, f.JSON)
		}
	}
	for k, v := range extra {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		m[k] = b
	}
	return json.Marshal(m)
}

// MarshalJSON writes the flat object.
func (p EndpointPolicy) MarshalJSON() ([]byte, error) { return p.fields(nil) }

// EndpointCreate is POST /v1/endpoints.
type EndpointCreate struct {
	Name string `json:"name" pattern:"name"`
	EndpointPolicy
}

// MarshalJSON writes the flat object with the name.
func (c EndpointCreate) MarshalJSON() ([]byte, error) {
	return c.EndpointPolicy.fields(map[string]any{"name": c.Name})
}

// EndpointPolicyUpdate is PUT /v1/endpoints/{name}/policy. ExpectedVersion
// is the version read; a stale one answers 409 with the current endpoint.
type EndpointPolicyUpdate struct {
	ExpectedVersion int64 `json:"expectedVersion" bound:"id" requires:"preset,defaultTimeoutMs,maxConcurrent,rateLimitPerMinute"`
	EndpointPolicy
}

// MarshalJSON writes the flat object with the expected version.
func (u EndpointPolicyUpdate) MarshalJSON() ([]byte, error) {
	return u.EndpointPolicy.fields(map[string]any{"expectedVersion": u.ExpectedVersion})
}

// Endpoint is an endpoint with its policy, the policy's schedule, its
// settings and its circuit.
type Endpoint struct {
	Name     string         `json:"name"`
	Version  int64          `json:"version"`
	Policy   backoff.Policy `json:"policy"`
	Schedule []ScheduleRow  `json:"schedule"`
	EndpointSettings
	Circuit   Circuit        `json:"circuit"`
	Paused    *EndpointPause `json:"paused" doc:"set while an owner has paused the endpoint; null otherwise"`
	Recovery  *Recovery      `json:"recovery,omitempty" doc:"set while the endpoint's admission ramps up after its circuit closed or a pause ended (docs/outages.md); absent otherwise"`
	Learned   *LearnedLimit  `json:"learnedLimit,omitempty" doc:"the rate limit the provider stated in its headers, while it stands (docs/outages.md); absent otherwise"`
	Budget    *BudgetUse     `json:"budget" doc:"the use and forecast of the endpoint's budgets and its quiet hours, in GET of one endpoint that sets a budget or quietHours; null otherwise"`
	CreatedAt string         `json:"createdAt" format:"date-time"`
	UpdatedAt string         `json:"updatedAt" format:"date-time"`
}

// ScheduleRow is one row of a policy's schedule: after failed attempt
// FailedAttempt, the base delay and its jitter range, and what comes next.
// The last row has no delays: the policy is exhausted.
type ScheduleRow struct {
	FailedAttempt int     `json:"failedAttempt"`
	BaseDelayMs   float64 `json:"baseDelayMs,omitzero"`
	MinDelayMs    int64   `json:"minDelayMs,omitzero"`
	MaxDelayMs    int64   `json:"maxDelayMs,omitzero"`
	Next          string  `json:"next" doc:"\"attempt N\", or \"exhausted; no automatic attempt N\""`
}

// Circuit is an endpoint's circuit breaker.
type Circuit struct {
	State       CircuitState `json:"state"`
	Failures    int64        `json:"failures" doc:"consecutive counted failures while closed"`
	OpenedAt    string       `json:"openedAt,omitempty" format:"date-time"`
	HalfOpensAt string       `json:"halfOpensAt,omitempty" format:"date-time"`
	ProbeJobID  int64        `json:"probeJobId,omitzero" doc:"the half-open probe in flight"`
	OpenedBy    string       `json:"openedBy,omitempty" doc:"the key that opened the circuit by hand (name, or prefix when unnamed); absent when failures opened it"`
}

// Recovery is an endpoint's recovery ramp (the gate recovering).
type Recovery struct {
	RatePerSecond float64 `json:"ratePerSecond" doc:"claims a second the ramp allows now"`
	CutAtPerSec   float64 `json:"cutAtPerSecond,omitzero" doc:"the rate of its last cut: it doubles below it and grows by a tenth of it a second above it; absent before any cut"`
	CapPerSecond  float64 `json:"capPerSecond,omitzero" doc:"the rate it ends at: the endpoint's rate limit or the learned limit, the lower; absent when neither is known (it ends when claims no longer fill it)"`
	Phase         string  `json:"phase" doc:"how it moves next, one sentence"`
	StartedAt     string  `json:"startedAt" format:"date-time"`
	AdjustedAt    string  `json:"adjustedAt" format:"date-time" doc:"when it last grew or was cut"`
}

// LearnedLimit is a rate limit learned from the provider's headers.
type LearnedLimit struct {
	Limit    int64  `json:"limit" doc:"requests per window"`
	WindowMs int64  `json:"windowMs"`
	Source   string `json:"source" doc:"the header family that said it: ietf, ratelimit or x-ratelimit"`
	SaidAt   string `json:"saidAt" format:"date-time" doc:"when the provider last said it; it lapses ten windows (at least a minute) later"`
	ResetAt  string `json:"resetAt,omitempty" format:"date-time" doc:"set while the provider said none remain until this time"`
}

// EndpointList is GET /v1/endpoints.
type EndpointList struct {
	Endpoints []Endpoint `json:"endpoints"`
}

// BudgetUse is where an endpoint stands against its budgets and its quiet
// hours, read at the time of the request (docs/flow-control.md).
type BudgetUse struct {
	TimeZone   string         `json:"timeZone" doc:"the budgetTimeZone whose days and months these are"`
	Daily      *BudgetPeriod  `json:"daily" doc:"today against dailyCallBudget; null without one"`
	Monthly    *BudgetPeriod  `json:"monthly" doc:"this month against monthlyCallBudget; null without one"`
	QuietHours *QuietHoursNow `json:"quietHours" doc:"the quiet window now; null without quietHours"`
}

// BudgetPeriod is one budget's period: what was used, when it renews and,
// at the current pace, when it runs out.
type BudgetPeriod struct {
	Budget      int64   `json:"budget" doc:"the claims the period allows"`
	Used        int64   `json:"used" doc:"claims since the period started, counted up to the budget"`
	StartedAt   string  `json:"startedAt" format:"date-time" doc:"midnight (of the 1st for a month) in the time zone"`
	RenewsAt    string  `json:"renewsAt" format:"date-time" doc:"the next period's start"`
	PacePerHour float64 `json:"pacePerHour" doc:"claims per hour over the last hour, or since the period started when that is shorter"`
	RunsOutAt   string  `json:"runsOutAt,omitempty" format:"date-time" doc:"when the budget runs out at that pace; absent when it lasts until it renews or there is no pace; the time it ran out is not kept, so a spent budget says now"`
}

// QuietHoursNow is an endpoint's quiet window at the time of the request.
type QuietHoursNow struct {
	Window   string `json:"window" doc:"the quietHours setting"`
	Quiet    bool   `json:"quiet" doc:"claims are held now"`
	EndsAt   string `json:"endsAt,omitempty" format:"date-time" doc:"while quiet, when claims resume"`
	StartsAt string `json:"startsAt,omitempty" format:"date-time" doc:"while not quiet, when the next quiet window starts"`
}
