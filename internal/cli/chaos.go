package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/getratchet/ratchet/internal/chaos"
)

// chaosGroup's first row is what a bare `ratchet chaos` runs; the worker
// is the process the run starts (and kills) as a worker.
func chaosGroup() *group {
	return &group{name: "chaos", dispatch: runChaosGroup, subs: []subcommand{
		{"run", "run nodes, workers and a test provider on PostgreSQL under faults, and check the invariants",
			"--database URL [--duration D] [--jobs N] [--pg-ctl PATH --pg-data DIR] [--pg-restarts N] [--skew D] [--seed N]\n" +
				"          [--nodes N] [--workers N] [--concurrency N] [--max-concurrent N] [--rate-limit N] [--keys N [--key-max-concurrent N]]\n" +
				"          [--drain D] [--dir DIR]",
			chaosRunCommand{}},
		{"worker", "a worker process of a chaos run (the run starts it; not for direct use)",
			"--nodes URL[,URL] --provider URL --id ID [--concurrency N] [--tools T[,T]] (RATCHET_KEY)", chaosWorkerCommand{}},
	}}
}

// runChaosGroup dispatches chaos. The subcommand is optional (run), so
// flags may come first; help lists both synopses.
func runChaosGroup(ctx context.Context, env *Env, g *group, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "--help", "help":
			fmt.Fprintf(env.Stdout, "Usage:\n")
			for _, s := range g.subs {
				fmt.Fprintf(env.Stdout, "  ratchet %s\n", g.synopsis(s.name))
			}
			fmt.Fprintf(env.Stdout, "\nA bare `ratchet chaos` is `ratchet chaos run`; `ratchet chaos run --help` lists its flags.\n")
			return nil
		}
	}
	name := g.subs[0].name
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	s, ok := g.find(name)
	if !ok {
		return usagef("%s subcommand %q is not known; use %s", g.name, name, orList(g.names()))
	}
	return s.cmd.Run(ctx, env, args)
}

// chaosRunCommand is `ratchet chaos [run]`.
type chaosRunCommand struct{}

// Run makes the run, prints its progress on standard error and its
// report on standard output, and fails when an invariant broke.
func (chaosRunCommand) Run(ctx context.Context, env *Env, args []string) error {
	f := chaosGroup().flagSet("run", env)
	var in chaosRunFlags
	f.StringVar(&in.db, "database", envOr(env, "RATCHET_DATABASE_URL", ""), "a postgres:// URL; the run makes a schema of its own there (RATCHET_DATABASE_URL)")
	f.StringVar(&in.duration, "duration", "10m", "how long the faults run, 10s–24h")
	f.StringVar(&in.jobs, "jobs", "100000", "jobs to enqueue, 100–10000000")
	f.StringVar(&in.pgCtl, "pg-ctl", "", "a pg_ctl that can stop and start the server of --database (needed for --pg-restarts)")
	f.StringVar(&in.pgData, "pg-data", "", "the data directory of that server; its settings must be in its postgresql.conf")
	f.StringVar(&in.pgRestarts, "pg-restarts", "2", "PostgreSQL restarts spread over the run, 0–100; 0 needs no --pg-ctl")
	f.StringVar(&in.skew, "skew", "2s", "how far the last node's clock runs ahead (ratchet serve --clock-offset), -1h–1h; 0 for none")
	f.StringVar(&in.seed, "seed", "1", "seed of the fault schedule and the provider's answers, 1 or more")
	f.StringVar(&in.nodes, "nodes", "3", "ratchet serve processes, 1–16")
	f.StringVar(&in.workers, "workers", "4", "worker processes, 1–64")
	f.StringVar(&in.concurrency, "concurrency", "16", "handlers per worker process, 1–256")
	f.StringVar(&in.maxConc, "max-concurrent", "32", "maxConcurrent of the main endpoint, 1–10000")
	f.StringVar(&in.rateLimit, "rate-limit", "", "rateLimitPerMinute of the metered endpoint (5 % of the jobs), 1–1000000; default the metered jobs over the minutes of --duration, so that it binds all run long")
	f.StringVar(&in.keys, "keys", "0", "spread the main endpoint's jobs over this many flow keys, 0–100000, and limit each key (--key-max-concurrent); 0 for no keys")
	f.StringVar(&in.keyMaxConc, "key-max-concurrent", "2", "keyMaxConcurrent of the main endpoint with --keys, 1–10000")
	f.StringVar(&in.drain, "drain", "5m", "how long the jobs may take to finish once the faults stop, 10s–24h")
	f.StringVar(&in.dir, "dir", "", "keep the logs of nodes, workers and restarts here (default: a temporary directory, removed when every invariant held)")
	if err := f.parse(args); err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the ratchet binary to start as nodes and workers: %w", err)
	}
	cfg := chaosRunConfig(f, in, bin, env.Stderr)
	if err := f.done(); err != nil {
		return err
	}
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		return err
	}
	rep.Print(env.Stdout)
	if !rep.OK() {
		return fmt.Errorf("%d invariants broke", len(rep.Violations))
	}
	return nil
}

