package cli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/cli"
)

// FuzzCalcFlags feeds arbitrary flag values to ratchet calc: it must print a
// schedule (exit 0) or name the problem (exit 2), never panic or exit 1.
func FuzzCalcFlags(f *testing.F) {
	f.Add("1000", "2", "30000", "4", "none", "base", "1")
	f.Add("0.001", "1", "0.001", "15", "decorrelated", "multiplied", "4294967295")
	f.Add("NaN", "Inf", "-0", "0x10", "FULL", "", "-1")
	f.Fuzz(func(t *testing.T, base, mult, capMs, attempts, jitter, first, seed string) {
		var out, errOut bytes.Buffer
		args := []string{"calc", "--base=" + base, "--multiplier=" + mult, "--cap=" + capMs, "--attempts=" + attempts,
			"--jitter=" + jitter, "--first-wait=" + first, "--seed=" + seed}
		code := cli.Run(context.Background(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, args)
		switch code {
		case 0:
			if !strings.Contains(out.String(), "retry 1: ") {
				t.Fatalf("exit 0 without a schedule: %q", out.String())
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

// FuzzPolicyShow feeds arbitrary documents to ratchet policy show.
func FuzzPolicyShow(f *testing.F) {
	f.Add(seedDoc)
	f.Add(`{"preset":"AGGRESSIVE"}`)
	f.Add(`{"preset":"CUSTOM"`)
	f.Fuzz(func(t *testing.T, doc string) {
		var out, errOut bytes.Buffer
		code := cli.Run(context.Background(), &cli.Env{Stdin: strings.NewReader(doc), Stdout: &out, Stderr: &errOut}, []string{"policy", "show", "--file", "-"})
		if code == 0 && !strings.Contains(out.String(), "Exhausted; no automatic attempt") || code == 2 && errOut.Len() == 0 || code != 0 && code != 2 {
			t.Fatalf("exit %d stdout %q stderr %q", code, out.String(), errOut.String())
		}
	})
}
