package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/server"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// ConsoleRuns is how many times mode console times each request.
const ConsoleRuns = 20

// consoleSeedBatch is how many jobs one seeding transaction stores.
const consoleSeedBatch = 5000

// consoleErrors are the messages of the seeded failures; consoleNeedle is
// the substring mode console searches for (it is in one message of four).
var consoleErrors = []string{
	"HTTP 503 from provider: upstream unavailable, retry later",
	"HTTP 429 from provider: rate limited (Retry-After 30)",
	"dial tcp 10.0.0.7:443: connection reset by peer",
	"HTTP 402 from provider: card_declined for this customer",
}

const consoleNeedle = "card_declined"

// ConsoleTiming is the figures of one request of mode console.
type ConsoleTiming struct {
	Name, Path         string
	First, Median, Max time.Duration
	Items              int // jobs or endpoints in the last answer
}

// runConsole seeds cfg.Jobs jobs straight through the store (many per
// transaction, the states spread as a busy project's are), starts a real
// server on loopback on the same database and times the requests the
// dashboard makes.
func runConsole(ctx context.Context, cfg Config, dir string, w io.Writer, res *Result) error {
	db := cfg.DatabaseURL
	if db == "" {
		db = filepath.Join(dir, "bench.db")
	}
	st, err := server.OpenStore(ctx, db, cfg.Synchronous, true)
	if err != nil {
		return err
	}
	res.Driver = st.Driver()
	if res.Driver != "sqlite" {
		res.Synchronous = "n/a"
	}
	printHeader(w, cfg, res)
	fmt.Fprintf(w, "seed method: %d jobs stored straight through the store (store.Queries.JobsInsert, %d per transaction) in a project of their own: 40%% succeeded, 20%% scheduled (due), 10%% each failed, exhausted, cancelled and running, over 3 endpoints (50%%, 30%%, 20%%) and 4 tools; one failure in four says %q.\n",
		cfg.Jobs, consoleSeedBatch, consoleNeedle)
	e, err := engine.New(engine.Config{Store: st})
	if err != nil {
		st.Close()
		return err
	}
	suffix := strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 10)
	start := time.Now()
	key, eps, sampleID, err := seedConsole(ctx, e, st, cfg.Jobs, suffix)
	st.Close()
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	res.EnqueueDuration = time.Since(start)
	res.EnqueueRate = float64(cfg.Jobs) / res.EnqueueDuration.Seconds()
	fmt.Fprintf(w, "seed:       %d jobs in %s = %.0f jobs/s\n", cfg.Jobs, round(res.EnqueueDuration), res.EnqueueRate)

	base, stop, done, err := startServer(server.Config{Addr: "127.0.0.1:0", DatabaseURL: db, SQLiteSynchronous: cfg.Synchronous, Retention: -1}, "bench server")
	defer func() { stop(); <-done }()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "timing method: GET over loopback HTTP (keep-alive) against server.Run on the seeded database; each request once untimed-for-the-median (shown as first), then %d times; median and max of those %d; first page = default limit 100.\n", cfg.ConsoleRuns, cfg.ConsoleRuns)
	hc := &http.Client{Timeout: 2 * time.Minute}
	for _, r := range consoleRequests(eps[len(eps)-1], suffix, sampleID) {
		t, err := timeConsole(ctx, hc, base, key, r.name, r.path, cfg.ConsoleRuns)
		if err != nil {
			return err
		}
		res.Console = append(res.Console, t)
		fmt.Fprintf(w, "%-28s median %8s  max %8s  first %8s  (%d items)  GET %s\n", r.name+":", ms(t.Median), ms(t.Max), ms(t.First), t.Items, r.path)
	}
	return nil
}

