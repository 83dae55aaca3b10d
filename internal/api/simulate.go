package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/simulate"
)

// POST /api/simulate runs the contention simulator (internal/simulate) for
// the /simulator page. It sits in the route table, so /openapi.json lists it
// and the request metrics cover it, but outside /v1: it needs no key and
// touches no project, so the public page can use it.
//
// Work is bounded three ways. simulate.ParseConfig caps the sweep (at most 20
// times the study's), a time limit cancels a sweep that runs longer anyway,
// and one sweep runs at a time per server: a second request gets 503 with
// Retry-After rather than halving the CPU of the first and of the scheduler.
// Results are deterministic for a config, so the last few are kept and served
// again without running, which makes the page's default sweep free after the
// first visitor.
//
// Without a key, the one thing that keeps other web sites from spending this
// server's CPU through their visitors' browsers is the content type: a
// cross-origin request with Content-Type: application/json needs a CORS
// preflight, which Ratchet never grants, whereas a form or a text/plain fetch
// would be sent as is. So the body must be declared as JSON.

const (
	// simulateTimeLimit is how long one sweep may run. The study's sweep takes
	// about 1 s on two quiet cores and the largest sweep ParseConfig accepts
	// about 20 s, so the limit cuts only the largest sweeps, or any sweep on
	// a server too busy to serve one in time.
	simulateTimeLimit = 15 * time.Second
	// simulateCacheSize is the number of results kept (each at most a few
	// hundred KiB of JSON).
	simulateCacheSize = 16
)

// simulator serves POST /api/simulate for one server.
type simulator struct {
	log *slog.Logger
	// read reads the body as every route does (admit in route.go); fail
	// answers an error through the API's one error mapping.
	read func(w http.ResponseWriter, r *http.Request) ([]byte, error)
	// readRecovery reads the body of /api/simulate/recovery.
	readRecovery func(w http.ResponseWriter, r *http.Request) ([]byte, error)
	fail         func(w http.ResponseWriter, r *http.Request, err error)
	limit        time.Duration
	// sweep is simulate.SweepContext; tests replace it to hold a sweep open.
	sweep func(context.Context, simulate.Config) (simulate.Result, error)
	slot  chan struct{} // holds a token while a sweep runs

	mu    sync.Mutex
	cache map[string][]byte // JSON result by canonical JSON config
	order []string          // cache keys, oldest first
}

func newSimulator(log *slog.Logger) *simulator {
	return &simulator{
		log:  log,
		read: func(w http.ResponseWriter, r *http.Request) ([]byte, error) { return readBody(w, r, BodyTimeout) },
		readRecovery: func(w http.ResponseWriter, r *http.Request) ([]byte, error) {
			return readBody(w, r, BodyTimeout)
		},
		fail:  func(w http.ResponseWriter, _ *http.Request, err error) { writeError(w, err) },
		limit: simulateTimeLimit,
		sweep: simulate.SweepContext,
		slot:  make(chan struct{}, 1),
		cache: map[string][]byte{},
	}
}

// body checks the Content-Type and reads the request's body; on a
// problem it answers the error and reports false.
func (s *simulator) body(w http.ResponseWriter, r *http.Request, read func(http.ResponseWriter, *http.Request) ([]byte, error)) ([]byte, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		got := r.Header.Get("Content-Type")
		if got == "" {
			got = field.Missing
		}
		s.fail(w, r, field.Errors{{Field: "Content-Type", Value: got, Allowed: "must be application/json (the header, as well as the body)"}})
		return nil, false
	}
	body, err := read(w, r)
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	return body, true
}

func (s *simulator) serve(w http.ResponseWriter, r *http.Request) {
	body, ok := s.body(w, r, s.read)
	if !ok {
		return
	}
	cfg, err := simulate.ParseConfig(body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	key, err := json.Marshal(cfg)
	if err != nil {
		s.fail(w, r, fmt.Errorf("encode config: %w", err))
		return
	}
	s.cachedRun(w, r, string(key), func() (any, error) {
		// A sweep runs on at most half the cores, so the keyless page can
		// never take the CPU from the scheduler and the API.
		cfg.Workers = max(1, runtime.GOMAXPROCS(0)/2)
		ctx, cancel := context.WithTimeout(r.Context(), s.limit)
		defer cancel()
		res, err := s.sweep(ctx, cfg)
		switch {
		case err == nil:
			return res, nil
		case r.Context().Err() != nil:
			return nil, nil // the client went away; nobody reads an answer
		case errors.Is(err, context.DeadlineExceeded):
			return nil, field.Errors{{Field: "runs", Value: strconv.Itoa(cfg.Runs),
				Allowed: fmt.Sprintf("the sweep did not finish within this server's %s limit; use fewer runs, fewer or smaller points, or fewer modes", s.limit)}}
		}
		return nil, fmt.Errorf("simulation: %w", err)
	})
}

// cachedRun answers a simulation from the cache under key, or takes the
// server's one-at-a-time slot, runs sim, caches its result and sends it.
// sim returns the result, or the error to answer with; neither when the
// client went away.
func (s *simulator) cachedRun(w http.ResponseWriter, r *http.Request, key string, sim func() (any, error)) {
	if res, ok := s.cached(key); ok {
		writeSimulation(w, res, "cache;desc=hit")
		return
	}
	select {
	case s.slot <- struct{}{}:
		defer func() { <-s.slot }()
	default:
		s.fail(w, r, &engine.Error{Kind: engine.KindUnavailable, Message: "another simulation is running on this server; try again in a moment"})
		return
	}
	start := time.Now()
	res, err := sim()
	elapsed := time.Since(start)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if res == nil {
		return
	}
	out, err := json.Marshal(res)
	if err != nil {
		s.fail(w, r, fmt.Errorf("encode simulation: %w", err))
		return
	}
	s.store(key, out)
	s.log.Debug("simulated", "bytes", len(out), "elapsed", elapsed)
	writeSimulation(w, out, "simulate;dur="+strconv.FormatFloat(float64(elapsed.Microseconds())/1000, 'f', 1, 64))
}

// writeSimulation sends a result. Server-Timing tells the page how long the
// sweep took, or that it came from the cache.
func writeSimulation(w http.ResponseWriter, res []byte, timing string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Server-Timing", timing)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(res)
}

func (s *simulator) cached(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, ok := s.cache[key]
	return res, ok
}

func (s *simulator) store(key string, res []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cache[key]; ok {
		return
	}
	if len(s.order) == simulateCacheSize {
		delete(s.cache, s.order[0])
		s.order = s.order[1:]
	}
	s.cache[key] = res
	s.order = append(s.order, key)
}

// serveRecovery is POST /api/simulate/recovery: the recovery scenario of
// the simulator page, bounded, cached and run one at a time like a sweep.
// A scenario is one pass per strategy with no runs to average, well under
// a second at the largest backlog ParseRecovery accepts, so it needs no
// time limit of its own.
func (s *simulator) serveRecovery(w http.ResponseWriter, r *http.Request) {
	body, ok := s.body(w, r, s.readRecovery)
	if !ok {
		return
	}
	cfg, err := simulate.ParseRecovery(body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	key, err := json.Marshal(cfg)
	if err != nil {
		s.fail(w, r, fmt.Errorf("encode scenario: %w", err))
		return
	}
	s.cachedRun(w, r, "recovery "+string(key), func() (any, error) {
		res, err := simulate.SimulateRecovery(cfg)
		if err != nil {
			return nil, fmt.Errorf("simulation: %w", err)
		}
		return res, nil
	})
}
