package simulate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
)

// Mode is how a client waits after a failed try.
type Mode string

// The modes. The first five are the study's; policy and calc are Ratchet's.
const (
	// NoBackoff retries at once (the study's "None").
	NoBackoff Mode = "none"
	// Exponential waits min(cap, base × 2^n) after failed try n (from 1), no jitter.
	Exponential Mode = "exponential"
	// Full waits random(0, min(cap, base × 2^n)).
	Full Mode = "full"
	// Equal waits half of min(cap, base × 2^n) plus a random half.
	Equal Mode = "equal"
	// Decorrelated waits min(cap, random(base, previous × 3)), previous from base.
	Decorrelated Mode = "decorrelated"
	// Policy waits what a Ratchet retry policy selects (seed 000 formula) and
	// gives up when the policy is exhausted.
	Policy Mode = "policy"
	// Calc follows a backoff calculator schedule and gives up after its last
	// listed wait.
	Calc Mode = "calc"
)

// StudyModes are the five modes of the 2015 study, in the order the study's
// charts list them.
var StudyModes = []Mode{NoBackoff, Exponential, Full, Equal, Decorrelated}

// AllModes lists every mode.
var AllModes = []Mode{NoBackoff, Exponential, Full, Equal, Decorrelated, Policy, Calc}

const allowedModes = "must be one of none, exponential, full, equal, decorrelated, policy, calc"

// Limits of a Config. They keep one request to a few seconds of work, so the
// server can run sweeps on behalf of the web page.
const (
	MaxClients = 1000
	MaxPoints  = 100
	MaxRuns    = 10000
	// MaxClientRuns bounds Σ clients × runs × modes over the sweep: 20 times
	// the study's full sweep (1,900 × 100 × 5).
	MaxClientRuns = 20_000_000
	// MaxSeed is the largest seed a browser can carry exactly (2^53 − 1).
	MaxSeed = 1<<53 - 1
	// MaxMs bounds every duration in a Config (a day).
	MaxMs = 86_400_000
)

// Config is one sweep. Build it with DefaultConfig and change what differs;
// the zero value is not valid. JSON field names are camelCase and ParseConfig
// rejects unknown ones.
type Config struct {
	From  int    `json:"from" required:"false"`  // first number of clients; default 10
	To    int    `json:"to" required:"false"`    // last number of clients, included if on a step; default 190
	Step  int    `json:"step" required:"false"`  // clients added per point; default 10
	Runs  int    `json:"runs" required:"false"`  // simulations averaged per point and mode; default 100
	Modes []Mode `json:"modes" required:"false"` // default StudyModes
	Seed  uint64 `json:"seed" required:"false"`  // 0 through 2^53−1; default 1

	BaseMs float64 `json:"baseMs" required:"false"` // study modes' base delay; default 5 (the study's)
	CapMs  float64 `json:"capMs" required:"false"`  // study modes' cap; default 2000 (the study's)

	LatencyMeanMs float64 `json:"latencyMeanMs" required:"false"` // one network hop is |Normal(mean, sd)|; default 10
	LatencySdMs   float64 `json:"latencySdMs" required:"false"`   // default 2

	// Policy is the Ratchet policy of mode policy. Its delays are milliseconds
	// of simulated time like everything else.
	Policy *backoff.Params `json:"policy,omitempty"`
	// Calc is the calculator setting of mode calc. Its seed is not used:
	// every client draws its own calculator seed from Seed.
	Calc *backoff.CalcInput `json:"calc,omitempty"`
	// Budget, when set, is a retry token bucket shared by all clients.
	Budget *Budget `json:"budget,omitempty"`
	// RetryAfter, when set, makes an overloaded resource answer conflicts
	// with a "come back in X ms" hint.
	RetryAfter *RetryAfter `json:"retryAfter,omitempty"`

	// Workers is the number of goroutines; 0 means GOMAXPROCS. It never
	// changes the result.
	Workers int `json:"-"`
}

// Budget is a retry token bucket like the retry quota of the AWS SDKs. All
// clients of a run share it, as concurrent requests through one SDK client
// would. A retry takes RetryCost tokens; when fewer are left the retry is
// refused: the client gives up, counts as failed, and its time is the moment
// it was refused. Every successful write puts SuccessRefund tokens back, up to
// Capacity. The bucket starts full.
type Budget struct {
	Capacity      int `json:"capacity"`      // default 500
	RetryCost     int `json:"retryCost"`     // default 5
	SuccessRefund int `json:"successRefund"` // default 1
}

// DefaultBudget is the AWS SDK standard retry quota: 500 tokens, 5 per retry,
// 1 back per success.
func DefaultBudget() Budget { return Budget{Capacity: 500, RetryCost: 5, SuccessRefund: 1} }

// RetryAfter describes a resource that, when overloaded, answers a failed
// write with "come back in Ms milliseconds". It is overloaded when more than
// Overload writes reached it in the last WindowMs (the write being answered
// included). Clients honour the hint as a floor under their own backoff, as
// Ratchet does: wait = max(backoff, hint).
type RetryAfter struct {
	Ms       float64 `json:"ms"`       // the hint; required, greater than 0
	Overload int     `json:"overload"` // default 20 writes; 0 means every conflict carries the hint
	WindowMs float64 `json:"windowMs"` // default 100
}

