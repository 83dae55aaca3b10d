package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/wire"
)

func jobsGroup() *group {
	return &group{name: "jobs", dispatch: runClientGroup, footer: commonFlagsHelp, subs: []subcommand{
		{"list", "list jobs a page at a time, filtered by state, tool, endpoint, run or flow key",
			"[--state S[,S]] [--tool NAME[@VERSION]] [--endpoint NAME] [--run-id N] [--flow-key K]\n" +
				"                       [--q TEXT] [--sort ORDER] [--limit N] [--cursor C]", &jobsListCommand{}},
		{"get", "print a job with its policy and every attempt", "ID", jobsGetCommand{}},
		{"enqueue", "enqueue a job for a published tool",
			"--tool NAME@VERSION [--payload JSON | --payload-file FILE] [--idempotency-key K]\n" +
				"                       [--max-attempts N] [--run-id N] [--run-at RFC3339] [--flow-key K]", &jobsEnqueueCommand{}},
		{"cancel", "cancel a job, or ask its worker to stop", "ID", jobsCancelCommand{}},
		{"replay", "enqueue a finished job again as a new job", "ID", jobsReplayCommand{}},
		{"run-now", "make a scheduled job due now (gates still apply); owner key", "ID", jobsRunNowCommand{}},
		{"explain", "say what holds a job back from being claimed", "ID", jobsExplainCommand{}},
		{"counts", "count jobs in each state, of the project, one endpoint or one tool", "[--endpoint NAME] [--tool NAME[@VERSION]]", &jobsCountsCommand{}},
	}}
}

// parseRunID reads --run-id, which list and enqueue both take.
func parseRunID(f *flagSet, text string) int64 {
	return f.integer("run-id", text, 1, math.MaxInt64, "must be a positive integer")
}

// jobsListCommand is `ratchet jobs list`.
type jobsListCommand struct {
	state, tool, endpoint, runID, flowKey, limit, cursor, q, sort *string
}

// Run prints one page, and the cursor of the next when there is one.
func (c *jobsListCommand) Run(ctx context.Context, env *Env, args []string) error {
	f, rf := clientFlags(jobsGroup(), "list", env)
	c.state = f.String("state", "", "comma-separated states: "+wire.Join(wire.JobStates(), ", "))
	c.tool = f.String("tool", "", `"name" or "name@version"`)
	c.endpoint = f.String("endpoint", "", "endpoint name")
	c.runID = f.String("run-id", "", "run id")
	c.flowKey = f.String("flow-key", "", "only jobs of this flow key (exact match)")
	c.limit = f.String("limit", "", "jobs per page, 1–500 (server default 100)")
	c.cursor = f.String("cursor", "", "the next cursor a previous page printed (with the same --sort)")
	c.sort = f.String("sort", "", "the order: "+wire.Join(wire.JobSorts(), ", ")+" (server default: newest first); the finished orders need --state of "+wire.JoinOr(wire.JobStatesWhere(wire.JobState.Unsuccessful))+" or both")
	c.q = f.String("q", "", "search: a job id, an exact idempotency key, tool or endpoint name, or text in the payload or the last error")
	if err := f.parse(args); err != nil {
		return err
	}
	filter := c.filter(f)
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	page, err := r.c.ListJobs(ctx, filter)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		printJobRows(w, page.Jobs)
		if page.NextCursor != nil && *c.sort != "" {
			fmt.Fprintf(w, "\nmore: --sort %s --cursor %s\n", *c.sort, *page.NextCursor)
		} else if page.NextCursor != nil {
			fmt.Fprintf(w, "\nmore: --cursor %s\n", *page.NextCursor)
		}
	})
}

// filter leaves out what was not given, so the server applies its defaults.
func (c *jobsListCommand) filter(f *flagSet) client.JobFilter {
	var filter client.JobFilter
	if *c.state != "" {
		for _, s := range strings.Split(*c.state, ",") {
			filter.States = append(filter.States, wire.JobState(s))
		}
	}
	filter.Tool, filter.Endpoint, filter.Cursor, filter.Q, filter.FlowKey = *c.tool, *c.endpoint, *c.cursor, *c.q, *c.flowKey
	filter.Sort = wire.JobSort(*c.sort) // checked by the server, whose 400 names the orders
	if *c.runID != "" {
		filter.RunID = parseRunID(f, *c.runID)
	}
	if *c.limit != "" {
		filter.Limit = int(f.integer("limit", *c.limit, 1, 500, "must be an integer from 1 through 500"))
	}
	return filter
}

