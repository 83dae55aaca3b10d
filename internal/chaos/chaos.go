package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/wire"
)

// Config is one chaos run. Zero values take the defaults in the comments.
type Config struct {
	// Binary is the ratchet binary started as the nodes (`ratchet serve`)
	// and the workers (`ratchet chaos worker`). Required.
	Binary string
	// DatabaseURL is a postgres:// URL. The run works in a schema of its
	// own there, made at the start and dropped at the end when every
	// invariant held. Required.
	DatabaseURL string
	// PgCtl and PgData restart PostgreSQL: a pg_ctl (that may run as
	// another user) and the data directory of the server DatabaseURL
	// names, whose settings must be in its postgresql.conf. Both or
	// neither; required for PGRestarts.
	PgCtl, PgData string
	// PGRestarts is how many times PostgreSQL is stopped (immediate mode,
	// as a crash) and started again, spread evenly over Duration; 0: none.
	PGRestarts int
	// PGDown is how long PostgreSQL stays down at each restart; default 2s.
	PGDown time.Duration

	Duration    time.Duration // how long the faults run; default 10m
	Jobs        int           // jobs enqueued in all; default 100000
	MeteredJobs int           // of Jobs, those of the rate-limited endpoint; default Jobs/20
	Nodes       int           // ratchet serve processes; default 3
	// Skew runs the last node's clock this far ahead (ratchet serve
	// --clock-offset); 0: every node on the machine's clock.
	Skew          time.Duration
	Workers       int   // worker processes; default 4
	Concurrency   int   // handlers per worker process; default 16
	MaxConcurrent int64 // maxConcurrent of the main endpoint; default 32
	// RateLimit is the metered endpoint's rateLimitPerMinute; default
	// MeteredJobs over the minutes of Duration (500 for 5,000 in 10m),
	// below the pace they are enqueued at, so that it binds all run long.
	RateLimit int64
	Lease     time.Duration // both endpoints' defaultTimeoutMs; default 10s
	// Keys gives the main endpoint's jobs flow keys, drawn from the seed
	// among this many, and the main endpoint a keyMaxConcurrent
	// (KeyMaxConcurrent); 0: no keys.
	Keys int
	// KeyMaxConcurrent is the main endpoint's keyMaxConcurrent with Keys;
	// default 2. Below a key's share of the handler slots, so it binds.
	KeyMaxConcurrent int64
	// KillEvery and CrashEvery are the ranges of the waits between node
	// kills and between worker crashes; default 15s–30s each.
	KillEvery, CrashEvery [2]time.Duration
	// Drain is how long the jobs may take to finish once the faults stop;
	// default 5m.
	Drain time.Duration
	// Seed draws the fault schedule and the provider's answers; default 1.
	Seed uint64
	// Dir holds the logs of the nodes, the workers and PostgreSQL's
	// restarts; default a new temporary directory, removed after a run
	// whose invariants held.
	Dir string
	// Progress receives a line per fault and a progress line now and
	// then; nil for none.
	Progress io.Writer
}

