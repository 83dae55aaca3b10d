package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/server"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// engineTarget drives the engine in-process, as the HTTP handlers do.
type engineTarget struct {
	st     store.Store
	e      *engine.Engine
	p      *engine.Principal
	tool   string
	stop   context.CancelFunc
	done   chan struct{}
	noJSON json.RawMessage
}

func newEngineTarget(ctx context.Context, cfg Config, dir string) (*engineTarget, error) {
	url := cfg.DatabaseURL
	if url == "" {
		url = filepath.Join(dir, "bench.db")
	}
	st, err := server.OpenStore(ctx, url, cfg.Synchronous, true)
	if err != nil {
		return nil, err
	}
	// As ratchet serve does: on PostgreSQL the time of each decision is
	// the database's (engine.Config.DatabaseClock), a round trip each.
	e, err := engine.New(engine.Config{Store: st, DatabaseClock: st.Driver() == "postgres"})
	if err != nil {
		st.Close()
		return nil, err
	}
	t := &engineTarget{st: st, e: e, done: make(chan struct{}), noJSON: json.RawMessage("{}")}
	// A project of its own, so a shared database (PostgreSQL) is not disturbed.
	_, key, err := e.CreateProject(ctx, fmt.Sprintf("bench-%d", time.Now().UnixNano()), wire.PlanPro)
	if err == nil {
		t.p, err = e.Authenticate(ctx, key)
	}
	if err == nil {
		_, err = e.CreateEndpoint(ctx, t.p, "bench", engine.EndpointPolicy{Policy: backoff.PresetPolicy(backoff.Standard), EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 300_000, MaxConcurrent: 100_000, CircuitFailureThreshold: engine.DefaultCircuitThreshold, CircuitOpenMs: engine.DefaultCircuitOpenMs}})
	}
	if err == nil {
		_, err = e.PublishTool(ctx, t.p, engine.ToolSpec{Name: "noop", Version: "1", Endpoint: "bench", Description: "does nothing (ratchet bench)"})
		t.tool = "noop@1"
	}
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("set up the bench project: %w", err)
	}
	// The background duties (lease rescue, wake-ups) run as in a server.
	runCtx, stop := context.WithCancel(context.Background())
	t.stop = stop
	go func() { e.Run(runCtx); close(t.done) }()
	return t, nil
}

func (t *engineTarget) driver() string { return t.st.Driver() }

func (t *engineTarget) enqueueBatch(ctx context.Context, n int) error {
	reqs := make([]engine.EnqueueRequest, n)
	for i := range reqs {
		reqs[i] = engine.EnqueueRequest{Tool: t.tool, Payload: t.noJSON}
	}
	_, err := t.e.EnqueueBatch(ctx, t.p, reqs)
	return err
}

func (t *engineTarget) enqueueAt(ctx context.Context, runAt time.Time) (int64, time.Time, error) {
	r, err := t.e.Enqueue(ctx, t.p, engine.EnqueueRequest{Tool: t.tool, Payload: t.noJSON, RunAt: &runAt})
	if err != nil {
		return 0, time.Time{}, err
	}
	return r.Job.ID, time.UnixMilli(r.Job.DueAt), nil
}

func (t *engineTarget) claim(ctx context.Context, worker string, max int, wait time.Duration) ([]claimed, error) {
	cs, err := t.e.Claim(ctx, t.p, engine.ClaimRequest{WorkerID: worker, Tools: []string{t.tool}, Max: max, Wait: wait})
	return claimedOf(cs), err
}

func (t *engineTarget) reportSuccess(ctx context.Context, jobs []claimed) error {
	rs := make([]engine.ReportRequest, len(jobs))
	for i, j := range jobs {
		rs[i] = engine.ReportRequest{JobID: j.id, LeaseToken: j.lease, Report: classify.Report{Success: true}}
	}
	items, err := t.e.ReportBatch(ctx, t.p, rs)
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.Err != nil {
			return it.Err
		}
	}
	return nil
}

func (t *engineTarget) close() error {
	t.stop()
	<-t.done
	return t.st.Close()
}
