// Package server runs `ratchet serve`: the store, the engine and its
// background duties, the HTTP API, the embedded pages, and graceful shutdown.
package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/getratchet/ratchet/internal/api"
	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/delivery"
	"github.com/getratchet/ratchet/internal/docs"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/sqlite"
	"github.com/getratchet/ratchet/internal/tracing"
	"github.com/getratchet/ratchet/internal/web"
	"github.com/getratchet/ratchet/internal/webhook"
	"github.com/getratchet/ratchet/wire"
)

// Config is everything `ratchet serve` can be told. Defaults are in the
// comments and applied by Run.
type Config struct {
	Addr              string        // listen address; default 127.0.0.1:8080
	DatabaseURL       string        // file path, sqlite://path or postgres://...; default ratchet.db in the working directory
	BootstrapKey      string        // owner key to create on first start instead of a generated one
	Retention         time.Duration // prune finished jobs older than this; default 168h; negative keeps them
	HistoryRetention  time.Duration // keep per-minute history this long; default 48h
	MaxWait           time.Duration // longest claim long poll; default 30s
	RescueInterval    time.Duration // lease rescue period; default 250ms
	SQLiteSynchronous string        // FULL (default) or NORMAL
	ShutdownTimeout   time.Duration // how long in-flight requests may take to finish; default 15s
	Version           string
	DevClock          bool // a clock tests may advance through POST /v1/dev/clock
	// MetricsAddr is where /metrics is served, apart from the API (the
	// Prometheus habit: an address only the scraper reaches); "" serves
	// metrics nowhere. They name every project's endpoints, so they are not
	// on the API's address.
	MetricsAddr string
	AccessLog   bool // log every request (method, path, status, duration) at info
	// DeliveryConcurrency is how many HTTP deliveries this node runs at
	// once; default delivery.DefaultConcurrency; negative runs none.
	DeliveryConcurrency int
	// DeliveryAllow lets deliveries reach these otherwise refused
	// addresses (loopback, private, link-local...).
	DeliveryAllow []netip.Prefix
	// PublicURL is where people reach this server's console (scheme,
	// host, optional path prefix, no trailing slash), for the links
	// alerts carry; "" sends alerts without a link.
	PublicURL string
	// ClockOffset runs this node's clock ahead (negative: behind) by this
	// much, to show in fault tests what clock skew between nodes does;
	// default 0. Never in production.
	ClockOffset time.Duration
	// StreamInterval is how often a GET /v1/stream re-reads its view;
	// default 1s. StreamPing is how often an idle stream pings; default
	// 15s. Tests shorten both.
	StreamInterval, StreamPing time.Duration
	// SearchWindow is how many jobs a text search counts within; default
	// wire.SearchWindow. Tests shrink it to see a capped count.
	SearchWindow int
	// TLSCertFile and TLSKeyFile, both or neither, serve the API over
	// HTTPS with this PEM certificate (chain) and key, read again on
	// SIGHUP; empty serves plain HTTP.
	TLSCertFile, TLSKeyFile string
}

