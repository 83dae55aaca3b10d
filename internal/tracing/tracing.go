// Package tracing is Ratchet's OpenTelemetry tracing: the OTLP/HTTP
// exporter, configured by the standard OTEL_* variables and off unless an
// OTLP endpoint is set, and the spans of a job's life (ratchet.enqueue,
// ratchet.claim, ratchet.report, ratchet.delivery; docs/traces.md).
//
// A nil *Tracer is tracing turned off: every method works on it and costs
// a nil check, so the claim and report paths allocate nothing more when
// tracing is off.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/getratchet/ratchet/internal/traceparent"
)

// Span names (documented in docs/traces.md).
const (
	SpanEnqueue  = "ratchet.enqueue"
	SpanClaim    = "ratchet.claim"
	SpanReport   = "ratchet.report"
	SpanDelivery = "ratchet.delivery"
)

// Attribute keys of Ratchet's spans, beside the semantic conventions'
// http.request.method and http.response.status_code.
const (
	AttrJobID          = "ratchet.job.id"
	AttrJobCreated     = "ratchet.job.created"
	AttrTool           = "ratchet.tool"
	AttrEndpoint       = "ratchet.endpoint"
	AttrAttempt        = "ratchet.attempt"
	AttrWorker         = "ratchet.worker.id"
	AttrOutcome        = "ratchet.outcome"
	AttrClassification = "ratchet.classification"
	AttrDuplicate      = "ratchet.report.duplicate"
)

// Tracer makes Ratchet's spans and exports them; nil is tracing off.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// Enabled says whether the environment turns tracing on: an OTLP endpoint
// is set (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
// OTEL_TRACES_EXPORTER is not "none" and OTEL_SDK_DISABLED is not "true".
func Enabled(getenv func(string) string) bool {
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return false
	}
	return getenv("OTEL_TRACES_EXPORTER") != "none" && !strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true")
}

// Endpoint is the OTLP endpoint the environment names for traces, for
// the startup log.
func Endpoint(getenv func(string) string) string {
	if e := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); e != "" {
		return e
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
}

// checkEnv refuses settings Ratchet cannot honour: an exporter other than
// otlp, and a protocol other than http/protobuf.
func checkEnv(getenv func(string) string) error {
	if e := getenv("OTEL_TRACES_EXPORTER"); e != "" && e != "otlp" {
		return fmt.Errorf("OTEL_TRACES_EXPORTER=%q: ratchet exports traces with otlp only; set it to otlp or none, or unset it", e)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(name); p != "" && p != "http/protobuf" {
			return fmt.Errorf("%s=%q: ratchet sends OTLP over http/protobuf only (grpc and http/json are not built in); set it to http/protobuf or unset it", name, p)
		}
	}
	return nil
}

// Setup builds the tracer the environment asks for, or nil (off) when it
// sets no OTLP endpoint. The exporter reads the endpoint, headers,
// timeout, compression and certificates from getenv (newExporter); the
// sampler and the batching read their own OTEL_* variables from the
// process's environment (OTEL_TRACES_SAMPLER, OTEL_BSP_*); OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES name the service ("ratchet" by default). Export
// failures are logged as warnings on log.
func Setup(ctx context.Context, getenv func(string) string, version string, log *slog.Logger) (*Tracer, error) {
	if !Enabled(getenv) {
		return nil, nil
	}
	if err := checkEnv(getenv); err != nil {
		return nil, err
	}
	exp, err := newExporter(getenv, version)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "ratchet"), attribute.String("service.version", version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("trace resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", "err", err) }))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracer{provider: tp, tracer: tp.Tracer("github.com/getratchet/ratchet", trace.WithInstrumentationVersion(version))}, nil
}

// On reports whether t makes spans.
func (t *Tracer) On() bool { return t != nil }

// Shutdown exports the spans still buffered and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// noSpan is the span of a nil Tracer: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())

// Start starts span name of kind at start, a child of the W3C trace context
// (parent, state) when parent parses, else of nothing (a new trace). On a
// nil Tracer it returns ctx and a span that records nothing.
func (t *Tracer) Start(ctx context.Context, name string, kind trace.SpanKind, parent, state string, start time.Time, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if t == nil {
		return ctx, noSpan
	}
	if sc, ok := SpanContext(parent, state); ok {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	return t.tracer.Start(ctx, name, append(opts, trace.WithSpanKind(kind), trace.WithTimestamp(start))...)
}

// SpanContext is the span context of a W3C traceparent and tracestate;
// ok is false when parent does not parse. A tracestate that does not
// parse is dropped.
func SpanContext(parent, state string) (trace.SpanContext, bool) {
	p, err := traceparent.Parse(parent)
	if err != nil {
		return trace.SpanContext{}, false
	}
	ts, _ := trace.ParseTraceState(state)
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: p.TraceID, SpanID: p.SpanID, TraceFlags: trace.TraceFlags(p.Flags), TraceState: ts, Remote: true}), true
}

// Header is the traceparent and tracestate that continue from span; both
// "" when span has no valid context.
func Header(span trace.Span) (parent, state string) {
	sc := span.SpanContext()
	if !sc.IsValid() {
		return "", ""
	}
	return traceparent.Parent{TraceID: sc.TraceID(), SpanID: sc.SpanID(), Flags: byte(sc.TraceFlags())}.String(), sc.TraceState().String()
}

// LinkFrom is a link to the span a request's own traceparent header names
// (a worker's poll loop, say), or nothing.
func LinkFrom(parent, state string) []trace.SpanStartOption {
	if sc, ok := SpanContext(parent, state); ok {
		return []trace.SpanStartOption{trace.WithLinks(trace.Link{SpanContext: sc})}
	}
	return nil
}

// Job is the attributes every span of a job carries.
func Job(id int64, tool, version, endpoint string, attempt int64) trace.SpanStartEventOption {
	return trace.WithAttributes(attribute.Int64(AttrJobID, id), attribute.String(AttrTool, tool+"@"+version), attribute.String(AttrEndpoint, endpoint),
		attribute.Int64(AttrAttempt, attempt))
}

// Outcome records on span what was decided of an attempt, marking the
// span an error when the attempt did not succeed.
func Outcome(span trace.Span, outcome, classification string) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String(AttrOutcome, outcome), attribute.String(AttrClassification, classification))
	if outcome != "succeeded" {
		span.SetStatus(codes.Error, classification)
	}
}

// Fail marks span as failed with err.
func Fail(span trace.Span, err error) {
	if span.IsRecording() {
		span.SetStatus(codes.Error, err.Error())
	}
}
