package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
)

const calcUsage = "calc [--sample] [--base MS] [--multiplier X] [--cap MS] [--attempts N] [--jitter none|full|equal|decorrelated] [--first-wait base|multiplied] [--seed N] [--json]"

// calcFlagNames maps the calculator's field names to this command's flags.
var calcFlagNames = map[string]string{
	"baseMs": "--base", "multiplier": "--multiplier", "capMs": "--cap", "attempts": "--attempts",
	"jitter": "--jitter", "firstWait": "--first-wait", "seed": "--seed",
}

func runCalc(_ context.Context, env *Env, args []string) error {
	def := backoff.SampleInput()
	f := newFlagSet("calc", calcUsage, env.Stderr)
	f.Bool("sample", "use the sample: base 1000 ms, multiplier 2, cap 30000 ms, 4 attempts, no jitter (also the default; other flags still apply)")
	base := f.String("base", "1000", "base delay in milliseconds, greater than 0")
	mult := f.String("multiplier", "2", "growth factor per attempt, at least 1")
	capMs := f.String("cap", "30000", "cap in milliseconds, at least the base delay")
	attempts := f.String("attempts", "4", "number of retries to list, 1 through 15")
	jitter := f.String("jitter", "none", "jitter mode: none, full, equal or decorrelated")
	first := f.String("first-wait", "base", "first wait: base (exponent from 0) or multiplied (exponent from 1)")
	seed := f.String("seed", "1", "mulberry32 seed for the jittered modes, 0 through 4294967295")
	asJSON := f.Bool("json", "print the schedule as JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	in := def
	in.BaseMs = f.number("base", *base, "must be a number of milliseconds greater than 0")
	in.Multiplier = f.number("multiplier", *mult, "must be a number of at least 1")
	in.CapMs = f.number("cap", *capMs, "must be a number of milliseconds, at least the base delay")
	in.Attempts = int(f.integer("attempts", *attempts, 1, backoff.MaxCalcAttempts, "must be an integer from 1 through 15"))
	in.Jitter = backoff.Jitter(strings.ToLower(strings.TrimSpace(*jitter)))
	in.FirstWait = backoff.FirstWait(strings.ToLower(strings.TrimSpace(*first)))
	in.Seed = parseSeed(f, *seed)
	// Report the flag errors and the calculator's own rules together.
	verr := in.Validate()
	if err := f.done(); err != nil {
		if verr != nil {
			if es, ok := field.As(renameFields(verr, calcFlagNames)); ok {
				f.errs = mergeErrors(f.errs, es)
			}
		}
		return f.done()
	}
	if verr != nil {
		return renameFields(verr, calcFlagNames)
	}
	s, err := backoff.Calculate(in)
	if err != nil {
		return renameFields(err, calcFlagNames)
	}
	if *asJSON {
		return writeJSON(env.Stdout, s)
	}
	_, err = fmt.Fprint(env.Stdout, s.Text())
	return err
}

// parseSeed accepts what a JavaScript page would: any integer that fits 32
// bits, signed or unsigned; negative values wrap as |0 does.
func parseSeed(f *flagSet, text string) uint32 {
	v, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil || v < -2147483648 || v > 4294967295 {
		f.fail("seed", text, "must be an integer from -2147483648 through 4294967295")
		return 0
	}
	return uint32(v)
}

// mergeErrors appends the errors of es whose field has no error yet in base,
// so a bad flag is not reported twice (once unparsable, once out of range).
func mergeErrors(base, es field.Errors) field.Errors {
	seen := map[string]bool{}
	for _, e := range base {
		seen[e.Field] = true
	}
	for _, e := range es {
		if !seen[e.Field] {
			base = append(base, e)
		}
	}
	return base
}
