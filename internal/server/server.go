// Package server runs `ratchet serve`: the store, the engine and its
// background duties, the HTTP API, the embedded pages, and graceful shutdown.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/getratchet/ratchet/internal/api"
	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/docs"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/sqlite"
	"github.com/getratchet/ratchet/internal/web"
)

// Config is everything `ratchet serve` can be told. Defaults are in the
// comments and applied by Run.
type Config struct {
	Addr              string        // listen address; default 127.0.0.1:8080
	DatabaseURL       string        // file path, sqlite://path or postgres://...; default ratchet.db in the working directory
	BootstrapKey      string        // owner key to create on first start instead of a generated one
	Retention         time.Duration // prune finished jobs older than this; default 168h; negative keeps them
	MaxWait           time.Duration // longest claim long poll; default 30s
	RescueInterval    time.Duration // lease rescue period; default 250ms
	SQLiteSynchronous string        // FULL (default) or NORMAL
	ShutdownTimeout   time.Duration // how long in-flight requests may take to finish; default 15s
	Version           string
	DevClock          bool // a clock tests may advance through POST /v1/dev/clock
	// ClockOffset runs this node's clock ahead (negative: behind) by this
	// much, to show in fault tests what clock skew between nodes does;
	// default 0. Never in production.
	ClockOffset time.Duration
}

// OpenStore opens the store a database URL names and applies migrations
// when migrate is true.
func OpenStore(ctx context.Context, url, sqliteSync string, migrate bool) (store.Store, error) {
	var st store.Store
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		s, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			return nil, err
		}
		st = s
	default:
		path := strings.TrimPrefix(url, "sqlite://")
		if path == "" {
			path = "ratchet.db"
		}
		s, err := sqlite.Open(ctx, path, sqlite.Options{Synchronous: sqliteSync})
		if err != nil {
			return nil, err
		}
		st = s
	}
	if migrate {
		if _, err := st.Migrate(ctx); err != nil {
			st.Close()
			return nil, fmt.Errorf("migrate: %w", err)
		}
	}
	return st, nil
}

// Run serves until ctx is cancelled, then shuts down gracefully: claims stop
// being handed out, in-flight requests finish, the store is closed.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:8080"
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 15 * time.Second
	}
	st, err := OpenStore(ctx, cfg.DatabaseURL, cfg.SQLiteSynchronous, true)
	if err != nil {
		return err
	}
	defer st.Close()
	metrics := api.NewMetrics(st)
	var clk clock.Clock = clock.Real{}
	if cfg.DevClock {
		clk = &clock.Offset{}
		log.Warn("development clock enabled: owners may advance time with POST /v1/dev/clock")
	}
	if cfg.ClockOffset != 0 {
		clk = clock.Shifted{Base: clk, By: cfg.ClockOffset}
		log.Warn("clock offset: this node's clock is deliberately wrong (for fault tests only)", "offset", cfg.ClockOffset, "decisionsFromDatabaseClock", st.Driver() == "postgres" && !cfg.DevClock)
	}
	// Nodes that share PostgreSQL take the time of their decisions from
	// it, so their own clocks may disagree (see engine.Config). A
	// development clock is the exception: it is there to be moved.
	dbClock := st.Driver() == "postgres" && !cfg.DevClock
	eng, err := engine.New(engine.Config{Store: st, Clock: clk, DatabaseClock: dbClock, Logger: log, Retention: cfg.Retention, MaxWait: cfg.MaxWait, RescueInterval: cfg.RescueInterval, Observer: metrics})
	if err != nil {
		return err
	}
	created, key, err := eng.Bootstrap(ctx, cfg.BootstrapKey)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if created && cfg.BootstrapKey == "" {
		fmt.Fprintf(stdout, "Created the first project and its owner key. It is shown once; keep it:\n\n    %s\n\n", key)
	}

	draining := make(chan struct{})
	a := api.New(eng, log, metrics, draining)
	mux := http.NewServeMux()
	a.Register(mux)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		pctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := st.Ping(pctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"status":"unavailable","store":"`+st.Driver()+`"}`)
			return
		}
		_, _ = io.WriteString(w, `{"status":"ready","store":"`+st.Driver()+`"}`)
	})
	mux.Handle("GET /metrics", metrics.Handler())
	doc, _ := json.MarshalIndent(a.OpenAPI(cfg.Version), "", "  ")
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	})
	docsHandler := docs.Handler(doc) // /docs: the guides and the API reference
	mux.Handle("GET /docs", docsHandler)
	mux.Handle("GET /docs/", docsHandler)
	mux.Handle("/", web.Handler())

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	fmt.Fprintf(stdout, "Ratchet listening on http://%s (store: %s)\n", ln.Addr(), st.Driver())
	log.Info("listening", "addr", ln.Addr().String(), "store", st.Driver())

	engCtx, stopEngine := context.WithCancel(context.Background())
	engDone := make(chan struct{})
	go func() { eng.Run(engCtx); close(engDone) }()

	errCh := make(chan error, 1)
	go func() { errCh <- srv.Serve(ln) }()
	select {
	case err := <-errCh:
		stopEngine()
		<-engDone
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: no new claims, finishing in-flight requests")
	close(draining)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	shutdownErr := srv.Shutdown(sctx)
	stopEngine()
	<-engDone
	if err := <-errCh; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if shutdownErr != nil {
		return fmt.Errorf("shutdown: %w", shutdownErr)
	}
	log.Info("stopped")
	return nil
}
