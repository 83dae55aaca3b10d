// Package bench measures Ratchet's two figures of merit: burn-down
// throughput (enqueue N no-op jobs, then claim them in batches and report
// every one succeeded, until none is left) and the lag from a job's due time
// to its claim by a waiting (long-polling) claimer.
//
// It drives either the engine in-process (mode "engine") or a server over
// HTTP on loopback with the Go SDK (mode "http"), against a fresh SQLite
// file in a temporary directory unless told otherwise. `ratchet bench`
// prints the figures with the settings and the method, so a number never
// travels without how it was made.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Config says what to measure. Zero values take the defaults in the comments.
type Config struct {
	Mode         string        // "engine" (default), "http", "delivery" (http's burn-down, then the same by HTTP delivery) or "console" (seed N jobs, time the dashboard's reads)
	Jobs         int           // N, jobs to burn down; default 20000
	Batch        int           // B, most jobs per claim (and per report); default 100
	Claimers     int           // C, concurrent claimers; default 4
	EnqueueBatch int           // jobs per EnqueueBatch call; default 1000 (the API's limit)
	LagJobs      int           // jobs of the lag measurement; default 2000
	LagEvery     time.Duration // spacing of the lag enqueues; default 2 ms
	LagAhead     time.Duration // how far in the future each lag job is due; default 5 ms
	SkipLag      bool          // measure throughput only
	Synchronous  string        // SQLite synchronous pragma, FULL (default) or NORMAL
	DatabaseURL  string        // engine mode, or http mode's own server: a SQLite path or postgres:// URL; default a fresh SQLite file in a temp dir
	Server       string        // http mode: an external server's URL; empty starts one in-process
	Key          string        // http mode with Server: an owner key
	CPUProfile   string        // write a Go CPU profile of the burn-down (mode delivery: of the delivery) to this file
	// DeliveryConcurrency is the dispatcher's concurrency in mode delivery;
	// default 128.
	DeliveryConcurrency int
	// ConsoleRuns is how many timed runs of each request mode console
	// makes; default ConsoleRuns (20). Tests use fewer.
	ConsoleRuns int
	// Rounds is how many rounds mode delivery runs (each a workers'
	// burn-down then the delivery, on fresh files), printing the medians
	// when more than one; 0 runs 1.
	Rounds int
	// Mode keys: the keys the keyed burn-down spreads its N jobs over
	// (default 10000), their keyMaxConcurrent (default 5), and the backlog
	// of key A in the fairness measurement (default 100000).
	Keys, KeyLimit, FairBacklog int
	// Mode schedules: how many schedules fire every minute (default
	// 10000), for how many minutes (default 10), with what spread window
	// (default 0).
	Schedules, Minutes int
	ScheduleSpread     time.Duration
	// Mode outage (outage.go): the variant (one of OutageVariants, or
	// "all"; default retry-after), the outage's length (default 40s), the
	// provider's capacity once up (default 100 requests/s), each variant's
	// time limit (default 15m), the servers sharing the database (default
	// 1; more need PostgreSQL), the flapping variant's period (default
	// 20s), the outage's Retry-After (default 5s) and whether the
	// recovered provider also sends the IETF RateLimit fields. Jobs
	// defaults to 5000 and DeliveryConcurrency to 32 (ratchet serve's).
	Variant          string
	OutageFor        time.Duration
	Capacity         int
	TimeLimit        time.Duration
	Nodes            int
	FlapEvery        time.Duration
	OutageRetryAfter time.Duration
	IETFHeaders      bool
}

