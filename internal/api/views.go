package api

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

var ft = engine.FormatTime

// EndpointView is the wire form of an endpoint: the policy fields flat, as
// the retry policy documentation describes the endpoint policy API.
type EndpointView struct {
	Name                    string          `json:"name"`
	Version                 int64           `json:"version"`
	Policy                  json.RawMessage `json:"policy"`
	Schedule                []scheduleRow   `json:"schedule"`
	DefaultTimeoutMs        int64           `json:"defaultTimeoutMs"`
	MaxConcurrent           int64           `json:"maxConcurrent"`
	RateLimitPerMinute      *int64          `json:"rateLimitPerMinute"`
	CircuitFailureThreshold int64           `json:"circuitFailureThreshold"`
	CircuitOpenMs           int64           `json:"circuitOpenMs"`
	Circuit                 circuitView     `json:"circuit"`
	CreatedAt               string          `json:"createdAt"`
	UpdatedAt               string          `json:"updatedAt"`
}

type scheduleRow struct {
	FailedAttempt int     `json:"failedAttempt"`
	BaseDelayMs   float64 `json:"baseDelayMs,omitzero"`
	MinDelayMs    int64   `json:"minDelayMs,omitzero"`
	MaxDelayMs    int64   `json:"maxDelayMs,omitzero"`
	Next          string  `json:"next"`
}

type circuitView struct {
	State       string `json:"state"`
	Failures    int64  `json:"failures"`
	OpenedAt    string `json:"openedAt,omitempty"`
	HalfOpensAt string `json:"halfOpensAt,omitempty"`
	ProbeJobID  int64  `json:"probeJobId,omitzero"`
}

func endpointView(ep *store.Endpoint) EndpointView {
	v := EndpointView{Name: ep.Name, Version: ep.Version, Policy: ep.Policy, DefaultTimeoutMs: ep.DefaultTimeoutMs, MaxConcurrent: ep.MaxConcurrent,
		RateLimitPerMinute: ep.RateLimitPerMinute, CircuitFailureThreshold: ep.CircuitThreshold, CircuitOpenMs: ep.CircuitOpenMs,
		Circuit: circuitView{State: ep.CircuitState, Failures: ep.CircuitFailures, ProbeJobID: ep.CircuitProbeJob}, CreatedAt: ft(ep.CreatedAt), UpdatedAt: ft(ep.UpdatedAt)}
	if ep.CircuitState != wire.CircuitClosed && ep.CircuitOpenedAt > 0 {
		v.Circuit.OpenedAt = ft(ep.CircuitOpenedAt)
		if ep.CircuitState == wire.CircuitOpen {
			v.Circuit.HalfOpensAt = ft(ep.CircuitOpenedAt + ep.CircuitOpenMs)
		}
	}
	if p, err := backoff.ParsePolicy(ep.Policy); err == nil {
		v.Schedule = schedule(p.Params())
	}
	return v
}

func schedule(p backoff.Params) []scheduleRow {
	var rows []scheduleRow
	for _, r := range p.Schedule().Rows {
		next := "attempt " + strconv.Itoa(r.NextAttempt)
		if r.Exhausted {
			next = "exhausted; no automatic attempt " + strconv.Itoa(r.NextAttempt)
		}
		rows = append(rows, scheduleRow{FailedAttempt: r.FailedAttempt, BaseDelayMs: r.BaseDelayMs, MinDelayMs: r.MinDelayMs, MaxDelayMs: r.MaxDelayMs, Next: next})
	}
	return rows
}

// ToolView is the wire form of a tool contract.
type ToolView struct {
	Name          string          `json:"name"`
	Version       string          `json:"version"`
	Endpoint      string          `json:"endpoint"`
	Description   string          `json:"description"`
	PayloadSchema json.RawMessage `json:"payloadSchema"`
	TimeoutMs     *int64          `json:"timeoutMs"`
	RetryPreset   *string         `json:"retryPreset"`
	RetryPolicy   json.RawMessage `json:"retryPolicy"`
	CreatedAt     string          `json:"createdAt"`
}

func toolView(t *store.Tool, endpoint string) ToolView {
	v := ToolView{Name: t.Name, Version: t.Version, Endpoint: endpoint, Description: t.Description, PayloadSchema: nullRaw(t.Schema),
		TimeoutMs: t.TimeoutMs, RetryPolicy: json.RawMessage("null"), CreatedAt: ft(t.CreatedAt)}
	if len(t.RetryPolicy) > 0 {
		if p, err := backoff.ParsePolicy(t.RetryPolicy); err == nil {
			s := string(p.Preset)
			v.RetryPreset = &s
			if p.Preset == backoff.Custom {
				v.RetryPolicy = t.RetryPolicy
			}
		}
	}
	return v
}

func nullRaw(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("null")
	}
	return r
}

// JobView is the wire form of a job.
type JobView struct {
	ID              int64           `json:"id"`
	State           string          `json:"state"`
	Tool            string          `json:"tool"`
	Version         string          `json:"version"`
	Endpoint        string          `json:"endpoint"`
	Attempt         int64           `json:"attempt"`
	MaxAttempts     int64           `json:"maxAttempts"`
	IdempotencyKey  *string         `json:"idempotencyKey"`
	DueAt           string          `json:"dueAt"`
	Policy          json.RawMessage `json:"policy"`
	HeldBy          *engine.Hold    `json:"heldBy"`
	RunID           *int64          `json:"runId"`
	ReplayOf        *int64          `json:"replayOf"`
	CancelRequested bool            `json:"cancelRequested"`
	WorkerID        string          `json:"workerId,omitempty"`
	LeaseExpiresAt  string          `json:"leaseExpiresAt,omitempty"`
	CreatedAt       string          `json:"createdAt"`
	UpdatedAt       string          `json:"updatedAt"`
	FinishedAt      string          `json:"finishedAt,omitempty"`
	Payload         json.RawMessage `json:"payload,omitempty"`
	Attempts        []AttemptView   `json:"attempts"`
}

