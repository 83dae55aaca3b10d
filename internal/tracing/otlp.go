package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/slim/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/classify"
)

// exporter sends finished spans to an OTLP/HTTP collector as protobuf
// (POST {endpoint}/v1/traces, Content-Type application/x-protobuf), the
// messages being OpenTelemetry's own (go.opentelemetry.io/proto/slim/otlp).
// It is Ratchet's own rather than otlptracehttp because that one links the
// gRPC stack (through the collector package's service stubs), which
// Ratchet never uses: 3.4 MB of a 41.5 MB binary, and gRPC's advisories
// on a binary that never speaks it. A failed request is retried as Ratchet retries
// a job: 429, 502, 503, 504 and network errors, on the backoff policy
// below, never sooner than the collector's Retry-After, within the
// batcher's export timeout.
type exporter struct {
	url      string
	headers  http.Header
	gzip     bool
	timeout  time.Duration
	client   *http.Client
	shutdown atomic.Bool
	// userAgent names Ratchet and its version, so a collector's logs say
	// which build sent a batch.
	userAgent string
}

// exportRetry is the policy of an export's retries: 1 s, 2 s, 4 s, 8 s,
// ±20 %, five requests in all.
var exportRetry = backoff.Params{MaxAttempts: 5, InitialDelayMs: 1000, Multiplier: 2, MaxDelayMs: 8000, JitterPercent: 20}

// otlpVar is the value of OTEL_EXPORTER_OTLP_TRACES_<name>, else of
// OTEL_EXPORTER_OTLP_<name>, and the variable it came from.
func otlpVar(getenv func(string) string, name string) (value, from string) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_" + name, "OTEL_EXPORTER_OTLP_" + name} {
		if s := getenv(v); s != "" {
			return s, v
		}
	}
	return "", ""
}

// newExporter reads the exporter's OTEL_EXPORTER_OTLP_* variables (and
// their _TRACES_ forms, which win): ENDPOINT, HEADERS, TIMEOUT,
// COMPRESSION, CERTIFICATE, CLIENT_CERTIFICATE and CLIENT_KEY, as
// OpenTelemetry documents them. A value it cannot use is an error naming
// the variable, the value and what is allowed. version is Ratchet's, sent
// in the User-Agent.
func newExporter(getenv func(string) string, version string) (*exporter, error) {
	e := &exporter{timeout: 10 * time.Second, headers: http.Header{}, userAgent: userAgent(version)}
	var err error
	if e.url, err = tracesURL(getenv); err != nil {
		return nil, err
	}
	if h, from := otlpVar(getenv, "HEADERS"); h != "" {
		if e.headers, err = parseHeaders(h); err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
	}
	if s, from := otlpVar(getenv, "TIMEOUT"); s != "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("%s=%q: must be a whole number of milliseconds above 0", from, s)
		}
		e.timeout = time.Duration(ms) * time.Millisecond
	}
	switch s, from := otlpVar(getenv, "COMPRESSION"); s {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		return nil, fmt.Errorf("%s=%q: must be gzip or none", from, s)
	}
	tlsConf, err := tlsConfig(getenv)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConf
	e.client = &http.Client{Transport: tr}
	return e, nil
}

// userAgent is the exporter's User-Agent: ratchet/<version> and what is
// sending, e.g. "ratchet/0.1.0 (OTLP/HTTP trace exporter)".
func userAgent(version string) string {
	if version == "" {
		version = "dev"
	}
	return "ratchet/" + version + " (OTLP/HTTP trace exporter)"
}

// tracesURL is where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it
// is, else OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces added.
func tracesURL(getenv func(string) string) (string, error) {
	raw, from := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	if raw == "" {
		raw, from = getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "OTEL_EXPORTER_OTLP_ENDPOINT"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", fmt.Errorf("%s=%q: must be an http:// or https:// URL with a host and no user", from, raw)
	}
	if from == "OTEL_EXPORTER_OTLP_ENDPOINT" {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}

// parseHeaders reads OTLP's header list: key=value pairs separated by
// commas, the values percent-encoded.
func parseHeaders(s string) (http.Header, error) {
	h := http.Header{}
	for pair := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if !ok || !token(k) || err != nil || strings.ContainsFunc(val, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return nil, fmt.Errorf("%q: must be key=value pairs separated by commas, keys HTTP header names, values percent-encoded without control characters", pair)
		}
		h.Add(k, val)
	}
	return h, nil
}

