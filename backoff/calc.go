package backoff

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/field"
)

// Jitter is a calculator jitter mode.
type Jitter string

// The calculator's jitter modes.
const (
	NoJitter           Jitter = "none"
	FullJitter         Jitter = "full"
	EqualJitter        Jitter = "equal"
	DecorrelatedJitter Jitter = "decorrelated"
)

// JitterModes lists the modes in the order the calculator offers them.
var JitterModes = []Jitter{NoJitter, FullJitter, EqualJitter, DecorrelatedJitter}

// FirstWait says where the calculator's exponent starts.
type FirstWait string

// The two first-wait choices.
const (
	// FirstWaitBase starts the exponent at 0: the first wait is the base delay.
	FirstWaitBase FirstWait = "base"
	// FirstWaitMultiplied starts it at 1: the first wait is base × multiplier,
	// as in the simulator of the 2015 "Exponential Backoff And Jitter" study.
	FirstWaitMultiplied FirstWait = "multiplied"
)

// Calculator limits.
const (
	MaxCalcAttempts = 15
	// MaxCalcMs bounds the base delay and the cap (about 31.7 years) so every
	// wait stays exact in thousandths of a millisecond.
	MaxCalcMs = 1e12
)

// CalcInput is one calculator setting.
type CalcInput struct {
	BaseMs     float64   `json:"baseMs"`
	Multiplier float64   `json:"multiplier"`
	CapMs      float64   `json:"capMs"`
	Attempts   int       `json:"attempts"`
	Jitter     Jitter    `json:"jitter"`
	FirstWait  FirstWait `json:"firstWait"`
	Seed       uint32    `json:"seed"`
}

// SampleInput is the calculator's "Load sample": base 1000 ms, multiplier 2,
// cap 30000 ms, 4 attempts, no jitter, first wait equal to the base, seed 1.
func SampleInput() CalcInput {
	return CalcInput{BaseMs: 1000, Multiplier: 2, CapMs: 30000, Attempts: 4, Jitter: NoJitter, FirstWait: FirstWaitBase, Seed: 1}
}

// Validate checks the input against the calculator's rules: up to 15
// attempts, base greater than 0, multiplier at least 1, cap at least the base.
// Field names are the JSON names; the CLI maps them to its flags.
func (in CalcInput) Validate() error {
	var errs field.Errors
	baseOK := in.BaseMs > 0 && in.BaseMs <= MaxCalcMs
	if !baseOK {
		errs.Add("baseMs", formatNumber(in.BaseMs), "must be greater than 0 and at most 1000000000000 milliseconds")
	}
	if !(in.Multiplier >= 1) || math.IsInf(in.Multiplier, 0) {
		errs.Add("multiplier", formatNumber(in.Multiplier), "must be a finite number of at least 1")
	}
	if !(in.CapMs > 0 && in.CapMs <= MaxCalcMs) || (baseOK && in.CapMs < in.BaseMs) {
		lo := "the base delay"
		if baseOK {
			lo += " (" + formatNumber(in.BaseMs) + ")"
		}
		errs.Add("capMs", formatNumber(in.CapMs), "must be at least "+lo+" and at most 1000000000000 milliseconds")
	}
	if in.Attempts < 1 || in.Attempts > MaxCalcAttempts {
		errs.Add("attempts", strconv.Itoa(in.Attempts), "must be an integer from 1 through 15")
	}
	switch in.Jitter {
	case NoJitter, FullJitter, EqualJitter, DecorrelatedJitter:
	default:
		errs.Add("jitter", strconv.Quote(string(in.Jitter)), "must be one of none, full, equal, decorrelated")
	}
	switch in.FirstWait {
	case FirstWaitBase, FirstWaitMultiplied:
	default:
		errs.Add("firstWait", strconv.Quote(string(in.FirstWait)), "must be one of base, multiplied")
	}
	return errs.Err()
}

// CalcRow is one retry of a calculator schedule. Waits are kept in exact
// thousandths of a millisecond (the documented rounding) so the cumulative
// column never picks up binary floating-point residue.
type CalcRow struct {
	Attempt         int   // the exponent used for this wait
	Retry           int   // 1-based retry number
	WaitMicro       int64 // wait in thousandths of a millisecond
	CumulativeMicro int64 // sum of the rounded waits so far, same unit
	Capped          bool  // the cap cut this wait
}

// WaitMs is the wait in milliseconds.
func (r CalcRow) WaitMs() float64 { return float64(r.WaitMicro) / 1000 }

// MarshalJSON writes milliseconds as JSON numbers with at most three decimals:
// {"attempt":0,"retry":1,"waitMs":627.074,"cumulativeMs":627.074,"capped":false}.
func (r CalcRow) MarshalJSON() ([]byte, error) {
	return []byte(`{"attempt":` + strconv.Itoa(r.Attempt) + `,"retry":` + strconv.Itoa(r.Retry) +
		`,"waitMs":` + FormatMicro(r.WaitMicro) + `,"cumulativeMs":` + FormatMicro(r.CumulativeMicro) +
		`,"capped":` + strconv.FormatBool(r.Capped) + `}`), nil
}

// CalcSchedule is a calculator result.
type CalcSchedule struct {
	Input   CalcInput `json:"input"`
	Formula string    `json:"formula"`
	Rows    []CalcRow `json:"rows"`
	Capped  int       `json:"cappedCount"`
	Notes   []string  `json:"notes"`
}

