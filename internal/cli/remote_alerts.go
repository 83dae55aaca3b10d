package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/wire"
)

func alertsGroup() *group {
	return &group{name: "alerts", dispatch: runClientGroup, footer: commonFlagsHelp, subs: []subcommand{
		{"add", "add an alert sink: a signed webhook (its secret is printed once), Slack or Teams (docs/alerts.md)",
			"NAME --kind " + joinBar(wire.AlertSinkKinds()) + " --url URL", alertsAddCommand{}},
		{"sinks", "list the alert sinks and the thresholds", "", alertsSinksCommand{}},
		{"delete", "delete an alert sink and its alerts not sent yet", "NAME", alertsDeleteCommand{}},
		{"test", "send a test alert to a sink", "NAME", alertsTestCommand{}},
		{"settings", "set the thresholds (every one; the others keep their values)",
			"[--paused-after DURATION] [--failure-rate PERCENT] [--failure-min N] [--window DURATION] [--max-per-window N]", alertsSettingsCommand{}},
		{"list", "list the latest alert deliveries, newest first", "[--limit N]", alertsListCommand{}},
	}}
}

// alertsAddCommand is `ratchet alerts add`.
type alertsAddCommand struct{}

// Run adds the sink and prints it, with a webhook sink's secret.
func (alertsAddCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("alerts add", "a sink NAME", args)
	if err != nil {
		return err
	}
	in := client.AlertSinkCreate{Name: name}
	var kind string
	r, err := connectClient(alertsGroup(), "add", env, args, func(f *flagSet) {
		f.StringVar(&kind, "kind", "", "what the sink takes: "+wire.JoinOr(wire.AlertSinkKinds()))
		f.StringVar(&in.URL, "url", "", "the sink's incoming-webhook URL")
	})
	if err != nil {
		return err
	}
	in.Kind = wire.AlertSinkKind(kind)
	k, err := r.c.CreateAlertSink(ctx, in)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintf(w, "added %s alert sink %s\n", k.Kind, k.Name)
		if k.Secret != nil {
			fmt.Fprintf(w, "signing secret (shown once; verify deliveries with it):\n\n    %s\n\n", *k.Secret)
		}
	})
}

// alertsSinksCommand is `ratchet alerts sinks`.
type alertsSinksCommand struct{}

// Run prints one line per sink, then the thresholds.
func (alertsSinksCommand) Run(ctx context.Context, env *Env, args []string) error {
	r, err := connectClient(alertsGroup(), "sinks", env, args, nil)
	if err != nil {
		return err
	}
	l, err := r.c.AlertSinks(ctx)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "NAME\tKIND\tURL\tCREATED")
		for _, k := range l.Sinks {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", k.Name, k.Kind, k.URL, k.CreatedAt)
		}
		s := l.Settings
		fmt.Fprintf(w, "\npaused after %s; failure rate %d%% of at least %d attempts; at most %d alerts per endpoint per %s\n",
			msText(s.PausedAfterMs), s.FailureRatePercent, s.FailureRateMin, s.MaxPerWindow, msText(s.WindowMs))
	})
}

func msText(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }

// alertsDeleteCommand is `ratchet alerts delete`.
type alertsDeleteCommand struct{}

// Run deletes the sink.
func (alertsDeleteCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("alerts delete", "a sink NAME", args)
	if err != nil {
		return err
	}
	r, err := connectClient(alertsGroup(), "delete", env, args, nil)
	if err != nil {
		return err
	}
	if err := r.c.DeleteAlertSink(ctx, name); err != nil {
		return r.fail(err)
	}
	if r.asJSON {
		return nil
	}
	_, err = fmt.Fprintf(r.out, "deleted alert sink %s\n", name)
	return err
}

// alertsTestCommand is `ratchet alerts test`.
type alertsTestCommand struct{}

// Run queues a test alert for the sink.
func (alertsTestCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("alerts test", "a sink NAME", args)
	if err != nil {
		return err
	}
	r, err := connectClient(alertsGroup(), "test", env, args, nil)
	if err != nil {
		return err
	}
	res, err := r.c.TestAlertSink(ctx, name)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintf(w, "test alert %d queued for %s; `ratchet alerts list` shows whether it was delivered\n", res.Alert, res.Sink)
	})
}

// alertsSettingsCommand is `ratchet alerts settings`.
type alertsSettingsCommand struct{}

