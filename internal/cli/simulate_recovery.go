package cli

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/internal/simulate"
)

// The recovery scenario of ratchet simulate (--scenario recovery): a held
// backlog released at once or by the ramp, at a provider of fixed
// capacity (simulate.SimulateRecovery).

// recoveryFlagNames maps the scenario's fields to this command's flags.
var recoveryFlagNames = map[string]string{
	"backlog": "--backlog", "capacityPerS": "--capacity", "retryAfterS": "--retry-after-s", "maxConcurrent": "--max-concurrent",
	"strategies": "--strategies", "seed": "--seed", "policy": "--policy-preset",
	"ramp.limitPerS": "--ramp-limit", "ramp.startPercent": "--ramp-start", "ramp.slowStartFactor": "--ramp-slow-start",
	"ramp.increasePercent": "--ramp-increase", "ramp.decreaseFactor": "--ramp-decrease", "ramp.stepMs": "--ramp-step",
	"policy.maxAttempts": "--policy-file (maxAttempts)", "policy.initialDelayMs": "--policy-file (initialDelayMs)",
	"policy.multiplier": "--policy-file (multiplier)", "policy.maxDelayMs": "--policy-file (maxDelayMs)",
	"policy.jitterPercent": "--policy-file (jitterPercent)",
}

// sweepOnlyFlags are the flags of the contention sweep, which the recovery
// scenario refuses rather than ignores.
var sweepOnlyFlags = []string{"clients", "sweep", "runs", "modes", "base", "cap", "budget", "retry-after", "overload", "overload-window",
	"calc-base", "calc-multiplier", "calc-cap", "calc-attempts", "calc-jitter", "calc-first-wait", "workers", "bench"}

// recoveryFlags are the texts of the recovery flags.
type recoveryFlags struct {
	backlog, capacity, retryAfterS, maxConcurrent, strategies, throttleSpends string
	ramp                                                                      [6]string // limit, start, slow start, increase, decrease, step
}

// declareRecoveryFlags registers the flags of --scenario recovery.
func declareRecoveryFlags(f *flagSet, in *recoveryFlags) {
	f.StringVar(&in.backlog, "backlog", "5000", "recovery: jobs the circuit held when the provider comes back, 1 through 100000")
	f.StringVar(&in.capacity, "capacity", "100", "recovery: requests per second the provider serves; it answers 429 above")
	f.StringVar(&in.retryAfterS, "retry-after-s", "1", "recovery: the Retry-After of the provider's 429 in seconds, 0 for none")
	f.StringVar(&in.maxConcurrent, "max-concurrent", "50", "recovery: the endpoint's requests in flight")
	f.StringVar(&in.strategies, "strategies", "at-once,ramp", "recovery: comma-separated strategies: at-once, ramp, learned")
	f.StringVar(&in.throttleSpends, "throttle-spends-attempt", "true", "recovery: whether a 429 counts against maxAttempts (true or false)")
	f.StringVar(&in.ramp[0], "ramp-limit", "200", "recovery: the endpoint's configured rate, the ramp's ceiling, requests per second")
	f.StringVar(&in.ramp[1], "ramp-start", "10", "recovery: the ramp starts at this percentage of the limit (at least 1 request per second)")
	f.StringVar(&in.ramp[2], "ramp-slow-start", "2", "recovery: growth factor per clean step until the first throttle; 1 for none")
	f.StringVar(&in.ramp[3], "ramp-increase", "10", "recovery: percentage of the limit added per clean step after slow start")
	f.StringVar(&in.ramp[4], "ramp-decrease", "0.7", "recovery: factor applied on a step with a throttle, 5xx or timeout")
	f.StringVar(&in.ramp[5], "ramp-step", "1000", "recovery: milliseconds per ramp step")
}