// MarshalJSON adds the printed lines to the fields, so a script or a web page
// gets both the numbers and the exact text.
func (s CalcSchedule) MarshalJSON() ([]byte, error) {
	type plain CalcSchedule
	return json.Marshal(struct {
		plain
		Lines []string `json:"lines"`
	}{plain(s), s.Lines()})
}

// Calculate computes the schedule. Draws come from mulberry32(seed) in order,
// one per retry, and only for the jittered modes.
func Calculate(in CalcInput) (CalcSchedule, error) {
	if err := in.Validate(); err != nil {
		return CalcSchedule{}, err
	}
	s := CalcSchedule{Input: in, Formula: formula(in), Rows: make([]CalcRow, 0, in.Attempts)}
	rng := NewMulberry32(in.Seed)
	exp0 := 0
	if in.FirstWait == FirstWaitMultiplied {
		exp0 = 1
	}
	prev := in.BaseMs
	var cum int64
	for i := range in.Attempts {
		exp := exp0 + i
		wait, capped := calcWait(in, exp, &prev, rng)
		micro := int64(RoundHalfUp(wait * 1000))
		cum += micro
		if capped {
			s.Capped++
		}
		s.Rows = append(s.Rows, CalcRow{Attempt: exp, Retry: i + 1, WaitMicro: micro, CumulativeMicro: cum, Capped: capped})
	}
	s.addNotes()
	return s, nil
}

// calcWait is the wait before the retry whose exponent is exp, and whether
// the cap cut it. Decorrelated jitter grows from the previous wait, which
// it keeps in prev; the other modes jitter base * factor^exp, capped.
func calcWait(in CalcInput, exp int, prev *float64, rng *Mulberry32) (wait float64, capped bool) {
	if in.Jitter == DecorrelatedJitter {
		w := in.BaseMs + (*prev*3-in.BaseMs)*rng.Next()
		wait = math.Min(in.CapMs, w)
		*prev = wait
		return wait, w > in.CapMs
	}
	raw := in.BaseMs * pow(in.Multiplier, exp)
	temp := math.Min(in.CapMs, raw)
	switch in.Jitter {
	case FullJitter:
		wait = temp * rng.Next()
	case EqualJitter:
		wait = temp/2 + (temp/2)*rng.Next()
	default:
		wait = temp
	}
	return wait, raw > in.CapMs
}

// addNotes explains the schedule's rounding (jittered waits are rounded
// to 0.001 ms) and how many waits the cap cut.
func (s *CalcSchedule) addNotes() {
	if s.Input.Jitter != NoJitter {
		s.Notes = append(s.Notes, "Each wait is rounded to 0.001 ms. The cumulative column adds those rounded waits.")
	}
	if s.Capped > 0 {
		noun := "waits"
		if s.Capped == 1 {
			noun = "wait"
		}
		s.Notes = append(s.Notes, "The cap cut "+strconv.Itoa(s.Capped)+" "+noun+".")
	}
}

func formula(in CalcInput) string {
	const random = "random(min, max) is min + (max - min) * u, and u is in [0, 1) from mulberry32(seed)."
	start := "attempt starts at 0, so the first wait is the base delay when factor^0 is 1."
	if in.FirstWait == FirstWaitMultiplied {
		start = "attempt starts at 1, so the first wait is base * factor. That matches the AWS simulator, which increments n before the first sleep."
	}
	switch in.Jitter {
	case FullJitter:
		return "temp = min(cap, base * factor^attempt); wait = random(0, temp). " + start + " " + random
	case EqualJitter:
		return "temp = min(cap, base * factor^attempt); wait = temp / 2 + random(0, temp / 2). " + start + " " + random
	case DecorrelatedJitter:
		return "wait = min(cap, random(base, previous * 3)), and previous starts at the base delay. The multiplier and the attempt index do not change this formula. " + random
	default:
		return "wait = min(cap, base * factor^attempt). " + start + " No random draw. The seed is ignored."
	}
}

// Lines renders the schedule exactly as the calculator prints it: the formula
// line, one line per retry, then the notes.
func (s CalcSchedule) Lines() []string {
	out := make([]string, 0, len(s.Rows)+len(s.Notes)+1)
	out = append(out, s.Formula)
	for _, r := range s.Rows {
		line := "attempt " + strconv.Itoa(r.Attempt) + ", retry " + strconv.Itoa(r.Retry) + ": " +
			FormatMicro(r.WaitMicro) + " ms (cumulative " + FormatMicro(r.CumulativeMicro) + " ms"
		if r.Capped {
			line += ", capped"
		}
		out = append(out, line+")")
	}
	return append(out, s.Notes...)
}

// Text is Lines joined with newlines, ending in one.
func (s CalcSchedule) Text() string { return strings.Join(s.Lines(), "\n") + "\n" }

// FormatMicro prints thousandths of a millisecond as a decimal with no
// trailing zeros: 627074 → "627.074", 1000000 → "1000", 5470 → "5.47".
func FormatMicro(v int64) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v/1000, 10)
	if frac := v % 1000; frac != 0 {
		f := strconv.FormatInt(frac+1000, 10)[1:]
		s += "." + strings.TrimRight(f, "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}
