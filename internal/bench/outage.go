package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/server"
	"github.com/getratchet/ratchet/wire"
)

// outagePlan is the default scenario's provider under cfg: down for
// cfg.OutageFor answering 503 with Retry-After, then cfg.Capacity requests
// a second with the draft's rate-limit headers (and the IETF fields with
// cfg.IETFHeaders).
func outagePlan(cfg Config) providerPlan {
	h := headersDraft
	if cfg.IETFHeaders {
		h = headersIETF
	}
	return providerPlan{Kind: outage503RetryAfter, Outage: cfg.OutageFor, Capacity: cfg.Capacity, Headers: h, RetryAfter: cfg.OutageRetryAfter}
}

// OutageVariants are the scenarios of mode outage, in the order "all"
// runs them.
var OutageVariants = []string{"retry-after", "503", "refused", "slow", "flap", "noheaders"}

var outageVariants = map[string]func(cfg Config) providerPlan{
	"retry-after": outagePlan,
	"503":         func(cfg Config) providerPlan { p := outagePlan(cfg); p.Kind = outage503; return p },
	"refused":     func(cfg Config) providerPlan { p := outagePlan(cfg); p.Kind = outageRefused; return p },
	"slow":        func(cfg Config) providerPlan { p := outagePlan(cfg); p.Capacity = max(1, cfg.Capacity/5); return p },
	"flap":        func(cfg Config) providerPlan { p := outagePlan(cfg); p.Flap = cfg.FlapEvery; return p },
	"noheaders":   func(cfg Config) providerPlan { p := outagePlan(cfg); p.Headers = headersNone; return p },
}

// outageEndpoint names the endpoint and tool of mode outage.
const outageEndpoint = "outage"

// runOutage is mode outage: each variant cfg.Variant names, in turn, on a
// fresh database, printing the method first and each variant's figures.
func runOutage(ctx context.Context, cfg Config, dir string, w io.Writer) ([]*OutageResult, error) {
	printOutageMethod(w, cfg)
	names := []string{cfg.Variant}
	if cfg.Variant == "all" {
		names = OutageVariants
	}
	var out []*OutageResult
	for _, name := range names {
		r := &outageRun{cfg: cfg, variant: name, plan: outageVariants[name](cfg), dir: dir}
		res, err := r.run(ctx)
		if err != nil {
			return out, fmt.Errorf("variant %s: %w", name, err)
		}
		res.print(w)
		out = append(out, res)
	}
	return out, nil
}

func printOutageMethod(w io.Writer, cfg Config) {
	driver := "a fresh SQLite file"
	if cfg.DatabaseURL != "" {
		driver = "PostgreSQL (a schema of the run's own, dropped after)"
	}
	fmt.Fprintf(w, "ratchet bench: mode outage (HTTP delivery through a provider's outage and recovery)\n")
	fmt.Fprintf(w, "settings:   %d in-process server(s) (server.Run, as `ratchet serve --delivery-allow 127.0.0.1/32`, delivery concurrency %d each) on %s per variant, GOMAXPROCS %d, NumCPU %d, load average %s\n",
		cfg.Nodes, cfg.DeliveryConcurrency, driver, runtimeProcs(), runtime.NumCPU(), loadAverage())
	fmt.Fprintf(w, "method:     a provider on 127.0.0.1 starts down for %s; an endpoint (preset AGGRESSIVE, maxConcurrent 50, the default circuit: 5 failures, open 5 s unless the provider's Retry-After says otherwise) and an HTTP tool delivering to the provider are created, and %d jobs are enqueued at once (batches of 1000) while it is down. "+
		"Then it recovers with a token bucket of C requests a second (burst C) and answers 200 within it and 429 above it. The provider records every request (arrival, job, attempt, answer); the endpoint's circuit is read through the API every 200 ms; the run ends when every job has finished, or after %s. "+
		"Figures at the provider: requests after the first recovery and those refused with 429; the busiest second (1 s buckets from the provider's start) against C; the drain, from the recovery to the last 200, against backlog ÷ C (with flapping, counting only the up phases); from the jobs: states and attempts.\n",
		cfg.OutageFor, cfg.Jobs, cfg.TimeLimit)
	fmt.Fprintf(w, "targets:    at most 10 %% of requests after recovery refused; no second over 2 × C; the drain within 1.3 × backlog ÷ C; no job exhausted\n")
}