func (c *Config) defaults() {
	if c.Duration == 0 {
		c.Duration = 10 * time.Minute
	}
	if c.Jobs == 0 {
		c.Jobs = 100_000
	}
	if c.MeteredJobs == 0 {
		c.MeteredJobs = c.Jobs / 20
	}
	if c.Nodes == 0 {
		c.Nodes = 3
	}
	if c.Workers == 0 {
		c.Workers = 4
	}
	if c.Concurrency == 0 {
		c.Concurrency = 16
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = 32
	}
	if c.RateLimit == 0 && c.Duration > 0 {
		c.RateLimit = max(1, int64(time.Duration(c.MeteredJobs)*time.Minute/c.Duration))
	}
	if c.Lease == 0 {
		c.Lease = 10 * time.Second
	}
	if c.Keys > 0 && c.KeyMaxConcurrent == 0 {
		c.KeyMaxConcurrent = 2
	}
	if c.KillEvery == [2]time.Duration{} {
		c.KillEvery = [2]time.Duration{15 * time.Second, 30 * time.Second}
	}
	if c.CrashEvery == [2]time.Duration{} {
		c.CrashEvery = [2]time.Duration{15 * time.Second, 30 * time.Second}
	}
	if c.PGDown == 0 {
		c.PGDown = 2 * time.Second
	}
	if c.Drain == 0 {
		c.Drain = 5 * time.Minute
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Validate names the first field that is out of range.
func (c Config) Validate() error {
	bad := func(name string, v any, allowed string) error {
		return fmt.Errorf("chaos %s: %v %s", name, v, allowed)
	}
	switch {
	case c.Binary == "":
		return bad("Binary", `""`, "is required: the ratchet binary to start as nodes and workers")
	case !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://"):
		return bad("DatabaseURL", strconv.Quote(c.DatabaseURL), "must be a postgres:// URL: several nodes share PostgreSQL")
	case (c.PgCtl == "") != (c.PgData == ""):
		return bad("PgCtl/PgData", strconv.Quote(c.PgCtl)+"/"+strconv.Quote(c.PgData), "must be given together")
	case c.PGRestarts < 0 || c.PGRestarts > 100:
		return bad("PGRestarts", c.PGRestarts, "must be from 0 through 100")
	case c.PGRestarts > 0 && c.PgCtl == "":
		return bad("PGRestarts", c.PGRestarts, "needs PgCtl and PgData")
	case c.Duration < 10*time.Second || c.Duration > 24*time.Hour:
		return bad("Duration", c.Duration, "must be from 10s through 24h")
	case c.Jobs < 100 || c.Jobs > 10_000_000:
		return bad("Jobs", c.Jobs, "must be from 100 through 10000000")
	case c.MeteredJobs < 0 || c.MeteredJobs >= c.Jobs:
		return bad("MeteredJobs", c.MeteredJobs, "must be from 0 to fewer than Jobs")
	case c.Nodes < 1 || c.Nodes > 16:
		return bad("Nodes", c.Nodes, "must be from 1 through 16")
	case c.Skew < -time.Hour || c.Skew > time.Hour:
		return bad("Skew", c.Skew, "must be from -1h through 1h")
	case c.Workers < 1 || c.Workers > 64:
		return bad("Workers", c.Workers, "must be from 1 through 64")
	case c.Concurrency < 1 || c.Concurrency > 256:
		return bad("Concurrency", c.Concurrency, "must be from 1 through 256")
	case c.MaxConcurrent < 1 || c.MaxConcurrent > 10_000:
		return bad("MaxConcurrent", c.MaxConcurrent, "must be from 1 through 10000")
	case c.RateLimit < 1 || c.RateLimit > 1_000_000:
		return bad("RateLimit", c.RateLimit, "must be from 1 through 1000000")
	case c.Lease < time.Second || c.Lease > time.Hour:
		return bad("Lease", c.Lease, "must be from 1s through 1h")
	case c.Keys < 0 || c.Keys > 100_000:
		return bad("Keys", c.Keys, "must be from 0 through 100000")
	case c.Keys > 0 && (c.KeyMaxConcurrent < 1 || c.KeyMaxConcurrent > 10_000):
		return bad("KeyMaxConcurrent", c.KeyMaxConcurrent, "must be from 1 through 10000 with Keys")
	case c.KillEvery[0] < time.Second || c.KillEvery[1] < c.KillEvery[0]:
		return bad("KillEvery", c.KillEvery, "must be a range of at least 1s, low first")
	case c.CrashEvery[0] < time.Second || c.CrashEvery[1] < c.CrashEvery[0]:
		return bad("CrashEvery", c.CrashEvery, "must be a range of at least 1s, low first")
	case c.PGDown < 0 || c.PGDown > time.Minute:
		return bad("PGDown", c.PGDown, "must be from 0 through 1m")
	case c.Drain < 10*time.Second || c.Drain > 24*time.Hour:
		return bad("Drain", c.Drain, "must be from 10s through 24h")
	}
	return nil
}

// The endpoints of a run. Main takes most jobs: its concurrency limit
// binds (more handler slots than maxConcurrent), its provider answers
// fail some jobs for good and retry others. Metered has a rate limit that
// binds for most of the run.
const (
	mainEndpoint    = "main"
	meteredEndpoint = "metered"
)

// jobPlan is one job the producer enqueues.
type jobPlan struct {
	key      string // idempotency key
	endpoint string
	class    class
	flowKey  string // "" for none
}

// run is the state of one chaos run.
type run struct {
	cfg     Config
	started time.Time
	rng     *mrand.Rand // the fault schedule; only the fault loop draws

	schema, baseURL, dbURL string
	dirMade                bool
	key                    string
	ports                  []int
	urls                   []string
	pg                     *pgCtl
	prov                   *provider
	owner                  *client.Client
	plan                   []jobPlan

	nodes   []*proc
	workers []*workerSlot

	// Written by the producer; read after it finishes.
	acked         map[string]int64 // idempotency key → job id
	enqueueRetry  int
	enqueueFailed int // batches given up
	producerDone  chan struct{}

	// Written by the fault loop only.
	kills       []int // per node
	pgRestarts  int
	crashes     int
	midCall     int             // crashes of a worker the provider saw calling
	crashed     map[string]bool // ids of the workers killed
	leasesCut   int             // running jobs the crashed workers held
	unexpected  []string
	faultErrors []string

	logMu sync.Mutex
}

type workerSlot struct {
	id  string
	gen int
	p   *proc
}

// Run makes one chaos run and returns its report, whose Violations list
// the invariants that broke. An error means the run could not be made
// (setup, PostgreSQL that would not start again), not that an invariant
// broke.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, started: time.Now(), rng: mrand.New(mrand.NewPCG(cfg.Seed, cfg.Seed^0x6a09e667f3bcc909)),
		acked: map[string]int64{}, crashed: map[string]bool{}, producerDone: make(chan struct{}), kills: make([]int, cfg.Nodes)}
	defer r.stopProcesses()
	if err := r.setup(ctx); err != nil {
		r.logf("setup failed: %v (logs in %s)", err, r.cfg.Dir)
		r.dropSchema()
		return nil, err
	}
	phaseEnd := r.started.Add(cfg.Duration)
	prodCtx, stopProducer := context.WithCancel(ctx)
	defer func() { stopProducer(); <-r.producerDone }()
	go r.produce(prodCtx)
	progressDone := make(chan struct{})
	pctx, stopProgress := context.WithCancel(ctx)
	go func() { r.progress(pctx); close(progressDone) }()
	err := r.faults(ctx, phaseEnd)
	faultsEnd := time.Now()
	r.logf("faults stop: %s, %s, %s; waiting for every job to finish (up to %s)",
		plural(sum(r.kills), "node kill"), plural(r.pgRestarts, "PostgreSQL restart"), plural(r.crashes, "worker crash"), cfg.Drain)
	var drained bool
	if err == nil {
		drained, err = r.drain(ctx, faultsEnd.Add(cfg.Drain))
	}
	stopProgress()
	<-progressDone
	drainEnd := time.Now()
	r.stopProcesses()
	if err != nil {
		r.logf("run stopped: %v (logs in %s, schema %s kept)", err, r.cfg.Dir, r.schema)
		return nil, err
	}
	rep, err := r.check(ctx)
	if err != nil {
		return nil, err
	}
	rep.FaultTime, rep.DrainTime = faultsEnd.Sub(r.started), drainEnd.Sub(faultsEnd)
	if !drained {
		rep.Violations = append(rep.Violations, fmt.Sprintf("every job ends: %d jobs were still scheduled or running %s after the faults stopped", rep.Unfinished, cfg.Drain))
	}
	r.keepOrClean(rep)
	return rep, nil
}