// jobsGetCommand is `ratchet jobs get`.
type jobsGetCommand struct{}

// Run prints a job with every attempt and the delay each one chose.
func (jobsGetCommand) Run(ctx context.Context, env *Env, args []string) error {
	id, r, err := connectID(jobsGroup(), "get", env, args, nil)
	if err != nil {
		return err
	}
	j, err := r.c.GetJob(ctx, id)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) { printJob(w, j) })
}

// jobsEnqueueCommand is `ratchet jobs enqueue`.
type jobsEnqueueCommand struct {
	tool, payload, payloadFile, idemKey, maxAttempts, runID, runAt, flowKey *string
}

// Run reports an idempotent repeat as such, so a script that retries does
// not look as if it enqueued twice.
func (c *jobsEnqueueCommand) Run(ctx context.Context, env *Env, args []string) error {
	f, rf := clientFlags(jobsGroup(), "enqueue", env)
	c.tool = f.String("tool", "", `the published tool: "name@version"`)
	c.payload = f.String("payload", "", "the payload as JSON (default {})")
	c.payloadFile = f.String("payload-file", "", "read the payload from a file; - for standard input")
	c.idemKey = f.String("idempotency-key", "", "a key: enqueueing it again returns the existing job")
	c.maxAttempts = f.String("max-attempts", "", "override the policy's attempt count, 1–10")
	c.runID = f.String("run-id", "", "add the job to this open run")
	c.runAt = f.String("run-at", "", "first due time, RFC 3339 (e.g. 2026-12-02T09:00:00Z); default now")
	c.flowKey = f.String("flow-key", "", "the tenant, account or resource the job is made for (wins over the tool's flowKeyFrom)")
	if err := f.parse(args); err != nil {
		return err
	}
	req, err := c.request(f, env)
	if err != nil {
		return err
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	j, created, err := r.c.Enqueue(ctx, req)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		if created {
			fmt.Fprintf(w, "enqueued job %d (%s@%s, %s, due %s, up to %d attempts)\n", j.ID, j.Tool, j.Version, j.State, j.DueAt, j.MaxAttempts)
		} else {
			fmt.Fprintf(w, "job %d already has idempotency key %q; nothing new was enqueued (it is %s)\n", j.ID, req.IdempotencyKey, j.State)
		}
	})
}

// request builds the enqueue request. Flag problems are collected in f, to
// be reported with --server and --key; only an unreadable payload file
// stops here.
func (c *jobsEnqueueCommand) request(f *flagSet, env *Env) (client.EnqueueRequest, error) {
	req := client.EnqueueRequest{Tool: *c.tool, IdempotencyKey: *c.idemKey, FlowKey: *c.flowKey}
	if *c.tool == "" {
		f.fail("tool", "", `required: "name@version" of a published tool`)
	}
	payload, err := c.payloadJSON(f, env)
	if err != nil {
		return req, err
	}
	req.Payload = payload
	if *c.maxAttempts != "" {
		n := f.integer("max-attempts", *c.maxAttempts, 1, 10, "must be an integer from 1 through 10")
		req.MaxAttempts = &n
	}
	if *c.runID != "" {
		req.RunID = parseRunID(f, *c.runID)
	}
	if *c.runAt != "" {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(*c.runAt))
		if err != nil {
			f.fail("run-at", *c.runAt, "must be an RFC 3339 time, e.g. 2026-12-02T09:00:00Z")
		} else {
			req.RunAt = t.UTC().Format(time.RFC3339Nano)
		}
	}
	return req, nil
}

// payloadJSON reads --payload or --payload-file; nil when neither is given,
// so the server's default applies.
func (c *jobsEnqueueCommand) payloadJSON(f *flagSet, env *Env) (json.RawMessage, error) {
	var payload json.RawMessage
	switch {
	case f.isSet("payload") && f.isSet("payload-file"):
		f.fail("payload-file", *c.payloadFile, "give --payload or --payload-file, not both")
	case f.isSet("payload"):
		payload = json.RawMessage(*c.payload)
	case f.isSet("payload-file"):
		data, err := readFileOrStdin(env, *c.payloadFile)
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("--payload-file: %w", err)}
		}
		payload = json.RawMessage(data)
	}
	if payload != nil && !json.Valid(payload) {
		f.fail("payload", oneLine(string(payload), 60), "must be JSON, e.g. '{\"orderId\": 42}'")
	}
	return payload, nil
}