// outageRun is one variant's run.
type outageRun struct {
	cfg     Config
	variant string
	plan    providerPlan
	dir     string

	nodes   []*client.Client
	stops   []func()
	circuit circuitLog
}

// run stages the variant and gathers its figures.
func (r *outageRun) run(ctx context.Context) (*OutageResult, error) {
	prov, err := newOutageProvider(r.plan)
	if err != nil {
		return nil, err
	}
	defer prov.close()
	dbURL, dropDB, err := r.database(ctx)
	if err != nil {
		return nil, err
	}
	defer dropDB()
	defer r.stopNodes()
	if err := r.startNodes(dbURL); err != nil {
		return nil, err
	}
	if err := r.setUp(ctx, prov.url()); err != nil {
		return nil, err
	}
	pctx, stopProvider := context.WithCancel(ctx)
	defer stopProvider()
	started, provDone := make(chan time.Time, 1), make(chan error, 1)
	go func() { provDone <- prov.run(pctx, started) }()
	start := <-started
	res := &OutageResult{Variant: r.variant, Plan: r.plan, Jobs: r.cfg.Jobs, Nodes: r.cfg.Nodes}
	if err := r.enqueue(ctx); err != nil {
		return nil, err
	}
	res.EnqueueTook = time.Since(start)
	sctx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() { defer close(sampled); r.circuit.sample(sctx, r.nodes[0], start) }()
	res.TimedOut, err = r.await(ctx, start)
	stopSampling()
	<-sampled
	stopProvider()
	if perr := <-provDone; err == nil {
		err = perr
	}
	if err != nil {
		return nil, err
	}
	res.Circuit = r.circuit.changes
	res.requests = prov.recorded()
	res.OutageFigures = outageFigures(r.plan, res.requests, r.cfg.Jobs)
	if err := r.readJobs(ctx, res); err != nil {
		return nil, err
	}
	return res, r.unseenAttempts(ctx, res)
}

// database is the variant's database: a fresh SQLite file in dir, or a
// fresh schema of cfg.DatabaseURL's PostgreSQL, dropped by drop.
func (r *outageRun) database(ctx context.Context) (dbURL string, drop func(), err error) {
	if r.cfg.DatabaseURL == "" {
		return filepath.Join(r.dir, "outage-"+r.variant+".db"), func() {}, nil
	}
	u, err := url.Parse(r.cfg.DatabaseURL)
	if err != nil {
		return "", nil, fmt.Errorf("database: %w", err)
	}
	schema := fmt.Sprintf("bench_outage_%d", time.Now().UnixNano())
	exec := func(ctx context.Context, sql string) error {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, r.cfg.DatabaseURL)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func() {
		_ = exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	}, nil
}

