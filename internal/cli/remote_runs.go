package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/wire"
)

func runsGroup() *group {
	return &group{name: "runs", dispatch: runClientGroup, footer: commonFlagsHelp, subs: []subcommand{
		{"list", "list the project's runs, newest first, with their steps counted by state", "[--limit N] [--cursor C]", runsListCommand{}},
		{"start", "open a run that jobs can join with --run-id", "[--name NAME]", runsStartCommand{}},
		{"get", "print a run with its step counts and jobs", "ID", runsGetCommand{}},
		{"finish", "finish a run: its jobs go on, new ones may not join", "ID", runsFinishCommand{}},
	}}
}

// runNameFlag registers --name. Only start reads it; get and finish accept
// it as well because the runs commands always have.
func runNameFlag(f *flagSet) *string {
	return f.String("name", "", "start: a name for the run")
}

// runsListCommand is `ratchet runs list`.
type runsListCommand struct{}

// Run prints a page of the project's runs, newest first.
func (runsListCommand) Run(ctx context.Context, env *Env, args []string) error {
	f, rf := clientFlags(runsGroup(), "list", env)
	cursor, limit := pageFlags(f, "runs")
	if err := f.parse(args); err != nil {
		return err
	}
	n := limit()
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	page, err := r.c.ListRuns(ctx, *cursor, n)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "ID\tNAME\tSTATE\tCREATED\tSTEPS")
		for _, run := range page.Runs {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", run.ID, orDash(run.Name), run.State, run.CreatedAt, orDash(stepCounts(run.Counts)))
		}
		if page.NextCursor != nil {
			fmt.Fprintf(w, "\nmore: --cursor %s\n", *page.NextCursor)
		}
	})
}

// stepCounts is a run's steps counted by state, in the states' order:
// "2 succeeded, 1 failed".
func stepCounts(counts map[wire.JobState]int64) string {
	var parts []string
	for _, s := range wire.JobStates() {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	return strings.Join(parts, ", ")
}

// runsStartCommand is `ratchet runs start`.
type runsStartCommand struct{}

// Run opens a run; its ID is what jobs enqueue --run-id takes.
func (runsStartCommand) Run(ctx context.Context, env *Env, args []string) error {
	f, rf := clientFlags(runsGroup(), "start", env)
	name := runNameFlag(f)
	if err := f.parse(args); err != nil {
		return err
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	run, err := r.c.StartRun(ctx, *name)
	return showRun(r, run, err)
}

// runsGetCommand is `ratchet runs get`.
type runsGetCommand struct{}

// Run prints a run with its jobs counted by state.
func (runsGetCommand) Run(ctx context.Context, env *Env, args []string) error {
	id, r, err := connectID(runsGroup(), "get", env, args, func(f *flagSet) { runNameFlag(f) })
	if err != nil {
		return err
	}
	run, err := r.c.GetRun(ctx, id)
	return showRun(r, run, err)
}

// runsFinishCommand is `ratchet runs finish`.
type runsFinishCommand struct{}

// Run finishes a run: its jobs go on, new ones are refused.
func (runsFinishCommand) Run(ctx context.Context, env *Env, args []string) error {
	id, r, err := connectID(runsGroup(), "finish", env, args, func(f *flagSet) { runNameFlag(f) })
	if err != nil {
		return err
	}
	run, err := r.c.FinishRun(ctx, id)
	return showRun(r, run, err)
}

// showRun prints what every runs subcommand answers: the run as it now is.
func showRun(r *remote, run *client.Run, err error) error {
	if err != nil {
		return r.fail(err)
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
			fmt.Fprintf(w, "steps:\t%s\n", orDash(stepCounts(run.Counts)))
		}
		if len(run.Steps) > 0 {
			fmt.Fprint(w, "\n")
			printJobRows(w, run.Steps)
		}
	})
}
