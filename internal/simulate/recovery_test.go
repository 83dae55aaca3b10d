package simulate

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func simulateDefault(t *testing.T, edit func(*Recovery)) RecoveryResult {
	t.Helper()
	r := DefaultRecovery()
	r.Strategies = AllStrategies
	if edit != nil {
		edit(&r)
	}
	res, err := SimulateRecovery(r)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func runOf(t *testing.T, res RecoveryResult, s Strategy) RecoveryRun {
	t.Helper()
	run, ok := res.Run(s)
	if !ok {
		t.Fatalf("no run of %s", s)
	}
	return run
}

// TestRecoveryFigures checks the claims the simulator page makes about
// the default scenario, on its simulated (deterministic) figures: released
// at once, the backlog overwhelms the provider (most requests refused, a
// busiest second many times its capacity, a drain far slower than its
// pace); released by the ramp, at most 10 % are refused and no second
// brings more than twice the capacity; with learned limits the drain comes
// within 1.3 × backlog ÷ capacity. Nothing is exhausted by the ramp.
func TestRecoveryFigures(t *testing.T) {
	t.Parallel()
	res := simulateDefault(t, nil)
	c := res.Config.CapacityPerS
	at, ramp, learned := runOf(t, res, AtOnce), runOf(t, res, Ramp), runOf(t, res, Learned)
	if !(at.RefusedPercent > 50 && at.BusiestSecond > 5*c && at.DrainRatio > 1.5) {
		t.Errorf("at once: refused %.1f %%, busiest %d, drain %.2f × the pace; want > 50 %%, > 5 × %d, > 1.5", at.RefusedPercent, at.BusiestSecond, at.DrainRatio, c)
	}
	for _, run := range []RecoveryRun{ramp, learned} {
		if run.RefusedPercent > 10 || run.BusiestSecond > 2*c || run.Exhausted != 0 || run.Left != 0 {
			t.Errorf("%s: refused %.1f %%, busiest %d, exhausted %d, left %d; want ≤ 10 %%, ≤ 2 × %d, none", run.Strategy, run.RefusedPercent, run.BusiestSecond, run.Exhausted, run.Left, c)
		}
		if !(run.DrainS < at.DrainS) {
			t.Errorf("%s drained in %.1f s, not sooner than at once (%.1f s)", run.Strategy, run.DrainS, at.DrainS)
		}
	}
	if learned.RefusedPercent > 1 || learned.DrainRatio > 1.3 {
		t.Errorf("learned: refused %.2f %%, drain %.2f × the pace; want ≤ 1 %%, ≤ 1.3", learned.RefusedPercent, learned.DrainRatio)
	}
}

// TestRecoveryAccounts checks that each run's figures add up: every job is
// served once or exhausted, every request is served or refused, and the
// per-second series sum to the totals.
func TestRecoveryAccounts(t *testing.T) {
	t.Parallel()
	res := simulateDefault(t, func(r *Recovery) { r.Policy.MaxAttempts = 3 })
	for _, run := range res.Runs {
		served, refused := 0, 0
		for i := range run.Served {
			served += run.Served[i]
			refused += run.Refused[i]
			if k := run.Served[i] + run.Refused[i]; k > run.BusiestSecond {
				t.Fatalf("%s: second %d has %d requests, above the busiest %d", run.Strategy, i, k, run.BusiestSecond)
			}
			if run.Served[i] > res.Config.CapacityPerS {
				t.Fatalf("%s: second %d served %d, above the capacity", run.Strategy, i, run.Served[i])
			}
		}
		if served+run.Exhausted+run.Left != res.Config.Backlog || refused != run.Refusals || served+refused != run.Requests {
			t.Fatalf("%s: served %d + exhausted %d + left %d, refused %d of %d (requests %d)", run.Strategy, served, run.Exhausted, run.Left, refused, run.Refusals, run.Requests)
		}
		if n := len(run.Backlog); n != len(run.Served) || run.Backlog[n-1] != 0 {
			t.Fatalf("%s: backlog %v", run.Strategy, run.Backlog)
		}
	}
	// With three attempts, throttles that spend attempts exhaust jobs
	// released at once; when throttles spend none, nothing is exhausted.
	if at := runOf(t, res, AtOnce); at.Exhausted == 0 {
		t.Error("at once with 3 attempts exhausted nothing")
	}
	free := simulateDefault(t, func(r *Recovery) { r.Policy.MaxAttempts = 3; r.ThrottleSpendsAttempt = false })
	for _, run := range free.Runs {
		if run.Exhausted != 0 {
			t.Errorf("%s exhausted %d with throttles spending no attempts", run.Strategy, run.Exhausted)
		}
	}
}

// TestRampFollowsItsParameters reads the ramp's allowed rate second by
// second: it starts at max(1, 10 % of the limit), doubles while clean
// until the first throttle, then every change is +10 % of the rate of the
// last cut (at least 1) or a cut to 70 %, and it never passes the limit.
func TestRampFollowsItsParameters(t *testing.T) {
	t.Parallel()
	res := simulateDefault(t, nil)
	p := res.Config.Ramp
	a := runOf(t, res, Ramp).Allowed
	if a[0] != 20 || a[1] != 40 || a[2] != 80 || a[3] != 160 {
		t.Fatalf("slow start %v, want 20, 40, 80, 160", a[:4])
	}
	cut, cutAt := false, 0.0
	for i := 1; i < len(a); i++ {
		prev, cur := a[i-1], a[i]
		if cur > p.LimitPerS {
			t.Fatalf("second %d allows %v, above the limit %v", i, cur, p.LimitPerS)
		}
		near := func(x float64) bool { return math.Abs(cur-x) < 1e-9 }
		switch {
		case near(max(1, prev*0.7)):
			cut, cutAt = true, cur
		case near(prev), cut && near(min(p.LimitPerS, prev+max(1, cutAt/10))):
		case !cut && near(min(p.LimitPerS, prev*2)):
		default:
			t.Fatalf("second %d: %v after %v is no step of the ramp", i, cur, prev)
		}
	}
	if !cut {
		t.Fatal("the ramp never cut")
	}
	// A tiny limit still starts at one request per second, never above it.
	small := simulateDefault(t, func(r *Recovery) { r.Backlog = 20; r.Ramp.LimitPerS = 0.5; r.Strategies = []Strategy{Ramp} })
	if a := small.Runs[0].Allowed; a[0] != 0.5 {
		t.Fatalf("limit 0.5: starts at %v", a[0])
	}
}

// TestLearnedJumpsToTheProviderLimit: with learned limits the rate is the
// provider's capacity from the first answer on (the configured limit is
// higher), never above it.
func TestLearnedJumpsToTheProviderLimit(t *testing.T) {
	t.Parallel()
	res := simulateDefault(t, nil)
	a := runOf(t, res, Learned).Allowed
	for i, v := range a {
		if v > 100 {
			t.Fatalf("second %d allows %v, above the learned 100", i, v)
		}
	}
	if a[0] != 100 {
		t.Fatalf("learned rate at 0 s %v, want 100", a[0])
	}
	low := simulateDefault(t, func(r *Recovery) { r.Ramp.LimitPerS = 60; r.Strategies = []Strategy{Learned} })
	for i, v := range low.Runs[0].Allowed {
		if v > 60 {
			t.Fatalf("second %d allows %v, above the configured 60", i, v)
		}
	}
}

func TestRecoveryDeterministic(t *testing.T) {
	t.Parallel()
	a, b := simulateDefault(t, nil), simulateDefault(t, nil)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same scenario gave two results")
	}
	c := simulateDefault(t, func(r *Recovery) { r.Seed = 2 })
	if reflect.DeepEqual(a.Runs, c.Runs) {
		t.Fatal("seed 2 gave the result of seed 1")
	}
}

