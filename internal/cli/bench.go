package cli

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/getratchet/ratchet/internal/bench"
)

const benchUsage = "bench [--mode engine|http|delivery|console|keys|schedules|outage] [--variant retry-after|503|refused|slow|flap|noheaders|all] [--outage D] [--capacity C] [--time-limit D] [--nodes N] [--flap D] [--outage-retry-after D] [--ietf-headers] [--schedules N] [--minutes M] [--spread D] [--keys K] [--key-limit L] [--fair-backlog N] [--delivery-concurrency N] [--rounds R] [--jobs N] [--batch B] [--claimers C] [--synchronous FULL|NORMAL] [--database URL] [--server URL --key KEY] [--lag-jobs N] [--no-lag] [--cpuprofile FILE]"

// runBench measures burn-down throughput and due-to-claim lag and prints
// them with the settings and the method.
func runBench(ctx context.Context, env *Env, args []string) error {
	f := newFlagSet("bench", benchUsage, env.Stderr)
	mode := f.String("mode", "engine", "engine (in-process engine), http (the Go SDK over loopback HTTP), delivery (http's worker burn-down, then the same jobs by HTTP delivery), console (seed N jobs, then time the dashboard's reads over HTTP), keys (limits per flow key: key-less against keyed burn-down, claim cost against the number of keys, fairness), schedules (N schedules firing every minute: ticks missed or doubled, lag from tick to job), or outage (N HTTP-delivery jobs enqueued while a loopback provider is down, then its recovery at a capacity: requests refused, busiest second, drain time, exhausted jobs, against targets)")
	modeOf := modeFlags(f)
	jobs := f.String("jobs", "20000", "N: jobs to enqueue and burn down, 1–10000000")
	batch := f.String("batch", "100", "B: most jobs per claim and per report, 1–1000")
	claimers := f.String("claimers", "4", "C: concurrent claimers, 1–256")
	enqBatch := f.String("enqueue-batch", "1000", "jobs per batch enqueue, 1–1000")
	lagJobs := f.String("lag-jobs", "2000", "jobs of the due-to-claim lag measurement, 1–1000000")
	lagEvery := f.String("lag-every", "2ms", "spacing of the lag enqueues, more than 0 up to 1s")
	lagAhead := f.String("lag-ahead", "5ms", "how far in the future each lag job is due, 0–1s")
	noLag := f.Bool("no-lag", "measure throughput only")
	cpuProfile := f.String("cpuprofile", "", "write a Go CPU profile of the burn-down (mode delivery: of the delivery; this process only) to FILE, for go tool pprof")
	syncMode := f.String("synchronous", envOr(env, "RATCHET_SQLITE_SYNCHRONOUS", "FULL"), "SQLite synchronous: FULL (the server default) or NORMAL (RATCHET_SQLITE_SYNCHRONOUS)")
	db := f.String("database", "", "SQLite path or postgres:// URL; default a fresh SQLite file in a temporary directory")
	srv := f.String("server", "", "http mode: an external server's URL instead of an in-process one")
	key := f.String("key", "", "http mode with --server: an owner key (RATCHET_KEY)")
	if err := f.parse(args); err != nil {
		return err
	}
	cfg := bench.Config{Mode: *mode, Synchronous: strings.ToUpper(*syncMode), DatabaseURL: *db, Server: *srv, Key: *key, SkipLag: *noLag, CPUProfile: *cpuProfile}
	cfg.Key = cmp.Or(cfg.Key, env.Getenv("RATCHET_KEY"))
	if !slices.Contains(bench.Modes, cfg.Mode) {
		f.fail("mode", *mode, "must be engine, http, delivery, console, keys, schedules or outage")
	}
	modeOf(&cfg)
	if cfg.Mode != "outage" || f.isSet("jobs") { // mode outage's default is 5000
		cfg.Jobs = int(f.integer("jobs", *jobs, 1, 10_000_000, "must be an integer from 1 through 10000000"))
	}
	cfg.Batch = int(f.integer("batch", *batch, 1, 1000, "must be an integer from 1 through 1000"))
	cfg.Claimers = int(f.integer("claimers", *claimers, 1, 256, "must be an integer from 1 through 256"))
	cfg.EnqueueBatch = int(f.integer("enqueue-batch", *enqBatch, 1, 1000, "must be an integer from 1 through 1000"))
	cfg.LagJobs = int(f.integer("lag-jobs", *lagJobs, 1, 1_000_000, "must be an integer from 1 through 1000000"))
	cfg.LagEvery = f.duration("lag-every", *lagEvery, time.Microsecond, time.Second, "must be a duration more than 0 and at most 1s, e.g. 2ms")
	cfg.LagAhead = f.duration("lag-ahead", *lagAhead, 0, time.Second, "must be a duration from 0 through 1s, e.g. 5ms")
	if cfg.Synchronous != "FULL" && cfg.Synchronous != "NORMAL" {
		f.fail("synchronous", *syncMode, "must be FULL or NORMAL")
	}
	if cfg.Server != "" && cfg.Mode != "http" {
		f.fail("server", *srv, "only with --mode http")
	}
	if cfg.Server != "" && cfg.Key == "" {
		f.fail("key", "", "required with --server: an owner key (or RATCHET_KEY)")
	}
	if err := f.done(); err != nil {
		return err
	}
	_, err := bench.Run(ctx, cfg, env.Stdout)
	return err
}

