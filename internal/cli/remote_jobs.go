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
	"time"

	"github.com/getratchet/ratchet/client"
)

const jobsUsage = `  ratchet jobs list [--state S[,S]] [--tool NAME[@VERSION]] [--endpoint NAME] [--run-id N] [--limit N] [--cursor C]
  ratchet jobs get ID
  ratchet jobs enqueue --tool NAME@VERSION [--payload JSON | --payload-file FILE] [--idempotency-key K]
                       [--max-attempts N] [--run-id N] [--run-at RFC3339]
  ratchet jobs cancel ID
  ratchet jobs replay ID
  ratchet jobs explain ID
common flags: --server URL (RATCHET_SERVER) --key KEY (RATCHET_KEY) --json`

func runJobs(ctx context.Context, env *Env, args []string) error {
	sub, args, err := subcommand("jobs", args, jobsUsage, "list", "get", "enqueue", "cancel", "replay", "explain")
	if err != nil {
		return err
	}
	var id int64
	if sub != "list" && sub != "enqueue" {
		if id, args, err = positionalID("jobs "+sub, args); err != nil {
			return err
		}
	}
	f := newFlagSet("jobs "+sub, "jobs "+sub+"\n"+jobsUsage, env.Stderr)
	rf := addRemoteFlags(f, env)
	var filter client.JobFilter
	var req client.EnqueueRequest
	var (
		state, tool, endpoint, runID, limit, cursor *string
		payload, payloadFile, idemKey, maxAttempts  *string
		runAt                                       *string
	)
	switch sub {
	case "list":
		state = f.String("state", "", "comma-separated states: scheduled, running, succeeded, failed, exhausted, cancelled")
		tool = f.String("tool", "", `"name" or "name@version"`)
		endpoint = f.String("endpoint", "", "endpoint name")
		runID = f.String("run-id", "", "run id")
		limit = f.String("limit", "", "jobs per page, 1–500 (server default 100)")
		cursor = f.String("cursor", "", "the next cursor a previous page printed")
	case "enqueue":
		tool = f.String("tool", "", `the published tool: "name@version"`)
		payload = f.String("payload", "", "the payload as JSON (default {})")
		payloadFile = f.String("payload-file", "", "read the payload from a file; - for standard input")
		idemKey = f.String("idempotency-key", "", "a key: enqueueing it again returns the existing job")
		maxAttempts = f.String("max-attempts", "", "override the policy's attempt count, 1–10")
		runID = f.String("run-id", "", "add the job to this open run")
		runAt = f.String("run-at", "", "first due time, RFC 3339 (e.g. 2026-12-02T09:00:00Z); default now")
	}
	if err := f.parse(args); err != nil {
		return err
	}
	switch sub {
	case "list":
		if *state != "" {
			filter.States = strings.Split(*state, ",")
		}
		filter.Tool, filter.Endpoint, filter.Cursor = *tool, *endpoint, *cursor
		if *runID != "" {
			filter.RunID = f.integer("run-id", *runID, 1, math.MaxInt64, "must be a positive integer")
		}
		if *limit != "" {
			filter.Limit = int(f.integer("limit", *limit, 1, 500, "must be an integer from 1 through 500"))
		}
	case "enqueue":
		req.Tool, req.IdempotencyKey = *tool, *idemKey
		if *tool == "" {
			f.fail("tool", "", `required: "name@version" of a published tool`)
		}
		switch {
		case f.isSet("payload") && f.isSet("payload-file"):
			f.fail("payload-file", *payloadFile, "give --payload or --payload-file, not both")
		case f.isSet("payload"):
			req.Payload = json.RawMessage(*payload)
		case f.isSet("payload-file"):
			var data []byte
			var err error
			if *payloadFile == "-" {
				data, err = io.ReadAll(env.Stdin)
			} else {
				data, err = os.ReadFile(*payloadFile)
			}
			if err != nil {
				return &UsageError{Err: fmt.Errorf("--payload-file: %w", err)}
			}
			req.Payload = json.RawMessage(data)
		}
		if req.Payload != nil && !json.Valid(req.Payload) {
			f.fail("payload", oneLine(string(req.Payload), 60), "must be JSON, e.g. '{\"orderId\": 42}'")
		}
		if *maxAttempts != "" {
			n := f.integer("max-attempts", *maxAttempts, 1, 10, "must be an integer from 1 through 10")
			req.MaxAttempts = &n
		}
		if *runID != "" {
			req.RunID = f.integer("run-id", *runID, 1, math.MaxInt64, "must be a positive integer")
		}
		if *runAt != "" {
			t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(*runAt))
			if err != nil {
				f.fail("run-at", *runAt, "must be an RFC 3339 time, e.g. 2026-12-02T09:00:00Z")
			} else {
				req.RunAt = &t
			}
		}
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	fail := func(err error) error { return apiErr(err, *rf.server) }
	switch sub {
	case "list":
		page, err := r.c.ListJobs(ctx, filter)
		if err != nil {
			return fail(err)
		}
		return r.show(func(w io.Writer) {
			fmt.Fprintln(w, "ID\tSTATE\tTOOL\tATTEMPT/MAX\tDUE\tHELD BY")
			for _, j := range page.Jobs {
				fmt.Fprintf(w, "%d\t%s\t%s@%s\t%d/%d\t%s\t%s\n", j.ID, j.State, j.Tool, j.Version, j.Attempt, j.MaxAttempts, due(&j), heldBy(j.HeldBy))
			}
			if page.NextCursor != "" {
				fmt.Fprintf(w, "\nmore: --cursor %s\n", page.NextCursor)
			}
		})
	case "get":
		j, err := r.c.GetJob(ctx, id)
		if err != nil {
			return fail(err)
		}
		return r.show(func(w io.Writer) { printJob(w, j) })
	case "enqueue":
		j, created, err := r.c.Enqueue(ctx, req)
		if err != nil {
			return fail(err)
		}
		return r.show(func(w io.Writer) {
			if created {
				fmt.Fprintf(w, "enqueued job %d (%s@%s, %s, due %s, up to %d attempts)\n", j.ID, j.Tool, j.Version, j.State, j.DueAt, j.MaxAttempts)
			} else {
				fmt.Fprintf(w, "job %d already has idempotency key %q; nothing new was enqueued (it is %s)\n", j.ID, req.IdempotencyKey, j.State)
			}
		})
	case "cancel":
		j, err := r.c.CancelJob(ctx, id)
		if err != nil {
			return fail(err)
		}
		return r.show(func(w io.Writer) {
			if j.State == "cancelled" {
				fmt.Fprintf(w, "job %d is cancelled\n", j.ID)
			} else {
				fmt.Fprintf(w, "job %d is %s; cancellation requested: the worker learns it at its next heartbeat or report\n", j.ID, j.State)
			}
		})
	case "replay":
		j, err := r.c.ReplayJob(ctx, id)
		if err != nil {
			return fail(err)
		}
		return r.show(func(w io.Writer) {
			fmt.Fprintf(w, "replayed job %d as job %d (%s, due %s)\n", id, j.ID, j.State, j.DueAt)
		})
	default: // explain
		h, err := r.c.ExplainJob(ctx, id)
		if err != nil {
			return fail(err)
		}
		return r.show(func(w io.Writer) {
			fmt.Fprintf(w, "job:\t%d\n", id)
			fmt.Fprintf(w, "held by:\t%s\n", h.Gate)
			fmt.Fprintf(w, "until:\t%s\n", orDash(h.Until))
			fmt.Fprintf(w, "why:\t%s\n", orDash(h.Detail))
		})
	}
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
		return h.Gate + " until " + h.Until
	}
	return h.Gate
}

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
	fmt.Fprintf(w, "policy:\t%s\n", policySummary(j.Policy))
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
	fmt.Fprintf(w, "\n#\tWORKER\tOUTCOME\tCLASSIFICATION\tHTTP\tDELAY\tNEXT DUE\n")
	for _, a := range j.Attempts {
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
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Number, orDash(a.WorkerID), orDash(a.Outcome), orDash(a.Classification), intOrDash(a.HTTPStatus), delay, next)
	}
}

