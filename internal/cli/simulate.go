package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/simulate"
)

const simulateUsage = "simulate [--clients N | --sweep FROM:TO:STEP] [--runs N] [--modes LIST] [--seed N] [--base MS] [--cap MS] " +
	"[--budget CAPACITY[:COST[:REFUND]]] [--retry-after MS [--overload N] [--overload-window MS]] " +
	"[--policy-preset NAME | --policy-file F] [--calc-base MS --calc-multiplier X --calc-cap MS --calc-attempts N --calc-jitter J --calc-first-wait W] " +
	"[--format table|csv|json] [--out FILE] [--bench] [--workers N]\n" +
	"       simulate --scenario recovery [--backlog N] [--capacity PER_S] [--retry-after-s S] [--max-concurrent N] [--strategies at-once,ramp,learned] " +
	"[--throttle-spends-attempt true|false] [--ramp-limit PER_S] [--ramp-start PCT] [--ramp-slow-start X] [--ramp-increase PCT] [--ramp-decrease X] [--ramp-step MS] " +
	"[--policy-preset NAME | --policy-file F] [--seed N] [--format table|csv|json] [--out FILE]"

// simulateFlagNames maps the simulator's config fields to this command's flags.
var simulateFlagNames = map[string]string{
	"from": "--sweep", "to": "--sweep", "step": "--sweep", "runs": "--runs", "modes": "--modes", "seed": "--seed",
	"baseMs": "--base", "capMs": "--cap", "workers": "--workers", "policy": "--policy-preset",
	"budget.capacity": "--budget", "budget.retryCost": "--budget", "budget.successRefund": "--budget",
	"retryAfter.ms": "--retry-after", "retryAfter.overload": "--overload", "retryAfter.windowMs": "--overload-window",
	"calc": "--calc-base", "calc.baseMs": "--calc-base", "calc.multiplier": "--calc-multiplier", "calc.capMs": "--calc-cap",
	"calc.attempts": "--calc-attempts", "calc.jitter": "--calc-jitter", "calc.firstWait": "--calc-first-wait",
	"policy.maxAttempts": "--policy-file (maxAttempts)", "policy.initialDelayMs": "--policy-file (initialDelayMs)",
	"policy.multiplier": "--policy-file (multiplier)", "policy.maxDelayMs": "--policy-file (maxDelayMs)",
	"policy.jitterPercent": "--policy-file (jitterPercent)",
}

// runSimulate is ratchet simulate: it converts the flags, runs the sweep
// and writes the result as a table, CSV or JSON.
func runSimulate(ctx context.Context, env *Env, args []string) error {
	f := newFlagSet("simulate", simulateUsage, env.Stderr)
	var in simulateFlags
	var o simulateOutput
	var rec recoveryFlags
	src := declareSimulateFlags(f, &in, &o)
	declareRecoveryFlags(f, &rec)
	if err := f.parse(args); err != nil {
		return err
	}
	fmtName := strings.ToLower(strings.TrimSpace(o.format))
	if fmtName != "table" && fmtName != "csv" && fmtName != "json" {
		return usagef("--format: %s is not allowed; must be one of table, csv, json", quoteValue(o.format))
	}
	switch strings.ToLower(strings.TrimSpace(o.scenario)) {
	case "contention":
	case "recovery":
		r, err := recoveryConfig(f, env, rec, in.seed, src)
		if err != nil {
			return err
		}
		return runRecovery(env, r, fmtName, o.out)
	default:
		return usagef("--scenario: %s is not allowed; must be contention (the sweep) or recovery", quoteValue(o.scenario))
	}
	for _, name := range recoveryOnlyFlags {
		if f.isSet(name) {
			return usagef("--%s: applies to --scenario recovery, not to the contention sweep", name)
		}
	}
	cfg, err := simulateConfig(f, env, in, src)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := simulate.SweepContext(ctx, cfg)
	if err != nil {
		return renameFields(err, simulateFlagNames)
	}
	elapsed := time.Since(start)
	if err := writeSimulateResult(env, res, fmtName, o.out); err != nil {
		return err
	}
	if o.bench {
		w := cfg.Workers
		if w == 0 {
			w = runtime.GOMAXPROCS(0)
		}
		fmt.Fprintf(env.Stderr, "simulated %d points × %d runs × %d modes in %.3f s on %d goroutines (%d CPUs)\n",
			len(res.Clients), cfg.Runs, len(cfg.Modes), elapsed.Seconds(), w, runtime.NumCPU())
	}
	return nil
}

