module github.com/getratchet/ratchet

go 1.26.8

// chromedp: drives headless Chromium in the browser tests of the web pages
// (internal/browsertest); test-only, never linked into the ratchet binary.
require github.com/chromedp/chromedp v0.23.0

// pgx: the PostgreSQL driver (internal/store/postgres), for several Ratchet
// nodes sharing one database.
require github.com/jackc/pgx/v5 v5.12.0

// goldmark: renders the Markdown pages of docs/ to HTML for /docs in
// `ratchet serve` (internal/docs); CommonMark-compliant, no cgo, no network.
require github.com/yuin/goldmark v1.8.7

// cdproto: the Chrome DevTools protocol types chromedp's tests use
// (clipboard permissions, screenshots); test-only.
require github.com/chromedp/cdproto v0.159.0

// client_golang: the official Prometheus client for /metrics.
require github.com/prometheus/client_golang v1.25.0

// jsonschema/v6: validates job payloads against a tool's JSON Schema at
// enqueue (drafts 4 through 2020-12, no network loading).
require github.com/santhosh-tekuri/jsonschema/v6 v6.0.3

// x/text: the English printer of jsonschema's messages, so a payload that
// breaks its schema is told what each property must be (already a
// dependency of jsonschema/v6; v0.43.0 as the OpenTelemetry modules need).
require golang.org/x/text v0.43.0

// robfig/cron/v3: parses the cron expressions of schedules (five fields,
// @hourly-style descriptors, @every) and finds their next match; the
// parser most Go schedulers use, stable since 2019, standard library only.
// Ratchet runs it on the wall clock written as UTC and maps wall times to
// instants itself, for the daylight-saving rule of docs/schedules.md
// (internal/engine/cronspec.go).
require github.com/robfig/cron/v3 v3.0.1

// modernc.org/sqlite: the embedded store; pure Go, so the ratchet binary
// stays static and needs no cgo toolchain (mattn's driver would need cgo).
require modernc.org/sqlite v1.62.0

// otel, otel/trace and otel/sdk: OpenTelemetry spans of enqueue, claim,
// report and delivery, batched by the SDK and exported over OTLP/HTTP
// (protobuf) when the standard OTEL_* variables name an endpoint, a no-op
// otherwise (internal/tracing). Pure Go: the binary stays static.
require (
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
)

// proto/slim/otlp and protobuf: OpenTelemetry's own OTLP messages, without
// the gRPC service stubs, for internal/tracing's exporter (otlp.go) and the
// tests' OTLP receiver. Not otlptracehttp: it imports the collector package
// with the gRPC stubs, and the gRPC stack it linked, never dialled, made
// the binary 41.5 MB against 38.1 MB without it (and put gRPC's advisories
// on every scan of a binary that never speaks gRPC).
require (
	go.opentelemetry.io/proto/slim/otlp v1.11.1
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/BurntSushi/toml v1.4.1-0.20240526193622-a339e1f7089c // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	golang.org/x/exp/typeparams v0.0.0-20231108232855-2478ac86f678 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
	honnef.co/go/tools v0.8.2 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

// staticcheck: the linter ./scripts/test runs (go tool staticcheck), pinned
// here so every machine runs the same version; never linked into ratchet.
tool honnef.co/go/tools/cmd/staticcheck