// keepOrClean keeps the evidence of a run that broke an invariant — its
// logs, its schema and the provider's calls as CSV, named in the report —
// and removes the schema and the directory it made of a run that passed.
func (r *run) keepOrClean(rep *Report) {
	rep.Dir, rep.Schema = r.cfg.Dir, r.schema
	if len(rep.Violations) > 0 {
		if err := r.prov.dump(filepath.Join(r.cfg.Dir, "provider-calls.csv")); err != nil {
			r.logf("write the provider's calls: %v", err)
		}
	}
	if len(rep.Violations) == 0 {
		r.dropSchema()
		if r.dirMade {
			_ = os.RemoveAll(r.cfg.Dir)
			rep.Dir = ""
		}
		rep.Schema = ""
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// logf writes a progress line stamped with the time since the start.
func (r *run) logf(format string, args ...any) {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	fmt.Fprintf(r.cfg.Progress, "[%7s] %s\n", fmtDur(time.Since(r.started)), fmt.Sprintf(format, args...))
}

func fmtDur(d time.Duration) string {
	if d < time.Minute {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Truncate(time.Second).String()
}

// --- setup ---

// setup prepares everything the fault phase acts on: the log directory,
// the owner key, the schema, the job plan, the provider, the nodes, the
// endpoints and the worker processes.
func (r *run) setup(ctx context.Context) error {
	cfg := &r.cfg
	if err := r.makeDir(); err != nil {
		return err
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	r.key = "rk_chaos_" + hex.EncodeToString(rnd[:])
	if err := r.makeSchema(ctx); err != nil {
		return err
	}
	if cfg.PgCtl != "" {
		r.pg = &pgCtl{path: cfg.PgCtl, data: cfg.PgData, log: filepath.Join(cfg.PgData, "chaos-restarts.log")}
		if err := r.pg.status(ctx); err != nil {
			return fmt.Errorf("pg_ctl cannot see a running server in %s: %w", cfg.PgData, err)
		}
	}
	r.planJobs()
	classes := make(map[string]class, len(r.plan))
	flowKeys := map[string]string{}
	for _, j := range r.plan {
		classes[j.key] = j.class
		if j.flowKey != "" {
			flowKeys[j.key] = j.flowKey
		}
	}
	var err error
	if r.prov, err = newProvider(cfg.Seed, []string{mainEndpoint, meteredEndpoint}, classes, flowKeys); err != nil {
		return err
	}
	if err := r.startNodes(ctx); err != nil {
		return err
	}
	if r.owner, err = newFailoverClient(r.urls, r.key); err != nil {
		return err
	}
	if err := r.createEndpoints(ctx); err != nil {
		return err
	}
	r.workers = make([]*workerSlot, cfg.Workers)
	for i := range r.workers {
		r.workers[i] = &workerSlot{}
		if err := r.startWorker(ctx, i); err != nil {
			return err
		}
	}
	keys := ""
	if cfg.Keys > 0 {
		keys = fmt.Sprintf(", the main jobs over %d flow keys (keyMaxConcurrent %d)", cfg.Keys, cfg.KeyMaxConcurrent)
	}
	r.logf("%d worker processes × %d handlers, provider on %s; %s of faults, %d jobs (%d metered)%s, seed %d",
		cfg.Workers, cfg.Concurrency, r.prov.url, cfg.Duration, cfg.Jobs, cfg.MeteredJobs, keys, cfg.Seed)
	return nil
}

// makeDir makes the directory the logs go to: the one configured, or a
// temporary one that a passing run removes (dirMade).
func (r *run) makeDir() error {
	cfg := &r.cfg
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "ratchet-chaos-")
		if err != nil {
			return err
		}
		cfg.Dir, r.dirMade = d, true
	} else if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return err
	}
	return nil
}

// startNodes picks a free port for each node and starts them all at once,
// as a deployment rolls out: their migrations and bootstrap race.
func (r *run) startNodes(ctx context.Context) error {
	cfg := &r.cfg
	for range cfg.Nodes {
		port, err := freePort()
		if err != nil {
			return err
		}
		r.ports = append(r.ports, port)
		r.urls = append(r.urls, fmt.Sprintf("http://127.0.0.1:%d", port))
	}
	skewed := ""
	if cfg.Skew != 0 {
		skewed = fmt.Sprintf(", node %d's clock %s", cfg.Nodes, fmtOffset(cfg.Skew))
	}
	r.logf("starting %d nodes on one PostgreSQL schema (%s)%s; logs in %s", cfg.Nodes, r.schema, skewed, cfg.Dir)
	r.nodes = make([]*proc, cfg.Nodes)
	errs := make([]error, cfg.Nodes)
	var wg sync.WaitGroup
	for i := range r.nodes {
		wg.Go(func() { r.nodes[i], errs[i] = r.startNode(ctx, i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func fmtOffset(d time.Duration) string {
	if d > 0 {
		return "+" + d.String()
	}
	return d.String()
}

// makeSchema creates the run's schema and points dbURL at it.
func (r *run) makeSchema(ctx context.Context) error {
	u, err := url.Parse(r.cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("database URL: %w", err)
	}
	r.schema = fmt.Sprintf("chaos_%s_%s", time.Now().UTC().Format("20060102_150405"), r.key[len(r.key)-6:])
	conn, err := connect(ctx, r.cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", u.Redacted(), err)
	}
	defer conn.Close(context.Background())
	if r.cfg.PgData != "" {
		// Restarting a server other than the one the nodes use would test
		// nothing (and stop someone else's server): compare when allowed.
		var dataDir string
		if err := conn.QueryRow(ctx, `SELECT current_setting('data_directory')`).Scan(&dataDir); err == nil {
			a, _ := filepath.EvalSymlinks(dataDir)
			b, _ := filepath.EvalSymlinks(r.cfg.PgData)
			if a != b {
				return fmt.Errorf("--pg-data %s is not the data directory of the server at the database URL (%s)", r.cfg.PgData, dataDir)
			}
		}
	}
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{r.schema}.Sanitize()); err != nil {
		return fmt.Errorf("create schema %s: %w", r.schema, err)
	}
	r.baseURL = r.cfg.DatabaseURL
	q := u.Query()
	q.Set("search_path", r.schema)
	u.RawQuery = q.Encode()
	r.dbURL = u.String()
	return nil
}

func (r *run) dropSchema() {
	if r.schema == "" || r.baseURL == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := connect(ctx, r.baseURL)
	if err != nil {
		r.logf("drop schema %s: %v", r.schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{r.schema}.Sanitize()+` CASCADE`); err != nil {
		r.logf("drop schema %s: %v", r.schema, err)
	}
}

func connect(ctx context.Context, dsn string) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return pgx.Connect(ctx, dsn)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// planJobs decides every job's key, endpoint and provider class, and with
// Keys the flow key of each main job, drawn from the seed. Metered jobs
// are spread evenly among the others.
func (r *run) planJobs() {
	n, m := r.cfg.Jobs, r.cfg.MeteredJobs
	r.plan = make([]jobPlan, n)
	for i := range r.plan {
		j := jobPlan{key: "chaos-" + strconv.Itoa(i), endpoint: mainEndpoint, class: classOf(r.cfg.Seed, i)}
		if i*m/n != (i+1)*m/n {
			j.endpoint, j.class = meteredEndpoint, classOK
		} else if r.cfg.Keys > 0 {
			j.flowKey = "key-" + strconv.FormatUint(splitmix(r.cfg.Seed^uint64(i)<<20)%uint64(r.cfg.Keys), 10)
		}
		r.plan[i] = j
	}
}

func (r *run) startNode(ctx context.Context, i int) (*proc, error) {
	args := []string{"serve", "--addr", fmt.Sprintf("127.0.0.1:%d", r.ports[i]), "--database", r.dbURL, "--bootstrap-key", r.key,
		"--log-level", "warn", "--retention", "0"}
	if r.cfg.Skew != 0 && i == r.cfg.Nodes-1 {
		args = append(args, "--clock-offset", r.cfg.Skew.String())
	}
	log, err := openLog(filepath.Join(r.cfg.Dir, fmt.Sprintf("node-%d.log", i+1)))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "=== %s start: ratchet %s\n", time.Now().UTC().Format(time.RFC3339Nano), strings.Join(args, " "))
	return startProc(ctx, fmt.Sprintf("node %d", i+1), r.cfg.Binary, args, nil, log, "listening on http://", 90*time.Second)
}

func (r *run) startWorker(ctx context.Context, i int) error {
	s := r.workers[i]
	s.gen++
	s.id = fmt.Sprintf("w%d.%d", i+1, s.gen)
	log, err := openLog(filepath.Join(r.cfg.Dir, fmt.Sprintf("worker-%d.log", i+1)))
	if err != nil {
		return err
	}
	args := []string{"chaos", "worker", "--nodes", strings.Join(r.urls, ","), "--provider", r.prov.url,
		"--id", s.id, "--concurrency", strconv.Itoa(r.cfg.Concurrency), "--tools", mainEndpoint + "@1," + meteredEndpoint + "@1"}
	fmt.Fprintf(log, "=== %s start %s\n", time.Now().UTC().Format(time.RFC3339Nano), s.id)
	p, err := startProc(ctx, "worker "+s.id, r.cfg.Binary, args, []string{"RATCHET_KEY=" + r.key}, log, "", 0)
	if err != nil {
		return err
	}
	s.p = p
	return nil
}

func (r *run) createEndpoints(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	lease := r.cfg.Lease.Milliseconds()
	limit := r.cfg.RateLimit
	eps := []struct {
		name string
		p    client.EndpointPolicy
	}{
		// Retries after 1, 2 and 4 s (±20 %); the fourth attempt is the
		// last. The circuit is kept out of the run: its threshold is never
		// reached, so every hold is a concurrency or rate-limit hold.
		// With Keys, its jobs carry flow keys and a key may run
		// KeyMaxConcurrent at once.
		{mainEndpoint, client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 4, InitialDelayMs: 1000, Multiplier: 2, MaxDelayMs: 4000, JitterPercent: 20}}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: lease, MaxConcurrent: r.cfg.MaxConcurrent, CircuitFailureThreshold: 1000, KeyLimits: r.keyLimits()}}},
		// The provider always answers 200 here; attempts fail only when a
		// worker crashes, and ten are plenty.
		{meteredEndpoint, client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 10, InitialDelayMs: 1000, Multiplier: 1, MaxDelayMs: 1000, JitterPercent: 0}}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: lease, MaxConcurrent: 4, RateLimitPerMinute: &limit, CircuitFailureThreshold: 1000}}},
	}
	for _, e := range eps {
		if _, err := r.owner.CreateEndpoint(ctx, e.name, e.p); err != nil {
			return fmt.Errorf("create endpoint %s: %w", e.name, err)
		}
		if _, err := r.owner.PublishTool(ctx, client.ToolSpec{Name: e.name, Version: "1", Endpoint: e.name}); err != nil {
			return fmt.Errorf("publish tool %s@1: %w", e.name, err)
		}
	}
	return nil
}