// simulateOutput are the flags of ratchet simulate that say where and how
// the result goes.
type simulateOutput struct {
	format, out, scenario string
	bench                 bool
}

// recoveryOnlyFlags are the flags of --scenario recovery, which the sweep
// refuses rather than ignores.
var recoveryOnlyFlags = []string{"backlog", "capacity", "retry-after-s", "max-concurrent", "strategies", "throttle-spends-attempt",
	"ramp-limit", "ramp-start", "ramp-slow-start", "ramp-increase", "ramp-decrease", "ramp-step"}

// declareSimulateFlags registers the flags of ratchet simulate: the texts
// of the simulation's flags land in in, to be converted together by
// simulateConfig, and the output flags in o.
func declareSimulateFlags(f *flagSet, in *simulateFlags, o *simulateOutput) policySource {
	f.StringVar(&in.clients, "clients", "", "simulate one point with this many clients, 1 through 1000 (instead of --sweep)")
	f.StringVar(&in.sweep, "sweep", "10:190:10", "numbers of clients FROM:TO:STEP, each 1 through 1000, at most 100 points")
	f.StringVar(&in.runs, "runs", "100", "runs averaged per point and mode, 1 through 10000")
	f.StringVar(&in.modes, "modes", "none,exponential,full,equal,decorrelated", "comma-separated modes: none, exponential, full, equal, decorrelated, policy, calc")
	f.StringVar(&in.seed, "seed", "1", "seed, 0 through 9007199254740991; the same seed gives the same result on every machine")
	f.StringVar(&in.base, "base", "5", "base delay of the study modes in milliseconds")
	f.StringVar(&in.capMs, "cap", "2000", "cap of the study modes in milliseconds")
	f.StringVar(&in.budget, "budget", "", "retry token bucket shared by the clients: CAPACITY[:COST[:REFUND]] (AWS SDK: 500:5:1); a refused retry gives up")
	f.StringVar(&in.retryAfter, "retry-after", "", "when overloaded, the resource answers conflicts with this Retry-After in milliseconds; clients wait at least that")
	f.StringVar(&in.overload, "overload", "20", "the resource is overloaded when more than this many writes reached it in the window")
	f.StringVar(&in.window, "overload-window", "100", "the overload window in milliseconds")
	src := policySource{
		preset: f.String("policy-preset", "", "mode policy: a built-in Ratchet preset, STANDARD, AGGRESSIVE or RELAXED"),
		file:   f.String("policy-file", "", "mode policy: a Ratchet policy JSON document; - reads standard input"),
	}
	f.StringVar(&in.calc[0], "calc-base", "", "mode calc: base delay in milliseconds, greater than 0")
	f.StringVar(&in.calc[1], "calc-multiplier", "2", "mode calc: growth factor per attempt, at least 1")
	f.StringVar(&in.calc[2], "calc-cap", "", "mode calc: cap in milliseconds, at least the base (default: 400 × the base)")
	f.StringVar(&in.calc[3], "calc-attempts", "15", "mode calc: retries before a client gives up, 1 through 15")
	f.StringVar(&in.calc[4], "calc-jitter", "full", "mode calc: none, full, equal or decorrelated")
	f.StringVar(&in.calc[5], "calc-first-wait", "multiplied", "mode calc: base (exponent from 0) or multiplied (exponent from 1)")
	f.StringVar(&o.scenario, "scenario", "contention", "contention (the sweep of the 2015 study) or recovery (a held backlog after an outage, released at once or by the ramp)")
	f.StringVar(&o.format, "format", "table", "output: table, csv or json")
	f.StringVar(&o.out, "out", "", "write the output to this file instead of standard output")
	f.BoolVar(&o.bench, "bench", "print how long the sweep took to standard error")
	f.StringVar(&in.workers, "workers", "0", "goroutines, 0 for one per CPU; never changes the result")
	return src
}