// OpenStore opens the store a database URL names and applies migrations
// when migrate is true.
func OpenStore(ctx context.Context, url, sqliteSync string, migrate bool) (store.Store, error) {
	driver, target, err := ParseDatabase(url)
	if err != nil {
		return nil, err
	}
	var st store.Store
	switch driver {
	case DriverPostgres:
		s, err := postgres.Open(ctx, target, postgres.Options{})
		if err != nil {
			return nil, err
		}
		st = s
	default:
		s, err := sqlite.Open(ctx, target, sqlite.Options{Synchronous: sqliteSync})
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
	cfg = cfg.withDefaults()
	certs, err := loadTLS(ctx, cfg, log)
	if err != nil {
		return err
	}
	ln, mln, err := listen(cfg)
	if err != nil {
		return err
	}
	defer ln.Close()
	if mln != nil {
		defer mln.Close()
	}
	// Tracing settings are checked before anything is opened, as the
	// addresses are: a refused OTEL_* setting creates nothing.
	tracer, err := startTracing(ctx, cfg.Version, log)
	if err != nil {
		return err
	}
	defer stopTracing(tracer, log)
	st, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	metrics := api.NewMetrics(st)
	sysClock, clk, err := clocks(cfg, st, log)
	if err != nil {
		return err
	}
	eng, err := startEngine(ctx, cfg, st, clk, metrics, stdout, log)
	if err != nil {
		return err
	}
	draining := make(chan struct{})
	a := api.New(eng, log, metrics, draining)
	a.SetTracer(tracer)
	srv := httpServer(cfg, a, st, certs, log)
	if mln != nil {
		defer serveMetrics(mln, metrics).Close()
	}
	announce(cfg, st.Driver(), ln, mln, stdout, log)
	// The dispatcher delivers HTTP tools' jobs. On shutdown it stops
	// claiming with the API; requests in flight and jobs claimed ahead get the
	// shutdown timeout, then are left to their leases (timed out, retried).
	disp := delivery.New(delivery.Config{Engine: eng, Concurrency: cfg.DeliveryConcurrency, Policy: webhook.Policy{Allow: cfg.DeliveryAllow},
		Logger: log, Observer: metrics, UserAgent: "Ratchet/" + cfg.Version, Clock: sysClock, Tracer: tracer, WorkerID: deliveryWorkerID(cfg)})
	return serve(ctx, cfg, ln, srv, eng, disp, draining, log)
}

// deliveryConcurrency is how many HTTP deliveries this node runs at once:
// the flag's value, its default when 0, none when negative.
func deliveryConcurrency(cfg Config) int {
	switch {
	case cfg.DeliveryConcurrency < 0:
		return 0
	case cfg.DeliveryConcurrency == 0:
		return delivery.DefaultConcurrency
	}
	return cfg.DeliveryConcurrency
}

// deliveryWorkerID names this node's HTTP deliveries in attempts and the
// workers list: "ratchet-delivery/<host>/<8 hex digits>", the digits a
// hash of the node's working directory, database and listen address. It
// stays the same across restarts of the node (a name with the process id
// made every restart a new worker, and the old one lingered as dead), and
// differs between nodes of one host, which serve on different addresses
// or databases. The hash keeps a database password out of the name.
func deliveryWorkerID(cfg Config) string {
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	sum := sha256.Sum256([]byte(wd + "\x00" + cfg.DatabaseURL + "\x00" + cfg.Addr))
	return "ratchet-delivery/" + host + "/" + hex.EncodeToString(sum[:4])
}

// withDefaults fills in the defaults Run applies: the address and the
// shutdown timeout.
func (cfg Config) withDefaults() Config {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:8080"
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 15 * time.Second
	}
	return cfg
}

// openMigrated opens the store and applies its migrations, each logged.
func openMigrated(ctx context.Context, cfg Config, log *slog.Logger) (store.Store, error) {
	st, err := OpenStore(ctx, cfg.DatabaseURL, cfg.SQLiteSynchronous, false)
	if err != nil {
		return nil, err
	}
	if err := migrateLogged(ctx, st, log); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// httpServer is the API's server: headers must arrive within 10 s and
// bodies within api.BodyTimeout (set per request, so long polls are not
// cut); idle connections close after 2 minutes. The server's own errors
// (a failed TLS handshake) go to the log, in its format.
func httpServer(cfg Config, a *api.API, st store.Store, certs *certReloader, log *slog.Logger) *http.Server {
	a.SetStreamTiming(cfg.StreamInterval, cfg.StreamPing)
	var handler http.Handler = routes(a, st, cfg.Version)
	if cfg.AccessLog {
		handler = accessLog(handler, log)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	if certs != nil {
		srv.TLSConfig = certs.config()
	}
	return srv
}

// loadTLS loads --tls-cert and --tls-key when given, and reloads them on
// SIGHUP from now until ctx ends; nil without TLS. Without TLS a SIGHUP is
// logged and changes nothing: a server's reload signal (systemctl reload)
// must not stop it, as the signal's default action would.
func loadTLS(ctx context.Context, cfg Config, log *slog.Logger) (*certReloader, error) {
	if cfg.TLSCertFile == "" && cfg.TLSKeyFile == "" {
		onSIGHUP(ctx, func() { log.Info("SIGHUP: nothing to reload; only the TLS pair (--tls-cert, --tls-key) is read again") })
		return nil, nil
	}
	if cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" {
		return nil, errors.New("--tls-cert and --tls-key go together: give both, or neither to serve plain HTTP")
	}
	certs, err := newCertReloader(cfg.TLSCertFile, cfg.TLSKeyFile)
	if err != nil {
		return nil, err
	}
	log.Info("TLS certificate loaded; SIGHUP reloads it", certAttrs(certs.cert.Load().Leaf)...)
	warnKeyMode(cfg.TLSKeyFile, log)
	certs.watch(ctx, log)
	return certs, nil
}

// migrateLogged applies the pending migrations and logs each one it
// applied, so an upgrade says what it changed in the schema. With several
// PostgreSQL nodes, each migration is logged by the node that applied it.
func migrateLogged(ctx context.Context, st store.Store, log *slog.Logger) error {
	applied, err := st.Migrate(ctx)
	for _, m := range applied {
		version, name, _ := strings.Cut(m, "_")
		log.Info("applied migration", "version", version, "name", name)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if len(applied) == 0 {
		log.Info("schema up to date: no migration to apply")
	}
	return nil
}

// announce prints the addresses on standard output (tests and scripts read
// them there) and logs one line with everything an operator checks first:
// the version, the store, the database (a PostgreSQL password hidden) and
// the addresses.
func announce(cfg Config, driver string, ln, mln net.Listener, stdout io.Writer, log *slog.Logger) {
	scheme := "http"
	if cfg.TLSCertFile != "" {
		scheme = "https"
	}
	apiURL := scheme + "://" + ln.Addr().String()
	metricsURL := "off"
	if mln != nil {
		metricsURL = "http://" + mln.Addr().String() + "/metrics"
		fmt.Fprintf(stdout, "Ratchet metrics on %s\n", metricsURL)
	}
	fmt.Fprintf(stdout, "Ratchet listening on %s (store: %s)\n", apiURL, driver)
	fmt.Fprintf(stdout, "Ratchet delivers HTTP tools as worker %s\n", deliveryWorkerID(cfg))
	log.Info("ratchet started", "version", cfg.Version, "store", driver, "database", DescribeDatabase(cfg.DatabaseURL),
		"addr", apiURL, "metrics", metricsURL, "deliveryWorker", deliveryWorkerID(cfg))
}

// listen binds --addr and, when set, --metrics-addr. Binding comes first:
// a busy port fails the start before anything is opened, migrated or
// bootstrapped, so the once-only owner key is never printed by a server
// that then cannot serve it.
func listen(cfg Config) (ln, mln net.Listener, err error) {
	if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
		return nil, nil, fmt.Errorf("listen on %s (--addr, RATCHET_ADDR): %w; nothing was opened or created", cfg.Addr, err)
	}
	if cfg.MetricsAddr != "" {
		if mln, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			ln.Close()
			return nil, nil, fmt.Errorf("listen on %s (--metrics-addr, RATCHET_METRICS_ADDR): %w; nothing was opened or created", cfg.MetricsAddr, err)
		}
	}
	return ln, mln, nil
}

