package backoff_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
)

// seedPolicy is the custom policy of the retry policy documentation.
const seedPolicy = `{
"preset": "CUSTOM",
"maxAttempts": 6,
"initialDelayMs": 10000,
"multiplier": 2,
"maxDelayMs": 600000,
"jitterPercent": 20
}`

func mustParse(t *testing.T, doc string) backoff.Policy {
	t.Helper()
	p, err := backoff.ParsePolicy([]byte(doc))
	if err != nil {
		t.Fatalf("parse %s: %v", doc, err)
	}
	return p
}

func TestSeedScheduleTable(t *testing.T) {
	t.Parallel()
	// Copied from the documentation, character for character.
	want := `| Failed attempt | Base delay | Jitter range | Next execution |
|---|---|---|---|
| 1 | 10 seconds | 8–12 seconds | Attempt 2 |
| 2 | 20 seconds | 16–24 seconds | Attempt 3 |
| 3 | 40 seconds | 32–48 seconds | Attempt 4 |
| 4 | 80 seconds | 64–96 seconds | Attempt 5 |
| 5 | 160 seconds | 128–192 seconds | Attempt 6 |
| 6 | None | None | Exhausted; no automatic attempt 7 |
With zero jitter, those five waits total 310 seconds.
`
	s := mustParse(t, seedPolicy).Params().Schedule()
	if got := s.Text(); got != want {
		t.Errorf("schedule text:\n%s\nwant\n%s", got, want)
	}
	if s.ZeroJitterTotal != 310_000 || s.Waits != 5 {
		t.Errorf("total %d ms over %d waits, want 310000 over 5", s.ZeroJitterTotal, s.Waits)
	}
}

func TestSeedDelayAssertions(t *testing.T) {
	t.Parallel()
	p := mustParse(t, seedPolicy).Params()
	cases := []struct {
		attempt int
		u       float64
		hint    int64
		want    int64
	}{
		{1, 0, 0, 8_000},          // console.assert(delayMs(1, 0) === 8_000)
		{1, 1, 0, 12_000},         // console.assert(delayMs(1, 1) === 12_000)
		{1, 0, 60_000, 60_000},    // a 60-second hint after attempt 1 is selected
		{5, 0, 60_000, 128_000},   // after attempt 5 it loses to 128–192 s
		{5, 1, 60_000, 192_000},   //
		{5, 0.5, 60_000, 160_000}, //
	}
	for _, c := range cases {
		d, err := p.Delay(c.attempt, c.u, c.hint)
		if err != nil {
			t.Fatal(err)
		}
		if d.SelectedMs != c.want {
			t.Errorf("Delay(%d, %v, %d) = %d, want %d", c.attempt, c.u, c.hint, d.SelectedMs, c.want)
		}
		if d.HintWon != (c.hint > 0 && c.want == c.hint) {
			t.Errorf("Delay(%d, %v, %d): hintWon = %v", c.attempt, c.u, c.hint, d.HintWon)
		}
	}
	d, err := p.Delay(6, 0.5, 0)
	if err != nil || !d.Exhausted || d.SelectedMs != 0 {
		t.Errorf("attempt 6 of 6: %+v, %v; want exhausted with no delay", d, err)
	}
}

func TestCapBeforeJitterCeiling(t *testing.T) {
	t.Parallel()
	// A 600-second cap with 20 % jitter can reach 720 seconds.
	p := backoff.Params{MaxAttempts: 10, InitialDelayMs: 10_000, Multiplier: 2, MaxDelayMs: 600_000, JitterPercent: 20}
	if got := p.Ceiling(); got != 720_000 {
		t.Errorf("ceiling = %d, want 720000", got)
	}
	d, _ := p.Delay(9, 1, 0)
	if d.BaseDelayMs != 600_000 || d.SelectedMs != 720_000 || d.MinDelayMs != 480_000 {
		t.Errorf("attempt 9 at u=1: %+v; want base 600000, range 480000–720000, selected 720000", d)
	}
}

