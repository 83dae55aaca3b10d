package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/wire"
)

// failuresGroup is `ratchet failures`: failed and exhausted jobs grouped
// by cause, and replayed by filter.
func failuresGroup() *group {
	return &group{name: "failures", dispatch: runClientGroup, footer: commonFlagsHelp, subs: []subcommand{
		{"list", "group an endpoint's failed and exhausted jobs by classification and message fingerprint, with counts, first and last seen and a sparkline",
			"ENDPOINT [--since T] [--until T] [--buckets N]", failuresListCommand{}},
		{"replay", "count (without --expect) or replay (with --expect COUNT) the failed jobs a filter selects; the endpoint's gates pace the new jobs",
			"[--endpoint NAME] [--state " + joinStates("|") + "] [--classification C] [--group G] [--since T] [--until T] [--expect COUNT]", failuresReplayCommand{}},
	}}
}

// joinStates joins the states a replay by filter selects.
func joinStates(sep string) string {
	var names []string
	for _, s := range wire.JobStatesWhere(wire.JobState.Unsuccessful) {
		names = append(names, string(s))
	}
	return strings.Join(names, sep)
}

// timeFlag parses an optional RFC 3339 time flag.
func timeFlag(f *flagSet, name, text string) time.Time {
	if text == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		f.fail(name, text, "must be an RFC 3339 time, e.g. 2026-12-06T09:00:00Z")
	}
	return t
}

// sparkline draws counts as block characters, the largest full height.
func sparkline(counts []int64) string {
	const bars = "▁▂▃▄▅▆▇█"
	levels := []rune(bars)
	var most int64
	for _, n := range counts {
		most = max(most, n)
	}
	var b strings.Builder
	for _, n := range counts {
		switch {
		case n == 0:
			b.WriteRune(' ')
		default:
			b.WriteRune(levels[(n*int64(len(levels)-1)+most-1)/most])
		}
	}
	return b.String()
}

// failuresListCommand is `ratchet failures list`.
type failuresListCommand struct{}

// Run prints the endpoint's failure groups, the largest first.
func (failuresListCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("failures list", "an ENDPOINT name", args)
	if err != nil {
		return err
	}
	f, rf := clientFlags(failuresGroup(), "list", env)
	sinceText := f.String("since", "", "failures at or after this RFC 3339 time (default 24 hours before --until)")
	untilText := f.String("until", "", "failures before this RFC 3339 time (default now)")
	bucketsText := f.String("buckets", "", "time buckets of each sparkline, 1–96 (default 24)")
	if err := f.parse(args); err != nil {
		return err
	}
	since, until := timeFlag(f, "since", *sinceText), timeFlag(f, "until", *untilText)
	buckets := 0
	if *bucketsText != "" {
		buckets = int(f.integer("buckets", *bucketsText, 1, 96, "must be an integer from 1 through 96"))
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	l, err := r.c.Failures(ctx, name, since, until, buckets)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) { printFailureGroups(w, name, l) })
}

func printFailureGroups(w io.Writer, name string, l *client.FailureGroupList) {
	if len(l.Groups) == 0 {
		fmt.Fprintf(w, "no job of endpoint %s failed from %s to %s\n", name, l.Since, l.Until)
		return
	}
	fmt.Fprintf(w, "failures of endpoint %s from %s to %s (%d jobs read)\n\n", name, l.Since, l.Until, l.Scanned)
	fmt.Fprintln(w, "GROUP\tCOUNT\tREPLAYED\tCLASSIFICATION\tFIRST SEEN\tLAST SEEN\tTREND\tFINGERPRINT")
	for _, g := range l.Groups {
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", g.Group, g.Count, g.Replayed, g.Classification, g.FirstSeen, g.LastSeen,
			"|"+sparkline(g.Sparkline)+"|", orDash(g.Fingerprint))
	}
	if l.Capped {
		fmt.Fprintln(w, "\n(grouped from the latest 10,000 failures of the range; narrow --since and --until to see older ones)")
	}
	fmt.Fprintln(w, "\nreplay a group: ratchet failures replay --endpoint "+name+" --group GROUP")
}

// failuresReplayCommand is `ratchet failures replay`.
type failuresReplayCommand struct{}

// Run counts the jobs the filter selects or, with --expect, replays them.
func (failuresReplayCommand) Run(ctx context.Context, env *Env, args []string) error {
	f, rf := clientFlags(failuresGroup(), "replay", env)
	var in client.FailureFilter
	f.StringVar(&in.Endpoint, "endpoint", "", "only this endpoint's jobs")
	f.StringVar(&in.State, "state", "", wire.JoinOr(wire.JobStatesWhere(wire.JobState.Unsuccessful))+" (default both)")
	f.StringVar(&in.Classification, "classification", "", "only jobs whose last attempt had this classification, e.g. server_error")
	f.StringVar(&in.Group, "group", "", "only jobs of this failure group (ratchet failures list)")
	f.StringVar(&in.Since, "since", "", "jobs that failed at or after this RFC 3339 time")
	f.StringVar(&in.Until, "until", "", "jobs that failed before this RFC 3339 time")
	expect := f.String("expect", "", "replay, confirming the count the preview printed (without it, only count)")
	if err := f.parse(args); err != nil {
		return err
	}
	var n int64 = -1
	if *expect != "" {
		n = f.integer("expect", *expect, 0, 1000, "must be the count the preview printed, 0 through 1000")
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	if n < 0 {
		res, err := r.c.PreviewReplayFailures(ctx, in)
		if err != nil {
			return r.fail(err)
		}
		return r.show(func(w io.Writer) {
			fmt.Fprintf(w, "%d failed jobs would be replayed (%d already replayed, skipped); nothing was changed\n", res.Count, res.Skipped)
			if res.Capped {
				fmt.Fprintln(w, "(only the latest 10,000 failures of the range were read)")
			}
			if res.Count > 0 {
				fmt.Fprintf(w, "to replay them: ratchet failures replay %s--expect %d\n", replayFlagsText(in), res.Count)
			}
		})
	}
	res, err := r.c.ReplayFailures(ctx, in, n)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintf(w, "replayed %d of %d failed jobs as new jobs, due now; the endpoint's gates pace them\n", res.Replayed, res.Count)
		for _, x := range res.Failed {
			fmt.Fprintf(w, "not replayed: job %d: %s\n", x.ID, x.Error)
		}
	})
}

// replayFlagsText repeats the filter's flags for the command to run next.
func replayFlagsText(in client.FailureFilter) string {
	var b strings.Builder
	for _, p := range [][2]string{{"endpoint", in.Endpoint}, {"state", in.State}, {"classification", in.Classification}, {"group", in.Group},
		{"since", in.Since}, {"until", in.Until}} {
		if p[1] != "" {
			fmt.Fprintf(&b, "--%s %s ", p[0], p[1])
		}
	}
	return b.String()
}