// AttemptView is one attempt with the delay arithmetic that followed it.
type AttemptView struct {
	Number          int64    `json:"number"`
	WorkerID        string   `json:"workerId"`
	ClaimedAt       string   `json:"claimedAt"`
	FinishedAt      string   `json:"finishedAt,omitempty"`
	DurationMs      *int64   `json:"durationMs"`
	Outcome         string   `json:"outcome"`
	Classification  string   `json:"classification"`
	HTTPStatus      *int64   `json:"httpStatus"`
	RetryAfterMs    *int64   `json:"retryAfterMs"`
	CountsToCircuit bool     `json:"countsTowardCircuit"`
	Message         string   `json:"message,omitempty"`
	BaseDelayMs     *float64 `json:"baseDelayMs"`
	JitterSample    *float64 `json:"jitterSample"`
	MinDelayMs      *int64   `json:"minDelayMs"`
	MaxDelayMs      *int64   `json:"maxDelayMs"`
	SelectedDelayMs *int64   `json:"selectedDelayMs"`
	NextDueAt       *string  `json:"nextDueAt"`
}

func jobView(j *store.Job, attempts []store.Attempt, hold *engine.Hold, withPayload bool) JobView {
	v := JobView{ID: j.ID, State: j.State, Tool: j.Tool, Version: j.Version, Endpoint: j.Endpoint, Attempt: j.Attempt, MaxAttempts: j.MaxAttempts,
		DueAt: ft(j.DueAt), Policy: j.Policy, HeldBy: hold, CancelRequested: j.CancelRequested, CreatedAt: ft(j.CreatedAt), UpdatedAt: ft(j.UpdatedAt),
		FinishedAt: ft(j.FinishedAt), Attempts: []AttemptView{}}
	if j.IdempotencyKey != "" {
		k := j.IdempotencyKey
		v.IdempotencyKey = &k
	}
	if j.RunID != 0 {
		v.RunID = &j.RunID
	}
	if j.ReplayOf != 0 {
		v.ReplayOf = &j.ReplayOf
	}
	if j.State == wire.JobRunning {
		v.WorkerID, v.LeaseExpiresAt = j.WorkerID, ft(j.LeaseExpiresAt)
	}
	if withPayload {
		v.Payload = j.Payload
	}
	for _, a := range attempts {
		v.Attempts = append(v.Attempts, attemptView(a))
	}
	return v
}

func attemptView(a store.Attempt) AttemptView {
	v := AttemptView{Number: a.Number, WorkerID: a.WorkerID, ClaimedAt: ft(a.ClaimedAt), FinishedAt: ft(a.FinishedAt), Outcome: a.Outcome,
		Classification: a.Classification, CountsToCircuit: a.Counted, Message: a.Message}
	if a.Outcome == "" {
		v.Outcome = "running"
	}
	if a.FinishedAt > 0 {
		d := a.FinishedAt - a.ClaimedAt
		v.DurationMs = &d
	}
	if a.HTTPStatus != 0 {
		v.HTTPStatus = &a.HTTPStatus
	}
	if a.RetryAfterMs != 0 {
		v.RetryAfterMs = &a.RetryAfterMs
	}
	if a.NextDueAt != 0 {
		v.BaseDelayMs, v.JitterSample, v.MinDelayMs, v.MaxDelayMs, v.SelectedDelayMs = &a.BaseDelayMs, &a.JitterSample, &a.MinDelayMs, &a.MaxDelayMs, &a.SelectedMs
		n := ft(a.NextDueAt)
		v.NextDueAt = &n
	}
	return v
}

// KeyView describes a key; the secret appears only in the create response.
type KeyView struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Scope     string   `json:"scope"`
	Prefix    string   `json:"prefix"`
	Tools     []string `json:"tools"`
	CreatedAt string   `json:"createdAt"`
	RevokedAt string   `json:"revokedAt,omitempty"`
	Key       string   `json:"key,omitempty"`
}

func keyView(k *store.APIKey, secret string) KeyView {
	tools := k.Tools
	if tools == nil {
		tools = []string{}
	}
	return KeyView{ID: k.ID, Name: k.Name, Scope: k.Scope, Prefix: k.Prefix, Tools: tools, CreatedAt: ft(k.CreatedAt), RevokedAt: ft(k.RevokedAt), Key: secret}
}

// RunView is a run with its steps.
type RunView struct {
	ID         int64          `json:"id"`
	Name       string         `json:"name"`
	State      string         `json:"state"`
	CreatedAt  string         `json:"createdAt"`
	FinishedAt string         `json:"finishedAt,omitempty"`
	Steps      []JobView      `json:"steps"`
	Counts     map[string]int `json:"counts"`
}

func runView(r *store.Run, steps []store.Job) RunView {
	v := RunView{ID: r.ID, Name: r.Name, State: r.State, CreatedAt: ft(r.CreatedAt), FinishedAt: ft(r.FinishedAt), Steps: []JobView{}, Counts: map[string]int{}}
	for i := range steps {
		v.Steps = append(v.Steps, jobView(&steps[i], nil, nil, false))
		v.Counts[steps[i].State]++
	}
	return v
}

func timeMs(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
