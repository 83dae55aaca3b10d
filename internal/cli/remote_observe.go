package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/wire"
)

const workersUsage = "workers [--server URL] [--key KEY] [--json]\n\nList the workers seen in the last 24 hours (claim, heartbeat, report), latest activity first, with the running jobs each holds. Needs an owner key."

// runWorkers is `ratchet workers`.
func runWorkers(ctx context.Context, env *Env, args []string) error {
	f := newFlagSet("workers", workersUsage, env.Stderr)
	rf := addRemoteFlags(f, env)
	if err := f.parse(args); err != nil {
		return err
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	ws, err := r.c.Workers(ctx)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "WORKER\tLAST CLAIM\tLAST HEARTBEAT\tLAST REPORT\tHOLDING\tJOBS")
		for _, wk := range ws.Workers {
			ids := make([]string, len(wk.Jobs))
			for i, id := range wk.Jobs {
				ids[i] = strconv.FormatInt(id, 10)
			}
			jobs := strings.Join(ids, ",")
			if int64(len(wk.Jobs)) < wk.Holding {
				jobs += ",…"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\n", wk.WorkerID, strOrDash(wk.LastClaimAt), strOrDash(wk.LastHeartbeatAt), strOrDash(wk.LastReportAt),
				wk.Holding, orDash(jobs))
		}
	})
}

func strOrDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

const historyUsage = "history [--endpoint NAME] [--hours H] [--server URL] [--key KEY] [--json]\n\nPrint per-minute claims, outcomes and due-to-claim lag of each endpoint over the last H hours (1–48, default 6); minutes without activity are left out."

// runHistory is `ratchet history`.
func runHistory(ctx context.Context, env *Env, args []string) error {
	f := newFlagSet("history", historyUsage, env.Stderr)
	rf := addRemoteFlags(f, env)
	endpoint := f.String("endpoint", "", "one endpoint's name; default every endpoint")
	hoursText := f.String("hours", "6", "how far back, 1–48 hours")
	if err := f.parse(args); err != nil {
		return err
	}
	hours := f.integer("hours", *hoursText, wire.HistoryMinHours, wire.HistoryMaxHours, "must be an integer from 1 through 48")
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	h, err := r.c.History(ctx, *endpoint, int(hours))
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintf(w, "from %s to %s, per minute\n", h.From, h.To)
		fmt.Fprintln(w, "ENDPOINT\tMINUTE\tCLAIMS\tSUCCEEDED\tFAILED\tTIMED OUT\tLAG AVG MS\tLAG MAX MS")
		for _, s := range h.Series {
			if len(s.Points) == 0 {
				fmt.Fprintf(w, "%s\t-\t0\t0\t0\t0\t-\t-\n", s.Endpoint)
			}
			for _, p := range s.Points {
				fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", s.Endpoint, p.At, p.Claims, p.Succeeded, p.Failed, p.TimedOut, p.LagAvgMs, p.LagMaxMs)
			}
		}
	})
}
