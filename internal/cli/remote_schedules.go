package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/wire"
)

func schedulesGroup() *group {
	return &group{name: "schedules", dispatch: runClientGroup, footer: commonFlagsHelp, subs: []subcommand{
		{"create", "create a schedule: one job per tick of a cron expression (docs/schedules.md)",
			"NAME --cron EXPR --tool NAME@VERSION [--zone ZONE] [--payload JSON] [--flow-key KEY] [--overlap " + joinBar(wire.ScheduleOverlaps()) +
				"] [--catch-up " + joinBar(wire.ScheduleCatchUps()) + "] [--catch-up-limit N] [--spread DURATION] [--paused]",
			schedulesCreateCommand{}},
		{"list", "list schedules with their next tick and latest ticks", "", schedulesListCommand{}},
		{"get", "print a schedule with its latest ticks and their jobs", "NAME", scheduleNameCommand{"get", nil}},
		{"preview", "print the next fire times (tick plus spread)", "NAME [--count N]", schedulesPreviewCommand{}},
		{"pause", "pause a schedule", "NAME", scheduleNameCommand{"pause", func(c *client.Client, ctx context.Context, n string) (*client.Schedule, error) {
			return c.PauseSchedule(ctx, n, true)
		}}},
		{"resume", "resume a schedule from its next tick after now", "NAME", scheduleNameCommand{"resume", func(c *client.Client, ctx context.Context, n string) (*client.Schedule, error) {
			return c.PauseSchedule(ctx, n, false)
		}}},
		{"ticks", "list a schedule's ticks, newest first, a page at a time", "NAME [--cursor CURSOR] [--limit N]", schedulesTicksCommand{}},
		{"fire", "fire a tick now, even while paused: one job due now (audited)", "NAME", schedulesFireCommand{}},
		{"delete", "delete a schedule and its ticks (its jobs stay)", "NAME", schedulesDeleteCommand{}},
	}}
}

// schedulesCreateCommand is `ratchet schedules create`.
type schedulesCreateCommand struct{}

// Run creates the schedule and prints it with its next tick.
func (schedulesCreateCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("schedules create", "a schedule NAME", args)
	if err != nil {
		return err
	}
	f, rf := clientFlags(schedulesGroup(), "create", env)
	in := client.ScheduleCreate{Name: name}
	var payload, overlap, catchUp, limit, spread string
	f.StringVar(&in.Cron, "cron", "", `the cron expression: five fields, @hourly..., or "@every 5m"`)
	f.StringVar(&in.Tool, "tool", "", "the tool of every tick's job, NAME@VERSION")
	f.StringVar(&in.TimeZone, "zone", "", "the IANA time zone of the expression (default UTC)")
	f.StringVar(&payload, "payload", "", "the JSON payload; {{tickAt}} in it becomes the tick time")
	f.StringVar(&in.FlowKey, "flow-key", "", "the flow key of every tick's job")
	f.StringVar(&overlap, "overlap", "", "while the previous job runs: "+wire.JoinOr(wire.ScheduleOverlaps())+" (default "+string(wire.OverlapSkip)+")")
	f.StringVar(&catchUp, "catch-up", "", "missed ticks after downtime: "+wire.JoinOr(wire.ScheduleCatchUps())+" (default "+string(wire.CatchUpLatest)+")")
	f.StringVar(&limit, "catch-up-limit", "", "with --catch-up all, the most missed ticks fired (default 10)")
	f.StringVar(&spread, "spread", "", "a window after each tick the schedule fires at a fixed offset in, e.g. 30s")
	f.BoolVar(&in.Paused, "paused", "create it paused")
	if err := f.parse(args); err != nil {
		return err
	}
	in.Payload, in.Overlap, in.CatchUp = json.RawMessage(payload), wire.ScheduleOverlap(overlap), wire.ScheduleCatchUp(catchUp)
	if limit != "" {
		in.CatchUpLimit = f.integer("catch-up-limit", limit, 1, wire.MaxCatchUpLimit, "must be an integer from 1 through 100")
	}
	if spread != "" {
		d, err := time.ParseDuration(spread)
		if err != nil || d < 0 {
			f.fail("spread", spread, `must be a duration such as "30s" or "2m"`)
		}
		in.SpreadMs = d.Milliseconds()
	}
	if err := f.done(); err != nil {
		return err
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	s, err := r.c.CreateSchedule(ctx, in)
	return showSchedule(r, s, err)
}

// schedulesListCommand is `ratchet schedules list`.
type schedulesListCommand struct{}

// Run prints one line per schedule.
func (schedulesListCommand) Run(ctx context.Context, env *Env, args []string) error {
	r, err := connectClient(schedulesGroup(), "list", env, args, nil)
	if err != nil {
		return err
	}
	list, err := r.c.Schedules(ctx)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "NAME\tCRON\tZONE\tTOOL\tSTATE\tNEXT FIRE\tLAST TICK")
		for _, s := range list {
			last := "-"
			if len(s.LastTicks) > 0 {
				last = s.LastTicks[0].TickAt + " " + string(s.LastTicks[0].Outcome)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Cron, s.TimeZone, s.Tool, scheduleState(&s), orDash(s.NextFireAt), last)
		}
	})
}