// Validate checks the ranges and fills the defaults.
func (c *Config) Validate() error {
	if c.Mode == "outage" {
		c.outageDefaults() // before the other modes' defaults: its own N and concurrency
	}
	c.defaults()
	var errs []error
	check := func(ok bool, field, value, allowed string) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s is not allowed; %s", field, value, allowed))
		}
	}
	check(slices.Contains(Modes, c.Mode), "mode", strconv.Quote(c.Mode), "must be engine, http, delivery, console, keys, schedules or outage")
	errs = append(errs, c.validateOutage()...)
	check(c.Schedules >= 1 && c.Schedules <= 1_000_000, "schedules", strconv.Itoa(c.Schedules), "must be from 1 through 1000000")
	check(c.Minutes >= 1 && c.Minutes <= 1440, "minutes", strconv.Itoa(c.Minutes), "must be from 1 through 1440")
	check(c.ScheduleSpread >= 0 && c.ScheduleSpread < time.Minute, "spread", c.ScheduleSpread.String(), "must be from 0 to less than 1m")
	check(c.Keys >= 1 && c.Keys <= 1_000_000, "keys", strconv.Itoa(c.Keys), "must be from 1 through 1000000")
	check(c.KeyLimit >= 1 && c.KeyLimit <= 100_000, "key-limit", strconv.Itoa(c.KeyLimit), "must be from 1 through 100000")
	check(c.FairBacklog >= 1 && c.FairBacklog <= 10_000_000, "fair-backlog", strconv.Itoa(c.FairBacklog), "must be from 1 through 10000000")
	check(c.Mode != "console" || c.Server == "", "mode", "console", "seeds the database itself: --database, not --server")
	check(c.Mode != "delivery" || c.Server == "" && c.DatabaseURL == "", "mode", "delivery", "runs on fresh SQLite files of its own: no --server or --database")
	check(c.DeliveryConcurrency >= 1 && c.DeliveryConcurrency <= 1000, "delivery-concurrency", strconv.Itoa(c.DeliveryConcurrency), "must be from 1 through 1000")
	check(c.Jobs >= 1 && c.Jobs <= 10_000_000, "jobs", strconv.Itoa(c.Jobs), "must be from 1 through 10000000")
	check(c.ConsoleRuns >= 1 && c.ConsoleRuns <= 1000, "console-runs", strconv.Itoa(c.ConsoleRuns), "must be from 1 through 1000")
	check(c.Rounds >= 0 && c.Rounds <= 100, "rounds", strconv.Itoa(c.Rounds), "must be from 1 through 100 (0: 1)")
	check(c.Batch >= 1 && c.Batch <= 1000, "batch", strconv.Itoa(c.Batch), "must be from 1 through 1000")
	check(c.Claimers >= 1 && c.Claimers <= 256, "claimers", strconv.Itoa(c.Claimers), "must be from 1 through 256")
	check(c.EnqueueBatch >= 1 && c.EnqueueBatch <= 1000, "enqueue-batch", strconv.Itoa(c.EnqueueBatch), "must be from 1 through 1000")
	check(c.LagJobs >= 1 && c.LagJobs <= 1_000_000, "lag-jobs", strconv.Itoa(c.LagJobs), "must be from 1 through 1000000")
	check(c.LagEvery > 0 && c.LagEvery <= time.Second, "lag-every", c.LagEvery.String(), "must be more than 0 and at most 1s")
	check(c.LagAhead >= 0 && c.LagAhead <= time.Second, "lag-ahead", c.LagAhead.String(), "must be from 0 through 1s")
	check(c.Synchronous == "FULL" || c.Synchronous == "NORMAL", "synchronous", strconv.Quote(c.Synchronous), "must be FULL or NORMAL")
	check(c.Server == "" || c.Mode == "http", "server", strconv.Quote(c.Server), "is only for --mode http")
	check(c.Server == "" || c.Key != "", "key", `""`, "an owner key is required with --server")
	return errors.Join(errs...)
}

// defaults fills the fields left zero with their defaults (see Config).
func (c *Config) defaults() {
	if c.Mode == "" {
		c.Mode = "engine"
	}
	if c.Jobs == 0 {
		c.Jobs = 20000
	}
	if c.ConsoleRuns == 0 {
		c.ConsoleRuns = ConsoleRuns
	}
	if c.Batch == 0 {
		c.Batch = 100
	}
	if c.Claimers == 0 {
		c.Claimers = 4
	}
	if c.EnqueueBatch == 0 {
		c.EnqueueBatch = 1000
	}
	if c.LagJobs == 0 {
		c.LagJobs = 2000
	}
	if c.LagEvery == 0 {
		c.LagEvery = 2 * time.Millisecond
	}
	if c.LagAhead == 0 {
		c.LagAhead = 5 * time.Millisecond
	}
	if c.Synchronous == "" {
		c.Synchronous = "FULL"
	}
	if c.DeliveryConcurrency == 0 {
		c.DeliveryConcurrency = 128
	}
	if c.Schedules == 0 {
		c.Schedules = 10_000
	}
	if c.Minutes == 0 {
		c.Minutes = 10
	}
	if c.Keys == 0 {
		c.Keys = 10_000
	}
	if c.KeyLimit == 0 {
		c.KeyLimit = 5
	}
	if c.FairBacklog == 0 {
		c.FairBacklog = 100_000
	}
}