// keyLimits are the main endpoint's limits per key: keyMaxConcurrent
// with Keys, none without.
func (r *run) keyLimits() client.KeyLimits {
	if r.cfg.Keys == 0 {
		return client.KeyLimits{}
	}
	n := r.cfg.KeyMaxConcurrent
	return client.KeyLimits{KeyMaxConcurrent: &n}
}

// --- the producer ---

// produce enqueues the planned jobs in batches spread over the first 85 %
// of the fault phase (the work then lasts about as long as the faults), each batch through the next node that answers. A
// batch that fails is sent again with the same idempotency keys until it
// is acknowledged, so a batch whose answer was lost is answered with the
// jobs it made.
func (r *run) produce(ctx context.Context) {
	defer close(r.producerDone)
	batch := min(100, max(10, r.cfg.Jobs/200))
	n := (len(r.plan) + batch - 1) / batch
	span := enqueueSpan(r.cfg.Duration)
	deadline := r.started.Add(r.cfg.Duration + r.cfg.Drain)
	for k := range n {
		at := r.started.Add(span * time.Duration(k) / time.Duration(n))
		if !sleepUntil(ctx, at) {
			return
		}
		part := r.plan[k*batch : min((k+1)*batch, len(r.plan))]
		reqs := make([]client.EnqueueRequest, len(part))
		for i, j := range part {
			reqs[i] = client.EnqueueRequest{Tool: j.endpoint + "@1", IdempotencyKey: j.key, FlowKey: j.flowKey,
				Payload: json.RawMessage(`{"n":` + strings.TrimPrefix(j.key, "chaos-") + `}`)}
		}
		for try := 0; ; try++ {
			if ctx.Err() != nil || time.Now().After(deadline) {
				r.enqueueFailed++
				break
			}
			c, cancel := context.WithTimeout(ctx, 30*time.Second)
			items, err := r.owner.EnqueueBatch(c, reqs)
			cancel()
			if err == nil && len(items) == len(reqs) {
				for i, it := range items {
					r.acked[part[i].key] = it.ID
				}
				break
			}
			r.enqueueRetry++
			sleepUntil(ctx, time.Now().Add(time.Duration(100+r.jitter(400))*time.Millisecond))
		}
	}
}

