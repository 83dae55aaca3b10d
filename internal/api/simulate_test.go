package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/getratchet/ratchet/internal/simulate"
	"github.com/getratchet/ratchet/wire"
)

// postSimulate sends a config to /api/simulate and returns the status, the
// headers and the body.
func postSimulate(t *testing.T, url, contentType, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url+"/api/simulate", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// errorOf decodes the API's error shape.
func errorOf(t *testing.T, b []byte) wire.ErrorDetail {
	t.Helper()
	var e wire.ErrorBody
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error.Code == "" {
		t.Fatalf("not the API's error shape (%v): %s", err, b)
	}
	return e.Error
}

// TestSimulateRoute goes through the route table as the server mounts it:
// no key, a small sweep that equals the package's own, and field-naming
// errors for bad configs.
func TestSimulateRoute(t *testing.T) {
	t.Parallel()
	a := New(nil, slog.New(slog.DiscardHandler), nil, nil)
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	const small = `{"from":10,"to":30,"step":10,"runs":5,"seed":7}`
	status, h, b := postSimulate(t, srv.URL, "application/json", small)
	if status != 200 || h.Get("Content-Type") != "application/json" {
		t.Fatalf("small sweep: %d %s %s", status, h.Get("Content-Type"), b)
	}
	if st := h.Get("Server-Timing"); !strings.HasPrefix(st, "simulate;dur=") {
		t.Errorf("Server-Timing = %q", st)
	}
	var got simulate.Result
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	cfg, err := simulate.ParseConfig([]byte(small))
	if err != nil {
		t.Fatal(err)
	}
	want, err := simulate.Sweep(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the route's result differs from simulate.Sweep of the same config")
	}
	if len(got.Series) != 5 || !reflect.DeepEqual(got.Clients, []int{10, 20, 30}) {
		t.Errorf("result has %d series over %v", len(got.Series), got.Clients)
	}
	// The same config again is served from the cache, byte for byte.
	status, h, again := postSimulate(t, srv.URL, "application/json; charset=utf-8", small)
	if status != 200 || string(again) != string(b) || h.Get("Server-Timing") != "cache;desc=hit" {
		t.Errorf("repeat: %d %q, same body %v", status, h.Get("Server-Timing"), string(again) == string(b))
	}

	for _, c := range []struct{ name, contentType, body, field string }{
		{"runs out of range", "application/json", `{"runs":0}`, "runs"},
		{"unknown mode", "application/json", `{"modes":["full","linear"]}`, "modes"},
		{"policy mode without a policy", "application/json", `{"modes":["policy"]}`, "policy"},
		{"bad custom policy", "application/json", `{"modes":["policy"],"policy":{"maxAttempts":11,"initialDelayMs":1000,"multiplier":2,"maxDelayMs":60000,"jitterPercent":10}}`, "policy.maxAttempts"},
		{"budget", "application/json", `{"budget":{"retryCost":0}}`, "budget.retryCost"},
		{"too much work", "application/json", `{"from":1000,"to":1000,"runs":10000}`, "runs"},
		{"not JSON", "application/json", `{"runs":`, "config"},
		{"form post", "application/x-www-form-urlencoded", `{}`, "Content-Type"},
		{"no content type", "", `{}`, "Content-Type"},
	} {
		status, h, b := postSimulate(t, srv.URL, c.contentType, c.body)
		if status != 400 {
			t.Errorf("%s: status %d, want 400: %s", c.name, status, b)
			continue
		}
		if h.Get("Content-Type") != "application/json" {
			t.Errorf("%s: Content-Type %q", c.name, h.Get("Content-Type"))
		}
		e := errorOf(t, b)
		if e.Code != "invalid_request" || len(e.Fields) == 0 || e.Fields[0].Field != c.field {
			t.Errorf("%s: %s, want the field %s named first", c.name, b, c.field)
		}
	}

	// The OpenAPI document lists the route, without a key.
	doc := a.OpenAPI("test")
	op, ok := doc["paths"].(map[string]any)["/api/simulate"].(map[string]any)["post"].(map[string]any)
	if !ok {
		t.Fatal("/openapi.json does not list POST /api/simulate")
	}
	if _, secured := op["security"]; secured {
		t.Error("POST /api/simulate is documented as needing a key")
	}
}

// TestSimulateOneAtATime holds one sweep open and checks that a second
// request is turned away with 503 and Retry-After, in the API's error shape,
// and that the slot is free again once the first sweep ends.
func TestSimulateOneAtATime(t *testing.T) {
	t.Parallel()
	s := newSimulator(slog.New(slog.DiscardHandler))
	started, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	s.sweep = func(ctx context.Context, cfg simulate.Config) (simulate.Result, error) {
		if calls.Add(1) == 1 {
			close(started)
			<-release
		}
		return simulate.SweepContext(ctx, cfg)
	}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)

	first := make(chan int, 1)
	go func() {
		status, _, _ := postSimulate(t, srv.URL, "application/json", `{"to":20,"runs":2}`)
		first <- status
	}()
	<-started
	status, h, b := postSimulate(t, srv.URL, "application/json", `{"to":30,"runs":2}`)
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("second sweep while one runs: %d, Retry-After %q: %s", status, h.Get("Retry-After"), b)
	}
	if e := errorOf(t, b); e.Code != "unavailable" || !strings.Contains(e.Message, "another simulation is running") {
		t.Errorf("busy error = %+v", e)
	}
	close(release)
	if status := <-first; status != 200 {
		t.Errorf("first sweep: %d", status)
	}
	if status, _, b := postSimulate(t, srv.URL, "application/json", `{"to":30,"runs":2}`); status != 200 {
		t.Errorf("after the first sweep ended: %d %s", status, b)
	}
}