// runOther runs the modes that are not a burn-down (delivery, console,
// keys, schedules); ok is false for the burn-down modes.
func runOther(ctx context.Context, cfg Config, dir string, w io.Writer) (res *Result, ok bool, err error) {
	switch cfg.Mode {
	case "delivery":
		res := &Result{Mode: cfg.Mode, Driver: "sqlite", Synchronous: cfg.Synchronous, Jobs: cfg.Jobs, Batch: cfg.Batch, Claimers: cfg.Claimers}
		printHeader(w, cfg, res)
		return res, true, runDelivery(ctx, cfg, dir, w, res)
	case "console":
		res := &Result{Mode: cfg.Mode, Synchronous: cfg.Synchronous, Jobs: cfg.Jobs}
		return res, true, runConsole(ctx, cfg, dir, w, res)
	case "keys":
		res := &Result{Mode: cfg.Mode, Synchronous: cfg.Synchronous, Jobs: cfg.Jobs, Batch: cfg.Batch, Claimers: cfg.Claimers}
		return res, true, runKeys(ctx, cfg, dir, w, res)
	case "schedules":
		res := &Result{Mode: cfg.Mode, Synchronous: cfg.Synchronous}
		res.Schedules, err = runSchedules(ctx, cfg, dir, w)
		return res, true, err
	case "outage":
		res := &Result{Mode: cfg.Mode, Synchronous: cfg.Synchronous, Jobs: cfg.Jobs}
		res.Outage, err = runOutage(ctx, cfg, dir, w)
		return res, true, err
	}
	return nil, false, nil
}

// Modes are the measurements Run knows.
var Modes = []string{"engine", "http", "delivery", "console", "keys", "schedules", "outage"}

// Result holds the figures of one run.
type Result struct {
	Mode, Driver, Synchronous string
	Jobs, Batch, Claimers     int
	EnqueueDuration           time.Duration
	BurnDownDuration          time.Duration
	// BurnDownCPU is the CPU time the whole process (client and server)
	// used during the burn-down; 0 where not measured.
	BurnDownCPU time.Duration
	// BurnDownAllocs and BurnDownAllocBytes are the Go heap allocations of
	// the whole process during the burn-down (runtime.MemStats' Mallocs
	// and TotalAlloc).
	BurnDownAllocs, BurnDownAllocBytes uint64
	// Wire is what the Go SDK sent and received for claims and reports
	// during the burn-down (mode http); nil in-process.
	Wire                      *WireFigures
	EnqueueRate, BurnDownRate float64 // jobs per second
	Lag                       []time.Duration
	LagP50, LagP99, LagMax    time.Duration
	// Mode delivery: the same N jobs run by the Go SDK's Worker calling
	// the provider, and delivered by the dispatcher.
	CallingDuration  time.Duration
	CallingRate      float64
	CallingCPU       time.Duration // as BurnDownCPU, while the workers call
	DeliveryDuration time.Duration
	DeliveryRate     float64
	DeliveryCPU      time.Duration // as BurnDownCPU, during the delivery
	// Mode console: the seeding (EnqueueDuration, EnqueueRate) and the
	// figures of each request.
	Console []ConsoleTiming
	// Mode keys.
	Keys *KeysResult
	// Mode schedules.
	Schedules *ScheduleResult
	// Mode outage: one per variant run.
	Outage []*OutageResult
}

// claimed is one leased job, as either target hands it out.
type claimed struct {
	id    int64
	lease string
}