// enqueueSpan is how long the producer takes to enqueue every job.
func enqueueSpan(d time.Duration) time.Duration { return d * 85 / 100 }

var jitterSeq atomic.Uint64

// jitter is a number in [0, n) for waits outside the fault schedule.
func (r *run) jitter(n int) int {
	return int(splitmix(r.cfg.Seed^jitterSeq.Add(1)) % uint64(n))
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

// --- faults ---

type faultKind int

const (
	killNode faultKind = iota
	crashWorker
	restartPG
)

type fault struct {
	at   time.Duration
	kind faultKind
}

// schedule draws the faults of the run from the seed: node kills and
// worker crashes at waits drawn from their ranges, PostgreSQL restarts
// spread evenly.
func (r *run) schedule() []fault {
	var fs []fault
	draw := func(rng [2]time.Duration) time.Duration {
		return rng[0] + time.Duration(r.rng.Int64N(int64(rng[1]-rng[0])+1))
	}
	for t := draw(r.cfg.KillEvery); t < r.cfg.Duration; t += draw(r.cfg.KillEvery) {
		fs = append(fs, fault{t, killNode})
	}
	// Crashes start half a wait in, so they fall between kills.
	for t := draw(r.cfg.CrashEvery) / 2; t < r.cfg.Duration; t += draw(r.cfg.CrashEvery) {
		fs = append(fs, fault{t, crashWorker})
	}
	for k := 1; k <= r.cfg.PGRestarts; k++ {
		fs = append(fs, fault{r.cfg.Duration * time.Duration(k) / time.Duration(r.cfg.PGRestarts+1), restartPG})
	}
	slices.SortStableFunc(fs, func(a, b fault) int { return int(a.at - b.at) })
	return fs
}

// faults runs the whole schedule, one fault at a time, then waits out
// phaseEnd, and between faults restarts any node or worker that exited by
// itself (and notes it: that is a finding). A fault that comes due late
// (the one before it took long: a node slow to start again on a loaded
// machine) is made at once, never dropped, so a seed always makes the
// same faults and the phase lasts longer than Duration instead.
func (r *run) faults(ctx context.Context, phaseEnd time.Time) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for _, f := range r.schedule() {
		for time.Since(r.started) < f.at {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
				if err := r.supervise(ctx); err != nil {
					return err
				}
			}
		}
		var err error
		switch f.kind {
		case killNode:
			err = r.killNode(ctx)
		case crashWorker:
			err = r.crashWorker(ctx)
		case restartPG:
			err = r.restartPG(ctx)
		}
		if err != nil {
			return err
		}
	}
	for time.Now().Before(phaseEnd) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if err := r.supervise(ctx); err != nil {
				return err
			}
		}
	}
	return r.supervise(ctx)
}