func TestSafetyLimitAppliesLast(t *testing.T) {
	t.Parallel()
	p := backoff.Params{MaxAttempts: 10, InitialDelayMs: 1_800_000, Multiplier: 4, MaxDelayMs: 86_400_000, JitterPercent: 50}
	d, _ := p.Delay(9, 1, 0)
	if d.SelectedMs != backoff.SafetyLimitMs || !d.SafetyLimit {
		t.Errorf("jittered above 24 h: %+v", d)
	}
	d, _ = p.Delay(1, 0, 100_000_000)
	if d.SelectedMs != backoff.SafetyLimitMs || !d.HintWon || !d.SafetyLimit {
		t.Errorf("hint above 24 h: %+v", d)
	}
}

func TestPresets(t *testing.T) {
	t.Parallel()
	// The documentation's preset table.
	want := map[backoff.Preset]backoff.Params{
		backoff.Standard:   {MaxAttempts: 5, InitialDelayMs: 30_000, Multiplier: 2, MaxDelayMs: 15 * 60_000, JitterPercent: 20},
		backoff.Aggressive: {MaxAttempts: 8, InitialDelayMs: 5_000, Multiplier: 2, MaxDelayMs: 5 * 60_000, JitterPercent: 20},
		backoff.Relaxed:    {MaxAttempts: 3, InitialDelayMs: 120_000, Multiplier: 2, MaxDelayMs: 30 * 60_000, JitterPercent: 20},
	}
	for name, w := range want {
		p := mustParse(t, `{"preset":"`+string(name)+`"}`)
		if got := p.Params(); got != w {
			t.Errorf("%s = %+v, want %+v", name, got, w)
		}
		out, _ := json.Marshal(p)
		if string(out) != `{"preset":"`+string(name)+`"}` {
			t.Errorf("%s marshals as %s", name, out)
		}
	}
	if _, ok := backoff.PresetParams(backoff.Custom); ok {
		t.Error("CUSTOM has no preset numbers")
	}
}

