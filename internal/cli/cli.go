// Package cli is the ratchet command line: one small struct per subcommand,
// injected standard streams, and one mapping from errors to exit codes.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Exit codes.
const (
	// ExitOK is a command that did what it was asked.
	ExitOK = 0
	// ExitError is a failure that is not the user's input: the server
	// refused, the network or the disk failed.
	ExitError = 1
	// ExitUsage is bad input: a flag, an argument or a document.
	ExitUsage = 2
)

// UsageError is bad input from the user: a flag, a field or a document. It
// exits with status 2.
type UsageError struct{ Err error }

// Error returns the message of the wrapped error.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap lets errors.As reach field errors inside a usage error.
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Env carries the process's streams and environment so commands can be run
// in tests without a subprocess.
type Env struct {
	// Stdin is read by flags that take "-" for standard input.
	Stdin io.Reader
	// Stdout receives what a command prints.
	Stdout io.Writer
	// Stderr receives errors, flag usage and progress.
	Stderr io.Writer
	// Getenv reads RATCHET_ variables; nil means an empty environment.
	Getenv func(string) string
}

// command is one row of the top-level table.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
	group   *group // the table run dispatches to, when the command has subcommands
}

func commands() []command {
	migrate, project, policy, chaos := migrateGroup(), projectGroup(), policyGroup(), chaosGroup()
	endpoints, tools, jobs, runs, keys := endpointsGroup(), toolsGroup(), jobsGroup(), runsGroup(), keysGroup()
	schedules, failures, alerts := schedulesGroup(), failuresGroup(), alertsGroup()
	return []command{
		{"serve", "run the Ratchet server (embedded SQLite, no configuration needed)", runServe, nil},
		{"migrate", "apply or list database migrations (up, status)", migrate.run, migrate},
		{"project", "create another project with its owner key (multi-tenant hosts)", project.run, project},
		{"calc", "print a backoff calculator schedule (none, full, equal, decorrelated jitter)", runCalc, nil},
		{"policy", "validate a retry policy and print its schedule or one delay", policy.run, policy},
		{"simulate", "simulate clients contending with backoff and jitter (the 2015 study, and your policies)", runSimulate, nil},
		{"endpoints", "list, read, create endpoints, set their policy, pause, resume, close or open circuits, list held jobs (on a server: --server, --key)", endpoints.run, endpoints},
		{"tools", "list, read and publish tool contracts (on a server)", tools.run, tools},
		{"jobs", "list, read, enqueue, cancel, replay, run now and explain jobs (on a server)", jobs.run, jobs},
		{"runs", "start, read and finish runs (on a server)", runs.run, runs},
		{"failures", "group failed jobs by cause, and replay them by group, filter and time range (on a server)", failures.run, failures},
		{"schedules", "create, list, read, fire, preview, pause, resume and delete recurring jobs and read their ticks (on a server)", schedules.run, schedules},
		{"alerts", "add, list, test and delete alert sinks (webhook, Slack, Teams), set thresholds, list deliveries (on a server)", alerts.run, alerts},
		{"keys", "list, create and revoke API keys (on a server); recover a lost owner key (on the database)", keys.run, keys},
		{"audit", "list operator actions: pauses, circuits, run-now, bulk actions, cancels, replays, policies, keys (on a server)", runAudit, nil},
		{"workers", "list the workers seen in the last 24 hours and the jobs they hold (on a server)", runWorkers, nil},
		{"history", "per-minute claims, outcomes and due-to-claim lag of each endpoint (on a server)", runHistory, nil},
		{"backup", "copy the SQLite database while the server runs, check the copy and print what it holds", runBackup, nil},
		{"bench", "measure burn-down throughput and due-to-claim lag (engine or HTTP, SQLite by default)", runBench, nil},
		{"chaos", "run three nodes and workers on PostgreSQL under kills, restarts and clock skew; check the invariants", chaos.run, chaos},
		{"version", "print the version", runVersion, nil},
	}
}

// Run executes one command line and returns the process exit code.
func Run(ctx context.Context, env *Env, args []string) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	err := dispatch(ctx, env, args)
	if err == nil || errors.Is(err, errHelp) {
		return ExitOK
	}
	fmt.Fprintln(env.Stderr, "ratchet: "+strings.ReplaceAll(err.Error(), "\n", "\nratchet: "))
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitError
}

func dispatch(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(env.Stdout)
		if len(args) == 0 {
			return &UsageError{Err: errors.New("a command is required")}
		}
		return nil
	}
	if args[0] == "--version" || args[0] == "-version" {
		return runVersion(ctx, env, nil)
	}
	cmds := commands()
	i := slices.IndexFunc(cmds, func(c command) bool { return c.name == args[0] })
	if i < 0 {
		names := make([]string, len(cmds))
		for j, c := range cmds {
			names[j] = c.name
		}
		return usagef("command %q is not known; commands are %s", args[0], strings.Join(names, ", "))
	}
	if wantsHelp(args[1:]) {
		return help(ctx, env, cmds[i], args[1:])
	}
	return cmds[i].run(ctx, env, args[1:])
}

// wantsHelp reports whether -h or --help stands among args (before a "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// help answers --help anywhere on a command line with the usage of the
// deepest command named, on standard output, and exit status 0 — also
// where the command would first ask for its NAME or ID.
func help(ctx context.Context, env *Env, c command, args []string) error {
	out := &Env{Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stdout, Getenv: env.Getenv}
	if c.name == "version" {
		_, err := fmt.Fprintln(env.Stdout, "Usage: ratchet version (or ratchet --version)\n\n"+c.summary)
		return err
	}
	if c.group == nil {
		// The command's own flag set prints its usage and flags.
		if err := c.run(ctx, out, []string{"--help"}); err != nil && !errors.Is(err, errHelp) {
			return err
		}
		return nil
	}
	g := c.group
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if s, ok := g.find(args[0]); ok {
			fmt.Fprintf(env.Stdout, "%s\n\n", s.summary)
			// A subcommand that takes a NAME or ID reads it before its
			// flags: give it a stand-in so its flag set prints the usage.
			sub := []string{"--help"}
			if first, _, _ := strings.Cut(s.usage, " "); takesPositional(first) {
				sub = []string{"1", "--help"}
			}
			if err := s.cmd.Run(ctx, out, sub); err != nil && !errors.Is(err, errHelp) {
				// No flag set of its own: the synopsis is all there is.
				fmt.Fprintf(env.Stdout, "Usage: ratchet %s\n", g.synopsis(s.name))
			}
			return nil
		}
	}
	fmt.Fprintf(env.Stdout, "Usage: ratchet %s <subcommand>\n\n%s\n\nSubcommands:\n", g.name, c.summary)
	for _, s := range g.subs {
		fmt.Fprintf(env.Stdout, "  ratchet %s\n      %s\n", g.synopsis(s.name), s.summary)
	}
	if g.footer != "" {
		fmt.Fprintln(env.Stdout, strings.TrimRight(g.footer, "\n"))
	}
	return nil
}

// takesPositional reports whether a synopsis starts with an argument in
// capitals (NAME, ID, NAME@VERSION) rather than a flag or an option.
func takesPositional(first string) bool {
	return first != "" && strings.ToUpper(first) == first && strings.IndexFunc(first, func(r rune) bool { return r >= 'A' && r <= 'Z' }) == 0
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "Ratchet — a durable retry scheduler.")
	fmt.Fprintln(w, "\nUsage: ratchet <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'ratchet <command> --help' for the flags of a command.")
}

// writeJSON prints v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
