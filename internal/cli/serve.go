package cli

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/server"
	"github.com/getratchet/ratchet/internal/webhook"
	"github.com/getratchet/ratchet/wire"
)

const serveUsage = "serve [--addr HOST:PORT] [--database URL] [--bootstrap-key KEY] [--retention DURATION] [--history-retention DURATION] [--max-wait DURATION] [--log-level LEVEL] [--log-format json|text] [--tls-cert FILE --tls-key FILE] [--metrics-addr HOST:PORT] [--access-log] [--delivery-concurrency N] [--delivery-allow CIDRS] [--public-url URL] [--clock-offset DURATION]"

// runServe is ratchet serve: it converts the flags (and their environment
// variables) into a server.Config, reporting every problem at once, and
// runs the server until ctx ends.
func runServe(ctx context.Context, env *Env, args []string) error {
	f := newFlagSet("serve", serveUsage, env.Stderr)
	addr := f.String("addr", envOr(env, "RATCHET_ADDR", "127.0.0.1:8080"), "listen address (RATCHET_ADDR)")
	db := databaseFlag(f, env)
	boot := f.String("bootstrap-key", envOr(env, "RATCHET_BOOTSTRAP_KEY", ""), fmt.Sprintf("owner key to create on first start instead of printing a new one, at least %d characters (RATCHET_BOOTSTRAP_KEY)", engine.MinBootstrapKeyLen))
	retention := f.String("retention", envOr(env, "RATCHET_RETENTION", "168h"), "prune finished jobs older than this; 0 or negative keeps them (RATCHET_RETENTION)")
	historyRetention := f.String("history-retention", envOr(env, "RATCHET_HISTORY_RETENTION", "48h"), "keep per-minute history (GET /v1/history) this long, 1h–8760h (RATCHET_HISTORY_RETENTION)")
	maxWait := f.String("max-wait", envOr(env, "RATCHET_MAX_WAIT", "30s"), "longest claim long poll, 1s–5m (RATCHET_MAX_WAIT)")
	syncMode := f.String("sqlite-synchronous", envOr(env, "RATCHET_SQLITE_SYNCHRONOUS", "FULL"), "SQLite synchronous: FULL (survives power loss) or NORMAL (RATCHET_SQLITE_SYNCHRONOUS)")
	devClock := f.Bool("dev-clock", "let owner keys advance the server clock (POST /v1/dev/clock); for tests, never for production")
	clockOffset := f.String("clock-offset", "0s", "run this node's clock this far ahead (negative: behind), -1h through 1h; for fault testing only, never in production")
	logf := addLogFlags(f, env)
	tlsCert := f.String("tls-cert", envOr(env, "RATCHET_TLS_CERT", ""), "serve HTTPS with this PEM certificate (chain), with --tls-key; SIGHUP reloads both (RATCHET_TLS_CERT)")
	tlsKey := f.String("tls-key", envOr(env, "RATCHET_TLS_KEY", ""), "the PEM private key of --tls-cert (RATCHET_TLS_KEY)")
	metricsAddr := f.String("metrics-addr", envOr(env, "RATCHET_METRICS_ADDR", ""), "serve Prometheus /metrics on this address, apart from the API; empty serves none (RATCHET_METRICS_ADDR)")
	accessLog := f.Bool("access-log", "log every request at info: method, path, status, duration; or set RATCHET_ACCESS_LOG to 1 (RATCHET_ACCESS_LOG)")
	deliveryConc := f.String("delivery-concurrency", envOr(env, "RATCHET_DELIVERY_CONCURRENCY", "32"), "HTTP deliveries this node runs at once, 0–1000; 0 runs none (RATCHET_DELIVERY_CONCURRENCY)")
	deliveryAllow := f.String("delivery-allow", envOr(env, "RATCHET_DELIVERY_ALLOW", ""), "comma-separated CIDRs deliveries may reach although loopback, private or link-local, e.g. 127.0.0.1/32 (RATCHET_DELIVERY_ALLOW)")
	publicURL := f.String("public-url", envOr(env, "RATCHET_PUBLIC_URL", ""), "the console's address as people reach it, e.g. https://ratchet.example.com, for the links in alerts (RATCHET_PUBLIC_URL)")
	if err := f.parse(args); err != nil {
		return err
	}
	cfg := server.Config{Addr: *addr, DatabaseURL: *db, BootstrapKey: *boot, SQLiteSynchronous: strings.ToUpper(*syncMode), Version: Version, DevClock: *devClock,
		MetricsAddr: *metricsAddr, AccessLog: *accessLog || env.Getenv("RATCHET_ACCESS_LOG") == "1"}
	cfg.Retention = f.duration("retention", *retention, -1<<62, 1<<62, "must be a Go duration such as 168h, 30m; 0 or negative keeps finished jobs")
	if cfg.Retention <= 0 {
		cfg.Retention = -1
	}
	cfg.HistoryRetention = f.duration("history-retention", *historyRetention, time.Hour, 8760*time.Hour, "must be a duration from 1h through 8760h, such as 48h")
	serveTestSettings(f, env, &cfg)
	cfg.MaxWait = f.duration("max-wait", *maxWait, time.Second, 5*time.Minute, "must be a duration from 1s through 5m")
	cfg.ClockOffset = f.duration("clock-offset", *clockOffset, -time.Hour, time.Hour, "must be a duration from -1h through 1h, such as 2s")
	if cfg.ClockOffset != 0 && cfg.DevClock {
		f.fail("clock-offset", *clockOffset, "cannot be combined with --dev-clock: a development clock is moved through the API instead")
	}
	if cfg.SQLiteSynchronous != "FULL" && cfg.SQLiteSynchronous != "NORMAL" {
		f.fail("sqlite-synchronous", *syncMode, "must be FULL or NORMAL")
	}
	serveDelivery(f, *deliveryConc, *deliveryAllow, &cfg)
	cfg.PublicURL = checkPublicURL(f, *publicURL)
	serveTLS(f, *tlsCert, *tlsKey, &cfg)
	log := logf.logger(f, env.Stderr)
	if len(*boot) > 0 && len(*boot) < engine.MinBootstrapKeyLen {
		f.fail("bootstrap-key", "a key of "+fmt.Sprint(len(*boot))+" characters", fmt.Sprintf("must be at least %d characters", engine.MinBootstrapKeyLen))
	}
	if err := f.done(); err != nil {
		return err
	}
	return server.Run(ctx, cfg, env.Stdout, log)
}