// clocks returns the machine's clock (moved to 23:30 or 00:30 UTC under the
// test script's hour-shifted runs, clock.TestOffsetEnv) and the clock the
// engine decides by: that one, a development clock owners may advance, or
// either moved by --clock-offset for fault tests.
func clocks(cfg Config, st store.Store, log *slog.Logger) (sys, decide clock.Clock, err error) {
	testOffset, err := clock.TestOffset()
	if err != nil {
		return nil, nil, err
	}
	sys, _ = clock.System()
	if testOffset != 0 {
		log.Warn("test clock offset: this process's clock is deliberately shifted (tests only)", "env", clock.TestOffsetEnv, "offset", testOffset.String())
	}
	decide = sys
	if cfg.DevClock {
		decide = clock.NewOffset(testOffset)
		log.Warn("development clock enabled: owners may advance time with POST /v1/dev/clock")
	}
	if cfg.ClockOffset != 0 {
		decide = clock.Shifted{Base: decide, By: cfg.ClockOffset}
		log.Warn("clock offset: this node's clock is deliberately wrong (for fault tests only)", "offset", cfg.ClockOffset, "decisionsFromDatabaseClock", st.Driver() == "postgres" && !cfg.DevClock)
	}
	return sys, decide, nil
}

// startEngine builds the engine and bootstraps the first project, printing
// its owner key once when Ratchet made it.
func startEngine(ctx context.Context, cfg Config, st store.Store, clk clock.Clock, metrics *api.Metrics, stdout io.Writer, log *slog.Logger) (*engine.Engine, error) {
	// Nodes that share PostgreSQL take the time of their decisions from
	// it, so their own clocks may disagree (see engine.Config). A
	// development clock is the exception: it is there to be moved.
	dbClock := st.Driver() == "postgres" && !cfg.DevClock
	eng, err := engine.New(engine.Config{Store: st, Clock: clk, DatabaseClock: dbClock, Logger: log, Retention: cfg.Retention, HistoryRetention: cfg.HistoryRetention, MaxWait: cfg.MaxWait, RescueInterval: cfg.RescueInterval, Observer: metrics, SearchWindow: cfg.SearchWindow,
		DeliveryPolicy: webhook.Policy{Allow: cfg.DeliveryAllow}, DeliveryConcurrency: deliveryConcurrency(cfg), PublicURL: cfg.PublicURL})
	if err != nil {
		return nil, err
	}
	created, key, err := eng.Bootstrap(ctx, cfg.BootstrapKey)
	if err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	if created && cfg.BootstrapKey == "" {
		fmt.Fprintf(stdout, "Created the first project and its owner key. It is shown once; keep it:\n\n    %s\n\n", key)
	}
	return eng, nil
}