// recoveryConfig turns the flags into a validated simulate.Recovery.
func recoveryConfig(f *flagSet, env *Env, in recoveryFlags, seed string, src policySource) (simulate.Recovery, error) {
	r := simulate.DefaultRecovery()
	for _, name := range sweepOnlyFlags {
		if f.isSet(name) {
			f.fail(name, f.fs.Lookup(name).Value.String(), "applies to the contention sweep, not to --scenario recovery")
		}
	}
	r.Backlog = int(f.integer("backlog", in.backlog, 1, simulate.MaxBacklog, "must be an integer from 1 through 100000 jobs"))
	r.CapacityPerS = int(f.integer("capacity", in.capacity, 1, simulate.MaxCapacity, "must be an integer from 1 through 100000 requests per second"))
	r.RetryAfterS = int(f.integer("retry-after-s", in.retryAfterS, 0, 3600, "must be an integer from 0 (none) through 3600 seconds"))
	r.MaxConcurrent = int(f.integer("max-concurrent", in.maxConcurrent, 1, 10_000, "must be an integer from 1 through 10000 requests in flight"))
	r.Seed = uint64(f.integer("seed", seed, 0, simulate.MaxSeed, "must be an integer from 0 through 9007199254740991"))
	r.Strategies = nil
	for s := range strings.SplitSeq(in.strategies, ",") {
		r.Strategies = append(r.Strategies, simulate.Strategy(strings.ToLower(strings.TrimSpace(s))))
	}
	f.boolean("throttle-spends-attempt", in.throttleSpends, &r.ThrottleSpendsAttempt)
	names := []string{"ramp-limit", "ramp-start", "ramp-slow-start", "ramp-increase", "ramp-decrease", "ramp-step"}
	ptrs := []*float64{&r.Ramp.LimitPerS, &r.Ramp.StartPercent, &r.Ramp.SlowStartFactor, &r.Ramp.IncreasePercent, &r.Ramp.DecreaseFactor, &r.Ramp.StepMs}
	for i, name := range names {
		*ptrs[i] = f.number(name, in.ramp[i], "must be a number")
	}
	if err := f.done(); err != nil {
		return r, err
	}
	if f.isSet("policy-preset") || f.isSet("policy-file") {
		p, err := src.loadSim(f, env)
		if err != nil {
			return r, err
		}
		r.Policy = p.Params()
	}
	if err := r.Validate(); err != nil {
		return r, renameFields(err, recoveryFlagNames)
	}
	return r, nil
}

// runRecovery simulates the scenario and writes it as a table, CSV (one
// row per strategy and second) or JSON.
func runRecovery(env *Env, r simulate.Recovery, fmtName, out string) error {
	res, err := simulate.SimulateRecovery(r)
	if err != nil {
		return renameFields(err, recoveryFlagNames)
	}
	var buf bytes.Buffer
	switch fmtName {
	case "json":
		err = writeJSON(&buf, res)
	case "csv":
		err = writeRecoveryCSV(&buf, res)
	default:
		writeRecoveryTable(&buf, res)
	}
	if err != nil {
		return err
	}
	return writeOutput(env, buf.Bytes(), out)
}

func writeRecoveryTable(w io.Writer, res simulate.RecoveryResult) {
	c := res.Config
	p := c.Ramp
	fmt.Fprintf(w, "Recovery: %d held jobs, a provider back with %d requests per second (429 above, Retry-After %d s), %d in flight, seed %d.\n",
		c.Backlog, c.CapacityPerS, c.RetryAfterS, c.MaxConcurrent, c.Seed)
	fmt.Fprintf(w, "Policy: %d attempts, %d ms, ×%s, cap %d ms, ±%s %%; throttles spend attempts: %t.\n",
		c.Policy.MaxAttempts, c.Policy.InitialDelayMs, fnum(c.Policy.Multiplier), c.Policy.MaxDelayMs, fnum(c.Policy.JitterPercent), c.ThrottleSpendsAttempt)
	fmt.Fprintf(w, "Ramp: limit %s/s, start %s %%, ×%s per clean step until the first throttle, then +%s %% of the rate of the last cut, ×%s on a throttle, steps of %s ms.\n",
		fnum(p.LimitPerS), fnum(p.StartPercent), fnum(p.SlowStartFactor), fnum(p.IncreasePercent), fnum(p.DecreaseFactor), fnum(p.StepMs))
	fmt.Fprintf(w, "The provider's pace through the backlog (backlog ÷ capacity): %s s.\n\n", fnum(res.IdealDrainS))
	fmt.Fprintf(w, "%-8s  %8s  %8s  %9s  %-16s  %-16s  %9s  %4s\n", "strategy", "requests", "refused", "refused %", "busiest second", "drain", "exhausted", "left")
	for _, run := range res.Runs {
		fmt.Fprintf(w, "%-8s  %8d  %8d  %9.1f  %-16s  %-16s  %9d  %4d\n", run.Strategy, run.Requests, run.Refusals, run.RefusedPercent,
			fmt.Sprintf("%d (%.1f × cap)", run.BusiestSecond, float64(run.BusiestSecond)/float64(c.CapacityPerS)),
			fmt.Sprintf("%.1f s (%.2f ×)", run.DrainS, run.DrainRatio), run.Exhausted, run.Left)
	}
}

func writeRecoveryCSV(w io.Writer, res simulate.RecoveryResult) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"strategy", "second", "served", "refused", "allowed_per_s", "backlog"}); err != nil {
		return err
	}
	for _, run := range res.Runs {
		for i := range run.Served {
			allowed := ""
			if i < len(run.Allowed) {
				allowed = strconv.FormatFloat(run.Allowed[i], 'g', 10, 64)
			}
			row := []string{string(run.Strategy), strconv.Itoa(i), strconv.Itoa(run.Served[i]), strconv.Itoa(run.Refused[i]), allowed, strconv.Itoa(run.Backlog[i])}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
