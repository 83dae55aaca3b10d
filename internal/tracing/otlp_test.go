package tracing

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/slim/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/slim/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/slim/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP receiver on loopback that answers each request
// with the next of its replies (the last one again when they run out) and
// keeps what it was sent, decoded as the protobuf it is.
type collector struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*coltracepb.ExportTraceServiceRequest
	headers  []http.Header
	at       []time.Time
}

type reply struct {
	status int
	header map[string]string
	body   []byte
}

func newCollector(t *testing.T, replies ...reply) *collector {
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Errorf("collector: gzip: %v", err)
				return
			}
			body = zr
		}
		raw, _ := io.ReadAll(body)
		var in coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &in); err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("collector: %s %s (%s): %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err)
		}
		c.mu.Lock()
		n := len(c.requests)
		c.requests, c.headers, c.at = append(c.requests, &in), append(c.headers, r.Header.Clone()), append(c.at, time.Now())
		c.mu.Unlock()
		rep := reply{status: http.StatusOK}
		if len(replies) > 0 {
			rep = replies[min(n, len(replies)-1)]
		}
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		_, _ = w.Write(rep.body)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.requests)
}

// exportOne makes the spans make describes, then exports them with e and
// returns what the export returned.
func exportOne(t *testing.T, e *exporter, res *resource.Resource, make func(trace.Tracer)) error {
	t.Helper()
	rec := &recorder{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(rec), sdktrace.WithResource(res))
	make(tp.Tracer("ratchet-test", trace.WithInstrumentationVersion("9.9.9")))
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return e.ExportSpans(ctx, rec.spans)
}

// recorder keeps the finished spans for the test to export itself.
type recorder struct{ spans []sdktrace.ReadOnlySpan }

func (r *recorder) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	r.spans = append(r.spans, s...)
	return nil
}
func (r *recorder) Shutdown(context.Context) error { return nil }