// startNodes starts cfg.Nodes servers on dbURL, one after the other (the
// first migrates and creates the project), each on a port of its own.
func (r *outageRun) startNodes(dbURL string) error {
	key := engine.NewSecret()
	for i := range r.cfg.Nodes {
		port, err := freeLoopbackPort()
		if err != nil {
			return err
		}
		base, stop, done, err := startServer(server.Config{Addr: "127.0.0.1:" + strconv.Itoa(port), DatabaseURL: dbURL, BootstrapKey: key,
			SQLiteSynchronous: r.cfg.Synchronous, Retention: -1, ShutdownTimeout: 2 * time.Second, DeliveryConcurrency: r.cfg.DeliveryConcurrency,
			DeliveryAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, "outage bench server "+strconv.Itoa(i+1))
		r.stops = append(r.stops, func() { stop(); <-done })
		if err != nil {
			return err
		}
		r.nodes = append(r.nodes, client.New(base, key))
	}
	return nil
}

func (r *outageRun) stopNodes() {
	var wg sync.WaitGroup
	for _, stop := range r.stops {
		wg.Go(stop)
	}
	wg.Wait()
	r.stops = nil
}

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// setUp creates the endpoint (AGGRESSIVE, maxConcurrent 50, the default
// circuit) and the tool that delivers to the provider.
func (r *outageRun) setUp(ctx context.Context, providerURL string) error {
	c := r.nodes[0]
	if _, err := c.CreateEndpoint(ctx, outageEndpoint, client.EndpointPolicy{Policy: client.Policy{Preset: "AGGRESSIVE"}, EndpointSettings: wire.EndpointSettings{MaxConcurrent: 50}}); err != nil {
		return fmt.Errorf("create the endpoint: %w", err)
	}
	if _, err := c.PublishTool(ctx, client.ToolSpec{Name: outageEndpoint, Version: "1", Endpoint: outageEndpoint,
		Delivery: &wire.DeliveryTarget{URL: providerURL}}); err != nil {
		return fmt.Errorf("publish the tool: %w", err)
	}
	return nil
}

// enqueue enqueues the N jobs, due now, in batches of 1000 spread over
// the nodes.
func (r *outageRun) enqueue(ctx context.Context) error {
	for i, left := 0, r.cfg.Jobs; left > 0; i++ {
		n := min(left, 1000)
		rs := make([]client.EnqueueRequest, n)
		for j := range rs {
			rs[j] = client.EnqueueRequest{Tool: outageEndpoint + "@1", Payload: json.RawMessage(`{}`)}
		}
		if _, err := r.nodes[i%len(r.nodes)].EnqueueBatch(ctx, rs); err != nil {
			return fmt.Errorf("enqueue: %w", err)
		}
		left -= n
	}
	return nil
}

// await polls the endpoint's job counts every 500 ms until every job has
// finished (timedOut false) or the time limit from start has passed.
func (r *outageRun) await(ctx context.Context, start time.Time) (timedOut bool, err error) {
	deadline := start.Add(r.cfg.TimeLimit)
	for {
		jc, err := r.nodes[0].JobCounts(ctx, outageEndpoint, "")
		if err != nil {
			return false, fmt.Errorf("count the jobs: %w", err)
		}
		if jc.Counts.Scheduled+jc.Counts.Running == 0 && jc.Total >= int64(r.cfg.Jobs) {
			return false, nil
		}
		if time.Now().After(deadline) {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// readJobs lists the endpoint's jobs for their states and attempts.
func (r *outageRun) readJobs(ctx context.Context, res *OutageResult) error {
	f := client.JobFilter{Endpoint: outageEndpoint, Sort: wire.SortIDAsc, Limit: wire.MaxListLimit}
	for range r.cfg.Jobs/wire.MaxListLimit + 2 {
		page, err := r.nodes[0].ListJobs(ctx, f)
		if err != nil {
			return fmt.Errorf("list the jobs: %w", err)
		}
		for _, j := range page.Jobs {
			res.addJob(j.State, j.Attempt, j.LastClassification)
			if res.attempts == nil {
				res.attempts = map[int64]int64{}
			}
			res.attempts[j.ID] = j.Attempt
		}
		if page.NextCursor == nil {
			return nil
		}
		f.Cursor = *page.NextCursor
	}
	return fmt.Errorf("list the jobs: more pages than %d jobs make", r.cfg.Jobs)
}

// unseenAttempts reads the attempts of the jobs that have more attempts
// than the provider saw requests (at most 2000 jobs, to bound the run)
// and counts the attempts without an HTTP answer: never sent (the
// dispatcher's "not sent" of a job that waited past its lease's margin)
// or sent without an answer (a refused or failed connection).
func (r *outageRun) unseenAttempts(ctx context.Context, res *OutageResult) error {
	seen := map[int64]int64{}
	for _, q := range res.requests {
		seen[q.job]++
	}
	read := 0
	for id, n := range res.attempts {
		if n <= seen[id] {
			continue
		}
		if read++; read > 2000 {
			res.UnseenUnread++
			continue
		}
		j, err := r.nodes[0].GetJob(ctx, id)
		if err != nil {
			return fmt.Errorf("read job %d: %w", id, err)
		}
		for _, a := range j.Attempts {
			switch {
			case a.HTTPStatus != nil:
			case strings.HasPrefix(a.Message, "not sent"):
				res.NotSent++
			default:
				res.NoAnswer++
			}
		}
	}
	return nil
}

// circuitChange is a change of the endpoint's circuit seen by sampling;
// From equal to To (open) is a circuit opened again, at a new openedAt,
// after a half-open probe failed between two samples.
type circuitChange struct {
	At       time.Duration // since the provider's start
	From, To wire.CircuitState
}

// circuitLog samples the endpoint's circuit every 200 ms and keeps its
// changes: of its state, and of its openedAt (a probe that failed between
// two samples). A closed or half-open state shorter than a sample may be
// missed.
type circuitLog struct {
	changes  []circuitChange
	last     wire.CircuitState
	openedAt string
}

func (l *circuitLog) sample(ctx context.Context, c *client.Client, start time.Time) {
	l.last = wire.CircuitClosed
	for {
		if ep, err := c.GetEndpoint(ctx, outageEndpoint); err == nil {
			st := ep.Circuit.State
			reopened := st == wire.CircuitOpen && l.last == wire.CircuitOpen && ep.Circuit.OpenedAt != l.openedAt
			if st != l.last || reopened {
				l.changes = append(l.changes, circuitChange{At: time.Since(start), From: l.last, To: st})
			}
			l.last, l.openedAt = st, ep.Circuit.OpenedAt
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// outageDefaults fills mode outage's zero fields (see Config).
func (c *Config) outageDefaults() {
	if c.Variant == "" {
		c.Variant = "retry-after"
	}
	if c.OutageFor == 0 {
		c.OutageFor = 40 * time.Second
	}
	if c.Capacity == 0 {
		c.Capacity = 100
	}
	if c.TimeLimit == 0 {
		c.TimeLimit = 15 * time.Minute
	}
	if c.Nodes == 0 {
		c.Nodes = 1
	}
	if c.FlapEvery == 0 {
		c.FlapEvery = 20 * time.Second
	}
	if c.OutageRetryAfter == 0 {
		c.OutageRetryAfter = 5 * time.Second
	}
	if c.Jobs == 0 {
		c.Jobs = 5000
	}
	if c.DeliveryConcurrency == 0 {
		c.DeliveryConcurrency = 32
	}
}

// validateOutage checks mode outage's fields (after the defaults).
func (c *Config) validateOutage() []error {
	if c.Mode != "outage" {
		return nil
	}
	var errs []error
	check := func(ok bool, field, value, allowed string) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s is not allowed; %s", field, value, allowed))
		}
	}
	_, known := outageVariants[c.Variant]
	check(known || c.Variant == "all", "variant", strconv.Quote(c.Variant), "must be "+strings.Join(OutageVariants, ", ")+" or all")
	check(c.OutageFor >= time.Second && c.OutageFor <= time.Hour, "outage", c.OutageFor.String(), "must be from 1s through 1h")
	check(c.Capacity >= 1 && c.Capacity <= 100_000, "capacity", strconv.Itoa(c.Capacity), "must be from 1 through 100000 requests per second")
	check(c.TimeLimit >= 10*time.Second && c.TimeLimit <= 24*time.Hour, "time-limit", c.TimeLimit.String(), "must be from 10s through 24h")
	check(c.Nodes >= 1 && c.Nodes <= 9, "nodes", strconv.Itoa(c.Nodes), "must be from 1 through 9")
	pg := strings.HasPrefix(c.DatabaseURL, "postgres://") || strings.HasPrefix(c.DatabaseURL, "postgresql://")
	check(c.DatabaseURL == "" || pg, "database", strconv.Quote(c.DatabaseURL), "mode outage takes a postgres:// URL (each variant runs in a fresh schema), or none for fresh SQLite files")
	check(c.Nodes == 1 || pg, "nodes", strconv.Itoa(c.Nodes), "more than one node needs --database postgres://…")
	check(c.FlapEvery >= time.Second && c.FlapEvery <= time.Hour, "flap", c.FlapEvery.String(), "must be from 1s through 1h")
	check(c.OutageRetryAfter >= time.Second && c.OutageRetryAfter <= time.Hour && c.OutageRetryAfter%time.Second == 0, "outage-retry-after", c.OutageRetryAfter.String(), "must be whole seconds from 1s through 1h")
	return errs
}