func TestPolicyJSONRoundTrip(t *testing.T) {
	t.Parallel()
	p := mustParse(t, seedPolicy)
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"preset":"CUSTOM","maxAttempts":6,"initialDelayMs":10000,"multiplier":2,"maxDelayMs":600000,"jitterPercent":20}`
	if string(out) != want {
		t.Errorf("marshal = %s, want %s", out, want)
	}
	var back backoff.Policy
	if err := json.Unmarshal(out, &back); err != nil || back != p {
		t.Errorf("round trip = %+v, %v", back, err)
	}
}

func TestPolicyValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		doc  string
		want []string // every message, in order
	}{
		{"every field wrong at once",
			`{"preset":"CUSTOM","maxAttempts":0,"initialDelayMs":999,"multiplier":4.5,"maxDelayMs":86400001,"jitterPercent":50.5}`,
			[]string{
				"maxAttempts: 0 is not allowed; must be an integer from 1 through 10",
				"initialDelayMs: 999 is not allowed; must be an integer from 1000 through 1800000 milliseconds",
				"multiplier: 4.5 is not allowed; must be a number from 1 through 4",
				"maxDelayMs: 86400001 is not allowed; must be an integer from the initial delay (1000) through 86400000 milliseconds",
				"jitterPercent: 50.5 is not allowed; must be a number from 0 through 50",
			}},
		{"max delay below initial delay",
			`{"preset":"CUSTOM","maxAttempts":3,"initialDelayMs":5000,"multiplier":2,"maxDelayMs":4999,"jitterPercent":0}`,
			[]string{"maxDelayMs: 4999 is not allowed; must be an integer from the initial delay (5000) through 86400000 milliseconds"}},
		{"fractional integers",
			`{"preset":"CUSTOM","maxAttempts":2.5,"initialDelayMs":1000.5,"multiplier":2,"maxDelayMs":2000,"jitterPercent":0}`,
			[]string{
				"maxAttempts: 2.5 is not allowed; must be an integer from 1 through 10",
				"initialDelayMs: 1000.5 is not allowed; must be an integer from 1000 through 1800000 milliseconds",
			}},
		{"wrong types",
			`{"preset":"CUSTOM","maxAttempts":"6","initialDelayMs":null,"multiplier":true,"maxDelayMs":[1],"jitterPercent":{}}`,
			[]string{
				`maxAttempts: "6" is not allowed; must be an integer from 1 through 10`,
				"initialDelayMs: null is not allowed; must be an integer from 1000 through 1800000 milliseconds",
				"multiplier: true is not allowed; must be a number from 1 through 4",
				"maxDelayMs: [1] is not allowed; must be an integer from the initial delay (1000) through 86400000 milliseconds",
				"jitterPercent: {} is not allowed; must be a number from 0 through 50",
			}},
		{"custom requires all fields", `{"preset":"CUSTOM","maxAttempts":3}`,
			[]string{
				"initialDelayMs: missing; CUSTOM requires every field; must be an integer from 1000 through 1800000 milliseconds",
				"multiplier: missing; CUSTOM requires every field; must be a number from 1 through 4",
				"maxDelayMs: missing; CUSTOM requires every field; must be an integer from the initial delay (1000) through 86400000 milliseconds",
				"jitterPercent: missing; CUSTOM requires every field; must be a number from 0 through 50",
			}},
		{"preset forbids custom fields", `{"preset":"RELAXED","jitterPercent":10}`,
			[]string{`jitterPercent: 10 is not allowed; preset RELAXED forbids custom fields; use "preset": "CUSTOM" to set jitterPercent`}},
		{"unknown and repeated fields", `{"preset":"STANDARD","retries":3,"preset":"STANDARD"}`,
			[]string{
				"preset: given more than once; each field may appear once",
				"retries: unknown field; allowed fields are preset, maxAttempts, initialDelayMs, multiplier, maxDelayMs, jitterPercent",
			}},
		{"unknown preset", `{"preset":"standard"}`,
			[]string{`preset: "standard" is not allowed; must be one of STANDARD, AGGRESSIVE, RELAXED, CUSTOM`}},
		{"missing preset", `{}`,
			[]string{"preset: missing; required; must be one of STANDARD, AGGRESSIVE, RELAXED, CUSTOM"}},
		{"not an object", `[]`, []string{"policy: an array is not allowed; must be a JSON object"}},
		{"trailing data", `{"preset":"STANDARD"} {}`, []string{"policy: trailing data after the object is not allowed; must be exactly one JSON object"}},
	}
	for _, c := range cases {
		_, err := backoff.ParsePolicy([]byte(c.doc))
		var es field.Errors
		if !errors.As(err, &es) {
			t.Errorf("%s: error %v is not field.Errors", c.name, err)
			continue
		}
		got := strings.Split(es.Error(), "\n")
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\ngot  %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestDelayRejectsBadArguments(t *testing.T) {
	t.Parallel()
	p, _ := backoff.PresetParams(backoff.Standard)
	_, err := p.Delay(0, 1.5, -1)
	want := "attempt: 0 is not allowed; must be an integer of at least 1\n" +
		"sample: 1.5 is not allowed; must be a number from 0 through 1\n" +
		"retryAfterMs: -1 is not allowed; must be 0 (no hint) or more milliseconds"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestRoundHalfUp(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want float64 }{
		{0.5, 1}, {1.5, 2}, {2.5, 3}, {-0.5, 0}, {-1.5, -1}, {0.49999999999999994, 0}, {7999.5, 8000}, {12000, 12000},
	} {
		if got := backoff.RoundHalfUp(c.in); got != c.want {
			t.Errorf("RoundHalfUp(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
