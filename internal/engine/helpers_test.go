package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/api"
	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/sqlite"
)

var t0 = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

type harness struct {
	t     *testing.T
	ctx   context.Context
	e     *engine.Engine
	clk   *clock.Fake
	st    store.Store
	owner *engine.Principal
	u     float64 // the jitter sample the engine draws
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ratchet.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, st)
}

// newHarnessOn is newHarness on a store of the caller's, which it closes.
func newHarnessOn(t *testing.T, st store.Store) *harness {
	t.Helper()
	ctx := context.Background()
	t.Cleanup(func() { st.Close() })
	var err error
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ctx: ctx, clk: clock.NewFake(t0), st: st, u: 0.5}
	h.e, err = engine.New(engine.Config{Store: st, Clock: h.clk, Rand: func() float64 { return h.u }})
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := h.e.Bootstrap(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	h.owner, err = h.e.Authenticate(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) endpoint(name, body string) *store.Endpoint {
	h.t.Helper()
	fields, err := backoff.ReadObject([]byte(body), "endpoint")
	if err != nil {
		h.t.Fatal(err)
	}
	pol, err := api.DecodeEndpointPolicy(fields, false, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	ep, err := h.e.CreateEndpoint(h.ctx, h.owner, name, pol)
	if err != nil {
		h.t.Fatal(err)
	}
	return ep
}

func (h *harness) tool(body string) *store.Tool {
	h.t.Helper()
	spec, err := api.DecodeToolSpec([]byte(body))
	if err != nil {
		h.t.Fatal(err)
	}
	tl, err := h.e.PublishTool(h.ctx, h.owner, spec)
	if err != nil {
		h.t.Fatal(err)
	}
	return tl
}

func (h *harness) enqueue(tool string, maxAttempts *int64) *store.Job {
	h.t.Helper()
	r, err := h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: tool, Payload: json.RawMessage(`{}`), MaxAttempts: maxAttempts})
	if err != nil {
		h.t.Fatal(err)
	}
	return r.Job
}

func (h *harness) claim(tools []string, max int) []engine.Claimed {
	h.t.Helper()
	c, err := h.e.Claim(h.ctx, h.owner, engine.ClaimRequest{WorkerID: "w1", Tools: tools, Max: max})
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

func (h *harness) claimOne(tool string) engine.Claimed {
	h.t.Helper()
	c := h.claim([]string{tool}, 1)
	if len(c) != 1 {
		h.t.Fatalf("claim %s at %s: got %d jobs, want 1", tool, h.clk.Now(), len(c))
	}
	return c[0]
}

func (h *harness) fail(c engine.Claimed, status int, headers map[string]string) engine.ReportResult {
	h.t.Helper()
	r, err := h.e.Report(h.ctx, h.owner, engine.ReportRequest{JobID: c.Job.ID, LeaseToken: c.LeaseToken, Report: classify.Report{HTTPStatus: status, Headers: headers}})
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

func (h *harness) succeed(c engine.Claimed) engine.ReportResult {
	h.t.Helper()
	r, err := h.e.Report(h.ctx, h.owner, engine.ReportRequest{JobID: c.Job.ID, LeaseToken: c.LeaseToken, Report: classify.Report{Success: true, HTTPStatus: 200}})
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

func (h *harness) job(id int64) (*store.Job, []store.Attempt) {
	h.t.Helper()
	j, as, _, err := h.e.Job(h.ctx, h.owner, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return j, as
}

func ptr[T any](v T) *T { return &v }

const seedEndpoint = `{"preset":"CUSTOM","maxAttempts":6,"initialDelayMs":10000,"multiplier":2,"maxDelayMs":600000,"jitterPercent":20,
	"defaultTimeoutMs":30000,"maxConcurrent":10,"rateLimitPerMinute":null}`

var classifyOK = classify.Report{Success: true, HTTPStatus: 200}

var connectError = classify.Report{ErrorKind: "connect"}
