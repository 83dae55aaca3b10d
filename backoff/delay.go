package backoff

import (
	"math"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/field"
)

// Decision is the arithmetic that follows one failed attempt: everything a
// person needs to see why the next attempt is when it is.
type Decision struct {
	Attempt      int     `json:"attempt"`              // the failed attempt, from 1
	Exhausted    bool    `json:"exhausted"`            // no automatic attempt follows
	BaseDelayMs  float64 `json:"baseDelayMs"`          // min(maxDelayMs, initialDelayMs × multiplier^(n−1))
	MinDelayMs   int64   `json:"minDelayMs"`           // jittered delay at sample 0
	MaxDelayMs   int64   `json:"maxDelayMs"`           // jittered delay at sample 1
	Sample       float64 `json:"sample"`               // the random draw u in [0, 1]
	JitteredMs   int64   `json:"jitteredMs"`           // round(base × (1 − j/100 + u × 2j/100))
	RetryAfterMs int64   `json:"retryAfterMs"`         // provider hint, 0 when none
	SelectedMs   int64   `json:"selectedMs"`           // min(24 h, max(jittered, hint))
	HintWon      bool    `json:"hintWon"`              // the hint was longer than the jittered delay
	SafetyLimit  bool    `json:"safetyLimitApplied"`   // the 24-hour limit cut the delay
	NextAttempt  int     `json:"nextAttempt,omitzero"` // attempt number that runs after the delay
}

// Delay applies the policy formula after failed attempt n (from 1) with the
// random sample u in [0, 1] and an optional retry-after hint (0 for none):
//
//	base     = min(maxDelayMs, initialDelayMs × multiplier^(n−1))
//	jittered = round(base × (1 − j/100 + u × 2j/100))
//	selected = min(86_400_000, max(jittered, retryAfterMs))
//
// Rounding is JavaScript's Math.round (half up). When n has used up the
// policy's attempts the decision is Exhausted and carries no delay.
func (p Params) Delay(attempt int, u float64, retryAfterMs int64) (Decision, error) {
	var errs field.Errors
	if attempt < 1 {
		errs.Add("attempt", strconv.Itoa(attempt), "must be an integer of at least 1")
	}
	if !(u >= 0 && u <= 1) {
		errs.Add("sample", formatNumber(u), "must be a number from 0 through 1")
	}
	if retryAfterMs < 0 {
		errs.Add("retryAfterMs", strconv.FormatInt(retryAfterMs, 10), "must be 0 (no hint) or more milliseconds")
	}
	if err := errs.Err(); err != nil {
		return Decision{}, err
	}
	d := Decision{Attempt: attempt, Sample: u, RetryAfterMs: retryAfterMs}
	if attempt >= p.MaxAttempts {
		d.Exhausted = true
		return d, nil
	}
	d.BaseDelayMs = p.Base(attempt)
	d.MinDelayMs = p.jitter(d.BaseDelayMs, 0)
	d.MaxDelayMs = p.jitter(d.BaseDelayMs, 1)
	d.JitteredMs = p.jitter(d.BaseDelayMs, u)
	d.SelectedMs = d.JitteredMs
	if retryAfterMs > d.SelectedMs {
		d.SelectedMs = retryAfterMs
		d.HintWon = true
	}
	if d.SelectedMs > SafetyLimitMs {
		d.SelectedMs = SafetyLimitMs
		d.SafetyLimit = true
	}
	d.NextAttempt = attempt + 1
	return d, nil
}

// Base is the capped, jitter-free delay after failed attempt n (from 1).
func (p Params) Base(attempt int) float64 {
	b := float64(p.InitialDelayMs) * pow(p.Multiplier, attempt-1)
	return math.Min(float64(p.MaxDelayMs), b)
}

// jitter applies the ± jitter band to base at sample u. The order of
// operations follows the documented JavaScript so both agree to the bit.
func (p Params) jitter(base, u float64) int64 {
	lo := 1 - p.JitterPercent/100
	span := 2 * p.JitterPercent / 100
	return int64(RoundHalfUp(base * (lo + u*span)))
}

// Ceiling is the longest delay the policy alone can select: the cap plus the
// jitter band, never above the 24-hour safety limit.
func (p Params) Ceiling() int64 {
	return min(SafetyLimitMs, p.jitter(float64(p.MaxDelayMs), 1))
}

// pow multiplies m by itself n times. A loop, not math.Pow, so that Go and the
// browser (which runs the same loop) produce identical doubles.
func pow(m float64, n int) float64 {
	r := 1.0
	for range n {
		r *= m
	}
	return r
}