// Run reads the thresholds, changes those given and stores them.
func (alertsSettingsCommand) Run(ctx context.Context, env *Env, args []string) error {
	f, rf := clientFlags(alertsGroup(), "settings", env)
	var paused, rate, minN, window, maxN string
	f.StringVar(&paused, "paused-after", "", "alert when an endpoint stays paused this long, e.g. 15m (1m–168h)")
	f.StringVar(&rate, "failure-rate", "", "alert when this percentage of a window's attempts failed (1–100)")
	f.StringVar(&minN, "failure-min", "", "only for windows with at least this many attempts")
	f.StringVar(&window, "window", "", "the window of the cap, exhausted jobs and failure rates, e.g. 10m (1m–24h)")
	f.StringVar(&maxN, "max-per-window", "", "alerts per endpoint and window at most (1–100)")
	if err := f.parse(args); err != nil {
		return err
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	cur, err := r.c.AlertSinks(ctx)
	if err != nil {
		return r.fail(err)
	}
	s := cur.Settings
	setMs(f, "paused-after", paused, &s.PausedAfterMs)
	setInt(f, "failure-rate", rate, &s.FailureRatePercent)
	setInt(f, "failure-min", minN, &s.FailureRateMin)
	setMs(f, "window", window, &s.WindowMs)
	setInt(f, "max-per-window", maxN, &s.MaxPerWindow)
	if err := f.done(); err != nil {
		return err
	}
	out, err := r.c.SetAlertSettings(ctx, s)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintf(w, "paused after %s; failure rate %d%% of at least %d attempts; at most %d alerts per endpoint per %s\n",
			msText(out.PausedAfterMs), out.FailureRatePercent, out.FailureRateMin, out.MaxPerWindow, msText(out.WindowMs))
	})
}

// setMs reads a duration flag into milliseconds; the server checks the
// bounds and names the field.
func setMs(f *flagSet, name, v string, dst *int64) {
	if v == "" {
		return
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		f.fail(name, v, `must be a duration such as "15m" or "2h"`)
		return
	}
	*dst = d.Milliseconds()
}

func setInt(f *flagSet, name, v string, dst *int64) {
	if v == "" {
		return
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		f.fail(name, v, "must be an integer")
		return
	}
	*dst = n
}

// alertsListCommand is `ratchet alerts list`.
type alertsListCommand struct{}

// Run prints one line per delivery.
func (alertsListCommand) Run(ctx context.Context, env *Env, args []string) error {
	var limit string
	r, err := connectClient(alertsGroup(), "list", env, args, func(f *flagSet) {
		f.StringVar(&limit, "limit", "", "1–500, default 100")
	})
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(limit)
	l, err := r.c.Alerts(ctx, n)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "ID\tSINK\tSTATE\tATTEMPTS\tKIND\tENDPOINT\tSUMMARY")
		for _, d := range l.Deliveries {
			fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", d.ID, d.Sink, d.State, d.Attempts, d.Alert.Kind, orDash(d.Alert.Endpoint), d.Alert.Summary)
		}
	})
}

// endpointsEventsCommand is `ratchet endpoints events`.
type endpointsEventsCommand struct{}

// Run prints the endpoint's event log, newest first.
func (endpointsEventsCommand) Run(ctx context.Context, env *Env, args []string) error {
	name, args, err := positional("endpoints events", "an endpoint NAME", args)
	if err != nil {
		return err
	}
	f, rf := clientFlags(endpointsGroup(), "events", env)
	cursor, limit := pageFlags(f, "events")
	var since string
	f.StringVar(&since, "since", "", "only events at or after this RFC 3339 time")
	if err := f.parse(args); err != nil {
		return err
	}
	var at time.Time
	if since != "" {
		t, err := time.Parse(time.RFC3339Nano, since)
		if err != nil {
			f.fail("since", since, "must be an RFC 3339 time such as 2026-12-06T09:00:00Z")
		}
		at = t
	}
	n := limit()
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	page, err := r.c.EndpointEvents(ctx, name, at, *cursor, n)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "AT\tKIND\tHELD\tDETAIL")
		for _, ev := range page.Events {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", ev.At, ev.Kind, ev.HeldJobs, ev.Detail)
		}
		if page.NextCursor != nil {
			fmt.Fprintf(w, "\nmore: --cursor %s\n", *page.NextCursor)
		}
	})
}