// keysFlags declares mode keys' flags; the function it returns reads
// them into a config once they are parsed.
func keysFlags(f *flagSet) func(*bench.Config) {
	keys := f.String("keys", "10000", "mode keys: the keys of the keyed burn-down, 1–1000000")
	keyLimit := f.String("key-limit", "5", "mode keys: keyMaxConcurrent of the keyed burn-down, 1–100000")
	fairBacklog := f.String("fair-backlog", "100000", "mode keys: key A's jobs ahead of keys B–K in the fairness measurement, 1–10000000")
	return func(cfg *bench.Config) {
		cfg.Keys = int(f.integer("keys", *keys, 1, 1_000_000, "must be an integer from 1 through 1000000"))
		cfg.KeyLimit = int(f.integer("key-limit", *keyLimit, 1, 100_000, "must be an integer from 1 through 100000"))
		cfg.FairBacklog = int(f.integer("fair-backlog", *fairBacklog, 1, 10_000_000, "must be an integer from 1 through 10000000"))
	}
}

// schedulesFlags declares mode schedules' flags; the function it returns
// reads them into the config.
func schedulesFlags(f *flagSet) func(*bench.Config) {
	n := f.String("schedules", "10000", "mode schedules: schedules firing every minute, 1–1000000")
	minutes := f.String("minutes", "10", "mode schedules: how many ticks (minutes) each fires, 1–1440")
	spread := f.String("spread", "0s", "mode schedules: each schedule's spread window, 0 to less than 1m")
	return func(cfg *bench.Config) {
		cfg.Schedules = int(f.integer("schedules", *n, 1, 1_000_000, "must be an integer from 1 through 1000000"))
		cfg.Minutes = int(f.integer("minutes", *minutes, 1, 1440, "must be an integer from 1 through 1440"))
		cfg.ScheduleSpread = f.duration("spread", *spread, 0, time.Minute-time.Millisecond, "must be a duration from 0 to less than 1m, e.g. 50s")
	}
}

// modeFlags declares the flags of modes keys, schedules, delivery and
// outage.
func modeFlags(f *flagSet) func(*bench.Config) {
	keysOf, schedOf, deliveryOf, outageOf := keysFlags(f), schedulesFlags(f), deliveryFlags(f), outageFlags(f)
	return func(cfg *bench.Config) {
		keysOf(cfg)
		schedOf(cfg)
		deliveryOf(cfg)
		outageOf(cfg)
	}
}