// jobsCancelCommand is `ratchet jobs cancel`.
type jobsCancelCommand struct{}

// Run says whether the job stopped or was only asked to: a running job
// learns of it at its worker's next heartbeat or report.
func (jobsCancelCommand) Run(ctx context.Context, env *Env, args []string) error {
	id, r, err := connectID(jobsGroup(), "cancel", env, args, nil)
	if err != nil {
		return err
	}
	j, err := r.c.CancelJob(ctx, id)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		if j.State == "cancelled" {
			fmt.Fprintf(w, "job %d is cancelled\n", j.ID)
		} else {
			fmt.Fprintf(w, "job %d is %s; cancellation requested: the worker learns it at its next heartbeat or report\n", j.ID, j.State)
		}
	})
}

// jobsReplayCommand is `ratchet jobs replay`.
type jobsReplayCommand struct{}

// Run enqueues a finished job again as a new job; the original is kept.
func (jobsReplayCommand) Run(ctx context.Context, env *Env, args []string) error {
	id, r, err := connectID(jobsGroup(), "replay", env, args, nil)
	if err != nil {
		return err
	}
	j, err := r.c.ReplayJob(ctx, id)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintf(w, "replayed job %d as job %d (%s, due %s)\n", id, j.ID, j.State, j.DueAt)
	})
}

// jobsCountsCommand is `ratchet jobs counts`.
type jobsCountsCommand struct{}

// Run prints one line per state and the total. Without --tool the server
// reads counters, so this is cheap at any number of jobs.
func (jobsCountsCommand) Run(ctx context.Context, env *Env, args []string) error {
	f, rf := clientFlags(jobsGroup(), "counts", env)
	endpoint := f.String("endpoint", "", "only this endpoint's jobs")
	tool := f.String("tool", "", `only this tool's jobs: "name" or "name@version"`)
	if err := f.parse(args); err != nil {
		return err
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	c, err := r.c.JobCounts(ctx, *endpoint, *tool)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "STATE\tJOBS")
		for _, s := range wire.JobStates() {
			fmt.Fprintf(w, "%s\t%d\n", s, c.Counts.Get(s))
		}
		fmt.Fprintf(w, "total\t%d\n", c.Total)
	})
}

// jobsExplainCommand is `ratchet jobs explain`.
type jobsExplainCommand struct{}

// Run names what holds the job back and until when, for a job that seems stuck.
func (jobsExplainCommand) Run(ctx context.Context, env *Env, args []string) error {
	id, r, err := connectID(jobsGroup(), "explain", env, args, nil)
	if err != nil {
		return err
	}
	h, err := r.c.ExplainJob(ctx, id)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintf(w, "job:\t%d\n", id)
		fmt.Fprintf(w, "held by:\t%s\n", h.Gate)
		fmt.Fprintf(w, "until:\t%s\n", orDash(h.Until))
		fmt.Fprintf(w, "why:\t%s\n", orDash(h.Detail))
	})
}

// printJobRows is the job table of jobs list and runs get.
func printJobRows(w io.Writer, jobs []client.Job) {
	fmt.Fprintln(w, "ID\tSTATE\tTOOL\tATTEMPT/MAX\tDUE\tHELD BY\tLAST ERROR")
	for _, j := range jobs {
		fmt.Fprintf(w, "%d\t%s\t%s@%s\t%d/%d\t%s\t%s\t%s\n", j.ID, j.State, j.Tool, j.Version, j.Attempt, j.MaxAttempts, due(&j), heldBy(j.HeldBy),
			lastError(j))
	}
}

// lastError is the list's last-error column: one line, at most 60
// characters, "-" when none.
func lastError(j client.Job) string {
	s := strings.Join(strings.Fields(j.LastError), " ")
	if s == "" {
		return "-"
	}
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}

func due(j *client.Job) string {
	if j.State != "scheduled" {
		return "-"
	}
	return orDash(j.DueAt)
}

func heldBy(h *client.Hold) string {
	if h == nil || h.Gate == "" || h.Gate == "none" {
		return "-"
	}
	if h.Until != "" {
		return string(h.Gate) + " until " + h.Until
	}
	return string(h.Gate)
}