// writeSimulateResult writes res in format fmtName (table, csv or json)
// to the file out, or to standard output when out is "". The whole result
// is rendered first, so an error leaves no half-written output behind.
func writeSimulateResult(env *Env, res simulate.Result, fmtName, out string) error {
	var buf bytes.Buffer
	var err error
	switch fmtName {
	case "json":
		err = writeJSON(&buf, res)
	case "csv":
		err = writeSimulateCSV(&buf, res)
	default:
		writeSimulateTable(&buf, res)
	}
	if err != nil {
		return err
	}
	return writeOutput(env, buf.Bytes(), out)
}

// writeOutput writes a rendered result to the file out, or to standard
// output when out is "".
func writeOutput(env *Env, data []byte, out string) error {
	if out != "" {
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", out, err)
		}
	} else if _, err := env.Stdout.Write(data); err != nil {
		return err
	}
	return nil
}

// simulateFlags are the texts of the simulate flags, converted together by
// simulateConfig so that every problem is reported at once.
type simulateFlags struct {
	clients, sweep, runs, modes, seed, base, capMs string
	budget, retryAfter, overload, window, workers  string
	calc                                           [6]string
}

// simulateConfig turns the flags into a validated simulate.Config. Every
// problem is reported at once, each naming the flag, the value and what is
// allowed.
func simulateConfig(f *flagSet, env *Env, in simulateFlags, src policySource) (simulate.Config, error) {
	cfg := simulate.DefaultConfig()
	if f.isSet("clients") && f.isSet("sweep") {
		return cfg, usagef("--clients and --sweep: give one, not both")
	}
	simulatePoints(f, in, &cfg)
	cfg.Runs = int(f.integer("runs", in.runs, 1, simulate.MaxRuns, "must be an integer from 1 through 10000"))
	cfg.Seed = uint64(f.integer("seed", in.seed, 0, simulate.MaxSeed, "must be an integer from 0 through 9007199254740991"))
	cfg.BaseMs = f.number("base", in.base, "must be a number of milliseconds greater than 0 and at most 86400000")
	cfg.CapMs = f.number("cap", in.capMs, "must be a number of milliseconds from the base delay through 86400000")
	cfg.Workers = int(f.integer("workers", in.workers, 0, 1024, "must be an integer from 0 (one per CPU) through 1024"))
	hasPolicy := f.isSet("policy-preset") || f.isSet("policy-file")
	hasCalc := f.isSet("calc-base")
	cfg.Modes = simulateModes(f, in.modes, hasPolicy, hasCalc)
	if in.budget != "" {
		cfg.Budget = simulateBudget(f, in.budget)
	}
	if in.retryAfter != "" {
		cfg.RetryAfter = &simulate.RetryAfter{
			Ms:       f.number("retry-after", in.retryAfter, "must be a number of milliseconds greater than 0 and at most 86400000"),
			Overload: int(f.integer("overload", in.overload, 0, 1_000_000, "must be an integer from 0 through 1000000 writes")),
			WindowMs: f.number("overload-window", in.window, "must be a number of milliseconds greater than 0 and at most 86400000"),
		}
	}
	if hasCalc {
		cfg.Calc = simulateCalc(f, in.calc)
	}
	if err := f.done(); err != nil {
		return cfg, err
	}
	if hasPolicy {
		p, err := src.loadSim(f, env)
		if err != nil {
			return cfg, err
		}
		params := p.Params()
		cfg.Policy = &params
	}
	if err := cfg.Validate(); err != nil {
		return cfg, renameFields(err, simulateFlagNames)
	}
	return cfg, nil
}