// outageFlags declares mode outage's flags; the function it returns reads
// them into a config once they are parsed.
func outageFlags(f *flagSet) func(*bench.Config) {
	variant := f.String("variant", "retry-after", "mode outage: retry-after (the outage answered 503 with Retry-After), 503 (503 alone), refused (connections refused), slow (recovers to a fifth of --capacity), flap (down again every --flap), noheaders (a bare 429, no rate-limit headers), or all of them in turn")
	outage := f.String("outage", "40s", "mode outage: how long the provider is down first, 1s–1h")
	capacity := f.String("capacity", "100", "mode outage: the recovered provider's requests per second (a token bucket, burst the same), 1–100000")
	limit := f.String("time-limit", "15m", "mode outage: each variant stops after this long even with jobs unfinished, 10s–24h")
	nodes := f.String("nodes", "1", "mode outage: servers sharing the database, 1–9; more than 1 needs --database postgres://…")
	flap := f.String("flap", "20s", "mode outage, variant flap: how long it stays up, then down, 1s–1h")
	retryAfter := f.String("outage-retry-after", "5s", "mode outage: the Retry-After of the outage's 503s (variants but 503 and refused), whole seconds 1s–1h")
	ietf := f.Bool("ietf-headers", "mode outage: the recovered provider also sends the IETF RateLimit and RateLimit-Policy fields")
	return func(cfg *bench.Config) {
		if cfg.Mode != "outage" {
			return
		}
		cfg.Variant = *variant
		if !slices.Contains(bench.OutageVariants, *variant) && *variant != "all" {
			f.fail("variant", *variant, "must be "+strings.Join(bench.OutageVariants, ", ")+" or all")
		}
		cfg.OutageFor = f.duration("outage", *outage, time.Second, time.Hour, "must be a duration from 1s through 1h, e.g. 40s")
		cfg.Capacity = int(f.integer("capacity", *capacity, 1, 100_000, "must be an integer from 1 through 100000"))
		cfg.TimeLimit = f.duration("time-limit", *limit, 10*time.Second, 24*time.Hour, "must be a duration from 10s through 24h, e.g. 15m")
		cfg.Nodes = int(f.integer("nodes", *nodes, 1, 9, "must be an integer from 1 through 9"))
		cfg.FlapEvery = f.duration("flap", *flap, time.Second, time.Hour, "must be a duration from 1s through 1h, e.g. 20s")
		cfg.OutageRetryAfter = f.duration("outage-retry-after", *retryAfter, time.Second, time.Hour, "must be whole seconds from 1s through 1h, e.g. 5s")
		if cfg.OutageRetryAfter%time.Second != 0 {
			f.fail("outage-retry-after", *retryAfter, "must be whole seconds from 1s through 1h, e.g. 5s")
		}
		cfg.IETFHeaders = *ietf
		if cfg.Nodes > 1 && !strings.HasPrefix(cfg.DatabaseURL, "postgres") {
			f.fail("nodes", *nodes, "more than 1 needs --database postgres://…")
		}
		if !f.isSet("delivery-concurrency") {
			cfg.DeliveryConcurrency = 0 // ratchet serve's default, 32
		}
	}
}

// deliveryFlags declares mode delivery's flags; the function it returns
// reads them into a config once they are parsed.
func deliveryFlags(f *flagSet) func(*bench.Config) {
	conc := f.String("delivery-concurrency", "128", "mode delivery: the dispatcher's concurrency, 1–1000 (mode outage: each node's, default 32 as ratchet serve's)")
	rounds := f.String("rounds", "1", "mode delivery: rounds (workers then delivery, on fresh files), 1–100; more than one prints the medians")
	return func(cfg *bench.Config) {
		cfg.DeliveryConcurrency = int(f.integer("delivery-concurrency", *conc, 1, 1000, "must be an integer from 1 through 1000"))
		cfg.Rounds = int(f.integer("rounds", *rounds, 1, 100, "must be an integer from 1 through 100"))
	}
}
