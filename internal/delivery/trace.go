package delivery

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/tracing"
)

// attempted is a finished attempt on its way to the report, with its
// ratchet.delivery span (one that records nothing when tracing is off),
// ended once the decision is known, at the time the response was read.
type attempted struct {
	engine.Delivered
	span trace.Span
	end  time.Time
}

// try runs one attempt of c inside its ratchet.delivery span: a client
// span, a child of the job's trace, whose context the request carries.
// ok is false when ctx ended (see attempt); the span then ends at once.
func (d *Dispatcher) try(ctx context.Context, c engine.Claimed, claimed time.Time) (attempted, bool) {
	sctx, span := d.startSpan(ctx, c)
	res, ok := d.attempt(sctx, c, claimed)
	if !ok {
		span.End()
	}
	return attempted{Delivered: engine.Delivered{Claimed: c, Result: res}, span: span, end: d.cfg.Clock.Now()}, ok
}

// startSpan starts the ratchet.delivery span of job c's attempt. Without
// a tracer the span records nothing, and its attributes are not built.
func (d *Dispatcher) startSpan(ctx context.Context, c engine.Claimed) (context.Context, trace.Span) {
	j := c.Job
	if d.cfg.Tracer == nil {
		return d.cfg.Tracer.Start(ctx, tracing.SpanDelivery, trace.SpanKindClient, "", "", time.Time{})
	}
	return d.cfg.Tracer.Start(ctx, tracing.SpanDelivery, trace.SpanKindClient, j.Traceparent, j.Tracestate, d.cfg.Clock.Now(),
		tracing.Job(j.ID, j.Tool, j.Version, j.Endpoint, j.Attempt))
}

// finish ends the attempt's span with what was decided of it.
func (a *attempted) finish(it engine.BatchItem) {
	if a.span.IsRecording() {
		if a.Result.HTTPStatus > 0 {
			a.span.SetAttributes(attribute.Int("http.response.status_code", a.Result.HTTPStatus))
		}
		if it.Err != nil {
			tracing.Fail(a.span, it.Err)
		} else {
			tracing.Outcome(a.span, string(it.Decision.Outcome), it.Decision.Classification)
		}
	}
	a.span.End(trace.WithTimestamp(a.end))
}

// setTraceHeaders sends the trace context of the attempt: its
// ratchet.delivery span's with tracing on (the request's context carries
// it), else the job's own as it was stored.
func setTraceHeaders(req *http.Request, c engine.Claimed) {
	parent, state := c.Job.Traceparent, c.Job.Tracestate
	if span := trace.SpanFromContext(req.Context()); span.IsRecording() || span.SpanContext().IsValid() {
		parent, state = tracing.Header(span)
	}
	if parent != "" {
		req.Header.Set("traceparent", parent)
	}
	if state != "" {
		req.Header.Set("tracestate", state)
	}
}
