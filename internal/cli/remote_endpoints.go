package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/wire"
)

// policyFlagsHelp documents the flags of addPolicyFlags in the endpoints
// help, once for both subcommands that take them.
const policyFlagsHelp = `policy flags: --preset STANDARD|AGGRESSIVE|RELAXED|CUSTOM --max-attempts N --initial-delay-ms MS --multiplier X
  --max-delay-ms MS --jitter-percent P --timeout-ms MS --max-concurrent N --rate-limit N|none
  --circuit-threshold N --circuit-open-ms MS
  per flow key: --key-max-concurrent N|none --key-rate-limit N|none --key-ordered true|false --fair-keys true|false`

func endpointsGroup() *group {
	return &group{name: "endpoints", dispatch: runClientGroup, footer: policyFlagsHelp + "\n" + commonFlagsHelp, subs: []subcommand{
		{"list", "list endpoints with their policy, limits and circuit", "", endpointsListCommand{}},
		{"get", "print one endpoint, with the version set-policy needs", "NAME", endpointsGetCommand{}},
		{"create", "create an endpoint; unset policy flags take the server's defaults", "NAME [policy flags]", endpointsCreateCommand{}},
		{"set-policy", "change the flags given, keeping the rest of the current policy", "NAME --expected-version N [policy flags]", endpointsSetPolicyCommand{}},
		{"pause", "pause an endpoint: its due jobs wait (gate paused) until resume; owner key", "NAME [--reason TEXT]", endpointsPauseCommand{}},
		{"resume", "resume a paused endpoint; owner key", "NAME", endpointNameCommand{"resume", (*client.Client).ResumeEndpoint}},
		{"circuit-close", "close the endpoint's circuit now and clear its failure count; owner key", "NAME", endpointNameCommand{"circuit-close", (*client.Client).CloseCircuit}},
		{"circuit-open", "open the endpoint's circuit now for its circuit-open-ms; owner key", "NAME", endpointNameCommand{"circuit-open", (*client.Client).OpenCircuit}},
		{"held", "list the due jobs the endpoint's gates hold now", "NAME [--limit N] [--cursor C]", endpointsHeldCommand{}},
		{"keys", "list the endpoint's busiest flow keys and the due jobs each key's limits hold", "NAME [--limit N]", endpointsKeysCommand{}},
		{"events", "list the endpoint's event log, newest first: circuit changes, pauses, recoveries, learned limits", "NAME [--since TIME] [--limit N] [--cursor C]", endpointsEventsCommand{}},
	}}
}

// policyFlags are the endpoint policy flags of create and set-policy. Only
// the flags given are sent; ranges are checked by the server, which names
// the field, the value and what is allowed.
type policyFlags struct {
	preset, maxAttempts, initialDelay, multiplier, maxDelay, jitter *string
	settings                                                        []*string // one per wire.SettingFields, by position
}

func addPolicyFlags(f *flagSet) policyFlags {
	return policyFlags{
		preset:       f.String("preset", "", "retry preset: STANDARD, AGGRESSIVE, RELAXED or CUSTOM"),
		maxAttempts:  f.String("max-attempts", "", "CUSTOM: attempts, 1–10"),
		initialDelay: f.String("initial-delay-ms", "", "CUSTOM: first delay in ms, 1000–1800000"),
		multiplier:   f.String("multiplier", "", "CUSTOM: growth factor, 1–4"),
		maxDelay:     f.String("max-delay-ms", "", "CUSTOM: delay cap in ms, initial delay–86400000"),
		jitter:       f.String("jitter-percent", "", "CUSTOM: jitter, 0–50"),
		settings:     settingFlags(f),
	}
}

// settingFlags registers a flag per endpoint setting, named and described
// by its tags (wire.SettingFields): a new setting gets its flag without an
// edit here. The usage adds the range: "claims per minute, 1–1000000, or
// none"; a flag's "true: ..."; a text's what it allows.
func settingFlags(f *flagSet) []*string {
	var out []*string
	for _, s := range wire.SettingFields() {
		usage := fmt.Sprintf("%s, %d–%d", s.Help, int64(s.Range.Min), int64(s.Range.Max))
		switch s.Kind {
		case wire.SettingLimit:
			usage += ", or none"
		case wire.SettingBool:
			usage = "true: " + s.Help
		case wire.SettingText:
			_, allowed := s.CheckText("")
			usage = s.Help + "; " + allowed
		}
		out = append(out, f.String(s.Flag, "", usage))
	}
	return out
}

