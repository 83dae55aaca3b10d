package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/client"
)

const endpointsUsage = `  ratchet endpoints list
  ratchet endpoints get NAME
  ratchet endpoints create NAME [policy flags]
  ratchet endpoints set-policy NAME --expected-version N [policy flags]
policy flags: --preset STANDARD|AGGRESSIVE|RELAXED|CUSTOM --max-attempts N --initial-delay-ms MS --multiplier X
  --max-delay-ms MS --jitter-percent P --timeout-ms MS --max-concurrent N --rate-limit N|none
  --circuit-threshold N --circuit-open-ms MS
common flags: --server URL (RATCHET_SERVER) --key KEY (RATCHET_KEY) --json`

// policyFlags are the endpoint policy flags of create and set-policy. Only
// the flags given are sent; ranges are checked by the server, which names
// the field, the value and what is allowed.
type policyFlags struct {
	preset, maxAttempts, initialDelay, multiplier, maxDelay, jitter  *string
	timeout, maxConcurrent, rateLimit, circuitThreshold, circuitOpen *string
}

func addPolicyFlags(f *flagSet) policyFlags {
	return policyFlags{
		preset:           f.String("preset", "", "retry preset: STANDARD, AGGRESSIVE, RELAXED or CUSTOM"),
		maxAttempts:      f.String("max-attempts", "", "CUSTOM: attempts, 1–10"),
		initialDelay:     f.String("initial-delay-ms", "", "CUSTOM: first delay in ms, 1000–1800000"),
		multiplier:       f.String("multiplier", "", "CUSTOM: growth factor, 1–4"),
		maxDelay:         f.String("max-delay-ms", "", "CUSTOM: delay cap in ms, initial delay–86400000"),
		jitter:           f.String("jitter-percent", "", "CUSTOM: jitter, 0–50"),
		timeout:          f.String("timeout-ms", "", "lease (default timeout) in ms, 1000–43200000"),
		maxConcurrent:    f.String("max-concurrent", "", "most running jobs, 1–100000"),
		rateLimit:        f.String("rate-limit", "", "claims per minute, 1–1000000, or none"),
		circuitThreshold: f.String("circuit-threshold", "", "provider-unhealthy failures that open the circuit, 1–1000"),
		circuitOpen:      f.String("circuit-open-ms", "", "how long the circuit stays open in ms, 1000–86400000"),
	}
}

// apply overlays the flags that were given on p. Ranges are checked here
// too (the SDK leaves zero values out, so the server could not name them);
// the server checks them again, with the relations between fields.
func (pf policyFlags) apply(f *flagSet, p *client.EndpointPolicy) {
	if f.isSet("preset") {
		p.Preset = strings.ToUpper(*pf.preset)
	}
	intFlag := func(name string, text *string, lo, hi int64, dst *int64) {
		if f.isSet(name) {
			*dst = f.integer(name, *text, lo, hi, fmt.Sprintf("must be an integer from %d through %d", lo, hi))
		}
	}
	if f.isSet("max-attempts") {
		p.MaxAttempts = int(f.integer("max-attempts", *pf.maxAttempts, 1, 10, "must be an integer from 1 through 10"))
	}
	intFlag("initial-delay-ms", pf.initialDelay, 1000, 1_800_000, &p.InitialDelayMs)
	if f.isSet("multiplier") {
		if p.Multiplier = f.number("multiplier", *pf.multiplier, "must be a number from 1 through 4"); p.Multiplier < 1 || p.Multiplier > 4 {
			f.fail("multiplier", *pf.multiplier, "must be a number from 1 through 4")
		}
	}
	intFlag("max-delay-ms", pf.maxDelay, 1000, 86_400_000, &p.MaxDelayMs)
	if f.isSet("jitter-percent") {
		if p.JitterPercent = f.number("jitter-percent", *pf.jitter, "must be a number from 0 through 50"); p.JitterPercent < 0 || p.JitterPercent > 50 {
			f.fail("jitter-percent", *pf.jitter, "must be a number from 0 through 50")
		}
	}
	intFlag("timeout-ms", pf.timeout, 1000, 43_200_000, &p.DefaultTimeoutMs)
	intFlag("max-concurrent", pf.maxConcurrent, 1, 100_000, &p.MaxConcurrent)
	if f.isSet("rate-limit") {
		if strings.EqualFold(*pf.rateLimit, "none") {
			p.RateLimitPerMinute = nil
		} else {
			v := f.integer("rate-limit", *pf.rateLimit, 1, 1_000_000, "must be an integer from 1 through 1000000, or none")
			p.RateLimitPerMinute = &v
		}
	}
	intFlag("circuit-threshold", pf.circuitThreshold, 1, 1000, &p.CircuitFailureThreshold)
	intFlag("circuit-open-ms", pf.circuitOpen, 1000, 86_400_000, &p.CircuitOpenMs)
}