const runsUsage = `  ratchet runs start [--name NAME]
  ratchet runs get ID
  ratchet runs finish ID
common flags: --server URL (RATCHET_SERVER) --key KEY (RATCHET_KEY) --json`

func runRuns(ctx context.Context, env *Env, args []string) error {
	sub, args, err := subcommand("runs", args, runsUsage, "start", "get", "finish")
	if err != nil {
		return err
	}
	var id int64
	if sub != "start" {
		if id, args, err = positionalID("runs "+sub, args); err != nil {
			return err
		}
	}
	f := newFlagSet("runs "+sub, "runs "+sub+"\n"+runsUsage, env.Stderr)
	rf := addRemoteFlags(f, env)
	name := f.String("name", "", "start: a name for the run")
	if err := f.parse(args); err != nil {
		return err
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	var run *client.Run
	switch sub {
	case "start":
		run, err = r.c.StartRun(ctx, *name)
	case "get":
		run, err = r.c.GetRun(ctx, id)
	default:
		run, err = r.c.FinishRun(ctx, id)
	}
	if err != nil {
		return apiErr(err, *rf.server)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintf(w, "run:\t%d\n", run.ID)
		fmt.Fprintf(w, "name:\t%s\n", orDash(run.Name))
		fmt.Fprintf(w, "state:\t%s\n", run.State)
		fmt.Fprintf(w, "created:\t%s\n", run.CreatedAt)
		if run.FinishedAt != "" {
			fmt.Fprintf(w, "finished:\t%s\n", run.FinishedAt)
		}
		if len(run.Counts) > 0 {
			var parts []string
			for _, s := range []string{"scheduled", "running", "succeeded", "failed", "exhausted", "cancelled"} {
				if n := run.Counts[s]; n > 0 {
					parts = append(parts, fmt.Sprintf("%d %s", n, s))
				}
			}
			fmt.Fprintf(w, "steps:\t%s\n", orDash(strings.Join(parts, ", ")))
		}
		if len(run.Steps) > 0 {
			fmt.Fprintf(w, "\nID\tSTATE\tTOOL\tATTEMPT/MAX\tDUE\tHELD BY\n")
			for _, j := range run.Steps {
				fmt.Fprintf(w, "%d\t%s\t%s@%s\t%d/%d\t%s\t%s\n", j.ID, j.State, j.Tool, j.Version, j.Attempt, j.MaxAttempts, due(&j), heldBy(j.HeldBy))
			}
		}
	})
}

