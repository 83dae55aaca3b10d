package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
)

// maxPolicyFile bounds what --file reads; a policy is a few hundred bytes.
const maxPolicyFile = 1 << 20

func policyGroup() *group {
	return &group{name: "policy", dispatch: runPolicyGroup, subs: []subcommand{
		{"show", "validate a policy and print its schedule table", "(--preset NAME | --file F) [--json]", policyShowCommand{}},
		{"delay", "print the selected delay after one failed attempt", "--attempt N --sample U [--retry-after-ms M] (--preset NAME | --file F) [--json]", policyDelayCommand{}},
	}}
}

// runPolicyGroup dispatches policy. Unlike the client groups, help is a
// success printed on standard output; a missing subcommand prints the
// summaries before the usage error.
func runPolicyGroup(ctx context.Context, env *Env, g *group, args []string) error {
	headline := g.name + " " + strings.Join(g.names(), "|") + " [flags]"
	if len(args) == 0 {
		fmt.Fprintf(env.Stderr, "Usage: ratchet %s\n\n", headline)
		g.printSummaries(env.Stderr)
		return usagef("%s needs a subcommand: %s", g.name, orList(g.names()))
	}
	if s, ok := g.find(args[0]); ok {
		return s.cmd.Run(ctx, env, args[1:])
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprintf(env.Stdout, "Usage: ratchet %s\n", headline)
		for _, s := range g.subs {
			fmt.Fprintf(env.Stdout, "  %s\n", g.synopsis(s.name))
		}
		return nil
	}
	return usagef("%s subcommand %q is not known; use %s", g.name, args[0], orList(g.names()))
}

// policySource is the --preset and --file pair of policy show and delay.
type policySource struct {
	preset *string
	file   *string
}

func addPolicySource(f *flagSet) policySource {
	return policySource{
		preset: f.String("preset", "", "a built-in preset: STANDARD, AGGRESSIVE or RELAXED"),
		file:   f.String("file", "", "a policy JSON document; - reads standard input"),
	}
}

// load returns the validated policy named by --preset or --file.
func (s policySource) load(f *flagSet, env *Env) (backoff.Policy, error) {
	hasPreset, hasFile := f.isSet("preset"), f.isSet("file")
	switch {
	case hasPreset && hasFile:
		return backoff.Policy{}, usagef("--preset and --file: give one, not both")
	case hasPreset:
		name := backoff.Preset(strings.ToUpper(strings.TrimSpace(*s.preset)))
		if _, ok := backoff.PresetParams(name); !ok {
			hint := ""
			if name == backoff.Custom {
				hint = " (a CUSTOM policy needs every field: write it to a file and use --file)"
			}
			return backoff.Policy{}, usagef("--preset: %s is not allowed; must be one of STANDARD, AGGRESSIVE, RELAXED%s", quoteValue(*s.preset), hint)
		}
		return backoff.PresetPolicy(name), nil
	case hasFile:
		data, err := readInput(env, *s.file)
		if err != nil {
			return backoff.Policy{}, err
		}
		p, err := backoff.ParsePolicy(data)
		if err != nil {
			return backoff.Policy{}, &UsageError{Err: fmt.Errorf("policy %s:\n%w", displayName(*s.file), err)}
		}
		return p, nil
	}
	return backoff.Policy{}, usagef("a policy is required: --preset NAME or --file F")
}

func displayName(path string) string {
	if path == "-" {
		return "from standard input"
	}
	return "in " + path
}

func readInput(env *Env, path string) ([]byte, error) {
	var r io.Reader
	if path == "-" {
		r = env.Stdin
	} else {
		fh, err := os.Open(path)
		if err != nil {
			return nil, usagef("--file: cannot read %s: %v", quoteValue(path), err)
		}
		defer fh.Close()
		r = fh
	}
	data, err := io.ReadAll(io.LimitReader(r, maxPolicyFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxPolicyFile {
		return nil, usagef("--file: %s is larger than 1 MiB; a policy document is a few hundred bytes", quoteValue(path))
	}
	return data, nil
}

// policyShowCommand is `ratchet policy show`.
type policyShowCommand struct{}

// Run validates the policy and prints its schedule, or with --json the
// schedule and the policy as read.
func (policyShowCommand) Run(_ context.Context, env *Env, args []string) error {
	f := policyGroup().flagSet("show", env)
	src := addPolicySource(f)
	asJSON := f.Bool("json", "print the schedule as JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	p, err := src.load(f, env)
	if err != nil {
		return err
	}
	s := p.Params().Schedule()
	if *asJSON {
		return writeJSON(env.Stdout, struct {
			Policy backoff.Policy `json:"policy"`
			backoff.PolicySchedule
			Text string `json:"text"`
		}{p, s, s.Text()})
	}
	_, err = fmt.Fprint(env.Stdout, s.Text())
	return err
}

// policyDelayCommand is `ratchet policy delay`.
type policyDelayCommand struct{}

// Run reports every missing or bad flag at once, before loading the policy.
func (policyDelayCommand) Run(_ context.Context, env *Env, args []string) error {
	f := policyGroup().flagSet("delay", env)
	src := addPolicySource(f)
	attempt := f.String("attempt", "", "the failed attempt, from 1")
	sample := f.String("sample", "", "the random sample u, from 0 through 1")
	hint := f.String("retry-after-ms", "0", "the provider's retry-after hint in milliseconds (0 for none)")
	asJSON := f.Bool("json", "print the whole decision as JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	if !f.isSet("attempt") {
		f.errs = append(f.errs, &field.Error{Field: "--attempt", Value: field.Missing, Allowed: "required: the failed attempt, an integer of at least 1"})
	}
	if !f.isSet("sample") {
		f.errs = append(f.errs, &field.Error{Field: "--sample", Value: field.Missing, Allowed: "required: a number from 0 through 1"})
	}
	n := 1
	if f.isSet("attempt") {
		n = int(f.integer("attempt", *attempt, 1, 1_000_000, "must be an integer of at least 1"))
	}
	u := 0.0
	if f.isSet("sample") {
		u = f.number("sample", *sample, "must be a number from 0 through 1")
		if u < 0 || u > 1 {
			f.fail("sample", *sample, "must be a number from 0 through 1")
		}
	}
	ra := f.integer("retry-after-ms", *hint, 0, 1<<53, "must be an integer of 0 or more milliseconds")
	if err := f.done(); err != nil {
		return err
	}
	p, err := src.load(f, env)
	if err != nil {
		return err
	}
	d, err := p.Params().Delay(n, u, ra)
	if err != nil {
		return &UsageError{Err: err}
	}
	if *asJSON {
		return writeJSON(env.Stdout, d)
	}
	if d.Exhausted {
		_, err = fmt.Fprintf(env.Stdout, "exhausted: no automatic attempt %d\n", n+1)
		return err
	}
	_, err = fmt.Fprintln(env.Stdout, d.SelectedMs)
	return err
}