// chaosRunFlags are the texts of the chaos run flags, converted together
// by chaosRunConfig so that every problem is reported at once.
type chaosRunFlags struct {
	db, pgCtl, pgData, pgRestarts, dir string
	duration, drain, skew, jobs, seed  string
	nodes, workers, concurrency        string
	maxConc, rateLimit                 string
	keys, keyMaxConc                   string
}

// chaosRunConfig turns the flags into a chaos.Config for the binary bin,
// with progress written to progress; the problems are left on f, each
// naming the flag, the value and what is allowed.
func chaosRunConfig(f *flagSet, in chaosRunFlags, bin string, progress io.Writer) chaos.Config {
	cfg := chaos.Config{Binary: bin, DatabaseURL: in.db, PgCtl: in.pgCtl, PgData: in.pgData, Dir: in.dir, Progress: progress}
	if !strings.HasPrefix(in.db, "postgres://") && !strings.HasPrefix(in.db, "postgresql://") {
		f.fail("database", in.db, "required: a postgres:// URL (several nodes share PostgreSQL)")
	}
	cfg.Duration = f.duration("duration", in.duration, 10*time.Second, 24*time.Hour, "must be a duration from 10s through 24h")
	cfg.Jobs = int(f.integer("jobs", in.jobs, 100, 10_000_000, "must be an integer from 100 through 10000000"))
	cfg.PGRestarts = int(f.integer("pg-restarts", in.pgRestarts, 0, 100, "must be an integer from 0 through 100"))
	if (in.pgCtl == "") != (in.pgData == "") {
		if in.pgCtl == "" {
			f.fail("pg-ctl", "", "required with --pg-data")
		} else {
			f.fail("pg-data", "", "required with --pg-ctl")
		}
	}
	if cfg.PGRestarts > 0 && in.pgCtl == "" {
		f.fail("pg-ctl", "", fmt.Sprintf("required for --pg-restarts %d (with --pg-data); --pg-restarts 0 runs without PostgreSQL restarts", cfg.PGRestarts))
	}
	cfg.Skew = f.duration("skew", in.skew, -time.Hour, time.Hour, "must be a duration from -1h through 1h, such as 2s; 0 for none")
	s, err := strconv.ParseUint(strings.TrimSpace(in.seed), 10, 64)
	if err != nil || s == 0 {
		f.fail("seed", in.seed, "must be an integer from 1 through 18446744073709551615")
	}
	cfg.Seed = s
	cfg.Nodes = int(f.integer("nodes", in.nodes, 1, 16, "must be an integer from 1 through 16"))
	cfg.Workers = int(f.integer("workers", in.workers, 1, 64, "must be an integer from 1 through 64"))
	cfg.Concurrency = int(f.integer("concurrency", in.concurrency, 1, 256, "must be an integer from 1 through 256"))
	cfg.MaxConcurrent = f.integer("max-concurrent", in.maxConc, 1, 10_000, "must be an integer from 1 through 10000")
	if in.rateLimit != "" {
		cfg.RateLimit = f.integer("rate-limit", in.rateLimit, 1, 1_000_000, "must be an integer from 1 through 1000000")
	}
	cfg.Keys = int(f.integer("keys", in.keys, 0, 100_000, "must be an integer from 0 through 100000"))
	cfg.KeyMaxConcurrent = f.integer("key-max-concurrent", in.keyMaxConc, 1, 10_000, "must be an integer from 1 through 10000")
	cfg.Drain = f.duration("drain", in.drain, 10*time.Second, 24*time.Hour, "must be a duration from 10s through 24h")
	return cfg
}

// chaosWorkerCommand is `ratchet chaos worker`.
type chaosWorkerCommand struct{}

// Run runs the worker until SIGTERM (graceful) or SIGKILL (a crash).
func (chaosWorkerCommand) Run(ctx context.Context, env *Env, args []string) error {
	f := chaosGroup().flagSet("worker", env)
	nodes := f.String("nodes", "", "the nodes' URLs, comma-separated (http://127.0.0.1:PORT)")
	key := f.String("key", envOr(env, "RATCHET_KEY", ""), "an API key (RATCHET_KEY)")
	provider := f.String("provider", "", "the test provider's URL (http://127.0.0.1:PORT)")
	id := f.String("id", "", "the worker id shown on attempts")
	concurrency := f.String("concurrency", "8", "handlers at once, 1–256")
	tools := f.String("tools", "main@1,metered@1", "the tools to run, comma-separated name@version")
	if err := f.parse(args); err != nil {
		return err
	}
	cfg := chaos.WorkerConfig{Key: *key, Provider: *provider, ID: *id}
	if *nodes != "" {
		cfg.Nodes = strings.Split(*nodes, ",")
	}
	if *tools != "" {
		cfg.Tools = strings.Split(*tools, ",")
	}
	cfg.Concurrency = int(f.integer("concurrency", *concurrency, 1, 256, "must be an integer from 1 through 256"))
	if err := f.done(); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return &UsageError{Err: err}
	}
	err := chaos.RunWorker(ctx, cfg, env.Stderr)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