// simulateModes reads --modes. Without --modes, a policy or a calculator
// setting joins the default modes, so that giving one simulates it.
func simulateModes(f *flagSet, text string, hasPolicy, hasCalc bool) []simulate.Mode {
	var modes []simulate.Mode
	for m := range strings.SplitSeq(text, ",") {
		modes = append(modes, simulate.Mode(strings.ToLower(strings.TrimSpace(m))))
	}
	if !f.isSet("modes") {
		if hasPolicy {
			modes = append(modes, simulate.Policy)
		}
		if hasCalc {
			modes = append(modes, simulate.Calc)
		}
	}
	return modes
}

// simulatePoints reads the numbers of clients to simulate into cfg: one
// point from --clients, or FROM, TO and STEP from --sweep.
func simulatePoints(f *flagSet, in simulateFlags, cfg *simulate.Config) {
	if f.isSet("clients") {
		n := int(f.integer("clients", in.clients, 1, simulate.MaxClients, "must be an integer from 1 through 1000"))
		cfg.From, cfg.To, cfg.Step = n, n, 1
		return
	}
	parts := strings.Split(in.sweep, ":")
	const allowed = "must be FROM:TO:STEP, integers from 1 through 1000 with FROM ≤ TO, e.g. 10:190:10"
	if len(parts) != 3 {
		f.fail("sweep", in.sweep, allowed)
		return
	}
	cfg.From = int(f.integer("sweep", parts[0], 1, simulate.MaxClients, allowed))
	cfg.To = int(f.integer("sweep", parts[1], int64(cfg.From), simulate.MaxClients, allowed))
	cfg.Step = int(f.integer("sweep", parts[2], 1, simulate.MaxClients, allowed))
	if len(f.errs) > 1 { // one bad sweep is enough to say
		f.errs = f.errs[:1]
	}
}

// simulateBudget reads --budget, CAPACITY[:COST[:REFUND]]; the parts left
// out keep the simulator's defaults.
func simulateBudget(f *flagSet, text string) *simulate.Budget {
	b := simulate.DefaultBudget()
	parts := strings.Split(text, ":")
	const allowed = "must be CAPACITY[:COST[:REFUND]] in whole tokens, e.g. 500:5:1"
	if len(parts) > 3 {
		f.fail("budget", text, allowed)
	} else {
		ptrs := []*int{&b.Capacity, &b.RetryCost, &b.SuccessRefund}
		for i, p := range parts {
			*ptrs[i] = int(f.integer("budget", p, 0, 1_000_000_000, allowed))
		}
	}
	return &b
}

// simulateCalc reads the --calc-* flags (base, multiplier, cap, attempts,
// jitter, first wait) into the calculator's input; the cap defaults to 400
// times the base, as on the calculator page.
func simulateCalc(f *flagSet, c [6]string) *backoff.CalcInput {
	ci := backoff.CalcInput{
		BaseMs:     f.number("calc-base", c[0], "must be a number of milliseconds greater than 0"),
		Multiplier: f.number("calc-multiplier", c[1], "must be a number of at least 1"),
		Attempts:   int(f.integer("calc-attempts", c[3], 1, backoff.MaxCalcAttempts, "must be an integer from 1 through 15")),
		Jitter:     backoff.Jitter(strings.ToLower(strings.TrimSpace(c[4]))),
		FirstWait:  backoff.FirstWait(strings.ToLower(strings.TrimSpace(c[5]))),
	}
	ci.CapMs = 400 * ci.BaseMs
	if f.isSet("calc-cap") {
		ci.CapMs = f.number("calc-cap", c[2], "must be a number of milliseconds, at least the base delay")
	}
	return &ci
}

