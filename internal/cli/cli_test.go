package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/cli"
)

// run executes one command line in-process and returns stdout, stderr and the
// exit code.
func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Run(context.Background(), &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut}, args)
	return out.String(), errOut.String(), code
}

// vectorFile is the part of backoff/testdata/vectors.json the calculator
// tests read.
type vectorFile struct {
	Calculator []struct {
		Name   string `json:"name"`
		Source string `json:"source"`
		Input  struct {
			BaseMs     float64 `json:"baseMs"`
			Multiplier float64 `json:"multiplier"`
			CapMs      float64 `json:"capMs"`
			Attempts   int     `json:"attempts"`
			Jitter     string  `json:"jitter"`
			FirstWait  string  `json:"firstWait"`
			Seed       uint32  `json:"seed"`
		} `json:"input"`
		Lines []string `json:"lines"`
	} `json:"calculator"`
}

// TestCalcGolden runs every calculator vector, including the six printed
// blocks of the calculator tutorial, through the real command line.
func TestCalcGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "backoff", "testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v vectorFile
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	for _, c := range v.Calculator {
		in := c.Input
		args := []string{"calc", "--base", jsonNum(in.BaseMs), "--multiplier", jsonNum(in.Multiplier), "--cap", jsonNum(in.CapMs),
			"--attempts", jsonNum(float64(in.Attempts)), "--jitter", in.Jitter, "--first-wait", in.FirstWait, "--seed", jsonNum(float64(in.Seed))}
		out, errOut, code := run(t, "", args...)
		want := strings.Join(c.Lines, "\n") + "\n"
		if code != 0 || out != want {
			t.Errorf("%s (%s): exit %d, stderr %q\ngot\n%s\nwant\n%s", c.Name, c.Source, code, errOut, out, want)
		}
	}
}

