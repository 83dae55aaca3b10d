package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/client"
)

func toolsGroup() *group {
	return &group{name: "tools", dispatch: runClientGroup, footer: commonFlagsHelp, subs: []subcommand{
		{"list", "list published tool contracts", "", toolsListCommand{}},
		{"get", "print one tool contract", "NAME@VERSION", toolsGetCommand{}},
		{"publish", "publish a tool contract document", "--file FILE   (a tool contract document; - reads standard input)", toolsPublishCommand{}},
	}}
}

// toolFileFlag registers --file. Only publish reads it; list and get accept
// it as well because the tools commands always have.
func toolFileFlag(f *flagSet) *string {
	return f.String("file", "", "publish: the contract document (JSON); - for standard input")
}

// toolsListCommand is `ratchet tools list`.
type toolsListCommand struct{}

// Run lists the contracts with each description cut to one short line.
func (toolsListCommand) Run(ctx context.Context, env *Env, args []string) error {
	r, err := connectClient(toolsGroup(), "list", env, args, func(f *flagSet) { toolFileFlag(f) })
	if err != nil {
		return err
	}
	ts, err := r.c.ListTools(ctx)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "TOOL\tENDPOINT\tRETRY\tTIMEOUT\tDESCRIPTION")
		for _, t := range ts {
			fmt.Fprintf(w, "%s@%s\t%s\t%s\t%s\t%s\n", t.Name, t.Version, t.Endpoint, toolRetry(&t), toolTimeout(&t), oneLine(t.Description, 60))
		}
	})
}

// toolsGetCommand is `ratchet tools get`.
type toolsGetCommand struct{}

// Run prints one contract, named NAME@VERSION as jobs enqueue names it.
func (toolsGetCommand) Run(ctx context.Context, env *Env, args []string) error {
	ref, args, err := positional("tools get", "NAME@VERSION", args)
	if err != nil {
		return err
	}
	f, rf := clientFlags(toolsGroup(), "get", env)
	toolFileFlag(f)
	if err := f.parse(args); err != nil {
		return err
	}
	name, version, ok := strings.Cut(ref, "@")
	if !ok || name == "" || version == "" {
		f.fail("tool", ref, `must be "name@version", e.g. "charge-card@1"`)
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	t, err := r.c.GetTool(ctx, name, version)
	return showTool(r, t, err)
}

// toolsPublishCommand is `ratchet tools publish`.
type toolsPublishCommand struct{}

// Run refuses unknown fields in the document before sending it, so a
// misspelt field is reported rather than dropped.
func (toolsPublishCommand) Run(ctx context.Context, env *Env, args []string) error {
	f, rf := clientFlags(toolsGroup(), "publish", env)
	file := toolFileFlag(f)
	if err := f.parse(args); err != nil {
		return err
	}
	var spec client.ToolSpec
	if *file == "" {
		f.fail("file", "", "required: the tool contract document to publish (JSON), or - for standard input")
	} else if err := readToolSpec(env, *file, &spec); err != nil {
		return err
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	t, err := r.c.PublishTool(ctx, spec)
	return showTool(r, t, err)
}

// showTool prints what get and publish both answer: the contract.
func showTool(r *remote, t *client.Tool, err error) error {
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) { printTool(w, t) })
}

func readToolSpec(env *Env, file string, spec *client.ToolSpec) error {
	data, err := readFileOrStdin(env, file)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("--file: %w", err)}
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(spec); err != nil {
		return usagef("--file %s: not a tool contract document: %v (fields are name, version, endpoint, description, payloadSchema, timeoutMs, retryPreset, retryPolicy, delivery, flowKeyFrom)", file, err)
	}
	return nil
}

func toolRetry(t *client.Tool) string {
	if t.RetryPreset == nil || *t.RetryPreset == "" {
		return "endpoint's"
	}
	return string(*t.RetryPreset)
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
	if retry == "CUSTOM" && t.RetryPolicy != nil {
		retry = policySummary(*t.RetryPolicy)
	}
	fmt.Fprintf(w, "retry:\t%s\n", retry)
	fmt.Fprintf(w, "timeout:\t%s\n", toolTimeout(t))
	schema := "any JSON"
	if len(t.PayloadSchema) > 0 && string(t.PayloadSchema) != "null" {
		schema = oneLine(string(t.PayloadSchema), 100)
	}
	fmt.Fprintf(w, "payload schema:\t%s\n", schema)
	if t.FlowKeyFrom != "" {
		fmt.Fprintf(w, "flow key from:\t%s\n", t.FlowKeyFrom)
	}
	if d := t.Delivery; d != nil {
		fmt.Fprintf(w, "delivery:\t%s %s\n", d.Method, d.URL)
		for _, k := range slices.Sorted(maps.Keys(d.Headers)) {
			fmt.Fprintf(w, "header:\t%s: %s\n", k, d.Headers[k])
		}
		signed := "no"
		if d.Signed {
			signed = "yes (Standard Webhooks)"
		}
		fmt.Fprintf(w, "signed:\t%s\n", signed)
		if d.Secret != "" {
			fmt.Fprintf(w, "signing secret:\t%s (shown once; keep it)\n", d.Secret)
		}
	}
	fmt.Fprintf(w, "published:\t%s\n", orDash(t.CreatedAt))
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