// apply overlays the flags that were given on p. Ranges are checked here
// too (the SDK leaves zero values out, so the server could not name them);
// the server checks them again, with the relations between fields.
func (pf policyFlags) apply(f *flagSet, p *client.EndpointPolicy) {
	if f.isSet("preset") {
		p.Policy.Preset = backoff.Preset(strings.ToUpper(*pf.preset))
	}
	intFlag := func(name string, text *string, lo, hi int64, dst *int64) {
		if f.isSet(name) {
			*dst = f.integer(name, *text, lo, hi, fmt.Sprintf("must be an integer from %d through %d", lo, hi))
		}
	}
	if f.isSet("max-attempts") {
		p.Policy.Custom.MaxAttempts = int(f.integer("max-attempts", *pf.maxAttempts, 1, 10, "must be an integer from 1 through 10"))
	}
	intFlag("initial-delay-ms", pf.initialDelay, 1000, 1_800_000, &p.Policy.Custom.InitialDelayMs)
	if f.isSet("multiplier") {
		if p.Policy.Custom.Multiplier = f.number("multiplier", *pf.multiplier, "must be a number from 1 through 4"); p.Policy.Custom.Multiplier < 1 || p.Policy.Custom.Multiplier > 4 {
			f.fail("multiplier", *pf.multiplier, "must be a number from 1 through 4")
		}
	}
	intFlag("max-delay-ms", pf.maxDelay, 1000, 86_400_000, &p.Policy.Custom.MaxDelayMs)
	if f.isSet("jitter-percent") {
		if p.Policy.Custom.JitterPercent = f.number("jitter-percent", *pf.jitter, "must be a number from 0 through 50"); p.Policy.Custom.JitterPercent < 0 || p.Policy.Custom.JitterPercent > 50 {
			f.fail("jitter-percent", *pf.jitter, "must be a number from 0 through 50")
		}
	}
	for i, s := range wire.SettingFields() {
		v := s.Value(&p.EndpointSettings)
		switch s.Kind {
		case wire.SettingInt:
			intFlag(s.Flag, pf.settings[i], int64(s.Range.Min), int64(s.Range.Max), v.Addr().Interface().(*int64))
		case wire.SettingLimit:
			f.limit(s.Flag, *pf.settings[i], int64(s.Range.Max), v.Addr().Interface().(**int64))
		case wire.SettingBool:
			f.boolean(s.Flag, *pf.settings[i], v.Addr().Interface().(*bool))
		case wire.SettingText:
			if text := *pf.settings[i]; f.isSet(s.Flag) {
				if ok, allowed := s.CheckText(text); !ok {
					f.fail(s.Flag, text, allowed)
				}
				v.SetString(text)
			}
		}
	}
}

// endpointsListCommand is `ratchet endpoints list`.
type endpointsListCommand struct{}

// Run lists the endpoints with the policy summarized; --json has each whole schedule.
func (endpointsListCommand) Run(ctx context.Context, env *Env, args []string) error {
	r, err := connectClient(endpointsGroup(), "list", env, args, nil)
	if err != nil {
		return err
	}
	eps, err := r.c.ListEndpoints(ctx)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "NAME\tVERSION\tPOLICY\tTIMEOUT\tMAX CONCURRENT\tRATE/MIN\tCIRCUIT")
		for _, e := range eps {
			fmt.Fprintf(w, "%s\t%d\t%s\t%dms\t%d\t%s\t%s\n", e.Name, e.Version, policySummary(e.Policy), e.DefaultTimeoutMs, e.MaxConcurrent, intOrDash(e.RateLimitPerMinute), e.Circuit.State)
		}
	})
}

// endpointsGetCommand is `ratchet endpoints get`.
type endpointsGetCommand struct{}

// Run prints one endpoint, including the version set-policy must be given.
func (endpointsGetCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("endpoints get", "an endpoint NAME", args)
	if err != nil {
		return err
	}
	r, err := connectClient(endpointsGroup(), "get", env, args, nil)
	if err != nil {
		return err
	}
	e, err := r.c.GetEndpoint(ctx, name)
	return showEndpoint(r, e, err)
}

// endpointsCreateCommand is `ratchet endpoints create`.
type endpointsCreateCommand struct{}

// Run sends only the policy flags given, so the server's defaults fill the rest.
func (endpointsCreateCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("endpoints create", "an endpoint NAME", args)
	if err != nil {
		return err
	}
	f, rf := clientFlags(endpointsGroup(), "create", env)
	pf := addPolicyFlags(f)
	if err := f.parse(args); err != nil {
		return err
	}
	var pol client.EndpointPolicy
	pf.apply(f, &pol)
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	e, err := r.c.CreateEndpoint(ctx, name, pol)
	return showEndpoint(r, e, err)
}

// endpointsSetPolicyCommand is `ratchet endpoints set-policy`.
type endpointsSetPolicyCommand struct{}