func runEndpoints(ctx context.Context, env *Env, args []string) error {
	sub, args, err := subcommand("endpoints", args, endpointsUsage, "list", "get", "create", "set-policy")
	if err != nil {
		return err
	}
	var name string
	if sub != "list" {
		if name, args, err = positional("endpoints "+sub, "an endpoint NAME", args); err != nil {
			return err
		}
	}
	f := newFlagSet("endpoints "+sub, "endpoints "+sub+"\n"+endpointsUsage, env.Stderr)
	rf := addRemoteFlags(f, env)
	var pf policyFlags
	var expected *string
	if sub == "create" || sub == "set-policy" {
		pf = addPolicyFlags(f)
	}
	if sub == "set-policy" {
		expected = f.String("expected-version", "", "the version you read (endpoints get); a stale one is refused with 409")
	}
	if err := f.parse(args); err != nil {
		return err
	}
	var expectedVersion int64
	if sub == "set-policy" {
		if !f.isSet("expected-version") {
			f.fail("expected-version", "", "required: the version you read with 'ratchet endpoints get'")
		} else {
			expectedVersion = f.integer("expected-version", *expected, 1, math.MaxInt64, "must be the integer version you read")
		}
	}
	var pol client.EndpointPolicy
	if sub == "create" || sub == "set-policy" {
		pf.apply(f, &pol) // for set-policy: to check the flags before any request
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		eps, err := r.c.ListEndpoints(ctx)
		if err != nil {
			return apiErr(err, *rf.server)
		}
		return r.show(func(w io.Writer) {
			fmt.Fprintln(w, "NAME\tVERSION\tPOLICY\tTIMEOUT\tMAX CONCURRENT\tRATE/MIN\tCIRCUIT")
			for _, e := range eps {
				fmt.Fprintf(w, "%s\t%d\t%s\t%dms\t%d\t%s\t%s\n", e.Name, e.Version, policySummary(e.Policy), e.DefaultTimeoutMs, e.MaxConcurrent, intOrDash(e.RateLimitPerMinute), e.Circuit.State)
			}
		})
	case "get":
		e, err := r.c.GetEndpoint(ctx, name)
		if err != nil {
			return apiErr(err, *rf.server)
		}
		return r.show(func(w io.Writer) { printEndpoint(w, e) })
	case "create":
		e, err := r.c.CreateEndpoint(ctx, name, pol)
		if err != nil {
			return apiErr(err, *rf.server)
		}
		return r.show(func(w io.Writer) { printEndpoint(w, e) })
	default: // set-policy: an update carries the whole policy, so start from the current one
		cur, err := r.c.GetEndpoint(ctx, name)
		if err != nil {
			return apiErr(err, *rf.server)
		}
		if err := json.Unmarshal(cur.Policy, &pol.Policy); err != nil {
			return fmt.Errorf("read the policy of endpoint %q: %w", name, err)
		}
		pol.DefaultTimeoutMs, pol.MaxConcurrent, pol.RateLimitPerMinute = cur.DefaultTimeoutMs, cur.MaxConcurrent, cur.RateLimitPerMinute
		pol.CircuitFailureThreshold, pol.CircuitOpenMs = cur.CircuitFailureThreshold, cur.CircuitOpenMs
		pf.apply(f, &pol)
		e, err := r.c.UpdateEndpointPolicy(ctx, name, expectedVersion, pol)
		if err != nil {
			return apiErr(err, *rf.server)
		}
		return r.show(func(w io.Writer) { printEndpoint(w, e) })
	}
}

func policySummary(raw json.RawMessage) string {
	var p client.Policy
	if json.Unmarshal(raw, &p) != nil || p.Preset == "" {
		return "-"
	}
	if p.Preset != "CUSTOM" {
		return p.Preset
	}
	return fmt.Sprintf("CUSTOM %d× from %dms ×%g to %dms ±%g%%", p.MaxAttempts, p.InitialDelayMs, p.Multiplier, p.MaxDelayMs, p.JitterPercent)
}

func printEndpoint(w io.Writer, e *client.Endpoint) {
	fmt.Fprintf(w, "name:\t%s\n", e.Name)
	fmt.Fprintf(w, "version:\t%d\n", e.Version)
	fmt.Fprintf(w, "policy:\t%s\n", policySummary(e.Policy))
	fmt.Fprintf(w, "timeout:\t%dms\n", e.DefaultTimeoutMs)
	fmt.Fprintf(w, "max concurrent:\t%d\n", e.MaxConcurrent)
	fmt.Fprintf(w, "rate limit:\t%s per minute\n", intOrDash(e.RateLimitPerMinute))
	fmt.Fprintf(w, "circuit:\t%s (%d failures; opens at %d, stays open %dms)\n", e.Circuit.State, e.Circuit.Failures, e.CircuitFailureThreshold, e.CircuitOpenMs)
	fmt.Fprintf(w, "updated:\t%s\n", orDash(e.UpdatedAt))
}

