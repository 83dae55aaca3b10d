package wire

import (
	"slices"
	"strings"
)

// JobState is where a job is in its lifecycle. docs/state-machine.md draws
// the transitions of JobTransitions.
type JobState string

// Job states, in lifecycle order.
const (
	JobScheduled JobState = "scheduled" // waiting for its due time and gates
	JobRunning   JobState = "running"   // claimed by a worker under a lease
	JobSucceeded JobState = "succeeded" // finished: an attempt succeeded
	JobFailed    JobState = "failed"    // finished: a failure that must not be retried
	JobExhausted JobState = "exhausted" // finished: every allowed attempt failed
	JobCancelled JobState = "cancelled" // finished: cancelled by a producer
)

// JobStates lists every job state in lifecycle order.
func JobStates() []JobState {
	return []JobState{JobScheduled, JobRunning, JobSucceeded, JobFailed, JobExhausted, JobCancelled}
}

// Finished reports whether s is a job state that no transition of
// JobTransitions leaves. It is read from the table, so a new state is final
// or not by its edges alone.
func (s JobState) Finished() bool {
	if !slices.Contains(JobStates(), s) {
		return false
	}
	for _, t := range JobTransitions {
		if t.From == s {
			return false
		}
	}
	return true
}

// Replayable reports whether a job in s may be replayed as a new job. This
// is a decision of its own, not read from the transitions: a replay leaves
// the replayed job as it is.
func (s JobState) Replayable() bool {
	return s == JobFailed || s == JobExhausted || s == JobCancelled
}

// Unsuccessful reports whether a job in s ended without success by its own
// attempts (not cancelled): the jobs failure groups gather and a replay
// by filter selects.
func (s JobState) Unsuccessful() bool {
	return s == JobFailed || s == JobExhausted
}

// Cancellable reports whether a cancel may move a job in s (EventCancel
// leaves it in JobTransitions).
func (s JobState) Cancellable() bool {
	_, ok := NextJobState(s, EventCancel)
	return ok
}

// Claimable reports whether a worker may claim a job in s (EventClaim
// leaves it in JobTransitions); "run now" makes such a job due at once.
func (s JobState) Claimable() bool {
	_, ok := NextJobState(s, EventClaim)
	return ok
}

// JobStatesWhere lists the job states, in lifecycle order, for which keep
// is true, e.g. JobStatesWhere(JobState.Finished). Code that needs a subset
// of the states asks for it here instead of typing the subset again.
func JobStatesWhere(keep func(JobState) bool) []JobState { return Where(JobStates(), keep) }

