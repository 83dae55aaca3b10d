package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/getratchet/ratchet/client"
)

// The operator controls: pause and resume an endpoint, close or open its
// circuit by hand, list the jobs its gates hold, run a job now, and read
// the audit log of these actions.

// endpointsPauseCommand is `ratchet endpoints pause`.
type endpointsPauseCommand struct{}

// Run pauses the endpoint: its due jobs wait (gate paused) until resume.
func (endpointsPauseCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("endpoints pause", "an endpoint NAME", args)
	if err != nil {
		return err
	}
	var reason *string
	r, err := connectClient(endpointsGroup(), "pause", env, args, func(f *flagSet) {
		reason = f.String("reason", "", "why, for the people who see the pause (at most 500 characters)")
	})
	if err != nil {
		return err
	}
	e, err := r.c.PauseEndpoint(ctx, name, *reason)
	return showEndpoint(r, e, err)
}

// endpointNameCommand is a subcommand that takes an endpoint NAME and calls
// one SDK method that answers the endpoint.
type endpointNameCommand struct {
	sub  string
	call func(c *client.Client, ctx context.Context, name string) (*client.Endpoint, error)
}

// Run calls the method and prints the endpoint as it now is.
func (c endpointNameCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("endpoints "+c.sub, "an endpoint NAME", args)
	if err != nil {
		return err
	}
	r, err := connectClient(endpointsGroup(), c.sub, env, args, nil)
	if err != nil {
		return err
	}
	e, err := c.call(r.c, ctx, name)
	return showEndpoint(r, e, err)
}

// endpointsHeldCommand is `ratchet endpoints held`.
type endpointsHeldCommand struct{}

// Run lists the due jobs the endpoint's gates hold now, with the hold.
func (endpointsHeldCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("endpoints held", "an endpoint NAME", args)
	if err != nil {
		return err
	}
	f, rf := clientFlags(endpointsGroup(), "held", env)
	cursor, limit := pageFlags(f, "jobs")
	if err := f.parse(args); err != nil {
		return err
	}
	n := limit()
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	page, err := r.c.HeldJobs(ctx, name, *cursor, n)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		if len(page.Jobs) == 0 {
			fmt.Fprintf(w, "no job of endpoint %s is held by its gates now\n", name)
			return
		}
		fmt.Fprintf(w, "held by:\t%s\n", heldBy(page.Jobs[0].HeldBy))
		fmt.Fprintf(w, "why:\t%s\n\n", page.Jobs[0].HeldBy.Detail)
		printJobRows(w, page.Jobs)
		if page.NextCursor != nil {
			fmt.Fprintf(w, "\nmore: --cursor %s\n", *page.NextCursor)
		}
	})
}

// endpointsKeysCommand is `ratchet endpoints keys`.
type endpointsKeysCommand struct{}

// Run lists the endpoint's busiest flow keys with what holds each.
func (endpointsKeysCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("endpoints keys", "an endpoint NAME", args)
	if err != nil {
		return err
	}
	f, rf := clientFlags(endpointsGroup(), "keys", env)
	limit := f.String("limit", "", "keys to list, 1–100 (default 10)")
	if err := f.parse(args); err != nil {
		return err
	}
	n := 0
	if *limit != "" {
		n = int(f.integer("limit", *limit, 1, 100, "must be an integer from 1 through 100"))
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	l, err := r.c.FlowKeys(ctx, name, n)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		if len(l.Keys) == 0 {
			fmt.Fprintf(w, "no job of endpoint %s with a flow key is in flight or queued\n", name)
			return
		}
		if !l.Keyed {
			fmt.Fprintf(w, "endpoint %s has no limits per key: nothing is held by a key\n\n", name)
		}
		fmt.Fprintln(w, "KEY\tIN FLIGHT\tQUEUED\tDUE\tHELD\tHELD BY")
		for _, k := range l.Keys {
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%s\n", k.Key, k.Running, k.Scheduled, k.Due, k.Held, heldBy(k.HeldBy))
		}
		if l.Capped {
			fmt.Fprintln(w, "\n(counted from the first 200,000 keyed jobs in flight and the first 200,000 queued)")
		}
	})
}

// jobsRunNowCommand is `ratchet jobs run-now`.
type jobsRunNowCommand struct{}

// Run makes a scheduled job due now; the gates still apply.
func (jobsRunNowCommand) Run(ctx context.Context, env *Env, args []string) error {
	id, r, err := connectID(jobsGroup(), "run-now", env, args, nil)
	if err != nil {
		return err
	}
	j, err := r.c.RunNow(ctx, id)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintf(w, "job %d is due now (%s, attempt %d of %d); its endpoint's gates still apply: ratchet jobs explain %d\n", j.ID, j.DueAt, j.Attempt, j.MaxAttempts, j.ID)
	})
}

// auditUsage is the synopsis of `ratchet audit`.
const auditUsage = "audit [--target endpoint:NAME|job:ID] [--limit N] [--cursor C]"

func runAudit(ctx context.Context, env *Env, args []string) error {
	f := newFlagSet("audit", auditUsage+"\n"+commonFlagsHelp, env.Stderr)
	rf := addRemoteFlags(f, env)
	target := f.String("target", "", "only actions on this target, e.g. endpoint:payments or job:42")
	cursor, limit := pageFlags(f, "entries")
	if err := f.parse(args); err != nil {
		return err
	}
	n := limit()
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	page, err := r.c.Audit(ctx, *target, *cursor, n)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "ID\tAT\tACTOR\tACTION\tTARGET\tDETAIL")
		for _, e := range page.Entries {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.At, e.Actor, e.Action, e.Target, orDash(e.Detail))
		}
		if page.NextCursor != nil {
			fmt.Fprintf(w, "\nmore: --cursor %s\n", *page.NextCursor)
		}
	})
}