// RoundHalfUp rounds like JavaScript's Math.round: to the nearest integer,
// with ties toward +∞. Exact for every double (no x+0.5 shortcut, which is
// wrong for 0.49999999999999994).
func RoundHalfUp(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	f := math.Floor(x)
	if x-f >= 0.5 {
		return f + 1
	}
	return f
}

// ScheduleRow is one line of a policy schedule table.
type ScheduleRow struct {
	FailedAttempt int     `json:"failedAttempt"`
	Exhausted     bool    `json:"exhausted"`
	BaseDelayMs   float64 `json:"baseDelayMs,omitzero"`
	MinDelayMs    int64   `json:"minDelayMs,omitzero"`
	MaxDelayMs    int64   `json:"maxDelayMs,omitzero"`
	NextAttempt   int     `json:"nextAttempt"` // the attempt that runs next, or the one that never will
}

// PolicySchedule is the documented table of a policy: one row per failed
// attempt, the last one exhausted, and the sum of the waits at zero jitter.
type PolicySchedule struct {
	Params          Params        `json:"params"`
	Rows            []ScheduleRow `json:"rows"`
	Waits           int           `json:"waits"`
	ZeroJitterTotal int64         `json:"zeroJitterTotalMs"`
	CeilingMs       int64         `json:"ceilingMs"`
}

// Schedule builds the policy's table.
func (p Params) Schedule() PolicySchedule {
	s := PolicySchedule{Params: p, CeilingMs: p.Ceiling()}
	for n := 1; n <= p.MaxAttempts; n++ {
		if n == p.MaxAttempts {
			s.Rows = append(s.Rows, ScheduleRow{FailedAttempt: n, Exhausted: true, NextAttempt: n + 1})
			break
		}
		base := p.Base(n)
		s.Rows = append(s.Rows, ScheduleRow{
			FailedAttempt: n,
			BaseDelayMs:   base,
			MinDelayMs:    p.jitter(base, 0),
			MaxDelayMs:    p.jitter(base, 1),
			NextAttempt:   n + 1,
		})
		s.Waits++
		s.ZeroJitterTotal += int64(RoundHalfUp(base))
	}
	return s
}

// Text renders the table as the documentation prints it:
//
//	| Failed attempt | Base delay | Jitter range | Next execution |
//	|---|---|---|---|
//	| 1 | 10 seconds | 8–12 seconds | Attempt 2 |
//	...
//	| 6 | None | None | Exhausted; no automatic attempt 7 |
//	With zero jitter, those five waits total 310 seconds.
func (s PolicySchedule) Text() string {
	var b strings.Builder
	b.WriteString("| Failed attempt | Base delay | Jitter range | Next execution |\n|---|---|---|---|\n")
	for _, r := range s.Rows {
		if r.Exhausted {
			b.WriteString("| " + strconv.Itoa(r.FailedAttempt) + " | None | None | Exhausted; no automatic attempt " + strconv.Itoa(r.NextAttempt) + " |\n")
			continue
		}
		rng := seconds(float64(r.MinDelayMs)) + "–" + Seconds(float64(r.MaxDelayMs))
		if r.MinDelayMs == r.MaxDelayMs {
			rng = Seconds(float64(r.MinDelayMs))
		}
		b.WriteString("| " + strconv.Itoa(r.FailedAttempt) + " | " + Seconds(r.BaseDelayMs) + " | " + rng + " | Attempt " + strconv.Itoa(r.NextAttempt) + " |\n")
	}
	b.WriteString(s.TotalSentence() + "\n")
	return b.String()
}

// TotalSentence is the line under the table, e.g. "With zero jitter, those
// five waits total 310 seconds."
func (s PolicySchedule) TotalSentence() string {
	switch s.Waits {
	case 0:
		return "With a single attempt there is no wait."
	case 1:
		return "With zero jitter, that one wait totals " + Seconds(float64(s.ZeroJitterTotal)) + "."
	}
	return "With zero jitter, those " + numberWord(s.Waits) + " waits total " + Seconds(float64(s.ZeroJitterTotal)) + "."
}

func numberWord(n int) string {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}

// Seconds renders milliseconds as "10 seconds", "1 second" or "1.5 seconds",
// after rounding to whole milliseconds.
func Seconds(ms float64) string {
	s := seconds(ms)
	if s == "1" {
		return "1 second"
	}
	return s + " seconds"
}

// seconds is the bare number of Seconds, used for the left end of a range.
func seconds(ms float64) string {
	return formatNumber(RoundHalfUp(ms) / 1000)
}