// printJob writes one job as label-tab-value lines, then its attempts.
func printJob(w io.Writer, j *client.Job) {
	fmt.Fprintf(w, "job:\t%d\n", j.ID)
	fmt.Fprintf(w, "state:\t%s\n", j.State)
	fmt.Fprintf(w, "tool:\t%s@%s (endpoint %s)\n", j.Tool, j.Version, j.Endpoint)
	fmt.Fprintf(w, "attempt:\t%d of %d\n", j.Attempt, j.MaxAttempts)
	fmt.Fprintf(w, "due:\t%s\n", due(j))
	fmt.Fprintf(w, "held by:\t%s\n", heldBy(j.HeldBy))
	if j.HeldBy != nil && j.HeldBy.Detail != "" && j.HeldBy.Gate != "none" {
		fmt.Fprintf(w, "why:\t%s\n", j.HeldBy.Detail)
	}
	key := "-"
	if j.IdempotencyKey != nil {
		key = *j.IdempotencyKey
	}
	fmt.Fprintf(w, "idempotency key:\t%s\n", key)
	fmt.Fprintf(w, "flow key:\t%s\n", orDash(j.FlowKey))
	fmt.Fprintf(w, "policy:\t%s\n", policySummary(backoff.Policy{Preset: j.Policy.Preset, Custom: j.Policy.Params}))
	if j.RunID != nil {
		fmt.Fprintf(w, "run:\t%d\n", *j.RunID)
	}
	if j.ReplayOf != nil {
		fmt.Fprintf(w, "replay of:\t%d\n", *j.ReplayOf)
	}
	if j.CancelRequested {
		fmt.Fprintf(w, "cancel requested:\tyes\n")
	}
	fmt.Fprintf(w, "created:\t%s\n", j.CreatedAt)
	if len(j.Attempts) == 0 {
		fmt.Fprintf(w, "attempts:\tnone yet\n")
		return
	}
	printAttempts(w, j.Attempts)
	printDeliveries(w, j.Attempts)
}

// printAttempts writes the table of a job's attempts: who ran each, how it
// ended, the provider's Retry-After hint (which the delay never
// undercuts), the delay chosen and when the job was due next.
func printAttempts(w io.Writer, as []client.Attempt) {
	fmt.Fprintf(w, "\n#\tWORKER\tOUTCOME\tCLASSIFICATION\tHTTP\tRETRY-AFTER\tDELAY\tNEXT DUE\n")
	for _, a := range as {
		delay := "-"
		if a.SelectedDelayMs != nil {
			delay = strconv.FormatInt(*a.SelectedDelayMs, 10) + "ms"
			if a.MinDelayMs != nil && a.MaxDelayMs != nil {
				delay += fmt.Sprintf(" (range %d–%dms)", *a.MinDelayMs, *a.MaxDelayMs)
			}
		}
		next := "-"
		if a.NextDueAt != nil {
			next = *a.NextDueAt
		}
		retryAfter := "-"
		if a.RetryAfterMs != nil {
			retryAfter = strconv.FormatInt(*a.RetryAfterMs, 10) + "ms"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Number, orDash(a.WorkerID), orDash(string(a.Outcome)), orDash(a.Classification), intOrDash(a.HTTPStatus), retryAfter, delay, next)
	}
}

// printDeliveries writes, below the table, what each HTTP delivery saw:
// its request time, the response's headers and body, and the message.
// Attempts a worker ran have none of these and are left out.
func printDeliveries(w io.Writer, as []client.Attempt) {
	for _, a := range as {
		if a.RequestMs == nil && len(a.ResponseHeaders) == 0 && a.ResponseExcerpt == "" {
			continue
		}
		var parts []string
		if a.RequestMs != nil {
			parts = append(parts, "request "+strconv.FormatInt(*a.RequestMs, 10)+"ms")
		}
		for _, k := range slices.Sorted(maps.Keys(a.ResponseHeaders)) {
			parts = append(parts, k+": "+a.ResponseHeaders[k])
		}
		if a.ResponseExcerpt != "" {
			parts = append(parts, "body: "+oneLine(a.ResponseExcerpt, 120))
		}
		if a.Message != "" {
			parts = append(parts, "message: "+oneLine(a.Message, 200))
		}
		fmt.Fprintf(w, "attempt %d:  %s\n", a.Number, strings.Join(parts, "; "))
	}
}