// consoleRequests are the requests the dashboard makes, named, against
// the seeded project: small is its smallest endpoint, suffix the names'
// suffix and sampleID the id of a job to search for.
func consoleRequests(small, suffix string, sampleID int64) []struct{ name, path string } {
	return []struct{ name, path string }{
		{"overview", "/v1/overview"},
		{"state counts", "/v1/jobs/counts"},
		{"state counts of a tool", "/v1/jobs/counts?tool=" + url.QueryEscape("index-"+suffix+"@1")},
		{"failed jobs of an endpoint", "/v1/jobs?state=failed&endpoint=" + url.QueryEscape(small)},
		{"scheduled jobs", "/v1/jobs?state=scheduled"},
		{"failed jobs of a tool", "/v1/jobs?state=failed&tool=" + url.QueryEscape("index-"+suffix)},
		{"search, an error substring", "/v1/jobs?q=" + url.QueryEscape(consoleNeedle)},
		{"search, a job id", "/v1/jobs?q=" + strconv.FormatInt(sampleID, 10)},
		{"search, text found nowhere", "/v1/jobs?q=" + url.QueryEscape("no such text anywhere")},
		{"count of a search", "/v1/jobs/count?q=" + url.QueryEscape(consoleNeedle)},
		{"count, text found nowhere", "/v1/jobs/count?q=" + url.QueryEscape("no such text anywhere")},
	}
}

// timeConsole sends GET base+path once (the first, kept apart: it warms
// caches) and then runs times, and returns the median and the max of
// those.
func timeConsole(ctx context.Context, hc *http.Client, base, key, name, path string, runs int) (ConsoleTiming, error) {
	t := ConsoleTiming{Name: name, Path: path}
	var ds []time.Duration
	for i := range runs + 1 {
		d, items, err := timeGet(ctx, hc, base+path, key)
		if err != nil {
			return t, fmt.Errorf("%s: %w", path, err)
		}
		t.Items = items
		if i == 0 {
			t.First = d
			continue
		}
		ds = append(ds, d)
	}
	slices.Sort(ds)
	t.Median, t.Max = ds[len(ds)/2], ds[len(ds)-1]
	return t, nil
}

// timeGet times one GET until its body is read and decoded, and counts the
// jobs or endpoints in the answer.
func timeGet(ctx context.Context, hc *http.Client, u, key string) (time.Duration, int, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Jobs      []json.RawMessage `json:"jobs"`
		Endpoints []json.RawMessage `json:"endpoints"`
		Total     *int64            `json:"total"`
		Count     *int64            `json:"count"`
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	d := time.Since(start)
	if resp.StatusCode != 200 {
		return d, 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	n := len(body.Jobs) + len(body.Endpoints)
	if body.Total != nil {
		n = int(*body.Total)
	}
	if body.Count != nil {
		n = int(*body.Count)
	}
	return d, n, err
}

// seedConsole creates a project with 3 endpoints and 4 tools and stores n
// jobs in it; it returns an owner key, the endpoint names (largest first)
// and the id of a job in the middle.
func seedConsole(ctx context.Context, e *engine.Engine, st store.Store, n int, suffix string) (key string, names []string, sampleID int64, err error) {
	_, key, err = e.CreateProject(ctx, "console-"+suffix, wire.PlanPro)
	if err != nil {
		return "", nil, 0, err
	}
	p, err := e.Authenticate(ctx, key)
	if err != nil {
		return "", nil, 0, err
	}
	names = []string{"payments-" + suffix, "email-" + suffix, "search-" + suffix}
	eps, tools, err := consoleTools(ctx, e, p, names, suffix)
	if err != nil {
		return "", nil, 0, err
	}
	now := time.Now().UnixMilli()
	policy, _ := json.Marshal(map[string]any{"preset": "STANDARD", "maxAttempts": 5})
	for lo := 0; lo < n; lo += consoleSeedBatch {
		hi := min(n, lo+consoleSeedBatch)
		jobs := make([]*store.Job, 0, hi-lo)
		for i := lo; i < hi; i++ {
			jobs = append(jobs, consoleJob(i, n, now, p.ProjectID, eps, tools, policy))
		}
		if err := storeConsoleJobs(ctx, st, jobs, now); err != nil {
			return "", nil, 0, err
		}
		if lo <= n/2 && n/2 < hi {
			sampleID = jobs[n/2-lo].ID
		}
	}
	return key, names, sampleID, nil
}

// consoleTools creates the endpoints names and the 4 tools: charge and
// refund on the first endpoint (payments), send and index on the others.
func consoleTools(ctx context.Context, e *engine.Engine, p *engine.Principal, names []string, suffix string) ([]*store.Endpoint, []*store.Tool, error) {
	var eps []*store.Endpoint
	for _, name := range names {
		ep, err := e.CreateEndpoint(ctx, p, name, engine.EndpointPolicy{Policy: backoff.PresetPolicy(backoff.Standard), EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 30_000, MaxConcurrent: 50, CircuitFailureThreshold: engine.DefaultCircuitThreshold, CircuitOpenMs: engine.DefaultCircuitOpenMs}})
		if err != nil {
			return nil, nil, err
		}
		eps = append(eps, ep)
	}
	var tools []*store.Tool
	for i, tn := range []string{"charge", "refund", "send", "index"} {
		ep := eps[max(0, i-1)] // charge and refund: payments
		t, err := e.PublishTool(ctx, p, engine.ToolSpec{Name: tn + "-" + suffix, Version: "1", Endpoint: ep.Name, Description: "ratchet bench --mode console"})
		if err != nil {
			return nil, nil, err
		}
		tools = append(tools, t)
	}
	return eps, tools, nil
}