const keysUsage = `  ratchet keys list
  ratchet keys create --scope owner|producer|worker [--name NAME] [--tool NAME@VERSION ...]
  ratchet keys revoke ID
common flags: --server URL (RATCHET_SERVER) --key KEY (RATCHET_KEY) --json`

func runKeys(ctx context.Context, env *Env, args []string) error {
	sub, args, err := subcommand("keys", args, keysUsage, "list", "create", "revoke")
	if err != nil {
		return err
	}
	var id int64
	if sub == "revoke" {
		if id, args, err = positionalID("keys revoke", args); err != nil {
			return err
		}
	}
	f := newFlagSet("keys "+sub, "keys "+sub+"\n"+keysUsage, env.Stderr)
	rf := addRemoteFlags(f, env)
	scope := f.String("scope", "", "create: owner, producer or worker")
	name := f.String("name", "", "create: a name to recognise the key by")
	var tools stringList
	f.fs.Var(&tools, "tool", "create: a tool@version a worker key may run (repeat the flag for more)")
	if err := f.parse(args); err != nil {
		return err
	}
	if sub == "create" && *scope != "owner" && *scope != "producer" && *scope != "worker" {
		f.fail("scope", *scope, "required: owner, producer or worker")
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		ks, err := r.c.ListKeys(ctx)
		if err != nil {
			return apiErr(err, *rf.server)
		}
		return r.show(func(w io.Writer) {
			fmt.Fprintln(w, "ID\tNAME\tSCOPE\tPREFIX\tTOOLS\tCREATED\tREVOKED")
			for _, k := range ks {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s…\t%s\t%s\t%s\n", k.ID, orDash(k.Name), k.Scope, k.Prefix, orDash(strings.Join(k.Tools, ",")), k.CreatedAt, orDash(k.RevokedAt))
			}
		})
	case "create":
		k, err := r.c.CreateKey(ctx, *name, *scope, tools)
		if err != nil {
			return apiErr(err, *rf.server)
		}
		return r.show(func(w io.Writer) {
			fmt.Fprintf(w, "created %s key %d", k.Scope, k.ID)
			if len(k.Tools) > 0 {
				fmt.Fprintf(w, " for %s", strings.Join(k.Tools, ", "))
			}
			fmt.Fprintf(w, ". It is shown once; keep it:\n\n    %s\n", k.Secret)
		})
	default:
		if err := r.c.RevokeKey(ctx, id); err != nil {
			return apiErr(err, *rf.server)
		}
		if r.asJSON {
			return nil // the API answers 204 with no body
		}
		_, err := fmt.Fprintf(r.out, "revoked key %d\n", id)
		return err
	}
}