// Where lists the values for which keep is true, in their order, e.g.
// Where(Plans(), Plan.AllowsCustom).
func Where[T any](values []T, keep func(T) bool) []T {
	var out []T
	for _, v := range values {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// JoinOr writes values for a sentence: "a", "a or b", "a, b or c". Error
// messages and help texts that name the allowed values of an enum write
// them with it, so the text follows the list.
func JoinOr[T ~string](values []T) string {
	var b strings.Builder
	for i, v := range values {
		switch {
		case i == 0:
		case i == len(values)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(string(v))
	}
	return b.String()
}

// Join writes values separated by sep: Join(Scopes(), "|") is
// "owner|producer|worker".
func Join[T ~string](values []T, sep string) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = string(v)
	}
	return strings.Join(s, sep)
}

// JobEvent is what moves a job from one state to another.
type JobEvent string

// Job events.
const (
	EventClaim   JobEvent = "claim"   // a worker claims the due job
	EventSucceed JobEvent = "succeed" // a success report
	EventRetry   JobEvent = "retry"   // a retryable failure or an expired lease, with attempts left
	EventFail    JobEvent = "fail"    // a failure that must not be retried
	EventExhaust JobEvent = "exhaust" // a retryable failure or an expired lease on the last attempt
	EventCancel  JobEvent = "cancel"  // a cancel: at once when scheduled, at the running attempt's end otherwise
)

// JobTransition is one edge of the job state machine.
type JobTransition struct {
	From  JobState
	Event JobEvent
	To    JobState
}

// JobTransitions is the whole job state machine: every allowed change of a
// job's state. Anything not listed is refused. A replay does not change the
// replayed job; it enqueues a new one, which starts scheduled.
var JobTransitions = []JobTransition{
	{JobScheduled, EventClaim, JobRunning},
	{JobScheduled, EventCancel, JobCancelled},
	{JobRunning, EventSucceed, JobSucceeded},
	{JobRunning, EventRetry, JobScheduled},
	{JobRunning, EventFail, JobFailed},
	{JobRunning, EventExhaust, JobExhausted},
	{JobRunning, EventCancel, JobCancelled},
}

// NextJobState is the state event moves a job in from to, and false when the
// machine has no such transition.
func NextJobState(from JobState, event JobEvent) (JobState, bool) {
	for _, t := range JobTransitions {
		if t.From == from && t.Event == event {
			return t.To, true
		}
	}
	return "", false
}

// AttemptOutcome is how an attempt ended.
type AttemptOutcome string

// Attempt outcomes.
const (
	OutcomeRunning   AttemptOutcome = "running"   // not finished yet
	OutcomeSucceeded AttemptOutcome = "succeeded" // reported successful
	OutcomeFailed    AttemptOutcome = "failed"    // reported failed (retryable or not)
	OutcomeTimedOut  AttemptOutcome = "timed_out" // the lease expired before a report
)

// AttemptOutcomes lists every attempt outcome.
func AttemptOutcomes() []AttemptOutcome {
	return []AttemptOutcome{OutcomeRunning, OutcomeSucceeded, OutcomeFailed, OutcomeTimedOut}
}

// Gate names what holds a scheduled job back.
type Gate string

// Gates, in the order a claim checks them.
const (
	GateDueTime          Gate = "due_time"           // not due yet: its backoff delay, or its runAt before the first attempt
	GatePaused           Gate = "paused"             // an owner paused the endpoint (checked first among the endpoint's gates)
	GateCircuit          Gate = "circuit"            // the endpoint's circuit is open, or half-open with its probe running
	GateRecovering       Gate = "recovering"         // the endpoint is recovering (its circuit closed or a pause ended): the claims a second its ramp allows were made
	GateProviderLimit    Gate = "provider_limit"     // the provider's rate-limit headers said its limit for the window is spent, or that none remain until a reset
	GateMaxConcurrent    Gate = "max_concurrent"     // the endpoint runs maxConcurrent jobs already
	GateRateLimit        Gate = "rate_limit"         // the endpoint had rateLimitPerMinute claims in the last 60 s
	GateDailyBudget      Gate = "daily_budget"       // the endpoint had dailyCallBudget claims since midnight in its budgetTimeZone
	GateMonthlyBudget    Gate = "monthly_budget"     // the endpoint had monthlyCallBudget claims since the 1st of the month in its budgetTimeZone
	GateDeliveryWindow   Gate = "delivery_window"    // the endpoint is in its quietHours, on its budgetTimeZone's clock
	GateKeyOrder         Gate = "key_order"          // its flow key is ordered, and a job enqueued before it has not finished
	GateKeyConcurrent    Gate = "key_concurrency"    // its flow key runs keyMaxConcurrent jobs already
	GateKeyRate          Gate = "key_rate"           // its flow key had keyRateLimitPerMinute claims in the last 61 s (a minute and a second for delivery)
	GateKeyDailyBudget   Gate = "key_daily_budget"   // its flow key had keyDailyCallBudget claims since midnight in the endpoint's budgetTimeZone
	GateKeyMonthlyBudget Gate = "key_monthly_budget" // its flow key had keyMonthlyCallBudget claims since the 1st of the month in the endpoint's budgetTimeZone
	GateNone             Gate = "none"               // nothing holds it: not scheduled, or due and waiting for a worker
)

// Gates lists every gate.
func Gates() []Gate {
	return []Gate{GateDueTime, GatePaused, GateCircuit, GateRecovering, GateProviderLimit, GateMaxConcurrent, GateRateLimit,
		GateDailyBudget, GateMonthlyBudget, GateDeliveryWindow,
		GateKeyOrder, GateKeyConcurrent, GateKeyRate, GateKeyDailyBudget, GateKeyMonthlyBudget, GateNone}
}

// RunState is whether a run takes new steps.
type RunState string

// Run states.
const (
	RunOpen     RunState = "open"     // takes new steps
	RunFinished RunState = "finished" // takes no new steps
)

// RunStates lists every run state.
func RunStates() []RunState { return []RunState{RunOpen, RunFinished} }

// CircuitState is the state of an endpoint's circuit breaker.
type CircuitState string

// Circuit states.
const (
	CircuitClosed   CircuitState = "closed"    // claims pass
	CircuitOpen     CircuitState = "open"      // claims wait until it half-opens
	CircuitHalfOpen CircuitState = "half_open" // one probe passes
)

// CircuitStates lists every circuit state.
func CircuitStates() []CircuitState {
	return []CircuitState{CircuitClosed, CircuitOpen, CircuitHalfOpen}
}

// Scope is what an API key may do.
type Scope string

// Key scopes.
const (
	ScopeOwner    Scope = "owner"    // everything
	ScopeProducer Scope = "producer" // enqueue, runs, read jobs
	ScopeWorker   Scope = "worker"   // claim, heartbeat, report, for the tools of its allowlist
)

// Scopes lists every key scope.
func Scopes() []Scope { return []Scope{ScopeOwner, ScopeProducer, ScopeWorker} }

// Plan is a project's plan.
type Plan string

// Plans.
const (
	PlanFree  Plan = "FREE"  // presets only
	PlanBasic Plan = "BASIC" // CUSTOM policies allowed
	PlanPro   Plan = "PRO"   // CUSTOM policies allowed
)

// Plans lists every plan.
func Plans() []Plan { return []Plan{PlanFree, PlanBasic, PlanPro} }

// AllowsCustom reports whether a project on plan p may save a CUSTOM retry
// policy.
func (p Plan) AllowsCustom() bool { return p != PlanFree }