// DefaultConfig is the study's sweep: 10 to 190 clients in steps of 10, 100
// runs per point, the five study modes, base 5 ms, cap 2000 ms, hops of
// |Normal(10 ms, 2 ms)|, seed 1.
func DefaultConfig() Config {
	return Config{
		From: 10, To: 190, Step: 10, Runs: 100,
		Modes:  append([]Mode(nil), StudyModes...),
		Seed:   1,
		BaseMs: 5, CapMs: 2000,
		LatencyMeanMs: 10, LatencySdMs: 2,
	}
}

// Points lists the numbers of clients of the sweep.
func (c Config) Points() []int {
	var out []int
	if c.From < 1 || c.Step < 1 || c.To < c.From {
		return nil
	}
	for n := c.From; n <= c.To && len(out) <= MaxPoints; n += c.Step {
		out = append(out, n)
	}
	return out
}

// Validate checks every field and returns all problems together as
// field.Errors, each naming the JSON field, the value and what is allowed.
func (c Config) Validate() error {
	var errs field.Errors
	c.validatePoints(&errs)
	if c.Runs < 1 || c.Runs > MaxRuns {
		errs.Add("runs", strconv.Itoa(c.Runs), "must be an integer from 1 through 10000")
	}
	seen := c.validateModes(&errs)
	if c.Seed > MaxSeed {
		errs.Add("seed", strconv.FormatUint(c.Seed, 10), "must be an integer from 0 through 9007199254740991")
	}
	c.validateTimes(&errs)
	c.validateSettings(&errs, seen)
	if b := c.Budget; b != nil {
		b.validate(&errs)
	}
	if r := c.RetryAfter; r != nil {
		r.validate(&errs)
	}
	if c.Workers < 0 {
		errs.Add("workers", strconv.Itoa(c.Workers), "must be 0 (one per CPU) or more goroutines")
	}
	if len(errs) == 0 {
		total := 0
		for _, n := range c.Points() {
			total += n
		}
		if w := total * c.Runs * len(c.Modes); w > MaxClientRuns {
			errs.Add("runs", strconv.Itoa(c.Runs), fmt.Sprintf("makes %d client runs (clients summed over points × runs × modes); at most %d are allowed", w, MaxClientRuns))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// validatePoints checks From, To and Step, and, when each is fine, that
// they give at most MaxPoints points.
func (c Config) validatePoints(errs *field.Errors) {
	itoa := strconv.Itoa
	n := len(*errs)
	if c.From < 1 || c.From > MaxClients {
		errs.Add("from", itoa(c.From), "must be an integer from 1 through 1000 clients")
	}
	if c.To < max(c.From, 1) || c.To > MaxClients {
		errs.Add("to", itoa(c.To), fmt.Sprintf("must be an integer from the first point (%d) through 1000 clients", max(c.From, 1)))
	}
	if c.Step < 1 || c.Step > MaxClients {
		errs.Add("step", itoa(c.Step), "must be an integer from 1 through 1000 clients")
	}
	if len(*errs) == n {
		if n := (c.To-c.From)/c.Step + 1; n > MaxPoints {
			errs.Add("step", itoa(c.Step), fmt.Sprintf("gives %d points from %d to %d; at most 100 are allowed", n, c.From, c.To))
		}
	}
}

// validateModes checks that Modes lists known modes, each once, and
// returns the modes it saw (the policy and calc modes need settings).
func (c Config) validateModes(errs *field.Errors) map[Mode]bool {
	if len(c.Modes) == 0 {
		errs.Add("modes", "[]", "must list at least one mode; "+allowedModes)
	}
	seen := map[Mode]bool{}
	for _, m := range c.Modes {
		switch {
		case !isMode(m):
			errs.Add("modes", strconv.Quote(string(m)), allowedModes)
		case seen[m]:
			errs.Add("modes", strconv.Quote(string(m)), "each mode may appear once")
		}
		seen[m] = true
	}
	return seen
}

// validateTimes checks the study modes' base and cap and the latency of
// the resource, all in milliseconds.
func (c Config) validateTimes(errs *field.Errors) {
	if !(c.BaseMs > 0 && c.BaseMs <= MaxMs) {
		errs.Add("baseMs", num(c.BaseMs), "must be a number of milliseconds greater than 0 and at most 86400000")
	}
	if !(c.CapMs >= c.BaseMs && c.CapMs <= MaxMs) || !(c.CapMs > 0) {
		errs.Add("capMs", num(c.CapMs), "must be a number of milliseconds from the base delay through 86400000")
	}
	if !(c.LatencyMeanMs > 0 && c.LatencyMeanMs <= 60_000) {
		errs.Add("latencyMeanMs", num(c.LatencyMeanMs), "must be a number of milliseconds greater than 0 and at most 60000")
	}
	if !(c.LatencySdMs >= 0 && c.LatencySdMs <= 60_000) {
		errs.Add("latencySdMs", num(c.LatencySdMs), "must be a number of milliseconds from 0 through 60000")
	}
}

// validateSettings checks the retry policy of mode policy and the
// calculator setting of mode calc: each is required when its mode is in
// seen, and checked by its own package when given, its fields prefixed.
func (c Config) validateSettings(errs *field.Errors, seen map[Mode]bool) {
	if seen[Policy] && c.Policy == nil {
		errs.Add("policy", field.Missing, "mode policy needs a retry policy: maxAttempts, initialDelayMs, multiplier, maxDelayMs, jitterPercent")
	}
	if c.Policy != nil {
		if _, err := backoff.NewCustom(*c.Policy); err != nil {
			*errs = append(*errs, prefixed(err, "policy.")...)
		}
	}
	if seen[Calc] && c.Calc == nil {
		errs.Add("calc", field.Missing, "mode calc needs a calculator setting: baseMs, multiplier, capMs, attempts, jitter, firstWait")
	}
	if c.Calc != nil {
		if err := c.Calc.Validate(); err != nil {
			*errs = append(*errs, prefixed(err, "calc.")...)
		}
	}
}

// validate checks the token bucket: a capacity, and a cost and refund
// that fit in it.
func (b *Budget) validate(errs *field.Errors) {
	itoa := strconv.Itoa
	if b.Capacity < 1 || b.Capacity > 1_000_000_000 {
		errs.Add("budget.capacity", itoa(b.Capacity), "must be an integer from 1 through 1000000000 tokens")
	}
	if b.RetryCost < 1 || b.RetryCost > max(b.Capacity, 1) {
		errs.Add("budget.retryCost", itoa(b.RetryCost), fmt.Sprintf("must be an integer from 1 through the capacity (%d) tokens", max(b.Capacity, 1)))
	}
	if b.SuccessRefund < 0 || b.SuccessRefund > max(b.Capacity, 1) {
		errs.Add("budget.successRefund", itoa(b.SuccessRefund), fmt.Sprintf("must be an integer from 0 through the capacity (%d) tokens", max(b.Capacity, 1)))
	}
}

// validate checks the Retry-After hint and the overload that triggers it.
func (r *RetryAfter) validate(errs *field.Errors) {
	if !(r.Ms > 0 && r.Ms <= MaxMs) {
		errs.Add("retryAfter.ms", num(r.Ms), "must be a number of milliseconds greater than 0 and at most 86400000")
	}
	if r.Overload < 0 || r.Overload > 1_000_000 {
		errs.Add("retryAfter.overload", strconv.Itoa(r.Overload), "must be an integer from 0 through 1000000 writes")
	}
	if !(r.WindowMs > 0 && r.WindowMs <= MaxMs) {
		errs.Add("retryAfter.windowMs", num(r.WindowMs), "must be a number of milliseconds greater than 0 and at most 86400000")
	}
}

func isMode(m Mode) bool {
	for _, k := range AllModes {
		if m == k {
			return true
		}
	}
	return false
}

func num(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Sprint(f)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// prefixed returns the field errors of err with prefix before each field.
func prefixed(err error, prefix string) field.Errors {
	es, ok := field.As(err)
	if !ok {
		return field.Errors{{Field: strings.TrimSuffix(prefix, "."), Value: err.Error(), Allowed: "must be valid"}}
	}
	return es.Prefixed(prefix)
}

// ParseConfig reads a JSON sweep request on top of DefaultConfig: fields left
// out keep their defaults, unknown fields are rejected, and the result is
// validated. A "budget" or "retryAfter" object starts from its defaults too.
func ParseConfig(data []byte) (Config, error) {
	c := DefaultConfig()
	var raw struct {
		Config
		Budget     json.RawMessage `json:"budget"`
		RetryAfter json.RawMessage `json:"retryAfter"`
	}
	raw.Config = c
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Config{}, field.Errors{{Field: "config", Value: "invalid JSON (" + err.Error() + ")", Allowed: "must be one JSON object of the documented fields"}}
	}
	if dec.More() {
		return Config{}, field.Errors{{Field: "config", Value: "trailing data after the object", Allowed: "must be exactly one JSON object"}}
	}
	c = raw.Config
	c.Budget, c.RetryAfter = nil, nil
	if isSet(raw.Budget) {
		b := DefaultBudget()
		if err := strictDecode(raw.Budget, &b); err != nil {
			return Config{}, field.Errors{{Field: "budget", Value: "invalid JSON (" + err.Error() + ")", Allowed: "must be an object of capacity, retryCost, successRefund"}}
		}
		c.Budget = &b
	}
	if isSet(raw.RetryAfter) {
		r := RetryAfter{Overload: 20, WindowMs: 100}
		if err := strictDecode(raw.RetryAfter, &r); err != nil {
			return Config{}, field.Errors{{Field: "retryAfter", Value: "invalid JSON (" + err.Error() + ")", Allowed: "must be an object of ms, overload, windowMs"}}
		}
		c.RetryAfter = &r
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func isSet(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null"
}

func strictDecode(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