// supervise restarts nodes and workers that exited without being killed.
func (r *run) supervise(ctx context.Context) error {
	for i, p := range r.nodes {
		if p.exited() {
			r.unexpected = append(r.unexpected, fmt.Sprintf("node %d exited by itself (%s)", i+1, p.cmd.ProcessState))
			r.logf("node %d exited by itself (%s); starting it again", i+1, p.cmd.ProcessState)
			if err := r.restartNode(ctx, i); err != nil {
				return err
			}
		}
	}
	for i, s := range r.workers {
		if s.p.exited() {
			r.unexpected = append(r.unexpected, fmt.Sprintf("worker %s exited by itself (%s)", s.id, s.p.cmd.ProcessState))
			r.logf("worker %s exited by itself (%s); starting it again", s.id, s.p.cmd.ProcessState)
			if err := r.startWorker(ctx, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// restartNode starts node i again on its port, retrying while it cannot
// start (PostgreSQL restarting, the port not yet free).
func (r *run) restartNode(ctx context.Context, i int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		p, err := r.startNode(ctx, i)
		if err == nil {
			r.nodes[i] = p
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return fmt.Errorf("node %d would not start again: %w", i+1, err)
		}
		sleepUntil(ctx, time.Now().Add(500*time.Millisecond))
	}
}

func (r *run) killNode(ctx context.Context) error {
	i := r.rng.IntN(r.cfg.Nodes)
	t0 := time.Now()
	r.nodes[i].kill()
	r.kills[i]++
	// Down for 0.5–2 s before it starts again.
	sleepUntil(ctx, t0.Add(500*time.Millisecond+time.Duration(r.rng.Int64N(int64(1500*time.Millisecond)))))
	if err := r.restartNode(ctx, i); err != nil {
		return err
	}
	what := ""
	if r.cfg.Skew != 0 && i == r.cfg.Nodes-1 {
		what = " (the skewed node)"
	}
	r.logf("kill -9 node %d%s; serving again after %s", i+1, what, fmtDur(time.Since(t0)))
	return nil
}

// crashWorker kills, with SIGKILL, a worker process in the middle of a
// provider call: one the provider sees calling now, so it holds at least
// that lease (and whatever else it has claimed and not reported). It
// looks for up to 5 s; then any worker goes. A new worker process takes
// the slot. The leases the crash left are counted in the database.
func (r *run) crashWorker(ctx context.Context) error {
	i := -1
	for deadline := time.Now().Add(5 * time.Second); i < 0 && time.Now().Before(deadline); {
		if id, n := r.prov.busiest(); n > 0 {
			i = slices.IndexFunc(r.workers, func(s *workerSlot) bool { return s.id == id })
		}
		if i < 0 && !sleepUntil(ctx, time.Now().Add(2*time.Millisecond)) {
			return ctx.Err()
		}
	}
	how := "in the middle of a call"
	if i < 0 {
		i, how = r.rng.IntN(len(r.workers)), "with no call in progress (none for 5 s)"
	} else {
		r.midCall++
	}
	s := r.workers[i]
	old := s.id
	s.p.kill()
	r.crashes++
	r.crashed[old] = true
	if err := r.startWorker(ctx, i); err != nil {
		return err
	}
	var leases int
	err := r.withConn(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE state = 'running' AND worker_id = $1`, old).Scan(&leases)
	})
	note := plural(leases, "lease")
	if err != nil {
		note = "leases unknown: " + err.Error()
	}
	r.leasesCut += leases
	r.logf("kill -9 worker %s %s, holding %s; %s started in its place", old, how, note, s.id)
	return nil
}

// plural is "1 lease", "2 leases"; "1 worker crash", "2 worker crashes".
func plural(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "sh"):
		return strconv.Itoa(n) + " " + noun + "es"
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func (r *run) restartPG(ctx context.Context) error {
	t0 := time.Now()
	if err := r.pg.stop(ctx); err != nil {
		r.faultErrors = append(r.faultErrors, err.Error())
		r.logf("PostgreSQL restart: %v", err)
		return nil
	}
	sleepUntil(ctx, t0.Add(r.cfg.PGDown))
	var err error
	for try := 0; try < 5; try++ {
		if err = r.pg.start(ctx); err == nil {
			break
		}
		sleepUntil(ctx, time.Now().Add(time.Second))
	}
	if err != nil {
		return fmt.Errorf("PostgreSQL would not start again: %w", err)
	}
	r.pgRestarts++
	r.logf("PostgreSQL stopped (immediate mode) and started again: down %s", fmtDur(time.Since(t0)))
	return nil
}

// withConn runs fn on a fresh connection to the run's schema.
func (r *run) withConn(ctx context.Context, fn func(*pgx.Conn) error) error {
	conn, err := connect(ctx, r.dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return fn(conn)
}

// states counts the run's jobs by state.
func (r *run) states(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	err := r.withConn(ctx, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `SELECT state, count(*) FROM jobs GROUP BY state`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			var n int64
			if err := rows.Scan(&s, &n); err != nil {
				return err
			}
			out[s] = n
		}
		return rows.Err()
	})
	return out, err
}

func fmtStates(m map[string]int64) string {
	var b strings.Builder
	for _, st := range wire.JobStates() {
		s := string(st)
		if m[s] > 0 || st != wire.JobCancelled {
			fmt.Fprintf(&b, " %s %d", s, m[s])
		}
	}
	return strings.TrimSpace(b.String())
}

// progress prints the jobs by state now and then.
func (r *run) progress(ctx context.Context) {
	every := min(30*time.Second, max(5*time.Second, r.cfg.Duration/20))
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s, err := r.states(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.logf("jobs: the database does not answer (%v)", err)
			}
			continue
		}
		var total int64
		for _, n := range s {
			total += n
		}
		r.logf("jobs: %d in the database: %s", total, fmtStates(s))
	}
}

// drain waits, with every node and worker up, until the producer is done
// and no job is scheduled or running, or until the deadline.
func (r *run) drain(ctx context.Context, deadline time.Time) (bool, error) {
	select {
	case <-r.producerDone:
	case <-ctx.Done():
		return false, ctx.Err()
	case <-time.After(time.Until(deadline)):
		return false, nil
	}
	if r.enqueueFailed > 0 {
		r.logf("the producer gave up on %d batches", r.enqueueFailed)
	}
	for {
		if err := r.supervise(ctx); err != nil {
			return false, err
		}
		s, err := r.states(ctx)
		if err == nil && s["scheduled"]+s["running"] == 0 {
			r.logf("every job finished: %s", fmtStates(s))
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		if !sleepUntil(ctx, time.Now().Add(time.Second)) {
			return false, ctx.Err()
		}
	}
}

// stopProcesses stops the workers (they finish and report what they run)
// and then the nodes, gracefully.
func (r *run) stopProcesses() {
	var wg sync.WaitGroup
	for _, s := range r.workers {
		if s != nil && s.p != nil {
			wg.Go(func() { s.p.stop(20 * time.Second) })
		}
	}
	wg.Wait()
	for _, p := range r.nodes {
		if p != nil {
			wg.Go(func() { p.stop(20 * time.Second) })
		}
	}
	wg.Wait()
	if r.prov != nil {
		r.prov.close()
	}
}