// Run checks the flags before any request, then lays them over the current
// policy: an update replaces the whole policy, and a stale version is refused.
func (endpointsSetPolicyCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("endpoints set-policy", "an endpoint NAME", args)
	if err != nil {
		return err
	}
	f, rf := clientFlags(endpointsGroup(), "set-policy", env)
	pf := addPolicyFlags(f)
	expected := f.String("expected-version", "", "the version you read (endpoints get); a stale one is refused with 409")
	if err := f.parse(args); err != nil {
		return err
	}
	var expectedVersion int64
	if !f.isSet("expected-version") {
		f.fail("expected-version", "", "required: the version you read with 'ratchet endpoints get'")
	} else {
		expectedVersion = f.integer("expected-version", *expected, 1, math.MaxInt64, "must be the integer version you read")
	}
	var pol client.EndpointPolicy
	pf.apply(f, &pol) // to check the flags before any request
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	// An update carries the whole policy, so start from the current one.
	cur, err := r.c.GetEndpoint(ctx, name)
	if err != nil {
		return r.fail(err)
	}
	pol.Policy, pol.EndpointSettings = cur.Policy, cur.EndpointSettings
	pf.apply(f, &pol)
	e, err := r.c.UpdateEndpointPolicy(ctx, name, expectedVersion, pol)
	return showEndpoint(r, e, err)
}

// showEndpoint prints what get, create and set-policy all answer: the
// endpoint as it now is.
func showEndpoint(r *remote, e *client.Endpoint, err error) error {
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) { printEndpoint(w, e) })
}

func policySummary(p backoff.Policy) string {
	if p.Preset == "" {
		return "-"
	}
	if p.Preset != backoff.Custom {
		return string(p.Preset)
	}
	c := p.Custom
	return fmt.Sprintf("CUSTOM %d× from %dms ×%g to %dms ±%g%%", c.MaxAttempts, c.InitialDelayMs, c.Multiplier, c.MaxDelayMs, c.JitterPercent)
}

func printEndpoint(w io.Writer, e *client.Endpoint) {
	fmt.Fprintf(w, "name:\t%s\n", e.Name)
	fmt.Fprintf(w, "version:\t%d\n", e.Version)
	fmt.Fprintf(w, "policy:\t%s\n", policySummary(e.Policy))
	fmt.Fprintf(w, "timeout:\t%dms\n", e.DefaultTimeoutMs)
	fmt.Fprintf(w, "max concurrent:\t%d\n", e.MaxConcurrent)
	fmt.Fprintf(w, "rate limit:\t%s per minute\n", intOrDash(e.RateLimitPerMinute))
	if k := e.KeyLimits; k != (client.KeyLimits{}) {
		fmt.Fprintf(w, "per flow key:\t%s running, %s per minute, ordered %t, fair %t\n", intOrDash(k.KeyMaxConcurrent), intOrDash(k.KeyRateLimitPerMinute), k.KeyOrdered, k.FairKeys)
	}
	fmt.Fprintf(w, "circuit:\t%s (%d failures; opens at %d, stays open %dms)\n", e.Circuit.State, e.Circuit.Failures, e.CircuitFailureThreshold, e.CircuitOpenMs)
	printOtherSettings(w, &e.EndpointSettings)
	if e.Circuit.OpenedBy != "" {
		fmt.Fprintf(w, "circuit opened by:\t%s at %s (half-opens at %s)\n", e.Circuit.OpenedBy, e.Circuit.OpenedAt, orDash(e.Circuit.HalfOpensAt))
	}
	if p := e.Paused; p != nil {
		fmt.Fprintf(w, "paused:\tby %s at %s: %s\n", p.By, p.At, orDash(p.Reason))
	}
	if r := e.Recovery; r != nil {
		fmt.Fprintf(w, "recovering:\t%g claims a second allowed, %s (since %s)\n", r.RatePerSecond, r.Phase, r.StartedAt)
	}
	if l := e.Learned; l != nil {
		fmt.Fprintf(w, "learned limit:\t%d per %dms from the provider's %s headers (said at %s)\n", l.Limit, l.WindowMs, l.Source, l.SaidAt)
	}
	fmt.Fprintf(w, "updated:\t%s\n", orDash(e.UpdatedAt))
}

// printedSettings are the settings printEndpoint's own lines show; every
// other setting that is set gets a line from printOtherSettings, labelled
// with its flag's words ("daily budget:"), so a new setting shows without
// an edit here. (A flag's words are short enough to keep the columns as
// they were.) One left unset (a null limit, false, 0, a text at its
// default) prints nothing, as
// the key limits print nothing until one is set.
var printedSettings = []string{"DefaultTimeoutMs", "MaxConcurrent", "RateLimitPerMinute", "CircuitFailureThreshold", "CircuitOpenMs",
	"KeyMaxConcurrent", "KeyRateLimitPerMinute", "KeyOrdered", "FairKeys"}

func printOtherSettings(w io.Writer, s *client.EndpointSettings) {
	for _, f := range wire.SettingFields() {
		if slices.Contains(printedSettings, f.Name) {
			continue
		}
		label := strings.ReplaceAll(f.Flag, "-", " ")
		v := f.Value(s)
		if v.IsZero() || f.Kind == wire.SettingText && v.String() == f.Default {
			continue
		}
		switch f.Kind {
		case wire.SettingLimit:
			fmt.Fprintf(w, "%s:\t%s\n", label, intOrDash(v.Interface().(*int64)))
		default:
			fmt.Fprintf(w, "%s:\t%v\n", label, v.Interface())
		}
	}
}
