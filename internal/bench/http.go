package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/server"
	"github.com/getratchet/ratchet/wire"
)

// httpTarget drives a server over HTTP with the Go SDK: its own in-process
// server on a loopback port, or an external one.
type httpTarget struct {
	c    *client.Client
	wire wireCount // the SDK's claims and reports, counted
	tool string
	drv  string
	stop context.CancelFunc
	done chan error
}

// newHTTPTarget is the target of mode http: the server cfg.Server names,
// or one of its own in this process, with an endpoint and a tool of the
// run's own.
func newHTTPTarget(ctx context.Context, cfg Config, dir string) (*httpTarget, error) {
	t := &httpTarget{drv: "external server"}
	base, key := cfg.Server, cfg.Key
	if base == "" {
		var err error
		if base, key, err = t.startServer(ctx, cfg, dir); err != nil {
			return nil, err
		}
	}
	t.c = client.New(base, key, client.WithHTTPClient(countedClient(&t.wire)))
	name := fmt.Sprintf("bench-%d", time.Now().UnixNano()%1_000_000_000)
	rate := (*int64)(nil)
	if _, err := t.c.CreateEndpoint(ctx, name, client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 300_000, MaxConcurrent: 100_000, RateLimitPerMinute: rate}}); err != nil {
		t.close()
		return nil, fmt.Errorf("create the bench endpoint: %w", err)
	}
	if _, err := t.c.PublishTool(ctx, client.ToolSpec{Name: name, Version: "1", Endpoint: name, Description: "does nothing (ratchet bench)"}); err != nil {
		t.close()
		return nil, fmt.Errorf("publish the bench tool: %w", err)
	}
	t.tool = name + "@1"
	return t, nil
}

// startServer starts the target's own server on the database cfg names
// (a SQLite file in dir by default) and returns its URL and a key.
func (t *httpTarget) startServer(ctx context.Context, cfg Config, dir string) (base, key string, err error) {
	key = engine.NewSecret()
	db := cfg.DatabaseURL
	if db == "" {
		db = filepath.Join(dir, "bench.db")
	}
	if cfg.DatabaseURL != "" {
		// A database that already has a project (PostgreSQL shared with
		// earlier runs) ignores the bootstrap key: bench in a project of
		// its own, as the engine mode does.
		if key, err = benchProject(ctx, cfg); err != nil {
			return "", "", err
		}
	}
	base, t.stop, t.done, err = startServer(server.Config{Addr: "127.0.0.1:0", DatabaseURL: db, BootstrapKey: key, SQLiteSynchronous: cfg.Synchronous, Retention: -1}, "bench server")
	if err != nil {
		t.stop()
		return "", "", err
	}
	t.drv = "sqlite"
	if cfg.DatabaseURL != "" {
		t.drv = "as --database says"
	}
	return base, key, nil
}

// startServer runs server.Run with scfg in this process, on the loopback
// port it picks, and returns its URL once it prints it. stop ends the
// server and done receives what Run returned; both are set on an error
// too, and the caller stops the server either way. what names the server
// in the errors.
func startServer(scfg server.Config, what string) (base string, stop context.CancelFunc, done chan error, err error) {
	srvCtx, stop := context.WithCancel(context.Background())
	found := make(chan string, 1)
	done = make(chan error, 1)
	go func() {
		done <- server.Run(srvCtx, scfg, &addrWriter{found: found}, slog.New(slog.DiscardHandler))
	}()
	select {
	case base = <-found:
		return base, stop, done, nil
	case err := <-done:
		done <- err // for the caller's wait
		return "", stop, done, fmt.Errorf("start the %s: %w", what, err)
	case <-time.After(30 * time.Second):
		return "", stop, done, fmt.Errorf("the %s did not start within 30 s", what)
	}
}

// benchProject creates a project with an owner key in the database
// cfg.DatabaseURL names (migrating it first) and returns the key.
func benchProject(ctx context.Context, cfg Config) (string, error) {
	st, err := server.OpenStore(ctx, cfg.DatabaseURL, cfg.Synchronous, true)
	if err != nil {
		return "", err
	}
	defer st.Close()
	e, err := engine.New(engine.Config{Store: st})
	if err != nil {
		return "", err
	}
	_, key, err := e.CreateProject(ctx, fmt.Sprintf("bench-%d", time.Now().UnixNano()), wire.PlanPro)
	if err != nil {
		return "", fmt.Errorf("create the bench project: %w", err)
	}
	return key, nil
}

var listenRE = regexp.MustCompile(`listening on (http://\S+)`)

// addrWriter finds the address server.Run prints.
type addrWriter struct {
	mu    sync.Mutex
	buf   []byte
	found chan<- string
	done  bool
}

func (a *addrWriter) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done { // the address was found; the rest is discarded
		return len(p), nil
	}
	a.buf = append(a.buf, p...)
	if m := listenRE.FindSubmatch(a.buf); m != nil {
		a.found <- string(m[1])
		a.done, a.buf = true, nil
	}
	return len(p), nil
}

func (t *httpTarget) driver() string { return t.drv }

func (t *httpTarget) enqueueBatch(ctx context.Context, n int) error {
	rs := make([]client.EnqueueRequest, n)
	for i := range rs {
		rs[i] = client.EnqueueRequest{Tool: t.tool, Payload: json.RawMessage("{}")}
	}
	_, err := t.c.EnqueueBatch(ctx, rs)
	return err
}

func (t *httpTarget) enqueueAt(ctx context.Context, runAt time.Time) (int64, time.Time, error) {
	j, _, err := t.c.Enqueue(ctx, client.EnqueueRequest{Tool: t.tool, Payload: json.RawMessage("{}"), RunAt: runAt.UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return 0, time.Time{}, err
	}
	due, err := time.Parse(time.RFC3339Nano, j.DueAt)
	return j.ID, due, err
}

func (t *httpTarget) claim(ctx context.Context, worker string, max int, wait time.Duration) ([]claimed, error) {
	js, err := t.c.Claim(ctx, client.ClaimRequest{WorkerID: worker, Tools: []string{t.tool}, Max: max, WaitMs: wait.Milliseconds()})
	out := make([]claimed, len(js))
	for i, j := range js {
		out[i] = claimed{id: j.ID, lease: j.LeaseToken}
	}
	return out, err
}

func (t *httpTarget) reportSuccess(ctx context.Context, jobs []claimed) error {
	rs := make([]client.Report, len(jobs))
	for i, j := range jobs {
		rs[i] = client.Report{JobID: j.id, LeaseToken: j.lease, Success: true}
	}
	res, err := t.c.ReportBatch(ctx, rs)
	if err != nil {
		return err
	}
	for _, r := range res {
		if !r.OK {
			if r.Error != nil {
				return r.Error
			}
			return fmt.Errorf("report of job %d was refused", r.JobID)
		}
	}
	return nil
}

func (t *httpTarget) close() error {
	if t.stop == nil {
		return nil
	}
	t.stop()
	return <-t.done
}

func (t *httpTarget) wireCounts() *wireCount { return &t.wire }