// routes is the main listener's mux: the API, the health and readiness
// probes, the OpenAPI document, the docs and the pages.
func routes(a *api.API, st store.Store, version string) *http.ServeMux {
	mux := http.NewServeMux()
	a.Register(mux)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, wire.Health{Status: wire.HealthOK, Version: version})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		pctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := st.Ping(pctx); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, wire.Readiness{Status: wire.ReadinessUnavailable, Store: st.Driver()})
			return
		}
		writeJSON(w, http.StatusOK, wire.Readiness{Status: wire.ReadinessReady, Store: st.Driver()})
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"code":"not_found","message":"metrics are served on their own address: start ratchet serve with --metrics-addr (RATCHET_METRICS_ADDR)"}}`)
	})
	doc, _ := json.MarshalIndent(a.OpenAPI(version), "", "  ")
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	})
	docsHandler := docs.Handler(doc) // /docs: the guides and the API reference
	mux.Handle("GET /docs", docsHandler)
	mux.Handle("GET /docs/", docsHandler)
	mux.Handle("/", web.Handler())
	return mux
}

// serveMetrics serves /metrics on its own listener until closed.
func serveMetrics(mln net.Listener, metrics *api.Metrics) *http.Server {
	mmux := http.NewServeMux()
	mmux.Handle("GET /metrics", metrics.Handler())
	msrv := &http.Server{Handler: mmux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, MaxHeaderBytes: 16 << 10}
	go func() { _ = msrv.Serve(mln) }()
	return msrv
}

// serve runs the engine, the dispatcher and the HTTP server until ctx is
// cancelled or the server fails, then shuts them down in order: no new
// claims, in-flight requests and deliveries finish within the shutdown
// timeout (deliveries past it are abandoned to their leases), and the
// engine stops last.
func serve(ctx context.Context, cfg Config, ln net.Listener, srv *http.Server, eng *engine.Engine, disp *delivery.Dispatcher,
	draining chan struct{}, log *slog.Logger) error {
	engCtx, stopEngine := context.WithCancel(context.Background())
	engDone := make(chan struct{})
	go func() { eng.Run(engCtx); close(engDone) }()
	// Alerts are sent by their own sender, not the dispatcher: no
	// endpoint's gates hold them, and they run with the engine (also
	// when this node runs no deliveries).
	alerts := delivery.NewAlertSender(eng, webhook.Policy{Allow: cfg.DeliveryAllow}, log, "Ratchet/"+cfg.Version, 0)
	alertsDone := make(chan struct{})
	go func() { alerts.Run(engCtx); close(alertsDone) }()
	dispCtx, abandonDeliveries := context.WithCancel(context.Background())
	defer abandonDeliveries()
	dispDone := make(chan struct{})
	if cfg.DeliveryConcurrency >= 0 {
		go func() { disp.Run(dispCtx); close(dispDone) }()
	} else {
		close(dispDone)
	}

	errCh := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			errCh <- srv.ServeTLS(ln, "", "") // the certificate comes from TLSConfig.GetCertificate
			return
		}
		errCh <- srv.Serve(ln)
	}()
	select {
	case err := <-errCh:
		abandonDeliveries()
		<-dispDone
		stopEngine()
		<-engDone
		<-alertsDone
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: no new claims, finishing in-flight requests")
	close(draining)
	disp.Stop()
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	shutdownErr := srv.Shutdown(sctx)
	select {
	case <-dispDone:
	case <-sctx.Done():
		abandonDeliveries()
		<-dispDone
	}
	stopEngine()
	<-engDone
	<-alertsDone
	if err := <-errCh; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if shutdownErr != nil {
		return fmt.Errorf("shutdown: %w", shutdownErr)
	}
	log.Info("stopped")
	return nil
}

// startTracing turns tracing on when the OTEL_* variables set an OTLP
// endpoint (docs/traces.md), and says so on the log.
func startTracing(ctx context.Context, version string, log *slog.Logger) (*tracing.Tracer, error) {
	t, err := tracing.Setup(ctx, os.Getenv, version, log)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	if t.On() {
		log.Info("tracing on: exporting spans over OTLP/HTTP", "endpoint", tracing.Endpoint(os.Getenv))
	}
	return t, nil
}

// stopTracing exports the spans still buffered, within 5 s, once every
// request and delivery has finished.
func stopTracing(t *tracing.Tracer, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		log.Warn("tracing: flushing spans at shutdown failed", "err", err)
	}
}

// accessLog logs every request once it is answered.
func accessLog(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := api.NewStatusWriter(w)
		next.ServeHTTP(rec, r)
		log.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.Status, "bytes", rec.Bytes,
			"duration_ms", float64(time.Since(start).Microseconds())/1000, "remote", r.RemoteAddr)
	})
}

// writeJSON answers with v as JSON (a wire type: it always encodes).
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