func scheduleState(s *client.Schedule) string {
	if s.Paused {
		return "paused"
	}
	return "active"
}

// scheduleNameCommand is a subcommand that takes a schedule NAME and calls
// one SDK method that answers the schedule (nil: read it).
type scheduleNameCommand struct {
	sub  string
	call func(c *client.Client, ctx context.Context, name string) (*client.Schedule, error)
}

// Run calls the method and prints the schedule as it now is.
func (c scheduleNameCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("schedules "+c.sub, "a schedule NAME", args)
	if err != nil {
		return err
	}
	r, err := connectClient(schedulesGroup(), c.sub, env, args, nil)
	if err != nil {
		return err
	}
	call := c.call
	if call == nil {
		call = (*client.Client).GetSchedule
	}
	s, err := call(r.c, ctx, name)
	return showSchedule(r, s, err)
}

// showSchedule prints a schedule and its latest ticks.
func showSchedule(r *remote, s *client.Schedule, err error) error {
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintf(w, "schedule:\t%s\n", s.Name)
		fmt.Fprintf(w, "cron:\t%s (%s)\n", s.Cron, s.TimeZone)
		fmt.Fprintf(w, "tool:\t%s\n", s.Tool)
		fmt.Fprintf(w, "state:\t%s\n", scheduleState(s))
		fmt.Fprintf(w, "overlap:\t%s\n", s.Overlap)
		fmt.Fprintf(w, "catch-up:\t%s (limit %d)\n", s.CatchUp, s.CatchUpLimit)
		fmt.Fprintf(w, "spread:\t%d ms (this schedule fires %d ms after each tick)\n", s.SpreadMs, s.SpreadOffsetMs)
		fmt.Fprintf(w, "next tick:\t%s\n", orDash(s.NextTickAt))
		fmt.Fprintf(w, "next fire:\t%s\n", orDash(s.NextFireAt))
		if n := s.Last24h; n != nil {
			fmt.Fprintf(w, "last 24 h:\t%d ticks: %d made a job, %d skipped, %d replaced, %d failed; %d missed\n", n.Ticks, n.Enqueued, n.Skipped, n.Replaced, n.Failed, n.Missed)
		}
		if len(s.LastTicks) > 0 {
			fmt.Fprint(w, "\nTICK\tOUTCOME\tJOB\tPREVIOUS JOB\tMISSED\n")
			for _, t := range s.LastTicks {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\n", t.TickAt, t.Outcome, idOrDash(t.JobID), idOrDash(t.PreviousJobID), t.Missed)
			}
		}
	})
}

func idOrDash(id int64) string {
	if id == 0 {
		return "-"
	}
	return strconv.FormatInt(id, 10)
}