// loadSim reads the policy of --policy-preset or --policy-file.
func (s policySource) loadSim(f *flagSet, env *Env) (backoff.Policy, error) {
	hasPreset, hasFile := f.isSet("policy-preset"), f.isSet("policy-file")
	switch {
	case hasPreset && hasFile:
		return backoff.Policy{}, usagef("--policy-preset and --policy-file: give one, not both")
	case hasPreset:
		name := backoff.Preset(strings.ToUpper(strings.TrimSpace(*s.preset)))
		if _, ok := backoff.PresetParams(name); !ok {
			return backoff.Policy{}, usagef("--policy-preset: %s is not allowed; must be one of STANDARD, AGGRESSIVE, RELAXED (a CUSTOM policy goes in --policy-file)", quoteValue(*s.preset))
		}
		return backoff.PresetPolicy(name), nil
	}
	data, err := readInput(env, *s.file)
	if err != nil {
		return backoff.Policy{}, err
	}
	p, err := backoff.ParsePolicy(data)
	if err != nil {
		return backoff.Policy{}, &UsageError{Err: fmt.Errorf("--policy-file: policy %s:\n%w", displayName(*s.file), err)}
	}
	return p, nil
}

func writeSimulateTable(w io.Writer, r simulate.Result) {
	c := r.Config
	fmt.Fprintf(w, "Contention simulation: %d runs per point, seed %d, hops |Normal(%s ms, %s ms)|, base %s ms, cap %s ms",
		c.Runs, c.Seed, fnum(c.LatencyMeanMs), fnum(c.LatencySdMs), fnum(c.BaseMs), fnum(c.CapMs))
	if b := c.Budget; b != nil {
		fmt.Fprintf(w, ", retry budget %d tokens (retry %d, success +%d)", b.Capacity, b.RetryCost, b.SuccessRefund)
	}
	if ra := c.RetryAfter; ra != nil {
		fmt.Fprintf(w, ", Retry-After %s ms above %d writes per %s ms", fnum(ra.Ms), ra.Overload, fnum(ra.WindowMs))
	}
	fmt.Fprintln(w, ".\nCalls are writes per run; time is when the last client finished. ± is the standard deviation over runs;")
	fmt.Fprintln(w, "client percentiles are per run, averaged over runs.")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%7s  %-12s  %18s  %20s  %23s  %26s  %7s\n", "clients", "mode", "calls", "time ms", "client calls p50/90/99", "client ms p50/90/99", "failed")
	for i, n := range r.Clients {
		for _, s := range r.Series {
			p := s.Points[i]
			fmt.Fprintf(w, "%7d  %-12s  %9.1f ± %6.1f  %10.0f ± %7.0f  %7.1f %7.1f %7.1f  %8.0f %8.0f %8.0f  %7.1f\n",
				n, s.Mode, p.Calls.Mean, p.Calls.Sd, p.TimeMs.Mean, p.TimeMs.Sd,
				p.ClientCalls.P50, p.ClientCalls.P90, p.ClientCalls.P99,
				p.ClientTimeMs.P50, p.ClientTimeMs.P90, p.ClientTimeMs.P99, p.Failed.Mean)
		}
	}
}

func fnum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func writeSimulateCSV(w io.Writer, r simulate.Result) error {
	cw := csv.NewWriter(w)
	stat := func(prefix string) []string {
		return []string{prefix + "_mean", prefix + "_sd", prefix + "_p5", prefix + "_p95"}
	}
	head := []string{"mode", "clients"}
	head = append(head, stat("calls")...)
	head = append(head, stat("time_ms")...)
	head = append(head, "client_calls_p50", "client_calls_p90", "client_calls_p99", "client_ms_p50", "client_ms_p90", "client_ms_p99")
	head = append(head, stat("failed")...)
	head = append(head, "refused_mean", "hinted_mean")
	if err := cw.Write(head); err != nil {
		return err
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	sv := func(s simulate.Stat) []string { return []string{g(s.Mean), g(s.Sd), g(s.P5), g(s.P95)} }
	for _, s := range r.Series {
		for _, p := range s.Points {
			row := []string{string(s.Mode), strconv.Itoa(p.Clients)}
			row = append(row, sv(p.Calls)...)
			row = append(row, sv(p.TimeMs)...)
			row = append(row, g(p.ClientCalls.P50), g(p.ClientCalls.P90), g(p.ClientCalls.P99),
				g(p.ClientTimeMs.P50), g(p.ClientTimeMs.P90), g(p.ClientTimeMs.P99))
			row = append(row, sv(p.Failed)...)
			row = append(row, g(p.Refused), g(p.Hinted))
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