func TestExporterEnvironment(t *testing.T) {
	t.Parallel()
	good := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/base/"}
	e, err := newExporter(env(good), "0.1.0")
	if err != nil || e.url != "http://127.0.0.1:4318/base/v1/traces" || e.timeout != 10*time.Second || e.gzip {
		t.Fatalf("defaults: %+v, %v", e, err)
	}
	e, err = newExporter(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://c.example:443/custom",
		"OTEL_EXPORTER_OTLP_HEADERS": "api-key=general", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": " api-key = a%20b%2Cc , x-tenant=7", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "2500",
		"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}), "0.1.0")
	if err != nil || e.url != "https://c.example:443/custom" || e.headers.Get("Api-Key") != "a b,c" || e.headers.Get("X-Tenant") != "7" || e.timeout != 2500*time.Millisecond || !e.gzip {
		t.Fatalf("the _TRACES_ forms win and are read as OpenTelemetry documents them: %+v, %v", e, err)
	}
	for _, tc := range []struct{ name, value, want string }{
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://127.0.0.1:4318", "must be an http:// or https:// URL"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "127.0.0.1:4318", "must be an http:// or https:// URL"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://user:pw@127.0.0.1/v1/traces", "no user"},
		{"OTEL_EXPORTER_OTLP_HEADERS", "novalue", "key=value pairs"},
		{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "a=1,=2", "key=value pairs"},
		{"OTEL_EXPORTER_OTLP_HEADERS", "a=%zz", "percent-encoded"},
		{"OTEL_EXPORTER_OTLP_HEADERS", "a=x%0Dy", "key=value pairs"},
		{"OTEL_EXPORTER_OTLP_TIMEOUT", "10s", "whole number of milliseconds"},
		{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "0", "above 0"},
		{"OTEL_EXPORTER_OTLP_COMPRESSION", "br", "gzip or none"},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem", "readable PEM file"},
		{"OTEL_EXPORTER_OTLP_CLIENT_KEY", "/nonexistent/key.pem", "must be set together"},
	} {
		vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
		vars[tc.name] = tc.value
		_, err := newExporter(env(vars), "0.1.0")
		if err == nil || !strings.Contains(err.Error(), tc.want) || (!strings.Contains(err.Error(), tc.name) && !strings.Contains(tc.name, "CLIENT")) {
			t.Errorf("%s=%q: %v; want an error naming it and saying %q", tc.name, tc.value, err, tc.want)
		}
	}
}

// TestExportRoundTrip: every part of a span the SDK keeps reaches the
// collector as OTLP says, gzipped when asked, with the configured headers.
func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	for _, gz := range []string{"none", "gzip"} {
		c := newCollector(t)
		e, err := newExporter(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL, "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20t0k", "OTEL_EXPORTER_OTLP_COMPRESSION": gz}), "0.1.0")
		if err != nil {
			t.Fatal(err)
		}
		parent, _ := SpanContext("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "rojo=1")
		linked, _ := SpanContext("00-11111111111111111111111111111111-2222222222222222-00", "")
		start := time.Unix(1_700_000_000, 5)
		res := resource.NewSchemaless(attribute.String("service.name", "ratchet-eu"))
		err = exportOne(t, e, res, func(tr trace.Tracer) {
			_, s := tr.Start(trace.ContextWithRemoteSpanContext(context.Background(), parent), SpanDelivery, trace.WithSpanKind(trace.SpanKindClient),
				trace.WithTimestamp(start), trace.WithLinks(trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.Bool("poll", true)}}))
			s.SetAttributes(attribute.Int64(AttrJobID, 42), attribute.String(AttrTool, "charge@1"), attribute.Float64("f", 1.5), attribute.Bool("b", true),
				attribute.StringSlice("ss", []string{"a", "b"}), attribute.Int64Slice("is", []int64{1, 2}))
			s.AddEvent("retry", trace.WithTimestamp(start.Add(time.Second)), trace.WithAttributes(attribute.Int("n", 2)))
			s.SetStatus(codes.Error, "network_timeout")
			s.End(trace.WithTimestamp(start.Add(2 * time.Second)))
		})
		if err != nil || c.count() != 1 {
			t.Fatalf("%s: export: %v, %d requests", gz, err, c.count())
		}
		if got := c.headers[0].Get("User-Agent"); got != "ratchet/0.1.0 (OTLP/HTTP trace exporter)" {
			t.Errorf("%s: User-Agent %q; want Ratchet's version in it", gz, got)
		}
		if got := c.headers[0].Get("Authorization"); got != "Bearer t0k" || (gz == "gzip") != (c.headers[0].Get("Content-Encoding") == "gzip") {
			t.Errorf("%s: headers %v", gz, c.headers[0])
		}
		rs := c.requests[0].GetResourceSpans()
		if len(rs) != 1 || len(rs[0].GetScopeSpans()) != 1 || len(rs[0].GetScopeSpans()[0].GetSpans()) != 1 {
			t.Fatalf("%s: %v", gz, c.requests[0])
		}
		if a := rs[0].GetResource().GetAttributes(); len(a) != 1 || a[0].GetValue().GetStringValue() != "ratchet-eu" {
			t.Errorf("%s: resource %v", gz, a)
		}
		if sc := rs[0].GetScopeSpans()[0].GetScope(); sc.GetName() != "ratchet-test" || sc.GetVersion() != "9.9.9" {
			t.Errorf("%s: scope %v", gz, sc)
		}
		checkSpan(t, rs[0].GetScopeSpans()[0].GetSpans()[0], start)
	}
}

func checkSpan(t *testing.T, s *tracepb.Span, start time.Time) {
	t.Helper()
	if hexOf(s.GetTraceId()) != "4bf92f3577b34da6a3ce929d0e0e4736" || hexOf(s.GetParentSpanId()) != "00f067aa0ba902b7" || len(s.GetSpanId()) != 8 || s.GetTraceState() != "rojo=1" {
		t.Errorf("ids: trace %x parent %x span %x state %q", s.GetTraceId(), s.GetParentSpanId(), s.GetSpanId(), s.GetTraceState())
	}
	if s.GetName() != SpanDelivery || s.GetKind() != tracepb.Span_SPAN_KIND_CLIENT || s.GetFlags() != 0x301 {
		t.Errorf("name %q kind %v flags %#x; want the sampled flag and a remote parent", s.GetName(), s.GetKind(), s.GetFlags())
	}
	if s.GetStartTimeUnixNano() != uint64(start.UnixNano()) || s.GetEndTimeUnixNano() != uint64(start.Add(2*time.Second).UnixNano()) {
		t.Errorf("times %d–%d", s.GetStartTimeUnixNano(), s.GetEndTimeUnixNano())
	}
	if st := s.GetStatus(); st.GetCode() != tracepb.Status_STATUS_CODE_ERROR || st.GetMessage() != "network_timeout" {
		t.Errorf("status %v", st)
	}
	want := map[string]string{AttrJobID: "int 42", AttrTool: `string "charge@1"`, "f": "double 1.5", "b": "bool true",
		"ss": `[string "a", string "b"]`, "is": "[int 1, int 2]"}
	for _, kv := range s.GetAttributes() {
		if got := render(kv.GetValue()); got != want[kv.GetKey()] {
			t.Errorf("attribute %s = %s, want %s", kv.GetKey(), got, want[kv.GetKey()])
		}
		delete(want, kv.GetKey())
	}
	if len(want) != 0 {
		t.Errorf("attributes missing: %v", want)
	}
	if ev := s.GetEvents(); len(ev) != 1 || ev[0].GetName() != "retry" || ev[0].GetTimeUnixNano() != uint64(start.Add(time.Second).UnixNano()) || len(ev[0].GetAttributes()) != 1 {
		t.Errorf("events %v", ev)
	}
	if l := s.GetLinks(); len(l) != 1 || hexOf(l[0].GetSpanId()) != "2222222222222222" || l[0].GetFlags() != 0x300 || len(l[0].GetAttributes()) != 1 {
		t.Errorf("links %v", l)
	}
}