// schedulesPreviewCommand is `ratchet schedules preview`.
type schedulesPreviewCommand struct{}

// Run prints the next fire times.
func (schedulesPreviewCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("schedules preview", "a schedule NAME", args)
	if err != nil {
		return err
	}
	var count string
	r, err := connectClient(schedulesGroup(), "preview", env, args, func(f *flagSet) {
		f.StringVar(&count, "count", "10", "how many fire times, 1 through 100")
	})
	if err != nil {
		return err
	}
	n, perr := strconv.Atoi(count)
	if perr != nil || n < 1 || n > wire.MaxPreviewCount {
		return usagef("ratchet schedules preview: --count %s is not allowed; must be an integer from 1 through 100", quoteValue(count))
	}
	fires, err := r.c.PreviewSchedule(ctx, name, n)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "TICK\tFIRES AT")
		for _, f := range fires {
			fmt.Fprintf(w, "%s\t%s\n", f.TickAt, f.FireAt)
		}
	})
}

// schedulesTicksCommand is `ratchet schedules ticks`.
type schedulesTicksCommand struct{}

// Run prints a page of the schedule's ticks and the next page's cursor.
func (schedulesTicksCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("schedules ticks", "a schedule NAME", args)
	if err != nil {
		return err
	}
	var cursor, limit string
	r, err := connectClient(schedulesGroup(), "ticks", env, args, func(f *flagSet) {
		f.StringVar(&cursor, "cursor", "", "the next cursor a previous page printed")
		f.StringVar(&limit, "limit", "100", "how many ticks, 1 through 500")
	})
	if err != nil {
		return err
	}
	n, perr := strconv.Atoi(limit)
	if perr != nil || n < 1 || n > wire.MaxListLimit {
		return usagef("ratchet schedules ticks: --limit %s is not allowed; must be an integer from 1 through 500", quoteValue(limit))
	}
	page, err := r.c.ScheduleTicks(ctx, name, cursor, n)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "TICK\tFIRED AT\tOUTCOME\tJOB\tPREVIOUS JOB\tMISSED\tERROR")
		for _, t := range page.Ticks {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", t.TickAt, t.FiredAt, t.Outcome, idOrDash(t.JobID), idOrDash(t.PreviousJobID), t.Missed, orDash(t.Error))
		}
		if page.NextCursor != nil {
			fmt.Fprintf(w, "\nnext page: --cursor %s\n", *page.NextCursor)
		}
	})
}

// schedulesFireCommand is `ratchet schedules fire`.
type schedulesFireCommand struct{}

// Run fires a tick now and prints it.
func (schedulesFireCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("schedules fire", "a schedule NAME", args)
	if err != nil {
		return err
	}
	r, err := connectClient(schedulesGroup(), "fire", env, args, nil)
	if err != nil {
		return err
	}
	t, err := r.c.FireSchedule(ctx, name)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		if t.JobID != 0 {
			fmt.Fprintf(w, "fired schedule %s at %s: job %d\n", name, t.TickAt, t.JobID)
		} else {
			fmt.Fprintf(w, "fired schedule %s at %s: no job: %s\n", name, t.TickAt, t.Error)
		}
	})
}

// schedulesDeleteCommand is `ratchet schedules delete`.
type schedulesDeleteCommand struct{}

// Run deletes the schedule.
func (schedulesDeleteCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("schedules delete", "a schedule NAME", args)
	if err != nil {
		return err
	}
	r, err := connectClient(schedulesGroup(), "delete", env, args, nil)
	if err != nil {
		return err
	}
	if err := r.c.DeleteSchedule(ctx, name); err != nil {
		return r.fail(err)
	}
	if r.asJSON {
		return nil
	}
	_, err = fmt.Fprintf(r.out, "deleted schedule %s\n", name)
	return err
}

// joinBar writes the values of an enum for a synopsis: "a|b|c".
func joinBar[T ~string](vs []T) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return strings.Join(out, "|")
}