// token says whether k is an HTTP header name (RFC 9110's token).
func token(k string) bool {
	for _, c := range []byte(k) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return k != ""
}

// tlsConfig is the TLS of https endpoints: the system's roots, or the
// CERTIFICATE file's; a client certificate when both CLIENT_ variables
// are set.
func tlsConfig(getenv func(string) string) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if path, from := otlpVar(getenv, "CERTIFICATE"); path != "" {
		pem, err := os.ReadFile(path)
		pool := x509.NewCertPool()
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s=%q: must be a readable PEM file of CA certificates", from, path)
		}
		conf.RootCAs = pool
	}
	cert, certFrom := otlpVar(getenv, "CLIENT_CERTIFICATE")
	key, keyFrom := otlpVar(getenv, "CLIENT_KEY")
	switch {
	case cert != "" && key != "":
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s=%q and %s=%q: must be a PEM certificate and its key: %v", certFrom, cert, keyFrom, key, err)
		}
		conf.Certificates = []tls.Certificate{pair}
	case cert != "" || key != "":
		return nil, errors.New("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY (or their _TRACES_ forms) must be set together")
	}
	return conf, nil
}

// ExportSpans sends spans in one request, retried as exportRetry says
// while ctx lasts.
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 || e.shutdown.Load() {
		return nil
	}
	body, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: resourceSpans(spans)})
	if err != nil {
		return fmt.Errorf("OTLP: encoding %d spans: %w", len(spans), err)
	}
	if e.gzip {
		if body, err = gzipped(body); err != nil {
			return err
		}
	}
	for attempt := 1; ; attempt++ {
		retryAfterMs, err := e.post(ctx, body)
		if err == nil || retryAfterMs < 0 {
			return err
		}
		d, _ := exportRetry.Delay(attempt, rand.Float64(), retryAfterMs)
		if d.Exhausted {
			return fmt.Errorf("%w (%d requests)", err, attempt)
		}
		t := time.NewTimer(time.Duration(d.SelectedMs) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (then %w)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// post sends one request. A failure that a retry may mend has a
// retryAfterMs of 0 or more (the collector's Retry-After, 0 without one);
// one it may not, -1.
func (e *exporter) post(ctx context.Context, body []byte) (retryAfterMs int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return -1, fmt.Errorf("OTLP: %w", err)
	}
	for k, vs := range e.headers {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", e.userAgent)
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("OTLP: POST %s: %w", e.url, err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return -1, partialSuccess(reply)
	case code == http.StatusTooManyRequests || code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout:
		ms, _ := classify.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		return ms, fmt.Errorf("OTLP: POST %s: %s", e.url, resp.Status)
	default:
		return -1, fmt.Errorf("OTLP: POST %s: %s: %.200s", e.url, resp.Status, reply)
	}
}

// partialSuccess is the collector's word on spans it rejected in a
// successful reply, as an error; nil when it took them all.
func partialSuccess(reply []byte) error {
	var r coltracepb.ExportTraceServiceResponse
	if proto.Unmarshal(reply, &r) != nil || r.GetPartialSuccess() == nil {
		return nil
	}
	if ps := r.GetPartialSuccess(); ps.GetRejectedSpans() > 0 || ps.GetErrorMessage() != "" {
		return fmt.Errorf("OTLP: the collector rejected %d spans: %s", ps.GetRejectedSpans(), ps.GetErrorMessage())
	}
	return nil
}

func gzipped(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Shutdown stops exporting; the batcher has flushed before it calls this.
func (e *exporter) Shutdown(context.Context) error {
	e.shutdown.Store(true)
	e.client.CloseIdleConnections()
	return nil
}