// target is what the measurements drive: the engine in-process or a server
// over HTTP.
type target interface {
	driver() string
	// enqueueBatch stores n no-op jobs due now.
	enqueueBatch(ctx context.Context, n int) error
	// enqueueAt stores one job due at runAt and returns its id and stored due
	// time.
	enqueueAt(ctx context.Context, runAt time.Time) (id int64, due time.Time, err error)
	claim(ctx context.Context, worker string, max int, wait time.Duration) ([]claimed, error)
	// reportSuccess reports every job succeeded in one batch.
	reportSuccess(ctx context.Context, jobs []claimed) error
	close() error
}

// Run measures and prints the figures to w.
func Run(ctx context.Context, cfg Config, w io.Writer) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ratchet-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if res, ok, err := runOther(ctx, cfg, dir, w); ok {
		return res, err
	}
	var t target
	if cfg.Mode == "engine" {
		t, err = newEngineTarget(ctx, cfg, dir)
	} else {
		t, err = newHTTPTarget(ctx, cfg, dir)
	}
	if err != nil {
		return nil, err
	}
	defer t.close()
	res := &Result{Mode: cfg.Mode, Driver: t.driver(), Synchronous: cfg.Synchronous, Jobs: cfg.Jobs, Batch: cfg.Batch, Claimers: cfg.Claimers}
	if res.Driver != "sqlite" {
		res.Synchronous = "n/a"
	}
	printHeader(w, cfg, res)
	if err := burnDown(ctx, cfg, t, res); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "enqueue:    %d jobs in %s = %.0f jobs/s\n", res.Jobs, round(res.EnqueueDuration), res.EnqueueRate)
	fmt.Fprintf(w, "burn-down:  %d jobs in %s = %.0f jobs/s\n", res.Jobs, round(res.BurnDownDuration), res.BurnDownRate)
	printPerJob(w, res)
	if !cfg.SkipLag {
		if err := lag(ctx, cfg, t, res); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "lag:        %d jobs  p50 %s  p99 %s  max %s\n", len(res.Lag), ms(res.LagP50), ms(res.LagP99), ms(res.LagMax))
	}
	return res, nil
}

// printPerJob prints what one job of the burn-down cost this process
// (CPU and allocations, client and server together) and, over HTTP, the
// round trips and the bytes of the bodies on the wire.
func printPerJob(w io.Writer, res *Result) {
	n := float64(max(res.Jobs, 1))
	fmt.Fprintf(w, "per job:    CPU %s, %.0f allocations (%.1f KiB) in this process during the burn-down\n",
		perJob(res.BurnDownCPU, res.Jobs), float64(res.BurnDownAllocs)/n, float64(res.BurnDownAllocBytes)/n/1024)
	if x := res.Wire; x != nil {
		fmt.Fprintf(w, "wire:       %d claims and %d batch reports (HTTP round trips) for %d jobs; per job, bodies only: claim %.1f B sent, %.0f B received; report %.0f B sent, %.0f B received\n",
			x.ClaimRequests, x.ReportRequests, res.Jobs, x.ClaimSent, x.ClaimReceived, x.ReportSent, x.ReportReceived)
	}
}