// render writes an attribute value as the test expects it.
func render(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprintf("int %d", x.IntValue)
	case *commonpb.AnyValue_StringValue:
		return fmt.Sprintf("string %q", x.StringValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprintf("double %g", x.DoubleValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprintf("bool %t", x.BoolValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, render(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("%T", v.GetValue())
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(digits[c>>4])
		s.WriteByte(digits[c&15])
	}
	return s.String()
}

// TestExportRetries: a 503 with Retry-After is retried no sooner than the
// hint and then succeeds; a 400 is not retried; a partial success is
// reported; an export whose context ends stops waiting.
func TestExportRetries(t *testing.T) {
	t.Parallel()
	one := func(tr trace.Tracer) { _, s := tr.Start(context.Background(), SpanClaim); s.End() }
	res := resource.Empty()
	exp := func(c *collector) *exporter {
		e, err := newExporter(env(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": c.URL + "/v1/traces"}), "0.1.0")
		if err != nil {
			t.Fatal(err)
		}
		return e
	}

	busy := newCollector(t, reply{status: 503, header: map[string]string{"Retry-After": "2"}}, reply{status: 200})
	if err := exportOne(t, exp(busy), res, one); err != nil || busy.count() != 2 {
		t.Fatalf("503 then 200: %v after %d requests", err, busy.count())
	}
	if gap := busy.at[1].Sub(busy.at[0]); gap < 2*time.Second {
		t.Errorf("the retry came %s after the 503, sooner than its Retry-After: 2", gap)
	}

	bad := newCollector(t, reply{status: 400, body: []byte("malformed")})
	if err := exportOne(t, exp(bad), res, one); err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "malformed") || bad.count() != 1 {
		t.Errorf("400: %v after %d requests; want the error with the body, not retried", err, bad.count())
	}

	ps, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 1, ErrorMessage: "too old"}})
	partial := newCollector(t, reply{status: 200, body: ps})
	if err := exportOne(t, exp(partial), res, one); err == nil || !strings.Contains(err.Error(), "rejected 1 spans: too old") {
		t.Errorf("partial success: %v", err)
	}

	down := newCollector(t, reply{status: 503})
	e := exp(down)
	rec := &recorder{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(rec))
	one(tp.Tracer("t"))
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if err := e.ExportSpans(ctx, rec.spans); err == nil || !strings.Contains(err.Error(), "503") || time.Since(t0) > 30*time.Second {
		t.Errorf("a collector down past the export's deadline: %v after %s", err, time.Since(t0))
	}
}

// FuzzParseHeaders: a header list is refused, or every header it gives
// goes out on the wire and is read back the same.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"a=b", "a=b,c=d", " a = %20 ", "=x", "a", "a=%zz", "a=b%0D%0Ac: d", "k=v=w", "a(b=1", "x=%09tab"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseHeaders(s)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := h.Write(&buf); err != nil {
			t.Fatal(err)
		}
		buf.WriteString("\r\n")
		back, err := textproto.NewReader(bufio.NewReader(&buf)).ReadMIMEHeader()
		if err != nil {
			t.Fatalf("headers %q were taken but do not read back: %v", s, err)
		}
		for k, vs := range h {
			for i, v := range vs {
				if got := back.Values(k); len(got) != len(vs) || got[i] != strings.Trim(v, " \t") {
					t.Fatalf("headers %q: %s went out as %q and came back as %q", s, k, vs, got)
				}
			}
		}
	})
}