// serveTestSettings reads the settings that exist for tests only, from
// the environment: the live-update timing (how often a GET /v1/stream
// re-reads its view and how often an idle one pings) and the text
// search's count window.
func serveTestSettings(f *flagSet, env *Env, cfg *server.Config) {
	if v := env.Getenv("RATCHET_STREAM_INTERVAL"); v != "" {
		cfg.StreamInterval = f.duration("RATCHET_STREAM_INTERVAL", v, 10*time.Millisecond, time.Minute, "must be a duration from 10ms through 1m")
	}
	if v := env.Getenv("RATCHET_STREAM_PING"); v != "" {
		cfg.StreamPing = f.duration("RATCHET_STREAM_PING", v, 10*time.Millisecond, 10*time.Minute, "must be a duration from 10ms through 10m")
	}
	if v := env.Getenv("RATCHET_SEARCH_WINDOW"); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > wire.SearchWindow {
			f.fail("RATCHET_SEARCH_WINDOW", v, fmt.Sprintf("must be an integer from 1 through %d", wire.SearchWindow))
		} else {
			cfg.SearchWindow = n
		}
	}
}

// serveDelivery reads --delivery-concurrency (0 runs no dispatcher, which
// server.Config spells -1) and --delivery-allow into cfg.
func serveDelivery(f *flagSet, conc, allowText string, cfg *server.Config) {
	if n, err := strconv.Atoi(strings.TrimSpace(conc)); err != nil || n < 0 || n > 1000 {
		f.fail("delivery-concurrency", conc, "must be an integer from 0 through 1000")
	} else if cfg.DeliveryConcurrency = n; n == 0 {
		cfg.DeliveryConcurrency = -1
	}
	if allow, err := webhook.ParseAllow(allowText); err != nil {
		f.fail("delivery-allow", allowText, "must be comma-separated addresses or CIDR prefixes: "+err.Error())
	} else {
		cfg.DeliveryAllow = allow
	}
}

// checkPublicURL reads --public-url: empty, or an absolute http or https
// URL without query, fragment or user info; a trailing slash is dropped.
func checkPublicURL(f *flagSet, s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		f.fail("public-url", s, "must be an absolute http or https URL such as https://ratchet.example.com, without query, fragment or user info")
		return ""
	}
	return strings.TrimRight(s, "/")
}

// serveTLS checks that --tls-cert and --tls-key come together; the server
// loads the pair (and names both flags when it does not load).
func serveTLS(f *flagSet, cert, key string, cfg *server.Config) {
	switch {
	case cert != "" && key == "":
		f.fail("tls-key", key, "required with --tls-cert: the PEM private key of that certificate (or give neither to serve plain HTTP)")
	case cert == "" && key != "":
		f.fail("tls-cert", cert, "required with --tls-key: the PEM certificate of that key (or give neither to serve plain HTTP)")
	}
	cfg.TLSCertFile, cfg.TLSKeyFile = cert, key
}

func envOr(env *Env, name, def string) string {
	if v := env.Getenv(name); v != "" {
		return v
	}
	return def
}

// duration parses a Go duration in [lo, hi].
func (f *flagSet) duration(name, text string, lo, hi time.Duration, allowed string) time.Duration {
	d, err := time.ParseDuration(strings.TrimSpace(text))
	if err != nil || d < lo || d > hi {
		f.fail(name, text, allowed)
		return 0
	}
	return d
}
