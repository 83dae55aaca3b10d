package backoff_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
)

func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(seedPolicy))
	f.Add([]byte(`{"preset":"STANDARD"}`))
	f.Add([]byte(`{"preset":"CUSTOM","maxAttempts":10,"initialDelayMs":1800000,"multiplier":4,"maxDelayMs":86400000,"jitterPercent":50}`))
	f.Add([]byte(`{"preset":"CUSTOM","maxAttempts":1e1,"initialDelayMs":1000.0,"multiplier":1,"maxDelayMs":1000,"jitterPercent":0}`))
	f.Add([]byte(`{"preset":"RELAXED","preset":"RELAXED"}`))
	f.Add([]byte(`{"a":`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := backoff.ParsePolicy(data)
		if err != nil {
			var es field.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v is not a non-empty field.Errors", err)
			}
			for _, e := range es {
				if e.Field == "" || e.Value == "" || e.Allowed == "" {
					t.Fatalf("error without field, value or allowed range: %+v", e)
				}
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("parsed policy fails Validate: %v", err)
		}
		// A valid document survives a round trip unchanged.
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		back, err := backoff.ParsePolicy(out)
		if err != nil || back != p {
			t.Fatalf("round trip of %s: %+v, %v", out, back, err)
		}
		checkPolicyInvariants(t, p.Params())
	})
}

func FuzzPolicyDelay(f *testing.F) {
	f.Add(6, int64(10000), 2.0, int64(600000), 20.0, 3, 0.5, int64(0))
	f.Add(10, int64(1800000), 4.0, int64(86400000), 50.0, 9, 1.0, int64(1<<40))
	f.Fuzz(func(t *testing.T, attempts int, initial int64, mult float64, maxDelay int64, jitter float64, attempt int, u float64, hint int64) {
		p, err := backoff.NewCustom(backoff.Params{MaxAttempts: attempts, InitialDelayMs: initial, Multiplier: mult, MaxDelayMs: maxDelay, JitterPercent: jitter})
		if err != nil {
			return
		}
		params := p.Params()
		checkPolicyInvariants(t, params)
		d, err := params.Delay(attempt, u, hint)
		if err != nil {
			if attempt >= 1 && u >= 0 && u <= 1 && hint >= 0 {
				t.Fatalf("valid arguments rejected: %v", err)
			}
			return
		}
		if d.Exhausted != (attempt >= attempts) {
			t.Fatalf("attempt %d of %d: exhausted = %v", attempt, attempts, d.Exhausted)
		}
		if d.Exhausted {
			return
		}
		if d.SelectedMs < d.MinDelayMs && d.SelectedMs != backoff.SafetyLimitMs || d.SelectedMs < hint && d.SelectedMs != backoff.SafetyLimitMs {
			t.Fatalf("selected %d below the jitter floor %d or the hint %d", d.SelectedMs, d.MinDelayMs, hint)
		}
		if d.SelectedMs > backoff.SafetyLimitMs || d.SelectedMs < 0 {
			t.Fatalf("selected %d outside 0..24 h", d.SelectedMs)
		}
		if hint == 0 && d.SelectedMs > params.Ceiling() {
			t.Fatalf("selected %d above the ceiling %d", d.SelectedMs, params.Ceiling())
		}
	})
}

// checkPolicyInvariants: the jitter-free base never decreases, never exceeds
// the cap, and every range is ordered, non-negative and under the ceiling.
func checkPolicyInvariants(t *testing.T, p backoff.Params) {
	t.Helper()
	s := p.Schedule()
	if len(s.Rows) != p.MaxAttempts || !s.Rows[len(s.Rows)-1].Exhausted {
		t.Fatalf("schedule of %d attempts has %d rows", p.MaxAttempts, len(s.Rows))
	}
	prev := 0.0
	for _, r := range s.Rows[:len(s.Rows)-1] {
		if math.IsNaN(r.BaseDelayMs) || r.BaseDelayMs < prev || r.BaseDelayMs > float64(p.MaxDelayMs) {
			t.Fatalf("base %v after %v (cap %d)", r.BaseDelayMs, prev, p.MaxDelayMs)
		}
		// The jitter range is shown before the 24-hour limit, so it may pass it
		// by up to the jitter band on the cap, never more.
		band := float64(p.MaxDelayMs) * (1 + p.JitterPercent/100)
		if r.MinDelayMs < 0 || r.MinDelayMs > r.MaxDelayMs || float64(r.MaxDelayMs) > math.Ceil(band) {
			t.Fatalf("range %d–%d (cap plus band %v)", r.MinDelayMs, r.MaxDelayMs, band)
		}
		prev = r.BaseDelayMs
	}
	if !strings.Contains(s.Text(), "Exhausted; no automatic attempt") {
		t.Fatal("table lacks the exhausted row")
	}
}

func FuzzCalculate(f *testing.F) {
	f.Add(1000.0, 2.0, 30000.0, 4, uint8(0), false, uint32(1))
	f.Add(0.001, 1.0, 0.001, 15, uint8(3), true, uint32(4294967295))
	f.Add(1e12, 1e308, 1e12, 15, uint8(1), false, uint32(0))
	f.Fuzz(func(t *testing.T, base, mult, capMs float64, attempts int, mode uint8, multiplied bool, seed uint32) {
		in := backoff.CalcInput{BaseMs: base, Multiplier: mult, CapMs: capMs, Attempts: attempts,
			Jitter: backoff.JitterModes[int(mode)%len(backoff.JitterModes)], FirstWait: backoff.FirstWaitBase, Seed: seed}
		if multiplied {
			in.FirstWait = backoff.FirstWaitMultiplied
		}
		s, err := backoff.Calculate(in)
		if err != nil {
			return
		}
		if len(s.Rows) != attempts {
			t.Fatalf("%d rows for %d attempts", len(s.Rows), attempts)
		}
		capMicro := int64(backoff.RoundHalfUp(capMs * 1000))
		var sum int64
		prevTemp := int64(-1)
		for _, r := range s.Rows {
			if r.WaitMicro < 0 || r.WaitMicro > capMicro {
				t.Fatalf("wait %d µms outside 0..cap %d", r.WaitMicro, capMicro)
			}
			sum += r.WaitMicro
			if r.CumulativeMicro != sum {
				t.Fatalf("cumulative %d, want %d", r.CumulativeMicro, sum)
			}
			if in.Jitter == backoff.NoJitter {
				if r.WaitMicro < prevTemp {
					t.Fatalf("jitter-free wait decreased: %d after %d", r.WaitMicro, prevTemp)
				}
				prevTemp = r.WaitMicro
			}
			if in.Jitter == backoff.DecorrelatedJitter && r.WaitMicro < int64(backoff.RoundHalfUp(base*1000)) {
				t.Fatalf("decorrelated wait %d below the base", r.WaitMicro)
			}
		}
		if lines := s.Lines(); len(lines) < attempts+1 {
			t.Fatalf("%d lines", len(lines))
		}
	})
}
