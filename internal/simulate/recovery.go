package simulate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
)

// Strategy is how held jobs are let out when a provider comes back.
type Strategy string

// The strategies of the recovery scenario.
const (
	// AtOnce makes every held job due at the moment the circuit closes, as
	// Ratchet did before paced recovery: only MaxConcurrent limits the
	// dispatch, and throttled jobs come back by their own backoff.
	AtOnce Strategy = "at-once"
	// Ramp admits jobs at a rate that starts low and follows the provider's
	// answers (additive increase, multiplicative decrease).
	Ramp Strategy = "ramp"
	// Learned is Ramp that also reads the provider's RateLimit headers: once
	// an answer states the limit, the rate jumps to it (never above the
	// ramp's configured limit) and never grows past it.
	Learned Strategy = "learned"
)

// AllStrategies lists every strategy, in the order a result shows them.
var AllStrategies = []Strategy{AtOnce, Ramp, Learned}

const allowedStrategies = "must be one of at-once, ramp, learned"

// Limits of a Recovery.
const (
	// MaxBacklog is the largest backlog a recovery simulates.
	MaxBacklog = 100_000
	// MaxCapacity is the largest capacity of the provider, requests per second.
	MaxCapacity = 100_000
	// MaxPaceS bounds backlog ÷ capacity: the provider's own pace through
	// the backlog may be at most an hour.
	MaxPaceS = 3600
	// MaxRecoveryS is the simulated time after the recovery; jobs not done
	// by then are reported as left.
	MaxRecoveryS = 6 * 3600
)

// Recovery is the recovery scenario: a provider was down, the endpoint's
// circuit held Backlog jobs, and at time 0 the provider comes back with a
// capacity of CapacityPerS requests per second, answering 429 above it. It
// is simulated once per strategy on common random numbers. Build it with
// DefaultRecovery and change what differs; JSON field names are camelCase
// and ParseRecovery rejects unknown ones.
type Recovery struct {
	Backlog      int `json:"backlog"`      // jobs held when the circuit closes; default 5000, 1 through 100000
	CapacityPerS int `json:"capacityPerS"` // what the provider serves per second (a fixed one-second window); default 100
	// RetryAfterS is the Retry-After of a 429, in seconds; default 1; 0 sends none.
	RetryAfterS int `json:"retryAfterS"`
	// MaxConcurrent is the endpoint's limit of requests in flight; default 50.
	MaxConcurrent int `json:"maxConcurrent"`
	// One network hop is |Normal(mean, sd)| milliseconds; a request is two
	// hops (to the provider and back). Defaults 40 and 10.
	LatencyMeanMs float64 `json:"latencyMeanMs"`
	LatencySdMs   float64 `json:"latencySdMs"`
	// Policy is the jobs' retry policy (its delays are real milliseconds
	// here); default AGGRESSIVE. A throttled job waits max(policy delay,
	// Retry-After).
	Policy backoff.Params `json:"policy"`
	// ThrottleSpendsAttempt makes a 429 count against Policy.MaxAttempts, as
	// Ratchet did before paced recovery; default true. When false the
	// policy's arithmetic still picks the delay.
	ThrottleSpendsAttempt bool `json:"throttleSpendsAttempt"`
	// Ramp is the AIMD of strategies ramp and learned.
	Ramp RampParams `json:"ramp"`
	// Strategies are simulated in this order; default at-once and ramp.
	Strategies []Strategy `json:"strategies"`
	Seed       uint64     `json:"seed"` // 0 through 2^53−1; default 1
}

// RampParams is the paced recovery: an AIMD on the endpoint's admitted
// rate, updated once per StepMs. It starts at max(1, StartPercent % of
// LimitPerS), multiplies by SlowStartFactor after each step of clean answers
// until the first throttle (slow start), then adds IncreasePercent % of
// the rate of the last cut per clean step (as the engine's ramp: the pace
// at which the provider last pushed back); a step with a 429, a 5xx or a timeout cuts it to
// DecreaseFactor × the rate (so at most one cut per step), never below 1.
// It is never above LimitPerS. The rate grows only in a step where it held
// a job back, as TCP grows a window only when the window is the limit.
type RampParams struct {
	LimitPerS       float64 `json:"limitPerS"`       // the endpoint's configured rate, requests per second; default 200
	StartPercent    float64 `json:"startPercent"`    // default 10
	SlowStartFactor float64 `json:"slowStartFactor"` // default 2; 1 skips slow start
	IncreasePercent float64 `json:"increasePercent"` // of the rate of the last cut per step (at least 1 a second); default 10
	DecreaseFactor  float64 `json:"decreaseFactor"`  // default 0.7
	StepMs          float64 `json:"stepMs"`          // default 1000
}

// DefaultRamp is the ramp the engine starts with: 10 % of the limit, ×2 per
// clean second, then +10 % of the limit per second, cut to 70 % on trouble.
func DefaultRamp() RampParams {
	return RampParams{LimitPerS: 200, StartPercent: 10, SlowStartFactor: 2, IncreasePercent: 10, DecreaseFactor: 0.7, StepMs: 1000}
}