const toolsUsage = `  ratchet tools list
  ratchet tools get NAME@VERSION
  ratchet tools publish --file FILE   (a tool contract document; - reads standard input)
common flags: --server URL (RATCHET_SERVER) --key KEY (RATCHET_KEY) --json`

func runTools(ctx context.Context, env *Env, args []string) error {
	sub, args, err := subcommand("tools", args, toolsUsage, "list", "get", "publish")
	if err != nil {
		return err
	}
	var ref string
	if sub == "get" {
		if ref, args, err = positional("tools get", "NAME@VERSION", args); err != nil {
			return err
		}
	}
	f := newFlagSet("tools "+sub, "tools "+sub+"\n"+toolsUsage, env.Stderr)
	rf := addRemoteFlags(f, env)
	file := f.String("file", "", "publish: the contract document (JSON); - for standard input")
	if err := f.parse(args); err != nil {
		return err
	}
	name, version, ok := strings.Cut(ref, "@")
	if sub == "get" && (!ok || name == "" || version == "") {
		f.fail("tool", ref, `must be "name@version", e.g. "charge-card@1"`)
	}
	var spec client.ToolSpec
	if sub == "publish" {
		if *file == "" {
			f.fail("file", "", "required: the tool contract document to publish (JSON), or - for standard input")
		} else if err := readToolSpec(env, *file, &spec); err != nil {
			return err
		}
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		ts, err := r.c.ListTools(ctx)
		if err != nil {
			return apiErr(err, *rf.server)
		}
		return r.show(func(w io.Writer) {
			fmt.Fprintln(w, "TOOL\tENDPOINT\tRETRY\tTIMEOUT\tDESCRIPTION")
			for _, t := range ts {
				fmt.Fprintf(w, "%s@%s\t%s\t%s\t%s\t%s\n", t.Name, t.Version, t.Endpoint, toolRetry(&t), toolTimeout(&t), oneLine(t.Description, 60))
			}
		})
	case "get":
		t, err := r.c.GetTool(ctx, name, version)
		if err != nil {
			return apiErr(err, *rf.server)
		}
		return r.show(func(w io.Writer) { printTool(w, t) })
	default:
		t, err := r.c.PublishTool(ctx, spec)
		if err != nil {
			return apiErr(err, *rf.server)
		}
		return r.show(func(w io.Writer) { printTool(w, t) })
	}
}

func readToolSpec(env *Env, file string, spec *client.ToolSpec) error {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(env.Stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return &UsageError{Err: fmt.Errorf("--file: %w", err)}
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(spec); err != nil {
		return usagef("--file %s: not a tool contract document: %v (fields are name, version, endpoint, description, payloadSchema, timeoutMs, retryPreset, retryPolicy)", file, err)
	}
	return nil
}

func toolRetry(t *client.Tool) string {
	if t.RetryPreset == nil || *t.RetryPreset == "" {
		return "endpoint's"
	}
	if *t.RetryPreset == "CUSTOM" {
		return "CUSTOM"
	}
	return *t.RetryPreset
}

func toolTimeout(t *client.Tool) string {
	if t.TimeoutMs == nil {
		return "endpoint's"
	}
	return strconv.FormatInt(*t.TimeoutMs, 10) + "ms"
}

func printTool(w io.Writer, t *client.Tool) {
	fmt.Fprintf(w, "tool:\t%s@%s\n", t.Name, t.Version)
	fmt.Fprintf(w, "endpoint:\t%s\n", t.Endpoint)
	fmt.Fprintf(w, "description:\t%s\n", orDash(t.Description))
	retry := toolRetry(t)
	if retry == "CUSTOM" {
		retry = policySummary(t.RetryPolicy)
	}
	fmt.Fprintf(w, "retry:\t%s\n", retry)
	fmt.Fprintf(w, "timeout:\t%s\n", toolTimeout(t))
	schema := "any JSON"
	if len(t.PayloadSchema) > 0 && string(t.PayloadSchema) != "null" {
		schema = oneLine(string(t.PayloadSchema), 100)
	}
	fmt.Fprintf(w, "payload schema:\t%s\n", schema)
	fmt.Fprintf(w, "published:\t%s\n", orDash(t.CreatedAt))
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