func printHeader(w io.Writer, cfg Config, res *Result) {
	where := "in-process engine"
	if cfg.Mode == "http" {
		where = "HTTP on loopback with the Go SDK against an in-process server (server.Run, as `ratchet serve`)"
		if cfg.Server != "" {
			where = "HTTP with the Go SDK against " + cfg.Server
		}
	}
	if cfg.Mode == "delivery" {
		where = "mode http's worker burn-down, then the Go SDK's Worker calling a local provider, then HTTP delivery to it by the server's dispatcher, each against its own in-process server on a fresh SQLite file"
	}
	if cfg.Mode == "console" {
		where = "the dashboard's reads over loopback HTTP against an in-process server on a seeded database"
	}
	fmt.Fprintf(w, "ratchet bench: mode %s (%s)\n", cfg.Mode, where)
	fmt.Fprintf(w, "settings:   driver %s, synchronous %s, GOMAXPROCS %d, NumCPU %d, %s\n", res.Driver, res.Synchronous, runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.Version())
	if cfg.Mode == "console" {
		return
	}
	fmt.Fprintf(w, "sizes:      N %d jobs, B %d jobs per claim and per report, C %d claimers, %d jobs per enqueue batch\n", cfg.Jobs, cfg.Batch, cfg.Claimers, cfg.EnqueueBatch)
	if cfg.Mode == "keys" {
		return // runKeys prints its methods
	}
	fmt.Fprintf(w, "method:     enqueue N no-op jobs due now in batches (timed apart); then C claimers each loop: claim up to B due jobs without waiting, report them all succeeded in one batch report; the burn-down is timed from the first claim until every claimer found nothing left, and every job is checked succeeded.\n")
	if cfg.Mode == "delivery" {
		fmt.Fprintf(w, "delivery method: a local provider on 127.0.0.1 answers 200 at once (and counts requests); two phases call it, each on a fresh server and file: calling workers, the Go SDK's Worker (concurrency %d, its other options the defaults) whose handler POSTs the job's payload with its idempotency key to the provider over one keep-alive client and returns CheckResponse of the answer, which is what a team runs without delivery; and delivery, a tool of an endpoint without limits that delivers to the provider (--delivery-allow 127.0.0.1/32, dispatcher concurrency %d, each request signed). In each, N jobs are enqueued due an hour ahead on the development clock, which then moves on an hour so all are due at once; timed from that move until the API counts N jobs succeeded (polled every 5 ms once the provider has counted N requests); the provider's count must be N. The target is delivery / calling workers; delivery / workers compares with the no-op burn-down above, which calls nothing. CPU per job: this process's CPU time (user and system, getrusage) during each timed phase over N — servers, provider and clients all run in it; on a shared machine it moves less than the rates. With --rounds R, R rounds (workers, calling workers, delivery) and the medians; quote those, never one run.\n", cfg.DeliveryConcurrency, cfg.DeliveryConcurrency)
		return
	}
	if !cfg.SkipLag {
		fmt.Fprintf(w, "lag method: one claimer long-polls (wait 1s, up to %d jobs) while %d jobs are enqueued one at a time every %s, each due %s later; lag = time the claim returned - the job's stored due time (milliseconds).\n",
			cfg.Batch, cfg.LagJobs, cfg.LagEvery, cfg.LagAhead)
	}
}