func jsonNum(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func TestCalcSample(t *testing.T) {
	out, _, code := run(t, "", "calc", "--sample")
	want := `wait = min(cap, base * factor^attempt). attempt starts at 0, so the first wait is the base delay when factor^0 is 1. No random draw. The seed is ignored.
attempt 0, retry 1: 1000 ms (cumulative 1000 ms)
attempt 1, retry 2: 2000 ms (cumulative 3000 ms)
attempt 2, retry 3: 4000 ms (cumulative 7000 ms)
attempt 3, retry 4: 8000 ms (cumulative 15000 ms)
`
	if code != 0 || out != want {
		t.Errorf("exit %d\n%s", code, out)
	}
	// Load sample, then switch the first wait, as the tutorial does.
	out, _, _ = run(t, "", "calc", "--sample", "--first-wait", "multiplied")
	if !strings.Contains(out, "attempt 4, retry 4: 16000 ms (cumulative 30000 ms)\n") {
		t.Errorf("sample with multiplied first wait:\n%s", out)
	}
}

func TestCalcJSON(t *testing.T) {
	out, _, code := run(t, "", "calc", "--jitter", "decorrelated", "--json")
	var got struct {
		Rows []struct {
			WaitMs float64 `json:"waitMs"`
		} `json:"rows"`
		Lines []string `json:"lines"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d: %s", code, out)
	}
	if got.Rows[0].WaitMs != 2254.148 || got.Lines[1] != "attempt 0, retry 1: 2254.148 ms (cumulative 2254.148 ms)" {
		t.Errorf("json: %s", out)
	}
}

func TestCalcBadInput(t *testing.T) {
	_, errOut, code := run(t, "", "calc", "--base", "0", "--cap", "abc", "--attempts", "16", "--jitter", "half", "--seed", "-9999999999")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, want := range []string{
		`--cap: "abc" is not allowed`, `--attempts: "16" is not allowed; must be an integer from 1 through 15`,
		`--seed: "-9999999999" is not allowed`, `--base: 0 is not allowed; must be greater than 0`,
		`--jitter: "half" is not allowed; must be one of none, full, equal, decorrelated`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	_, errOut, code = run(t, "", "calc", "--cap", "500")
	if code != 2 || !strings.Contains(errOut, "--cap: 500 is not allowed; must be at least the base delay (1000)") {
		t.Errorf("cap below base: exit %d: %s", code, errOut)
	}
	_, errOut, code = run(t, "", "calc", "extra")
	if code != 2 || !strings.Contains(errOut, `unexpected argument "extra"`) {
		t.Errorf("positional argument: exit %d: %s", code, errOut)
	}
	_, errOut, code = run(t, "", "calc", "--nope")
	if code != 2 || !strings.Contains(errOut, "flag provided but not defined: -nope") {
		t.Errorf("unknown flag: exit %d: %s", code, errOut)
	}
}

const seedTable = `| Failed attempt | Base delay | Jitter range | Next execution |
|---|---|---|---|
| 1 | 10 seconds | 8–12 seconds | Attempt 2 |
| 2 | 20 seconds | 16–24 seconds | Attempt 3 |
| 3 | 40 seconds | 32–48 seconds | Attempt 4 |
| 4 | 80 seconds | 64–96 seconds | Attempt 5 |
| 5 | 160 seconds | 128–192 seconds | Attempt 6 |
| 6 | None | None | Exhausted; no automatic attempt 7 |
With zero jitter, those five waits total 310 seconds.
`

const seedDoc = `{
"preset": "CUSTOM",
"maxAttempts": 6,
"initialDelayMs": 10000,
"multiplier": 2,
"maxDelayMs": 600000,
"jitterPercent": 20
}`

func TestPolicyShow(t *testing.T) {
	out, errOut, code := run(t, seedDoc, "policy", "show", "--file", "-")
	if code != 0 || out != seedTable {
		t.Errorf("exit %d %s\n%s", code, errOut, out)
	}
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, []byte(seedDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code = run(t, "", "policy", "show", "--file", path)
	if code != 0 || out != seedTable {
		t.Errorf("from file: exit %d\n%s", code, out)
	}
	out, _, code = run(t, "", "policy", "show", "--preset", "RELAXED")
	want := `| Failed attempt | Base delay | Jitter range | Next execution |
|---|---|---|---|
| 1 | 120 seconds | 96–144 seconds | Attempt 2 |
| 2 | 240 seconds | 192–288 seconds | Attempt 3 |
| 3 | None | None | Exhausted; no automatic attempt 4 |
With zero jitter, those two waits total 360 seconds.
`
	if code != 0 || out != want {
		t.Errorf("RELAXED: exit %d\n%s", code, out)
	}
	out, _, code = run(t, seedDoc, "policy", "show", "--file", "-", "--json")
	var js struct {
		ZeroJitterTotalMs int64  `json:"zeroJitterTotalMs"`
		CeilingMs         int64  `json:"ceilingMs"`
		Text              string `json:"text"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || js.ZeroJitterTotalMs != 310000 || js.Text != seedTable || js.CeilingMs != 720000 {
		t.Errorf("json: exit %d %s", code, out)
	}
}

func TestPolicyDelay(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--attempt", "1", "--sample", "0"}, "8000\n"},
		{[]string{"--attempt", "1", "--sample", "1"}, "12000\n"},
		{[]string{"--attempt", "1", "--sample", "0", "--retry-after-ms", "60000"}, "60000\n"},
		{[]string{"--attempt", "5", "--sample", "0", "--retry-after-ms", "60000"}, "128000\n"},
		{[]string{"--attempt", "6", "--sample", "0.5"}, "exhausted: no automatic attempt 7\n"},
	}
	for _, c := range cases {
		args := append([]string{"policy", "delay", "--file", "-"}, c.args...)
		out, errOut, code := run(t, seedDoc, args...)
		if code != 0 || out != c.want {
			t.Errorf("%v: exit %d %q, got %q want %q", c.args, code, errOut, out, c.want)
		}
	}
	out, _, _ := run(t, "", "policy", "delay", "--preset", "STANDARD", "--attempt", "2", "--sample", "0.25")
	if out != "54000\n" { // 60 s × (0.8 + 0.25 × 0.4)
		t.Errorf("STANDARD attempt 2 at 0.25 = %q", out)
	}
}

func TestPolicyBadInput(t *testing.T) {
	cases := []struct {
		stdin string
		args  []string
		want  []string
	}{
		{`{"preset":"CUSTOM","maxAttempts":11,"initialDelayMs":10000,"multiplier":5,"maxDelayMs":600000,"jitterPercent":20,"x":1}`,
			[]string{"show", "--file", "-"},
			[]string{"policy from standard input:", "x: unknown field", "maxAttempts: 11 is not allowed; must be an integer from 1 through 10", "multiplier: 5 is not allowed; must be a number from 1 through 4"}},
		{"", []string{"show", "--preset", "FAST"}, []string{`--preset: "FAST" is not allowed; must be one of STANDARD, AGGRESSIVE, RELAXED`}},
		{"", []string{"show", "--preset", "CUSTOM"}, []string{"a CUSTOM policy needs every field"}},
		{"", []string{"show"}, []string{"a policy is required: --preset NAME or --file F"}},
		{"", []string{"show", "--file", "/nonexistent/p.json"}, []string{`--file: cannot read "/nonexistent/p.json"`}},
		{"", []string{"delay", "--preset", "STANDARD"}, []string{"--attempt: missing", "--sample: missing"}},
		{"", []string{"delay", "--preset", "STANDARD", "--attempt", "0", "--sample", "2", "--retry-after-ms", "-5"},
			[]string{`--attempt: "0" is not allowed`, `--sample: "2" is not allowed; must be a number from 0 through 1`, `--retry-after-ms: "-5" is not allowed`}},
		{"", []string{"fly"}, []string{`policy subcommand "fly" is not known`}},
	}
	for _, c := range cases {
		_, errOut, code := run(t, c.stdin, append([]string{"policy"}, c.args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, errOut)
			}
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	_, errOut, code := run(t, "", "frobnicate")
	if code != 2 || !strings.Contains(errOut, `command "frobnicate" is not known`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
	out, _, code := run(t, "", "help")
	if code != 0 || !strings.Contains(out, "calc") {
		t.Errorf("help: exit %d: %s", code, out)
	}
}
