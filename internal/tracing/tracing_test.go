package tracing

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestSetupFromEnvironment(t *testing.T) {
	t.Parallel()
	const ep = "http://127.0.0.1:1"
	for _, tc := range []struct {
		name string
		env  map[string]string
		on   bool
		err  string
	}{
		{"nothing set: off", nil, false, ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ep}, true, ""},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": ep + "/v1/traces"}, true, ""},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ep, "OTEL_TRACES_EXPORTER": "none"}, false, ""},
		{"sdk disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ep, "OTEL_SDK_DISABLED": "true"}, false, ""},
		{"protocol without endpoint: off", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, ""},
		{"http/protobuf", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ep, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, true, ""},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ep, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, `OTEL_EXPORTER_OTLP_PROTOCOL="grpc": ratchet sends OTLP over http/protobuf only`},
		{"traces grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ep, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, false, `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="grpc"`},
		{"zipkin", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ep, "OTEL_TRACES_EXPORTER": "zipkin"}, false, `OTEL_TRACES_EXPORTER="zipkin": ratchet exports traces with otlp only`},
	} {
		tr, err := Setup(context.Background(), env(tc.env), "test", slog.New(slog.DiscardHandler))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || tr.On() != tc.on {
			t.Errorf("%s: on %v, err %v; want on %v", tc.name, tr.On(), err, tc.on)
		}
		_ = tr.Shutdown(context.Background())
	}
}

// TestOffIsFree: a nil Tracer starts spans that record nothing, keep the
// context as it was, and allocate nothing.
func TestOffIsFree(t *testing.T) {
	var tr *Tracer
	ctx := context.Background()
	now := time.Now()
	allocs := testing.AllocsPerRun(100, func() {
		c, span := tr.Start(ctx, SpanDelivery, trace.SpanKindClient, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "", now)
		Outcome(span, "succeeded", "success")
		span.End()
		if c != ctx || span.IsRecording() {
			t.Fatal("a nil Tracer changed the context or recorded")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per span with tracing off", allocs)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	t.Parallel()
	const tp, ts = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "rojo=1,congo=2"
	sc, ok := SpanContext(tp, ts)
	if !ok {
		t.Fatal("SpanContext refused a valid traceparent")
	}
	p, s := Header(trace.SpanFromContext(trace.ContextWithRemoteSpanContext(context.Background(), sc)))
	if p != tp || s != ts {
		t.Errorf("Header = %q, %q", p, s)
	}
	if _, ok := SpanContext("00-bad", ""); ok {
		t.Error("SpanContext accepted a bad traceparent")
	}
}