// consoleJob is job i of n: its tool and endpoint by the last digit of i
// (50%, 30%, 20%), its state by the second digit so that each endpoint
// has each state, created 10 ms apart up to now.
func consoleJob(i, n int, now, projectID int64, eps []*store.Endpoint, tools []*store.Tool, policy json.RawMessage) *store.Job {
	// The endpoint: 50%, 30%, 20%; payments alternates its tools.
	var t *store.Tool
	switch r := i % 10; {
	case r < 5:
		t = tools[i%2]
	case r < 8:
		t = tools[2]
	default:
		t = tools[3]
	}
	ep := eps[slices.IndexFunc(eps, func(ep *store.Endpoint) bool { return ep.ID == t.EndpointID })]
	created := now - int64(n-i)*10
	j := &store.Job{ProjectID: projectID, ToolID: t.ID, Tool: t.Name, Version: t.Version, EndpointID: ep.ID, Endpoint: ep.Name,
		Payload: json.RawMessage(`{"order":"ord-` + strconv.Itoa(i) + `","amount":` + strconv.Itoa(i%997) + `}`), Policy: policy,
		MaxAttempts: 5, TimeoutMs: 30_000, DueAt: created, CreatedAt: created, UpdatedAt: created}
	msg := consoleErrors[(i/10)%len(consoleErrors)]
	// States by a second digit, so that each endpoint has each.
	switch r := (i / 10) % 10; {
	case r < 4:
		j.State, j.Attempt, j.LastClassification = wire.JobSucceeded, 1, "success"
	case r < 6:
		j.State = wire.JobScheduled
		if r == 5 { // retried once, due now
			j.Attempt, j.LastClassification, j.LastError = 1, "server_error", msg
		}
	case r == 6:
		j.State, j.Attempt, j.LastClassification, j.LastError = wire.JobFailed, 1, "client_error", msg
	case r == 7:
		j.State, j.Attempt, j.LastClassification, j.LastError = wire.JobExhausted, 5, "server_error", msg
	case r == 8:
		j.State = wire.JobCancelled
	default:
		j.State, j.Attempt = wire.JobRunning, 1
	}
	if j.State.Finished() {
		j.FinishedAt = created + 5
	}
	return j
}

// storeConsoleJobs inserts one batch of jobs in a transaction and gives
// the running ones a lease far ahead, so the server's rescue leaves them
// alone (claimed_at stays 0: not in any rate window).
func storeConsoleJobs(ctx context.Context, st store.Store, jobs []*store.Job, now int64) error {
	if err := st.Tx(ctx, func(q store.Queries) error { return q.JobsInsert(ctx, jobs) }); err != nil {
		return err
	}
	var running []*store.Job
	for _, j := range jobs {
		if j.State == wire.JobRunning {
			j.LeaseToken, j.WorkerID, j.LeaseExpiresAt = "bench-console", "bench-console", now+24*3600_000
			running = append(running, j)
		}
	}
	return st.Tx(ctx, func(q store.Queries) error { return q.JobsUpdate(ctx, running, nil) })
}