// TestRecoveryGolden pins the default scenario's figures; a change here
// changes what the simulator page says and must be deliberate.
func TestRecoveryGolden(t *testing.T) {
	t.Parallel()
	res := simulateDefault(t, nil)
	var got [][]float64
	for _, run := range res.Runs {
		got = append(got, []float64{float64(run.Requests), float64(run.Refusals), float64(run.BusiestSecond), run.DrainS, float64(run.Exhausted)})
	}
	if !reflect.DeepEqual(got, goldenRecovery) {
		t.Fatalf("recovery figures changed:\ngot  %#v\nwant %#v", got, goldenRecovery)
	}
}

func TestParseRecovery(t *testing.T) {
	t.Parallel()
	r, err := ParseRecovery([]byte(`{"backlog":300,"ramp":{"limitPerS":50},"policy":{"maxAttempts":4},"strategies":["ramp","learned"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Backlog != 300 || r.Ramp.LimitPerS != 50 || r.Ramp.DecreaseFactor != 0.7 || r.Policy.MaxAttempts != 4 || r.Policy.InitialDelayMs != 5000 || len(r.Strategies) != 2 || !r.ThrottleSpendsAttempt {
		t.Fatalf("%+v", r)
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"jobs":3}`, `unknown field "jobs"`},
		{`{"backlog":0}`, "backlog: 0 is not allowed; must be an integer from 1 through 100000 jobs"},
		{`{"backlog":100000,"capacityPerS":10}`, "backlog: 100000 is not allowed; is 10000 s of the provider's pace (backlog ÷ capacityPerS); at most 3600 s, so at most 36000 jobs at 10 per second"},
		{`{"capacityPerS":-1}`, "capacityPerS: -1 is not allowed; must be an integer from 1 through 100000 requests per second"},
		{`{"retryAfterS":3601}`, "retryAfterS: 3601 is not allowed; must be an integer from 0 (none) through 3600 seconds"},
		{`{"maxConcurrent":0}`, "maxConcurrent: 0 is not allowed; must be an integer from 1 through 10000 requests in flight"},
		{`{"latencyMeanMs":0}`, "latencyMeanMs: 0 is not allowed"},
		{`{"policy":{"maxAttempts":11}}`, "policy.maxAttempts: 11 is not allowed"},
		{`{"ramp":{"limitPerS":0}}`, "ramp.limitPerS: 0 is not allowed; must be a number of requests per second greater than 0 and at most 1000000"},
		{`{"ramp":{"startPercent":101}}`, "ramp.startPercent: 101 is not allowed; must be a percentage of the limit greater than 0 and at most 100"},
		{`{"ramp":{"slowStartFactor":0.5}}`, "ramp.slowStartFactor: 0.5 is not allowed; must be a factor from 1 (no slow start) through 16"},
		{`{"ramp":{"increasePercent":0}}`, "ramp.increasePercent: 0 is not allowed"},
		{`{"ramp":{"decreaseFactor":1}}`, "ramp.decreaseFactor: 1 is not allowed; must be a factor greater than 0 and below 1"},
		{`{"ramp":{"stepMs":50}}`, "ramp.stepMs: 50 is not allowed; must be a number of milliseconds from 100 through 60000"},
		{`{"strategies":[]}`, "strategies: [] is not allowed; must list at least one strategy"},
		{`{"strategies":["slow","ramp","ramp"]}`, `strategies: "slow" is not allowed; must be one of at-once, ramp, learned` + "\n" + `strategies: "ramp" is not allowed; each strategy may appear once`},
		{`{"seed":9007199254740992}`, "seed: 9007199254740992 is not allowed"},
		{`{} {}`, "trailing data"},
	} {
		_, err := ParseRecovery([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.doc, err, tc.want)
		}
	}
}

