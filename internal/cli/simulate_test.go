package cli_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/cli"
	"github.com/getratchet/ratchet/internal/simulate"
)

func TestSimulateTable(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "", "simulate", "--sweep", "10:30:10", "--runs", "5", "--bench")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Contention simulation: 5 runs per point, seed 1, hops |Normal(10 ms, 2 ms)|, base 5 ms, cap 2000 ms.", "clients  mode", "     30  decorrelated"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "simulated 3 points × 5 runs × 5 modes in ") {
		t.Errorf("no bench figure: %q", errOut)
	}
}

func TestSimulateJSONMatchesPackage(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "", "simulate", "--clients", "20", "--runs", "7", "--seed", "9", "--modes", "full,equal", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got simulate.Result
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	cfg := simulate.DefaultConfig()
	cfg.From, cfg.To, cfg.Step, cfg.Runs, cfg.Seed = 20, 20, 1, 7, 9
	cfg.Modes = []simulate.Mode{simulate.Full, simulate.Equal}
	want, err := simulate.Sweep(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if !bytes.Equal(a, b) {
		t.Fatalf("CLI JSON differs from simulate.Sweep:\n%s\n%s", a, b)
	}
	for _, key := range []string{`"clientCalls"`, `"timeMs"`, `"p95"`, `"latencyMeanMs"`} {
		if !strings.Contains(out, key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestSimulateCSVToFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sweep.csv")
	out, errOut, code := run(t, "", "simulate", "--sweep", "10:20:10", "--runs", "3", "--format", "csv", "--out", path,
		"--budget", "50:5:1", "--retry-after", "200", "--overload", "0")
	if code != 0 || out != "" {
		t.Fatalf("exit %d stdout %q stderr %s", code, out, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+2*5 || rows[0][0] != "mode" || rows[0][2] != "calls_mean" || rows[1][0] != "none" || rows[1][1] != "10" {
		t.Fatalf("csv %v", rows)
	}
}

func TestSimulatePolicyAndCalc(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "", "simulate", "--clients", "30", "--runs", "3", "--policy-preset", "aggressive",
		"--calc-base", "5", "--calc-jitter", "decorrelated", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r simulate.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Series) != 7 || r.Series[5].Mode != simulate.Policy || r.Series[6].Mode != simulate.Calc ||
		r.Config.Policy.InitialDelayMs != 5000 || r.Config.Calc.CapMs != 2000 {
		t.Fatalf("series %d config %+v", len(r.Series), r.Config)
	}
	doc := `{"preset":"CUSTOM","maxAttempts":3,"initialDelayMs":1000,"multiplier":2,"maxDelayMs":4000,"jitterPercent":50}`
	_, errOut, code = run(t, doc, "simulate", "--clients", "10", "--runs", "2", "--modes", "policy", "--policy-file", "-")
	if code != 0 {
		t.Fatalf("policy file: exit %d: %s", code, errOut)
	}
}

func TestSimulateUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--clients", "0"}, `--clients: "0" is not allowed; must be an integer from 1 through 1000`},
		{[]string{"--clients", "5", "--sweep", "1:2:1"}, "--clients and --sweep: give one, not both"},
		{[]string{"--sweep", "10:5:1"}, `--sweep: "5" is not allowed; must be FROM:TO:STEP`},
		{[]string{"--sweep", "1:1000:1"}, "--sweep: 1 is not allowed; gives 1000 points from 1 to 1000; at most 100 are allowed"},
		{[]string{"--runs", "x"}, `--runs: "x" is not allowed; must be an integer from 1 through 10000`},
		{[]string{"--modes", "full,fast"}, `--modes: "fast" is not allowed; must be one of none, exponential, full, equal, decorrelated, policy, calc`},
		{[]string{"--modes", "policy"}, "--policy-preset: missing; mode policy needs a retry policy"},
		{[]string{"--seed", "-1"}, `--seed: "-1" is not allowed; must be an integer from 0 through 9007199254740991`},
		{[]string{"--cap", "1", "--base", "5"}, "--cap: 1 is not allowed; must be a number of milliseconds from the base delay through 86400000"},
		{[]string{"--budget", "10:20"}, "--budget: 20 is not allowed; must be an integer from 1 through the capacity (10) tokens"},
		{[]string{"--budget", "1:2:3:4"}, `--budget: "1:2:3:4" is not allowed; must be CAPACITY[:COST[:REFUND]]`},
		{[]string{"--retry-after", "-5"}, "--retry-after: -5 is not allowed; must be a number of milliseconds greater than 0"},
		{[]string{"--policy-preset", "CUSTOM"}, `--policy-preset: "CUSTOM" is not allowed`},
		{[]string{"--calc-base", "5", "--calc-jitter", "wild"}, `--calc-jitter: "wild" is not allowed; must be one of none, full, equal, decorrelated`},
		{[]string{"--format", "xml"}, `--format: "xml" is not allowed; must be one of table, csv, json`},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		out, errOut, code := run(t, "", append([]string{"simulate"}, tc.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d stdout %q stderr %q; want %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// FuzzSimulateFlags feeds arbitrary flag values to ratchet simulate on a
// small point: it must print a table (exit 0) or name the problem (exit 2).
func FuzzSimulateFlags(f *testing.F) {
	f.Add("3", "2", "full,equal", "1", "500:5:1", "20", "5")
	f.Add("1000", "10000", "none", "9007199254740992", "0", "-1", "NaN")
	f.Add("x", "0", "policy,calc", "", "1:2:3:4", "Inf", "")
	f.Fuzz(func(t *testing.T, clients, runs, modes, seed, budget, retryAfter, calcBase string) {
		// Keep each case small: the limits themselves are tested elsewhere.
		if len(clients) > 2 || len(runs) > 1 {
			return
		}
		args := []string{"simulate", "--clients=" + clients, "--runs=" + runs, "--modes=" + modes, "--seed=" + seed}
		if budget != "" {
			args = append(args, "--budget="+budget)
		}
		if retryAfter != "" {
			args = append(args, "--retry-after="+retryAfter)
		}
		if calcBase != "" {
			args = append(args, "--calc-base="+calcBase)
		}
		var out, errOut bytes.Buffer
		code := cli.Run(context.Background(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, args)
		switch code {
		case 0:
			if !strings.Contains(out.String(), "clients  mode") {
				t.Fatalf("exit 0 without a table: %q", out.String())
			}
		case 2:
			if errOut.Len() == 0 || out.Len() != 0 {
				t.Fatalf("exit 2 with stderr %q stdout %q", errOut.String(), out.String())
			}
		default:
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
	})
}

// TestSimulateRecovery runs --scenario recovery: the table's figures, the
// JSON equal to the package's result, the CSV per second, and flag errors
// naming the flag.
func TestSimulateRecovery(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "", "simulate", "--scenario", "recovery", "--strategies", "at-once,ramp,learned")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Recovery: 5000 held jobs, a provider back with 100 requests per second", "(backlog ÷ capacity): 50 s.",
		"at-once      16451     11451       69.6  636 (6.4 × cap)   94.8 s (1.90 ×)", "ramp          5112       112        2.2  159 (1.6 × cap)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	out, errOut, code = run(t, "", "simulate", "--scenario", "recovery", "--backlog", "400", "--capacity", "20", "--ramp-limit", "50",
		"--policy-preset", "RELAXED", "--throttle-spends-attempt", "false", "--seed", "4", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got simulate.RecoveryResult
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	r, err := simulate.ParseRecovery([]byte(`{"backlog":400,"capacityPerS":20,"ramp":{"limitPerS":50},"policy":{"maxAttempts":3,"initialDelayMs":120000,"multiplier":2,"maxDelayMs":1800000,"jitterPercent":20},"throttleSpendsAttempt":false,"seed":4}`))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := simulate.SimulateRecovery(r)
	if a, b := mustJSON(t, got), mustJSON(t, want); a != b {
		t.Fatalf("CLI JSON differs from simulate.SimulateRecovery:\n%s\n%s", a, b)
	}
	out, _, code = run(t, "", "simulate", "--scenario", "recovery", "--backlog", "300", "--strategies", "ramp", "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || rows[0][4] != "allowed_per_s" || rows[1][0] != "ramp" || rows[1][1] != "0" || rows[1][4] != "20" {
		t.Fatalf("csv %d %v %v", code, err, rows[:2])
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "recovery", "--ramp-decrease", "1"}, "--ramp-decrease: 1 is not allowed; must be a factor greater than 0 and below 1"},
		{[]string{"--scenario", "recovery", "--backlog", "x"}, `--backlog: "x" is not allowed; must be an integer from 1 through 100000 jobs`},
		{[]string{"--scenario", "recovery", "--runs", "3"}, `--runs: "3" is not allowed; applies to the contention sweep`},
		{[]string{"--scenario", "recovery", "--strategies", "ramp,slow"}, `--strategies: "slow" is not allowed; must be one of at-once, ramp, learned`},
		{[]string{"--scenario", "recovery", "--throttle-spends-attempt", "maybe"}, "--throttle-spends-attempt: \"maybe\" is not allowed; must be true or false"},
		{[]string{"--backlog", "40"}, "--backlog: applies to --scenario recovery, not to the contention sweep"},
		{[]string{"--scenario", "outage"}, `--scenario: "outage" is not allowed; must be contention (the sweep) or recovery`},
	} {
		_, errOut, code := run(t, "", append([]string{"simulate"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