// DefaultRecovery is the outage of issue 41 at the provider: 5,000 held
// jobs, a provider back with 100 requests per second and Retry-After: 1,
// 50 in flight, AGGRESSIVE jobs, throttles spending attempts, the default
// ramp, released at once and by the ramp, seed 1.
func DefaultRecovery() Recovery {
	p, _ := backoff.PresetParams(backoff.Aggressive)
	return Recovery{
		Backlog: 5000, CapacityPerS: 100, RetryAfterS: 1, MaxConcurrent: 50,
		LatencyMeanMs: 40, LatencySdMs: 10,
		Policy: p, ThrottleSpendsAttempt: true,
		Ramp:       DefaultRamp(),
		Strategies: []Strategy{AtOnce, Ramp},
		Seed:       1,
	}
}

// Validate checks every field and returns all problems together as
// field.Errors, each naming the JSON field, the value and what is allowed.
func (r Recovery) Validate() error {
	var errs field.Errors
	itoa := strconv.Itoa
	if r.Backlog < 1 || r.Backlog > MaxBacklog {
		errs.Add("backlog", itoa(r.Backlog), "must be an integer from 1 through 100000 jobs")
	}
	if r.CapacityPerS < 1 || r.CapacityPerS > MaxCapacity {
		errs.Add("capacityPerS", itoa(r.CapacityPerS), "must be an integer from 1 through 100000 requests per second")
	} else if r.Backlog >= 1 && r.Backlog > MaxPaceS*r.CapacityPerS {
		errs.Add("backlog", itoa(r.Backlog), fmt.Sprintf("is %d s of the provider's pace (backlog ÷ capacityPerS); at most %d s, so at most %d jobs at %d per second",
			(r.Backlog+r.CapacityPerS-1)/r.CapacityPerS, MaxPaceS, MaxPaceS*r.CapacityPerS, r.CapacityPerS))
	}
	if r.RetryAfterS < 0 || r.RetryAfterS > 3600 {
		errs.Add("retryAfterS", itoa(r.RetryAfterS), "must be an integer from 0 (none) through 3600 seconds")
	}
	if r.MaxConcurrent < 1 || r.MaxConcurrent > 10_000 {
		errs.Add("maxConcurrent", itoa(r.MaxConcurrent), "must be an integer from 1 through 10000 requests in flight")
	}
	if !(r.LatencyMeanMs > 0 && r.LatencyMeanMs <= 60_000) {
		errs.Add("latencyMeanMs", num(r.LatencyMeanMs), "must be a number of milliseconds greater than 0 and at most 60000")
	}
	if !(r.LatencySdMs >= 0 && r.LatencySdMs <= 60_000) {
		errs.Add("latencySdMs", num(r.LatencySdMs), "must be a number of milliseconds from 0 through 60000")
	}
	if _, err := backoff.NewCustom(r.Policy); err != nil {
		errs = append(errs, prefixed(err, "policy.")...)
	}
	r.Ramp.validate(&errs)
	validateStrategies(r.Strategies, &errs)
	if r.Seed > MaxSeed {
		errs.Add("seed", strconv.FormatUint(r.Seed, 10), "must be an integer from 0 through 9007199254740991")
	}
	return errs.Err()
}

// validate checks the ramp's parameters, each against the range in which
// the AIMD still means what its name says.
func (p RampParams) validate(errs *field.Errors) {
	check := func(name string, v, lo, hi float64, loOpen bool, allowed string) {
		if !(v <= hi) || !(v > lo || !loOpen && v == lo) {
			errs.Add("ramp."+name, num(v), allowed)
		}
	}
	check("limitPerS", p.LimitPerS, 0, 1_000_000, true, "must be a number of requests per second greater than 0 and at most 1000000")
	check("startPercent", p.StartPercent, 0, 100, true, "must be a percentage of the limit greater than 0 and at most 100")
	check("slowStartFactor", p.SlowStartFactor, 1, 16, false, "must be a factor from 1 (no slow start) through 16")
	check("increasePercent", p.IncreasePercent, 0, 100, true, "must be a percentage of the rate of the last cut per step, greater than 0 and at most 100")
	check("decreaseFactor", p.DecreaseFactor, 0, 1, true, "must be a factor greater than 0 and below 1")
	if p.DecreaseFactor == 1 {
		errs.Add("ramp.decreaseFactor", "1", "must be a factor greater than 0 and below 1")
	}
	check("stepMs", p.StepMs, 100, 60_000, false, "must be a number of milliseconds from 100 through 60000")
}

func validateStrategies(ss []Strategy, errs *field.Errors) {
	if len(ss) == 0 {
		errs.Add("strategies", "[]", "must list at least one strategy; "+allowedStrategies)
	}
	seen := map[Strategy]bool{}
	for _, s := range ss {
		switch {
		case s != AtOnce && s != Ramp && s != Learned:
			errs.Add("strategies", strconv.Quote(string(s)), allowedStrategies)
		case seen[s]:
			errs.Add("strategies", strconv.Quote(string(s)), "each strategy may appear once")
		}
		seen[s] = true
	}
}

// ParseRecovery reads a JSON recovery scenario on top of DefaultRecovery:
// fields left out keep their defaults (inside "policy" and "ramp" too),
// unknown fields are rejected, and the result is validated.
func ParseRecovery(data []byte) (Recovery, error) {
	r := DefaultRecovery()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Recovery{}, field.Errors{{Field: "recovery", Value: "invalid JSON (" + err.Error() + ")", Allowed: "must be one JSON object of the documented fields"}}
	}
	if dec.More() {
		return Recovery{}, field.Errors{{Field: "recovery", Value: "trailing data after the object", Allowed: "must be exactly one JSON object"}}
	}
	if err := r.Validate(); err != nil {
		return Recovery{}, err
	}
	return r, nil
}
