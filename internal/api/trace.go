package api

import (
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/tracing"
	"github.com/getratchet/ratchet/wire"
)

// SetTracer makes the API trace enqueues, claims and reports (nil: off);
// call it before serving.
func (a *API) SetTracer(t *tracing.Tracer) { a.tracer = t }

// traceEnqueue gives each job of an enqueue request its trace context: its
// own traceparent field, else the request's traceparent header (checked
// here, named as the header). With tracing on it starts one ratchet.enqueue
// span per job, a child of that context or the root of a new trace, and the
// job keeps the span's context instead; endEnqueue ends them. A job whose
// own fields are invalid gets no span: the engine refuses the request.
func (a *API) traceEnqueue(r *http.Request, reqs []engine.EnqueueRequest, start time.Time) ([]trace.Span, error) {
	hp, hs := r.Header.Get("traceparent"), r.Header.Get("tracestate")
	if hp != "" || hs != "" {
		if err := engine.CheckTrace(hp, hs, "Traceparent", "Tracestate").Err(); err != nil {
			return nil, err
		}
	}
	var spans []trace.Span
	for i := range reqs {
		er := &reqs[i]
		if er.Traceparent == "" && er.Tracestate == "" {
			er.Traceparent, er.Tracestate = hp, hs
		}
		if !a.tracer.On() || len(engine.CheckTrace(er.Traceparent, er.Tracestate, "", "")) > 0 {
			continue
		}
		_, span := a.tracer.Start(r.Context(), tracing.SpanEnqueue, trace.SpanKindServer, er.Traceparent, er.Tracestate, start)
		er.Traceparent, er.Tracestate = tracing.Header(span)
		spans = append(spans, span)
	}
	return spans, nil
}

// endEnqueue ends the spans of traceEnqueue with what the enqueue did.
func endEnqueue(spans []trace.Span, res []engine.Enqueued, err error) {
	for i, span := range spans {
		if err != nil {
			tracing.Fail(span, err)
		} else if len(res) == len(spans) {
			j := res[i].Job
			span.SetAttributes(attribute.Int64(tracing.AttrJobID, j.ID), attribute.String(tracing.AttrTool, j.Tool+"@"+j.Version),
				attribute.String(tracing.AttrEndpoint, j.Endpoint), attribute.Bool(tracing.AttrJobCreated, res[i].Created))
		}
		span.End()
	}
}

// traceClaim records one ratchet.claim span per claimed job, a child of
// the job's trace from the claim request's start, and hands the worker
// the span's context to continue from. Without tracing the worker gets
// the job's own context (claimedView).
func (a *API) traceClaim(r *http.Request, start time.Time, workerID string, cl engine.Claimed, v *wire.ClaimedJob) {
	if !a.tracer.On() {
		return
	}
	j := cl.Job
	_, span := a.tracer.Start(r.Context(), tracing.SpanClaim, trace.SpanKindServer, j.Traceparent, j.Tracestate, start,
		append(requestLink(r), tracing.Job(j.ID, j.Tool, j.Version, j.Endpoint, j.Attempt), trace.WithAttributes(attribute.String(tracing.AttrWorker, workerID)))...)
	v.Traceparent, v.Tracestate = tracing.Header(span)
	span.End()
}

// traceReport records a ratchet.report span of one report, a child of the
// job's trace, with the decision.
func (a *API) traceReport(r *http.Request, start time.Time, res engine.ReportResult) {
	j := res.Job
	if !a.tracer.On() || j == nil {
		return
	}
	_, span := a.tracer.Start(r.Context(), tracing.SpanReport, trace.SpanKindServer, j.Traceparent, j.Tracestate, start,
		append(requestLink(r), tracing.Job(j.ID, j.Tool, j.Version, j.Endpoint, j.Attempt))...)
	span.SetAttributes(attribute.Bool(tracing.AttrDuplicate, res.Duplicate))
	tracing.Outcome(span, string(res.Decision.Outcome), res.Decision.Classification)
	span.End()
}

// requestLink links a span to the one the request's own traceparent
// header names (a worker's loop), if any.
func requestLink(r *http.Request) []trace.SpanStartOption {
	return tracing.LinkFrom(r.Header.Get("traceparent"), r.Header.Get("tracestate"))
}