func burnDown(ctx context.Context, cfg Config, t target, res *Result) error {
	start := time.Now()
	for left := cfg.Jobs; left > 0; {
		n := min(left, cfg.EnqueueBatch)
		if err := t.enqueueBatch(ctx, n); err != nil {
			return fmt.Errorf("enqueue: %w", err)
		}
		left -= n
	}
	res.EnqueueDuration = time.Since(start)
	res.EnqueueRate = float64(cfg.Jobs) / res.EnqueueDuration.Seconds()

	var done atomic.Int64
	errc := make(chan error, cfg.Claimers)
	var wg sync.WaitGroup
	stopProfile, err := startProfile(cfg.CPUProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	m := startMeter(t)
	start = time.Now()
	for i := range cfg.Claimers {
		wg.Go(func() {
			if err := claimAll(ctx, t, "bench-"+strconv.Itoa(i), cfg.Batch, &done); err != nil {
				errc <- err
			}
		})
	}
	wg.Wait()
	res.BurnDownDuration = time.Since(start)
	m.stop(res, cfg.Jobs)
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	if n := done.Load(); n != int64(cfg.Jobs) {
		return fmt.Errorf("burn-down reported %d jobs succeeded, want %d", n, cfg.Jobs)
	}
	res.BurnDownRate = float64(cfg.Jobs) / res.BurnDownDuration.Seconds()
	return nil
}

// meter measures what the process spends during the burn-down: CPU,
// allocations and, over HTTP, the SDK's traffic.
type meter struct {
	m0   runtime.MemStats
	cpu0 time.Duration
	wire *wireCount
}

func startMeter(t target) *meter {
	m := &meter{}
	if wc, ok := t.(interface{ wireCounts() *wireCount }); ok {
		m.wire = wc.wireCounts()
		m.wire.reset()
	}
	runtime.ReadMemStats(&m.m0)
	m.cpu0, _ = processCPU()
	return m
}

func (m *meter) stop(res *Result, jobs int) {
	if cpu1, ok := processCPU(); ok {
		res.BurnDownCPU = cpu1 - m.cpu0
	}
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	res.BurnDownAllocs, res.BurnDownAllocBytes = m1.Mallocs-m.m0.Mallocs, m1.TotalAlloc-m.m0.TotalAlloc
	if m.wire != nil {
		res.Wire = m.wire.figures(jobs)
	}
}

// claimAll is one claimer of the burn-down: it claims up to batch jobs at
// a time as worker and reports them succeeded, adding them to done, until
// a claim comes back empty (everything is claimed; the rest is with other
// claimers).
func claimAll(ctx context.Context, t target, worker string, batch int, done *atomic.Int64) error {
	for {
		jobs, err := t.claim(ctx, worker, batch, 0)
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		if len(jobs) == 0 {
			return nil
		}
		if err := t.reportSuccess(ctx, jobs); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		done.Add(int64(len(jobs)))
	}
}

// lag measures the due-to-claim lag: one claimer long-polls while jobs are
// enqueued one at a time, each due cfg.LagAhead later; each job's lag is
// the time its claim returned less its stored due time.
func lag(ctx context.Context, cfg Config, t target, res *Result) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lc := &lagClaimer{claimedAt: map[int64]time.Time{}}
	claimErr := make(chan error, 1)
	go func() {
		defer close(claimErr)
		if err := lc.run(ctx, t, cfg.LagJobs, cfg.Batch); err != nil {
			claimErr <- err
		}
	}()
	due := make(map[int64]time.Time, cfg.LagJobs)
	tick := time.NewTicker(cfg.LagEvery)
	defer tick.Stop()
	for range cfg.LagJobs {
		select {
		case <-tick.C:
		case err := <-claimErr:
			return err
		}
		id, d, err := t.enqueueAt(ctx, time.Now().Add(cfg.LagAhead))
		if err != nil {
			return fmt.Errorf("lag enqueue: %w", err)
		}
		due[id] = d
	}
	select {
	case err := <-claimErr:
		if err != nil {
			return err
		}
	case <-time.After(time.Minute):
		return errors.New("lag: the claimer did not claim every job within a minute")
	}
	for id, d := range due {
		at, ok := lc.claimedAt[id]
		if !ok {
			return fmt.Errorf("lag: job %d was never claimed", id)
		}
		res.Lag = append(res.Lag, max(0, at.Sub(d)))
	}
	slices.Sort(res.Lag)
	res.LagP50 = quantile(res.Lag, 0.50)
	res.LagP99 = quantile(res.Lag, 0.99)
	res.LagMax = res.Lag[len(res.Lag)-1]
	return nil
}

// lagClaimer is the claimer of the lag phase: it notes when each job's
// claim returned.
type lagClaimer struct {
	mu        sync.Mutex
	claimedAt map[int64]time.Time
}

// run long-polls (wait 1s, up to batch jobs) and reports what it claims
// succeeded, until it has claimed n jobs or ctx ends (then it returns
// nil: the enqueuer has given up and says why).
func (lc *lagClaimer) run(ctx context.Context, t target, n, batch int) error {
	for {
		lc.mu.Lock()
		got := len(lc.claimedAt)
		lc.mu.Unlock()
		if got >= n {
			return nil
		}
		jobs, err := t.claim(ctx, "bench-lag", batch, time.Second)
		now := time.Now()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("lag claim: %w", err)
		}
		lc.mu.Lock()
		for _, j := range jobs {
			lc.claimedAt[j.id] = now
		}
		lc.mu.Unlock()
		if len(jobs) > 0 {
			if err := t.reportSuccess(ctx, jobs); err != nil {
				return fmt.Errorf("lag report: %w", err)
			}
		}
	}
}

// quantile is the nearest-rank quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func round(d time.Duration) string { return d.Round(time.Millisecond).String() }

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

// startProfile starts a Go CPU profile written to path (none when path is
// empty); stop ends it.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