// FuzzParseRecovery: any document parses into a valid scenario or is
// refused with an error; nothing panics. Small parsed scenarios are
// simulated, and their figures add up.
func FuzzParseRecovery(f *testing.F) {
	f.Add(`{}`)
	f.Add(`{"backlog":40,"capacityPerS":3,"retryAfterS":0,"strategies":["at-once","ramp","learned"],"seed":7}`)
	f.Add(`{"backlog":50,"ramp":{"limitPerS":0.5,"startPercent":100,"slowStartFactor":1,"stepMs":100},"throttleSpendsAttempt":false}`)
	f.Add(`{"ramp":{"decreaseFactor":1e309},"policy":{"multiplier":-1}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		r, err := ParseRecovery([]byte(doc))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("parsed scenario does not validate: %v", err)
		}
		if r.Backlog > 200 {
			return
		}
		res, err := SimulateRecovery(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range res.Runs {
			if run.Requests < r.Backlog-run.Left || run.Refusals > run.Requests {
				t.Fatalf("%s: %+v", run.Strategy, run)
			}
		}
	})
}

// TestRampSawGrowsWithTheLimit: the additive step is a tenth of the rate
// of the last cut, not of the configured limit, so a limit far above the
// provider's capacity no longer saws further over it: at limit 500 and
// 200 the ramp refuses at most 10 % and its busiest second stays within
// 2 × the capacity, and learned limits stay at the capacity.
func TestRampSawGrowsWithTheLimit(t *testing.T) {
	t.Parallel()
	at200 := simulateDefault(t, nil)
	at500 := simulateDefault(t, func(r *Recovery) { r.Ramp.LimitPerS = 500 })
	for _, r := range []RecoveryRun{runOf(t, at200, Ramp), runOf(t, at500, Ramp)} {
		if r.RefusedPercent > 10 || r.BusiestSecond > 200 {
			t.Errorf("refused %.1f %%, busiest %d against a capacity of 100", r.RefusedPercent, r.BusiestSecond)
		}
	}
	if l := runOf(t, at500, Learned); l.RefusedPercent > 1 {
		t.Errorf("learned at limit 500 refused %.2f %%", l.RefusedPercent)
	}
}