// TestSimulateTimeLimit: a sweep that outlives the server's limit is cut and
// answered with 400 naming runs, so a client lowers the work instead of
// retrying the same request.
func TestSimulateTimeLimit(t *testing.T) {
	t.Parallel()
	s := newSimulator(slog.New(slog.DiscardHandler))
	s.limit = 1 // nanosecond: the context is done by the time the sweep looks
	s.sweep = func(ctx context.Context, cfg simulate.Config) (simulate.Result, error) {
		<-ctx.Done()
		return simulate.Result{}, ctx.Err()
	}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	status, _, b := postSimulate(t, srv.URL, "application/json", `{"runs":100}`)
	e := errorOf(t, b)
	if status != 400 || len(e.Fields) != 1 || e.Fields[0].Field != "runs" || !strings.Contains(e.Fields[0].Allowed, "did not finish within this server's 1ns limit") {
		t.Errorf("time limit: %d %s", status, b)
	}
	// The slot is released after a cut sweep.
	if len(s.slot) != 0 {
		t.Error("the slot is still held")
	}
}

// TestSimulateUsesHalfTheCores: the keyless simulator sweeps on at most half
// the cores, so it cannot take the CPU from the API and the scheduler.
// Before, a sweep ran one goroutine per core.
func TestSimulateUsesHalfTheCores(t *testing.T) {
	t.Parallel()
	s := newSimulator(slog.New(slog.DiscardHandler))
	workers := make(chan int, 1)
	s.sweep = func(ctx context.Context, cfg simulate.Config) (simulate.Result, error) {
		workers <- cfg.Workers
		return simulate.Result{Config: cfg}, nil
	}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	if status, _, b := postSimulate(t, srv.URL, "application/json", `{"runs":3}`); status != 200 {
		t.Fatalf("sweep: %d %s", status, b)
	}
	if w, limit := <-workers, max(1, runtime.GOMAXPROCS(0)/2); w < 1 || w > limit {
		t.Errorf("the sweep ran on %d goroutines; at most %d allowed", w, limit)
	}
}

// TestSimulateRecoveryRoute posts the recovery scenario through the route
// table: no key, the package's own result, the cache, and field-naming
// errors.
func TestSimulateRecoveryRoute(t *testing.T) {
	t.Parallel()
	a := New(nil, slog.New(slog.DiscardHandler), nil, nil)
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	post := func(contentType, body string) (int, http.Header, []byte) {
		t.Helper()
		req, err := http.NewRequest("POST", srv.URL+"/api/simulate/recovery", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}
	const small = `{"backlog":500,"capacityPerS":20,"strategies":["at-once","ramp","learned"],"seed":3}`
	status, h, b := post("application/json", small)
	if status != 200 || !strings.HasPrefix(h.Get("Server-Timing"), "simulate;dur=") {
		t.Fatalf("%d %q %s", status, h.Get("Server-Timing"), b)
	}
	var got simulate.RecoveryResult
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	cfg, _ := simulate.ParseRecovery([]byte(small))
	want, err := simulate.SimulateRecovery(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(got.Runs) != 3 {
		t.Fatal("the route's result differs from simulate.SimulateRecovery of the same scenario")
	}
	if status, h, again := post("application/json", small); status != 200 || string(again) != string(b) || h.Get("Server-Timing") != "cache;desc=hit" {
		t.Errorf("repeat: %d %q", status, h.Get("Server-Timing"))
	}
	for _, c := range []struct{ contentType, body, field string }{
		{"application/json", `{"ramp":{"decreaseFactor":1.5}}`, "ramp.decreaseFactor"},
		{"application/json", `{"backlog":0}`, "backlog"},
		{"application/json", `{"strategies":["fast"]}`, "strategies"},
		{"application/json", `{"backlog":`, "recovery"},
		{"text/plain", `{}`, "Content-Type"},
	} {
		status, _, b := post(c.contentType, c.body)
		if e := errorOf(t, b); status != 400 || len(e.Fields) == 0 || e.Fields[0].Field != c.field {
			t.Errorf("%s: %d %s, want 400 naming %s", c.body, status, b, c.field)
		}
	}
}
