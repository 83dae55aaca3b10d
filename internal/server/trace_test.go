package server_test

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/slim/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/slim/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/slim/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

// The trace a producer enqueues under, as its HTTP client would send it.
const (
	producerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	producerSpan  = "00f067aa0ba902b7"
	producerTP    = "00-" + producerTrace + "-" + producerSpan + "-01"
)

// otlpReceiver is an OTLP/HTTP trace receiver on loopback: it decodes each
// POST /v1/traces as the protobuf ExportTraceServiceRequest it is, and
// keeps the spans with their service name.
type otlpReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
	got      chan struct{}
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{got: make(chan struct{}, 1000)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		var in coltracepb.ExportTraceServiceRequest
		if err == nil && (req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf") {
			err = io.ErrUnexpectedEOF
		}
		if err == nil {
			err = proto.Unmarshal(body, &in)
		}
		if err != nil {
			t.Errorf("OTLP receiver: %s %s (%s): %v", req.Method, req.URL.Path, req.Header.Get("Content-Type"), err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range in.GetResourceSpans() {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					r.services = append(r.services, a.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				r.spans = append(r.spans, ss.GetSpans()...)
			}
		}
		r.mu.Unlock()
		r.got <- struct{}{}
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

// waitFor returns the spans once one named each of names has arrived.
func (r *otlpReceiver) waitFor(t *testing.T, names ...string) []*tracepb.Span {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		spans := append([]*tracepb.Span(nil), r.spans...)
		r.mu.Unlock()
		have := map[string]bool{}
		for _, s := range spans {
			have[s.GetName()] = true
		}
		all := true
		for _, n := range names {
			all = all && have[n]
		}
		if all {
			return spans
		}
		select {
		case <-r.got:
		case <-deadline:
			t.Fatalf("spans %v did not all arrive within 30 s; got %d spans", names, len(spans))
		}
	}
}

// recordingProvider answers 200 and keeps the traceparent of each request.
func recordingProvider(t *testing.T) (*httptest.Server, chan string) {
	seen := make(chan string, 10)
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("traceparent")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(p.Close)
	return p, seen
}

// tracedSetup makes an endpoint with a worker tool (work@1) and a tool
// delivered to provider (notify@1).
func tracedSetup(t *testing.T, owner *client.Client, provider string) {
	t.Helper()
	c := ctx(t)
	if _, err := owner.CreateEndpoint(c, "partner", client.EndpointPolicy{EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 30000, MaxConcurrent: 10}}); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []client.ToolSpec{{Name: "work", Version: "1", Endpoint: "partner"},
		{Name: "notify", Version: "1", Endpoint: "partner", Delivery: &wire.DeliveryTarget{URL: provider + "/hook"}}} {
		if _, err := owner.PublishTool(c, spec); err != nil {
			t.Fatal(err)
		}
	}
}

// enqueueWithHeader enqueues tool with the traceparent header, as an
// instrumented HTTP client would, and returns the job.
func enqueueWithHeader(t *testing.T, url, tool, traceparent string) wire.Job {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/jobs", strings.NewReader(`{"tool":"`+tool+`","payload":{}}`))
	req.Header.Set("Authorization", "Bearer "+ownerKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", traceparent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var j wire.Job
	if err := json.NewDecoder(resp.Body).Decode(&j); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("enqueue %s: %d, %v", tool, resp.StatusCode, err)
	}
	return j
}

// TestTracesThroughOTLP runs a job's whole life on a server exporting to an
// in-process OTLP/HTTP receiver: enqueue with a traceparent header, claim
// and report through the API, and a delivery to a loopback provider. Every
// span is in the producer's trace: ratchet.enqueue is the producer span's
// child, and claim, report and delivery are children of the enqueue span,
// whose context the job keeps; the worker is handed the claim span's
// context and the provider the delivery span's.
func TestTracesThroughOTLP(t *testing.T) {
	recv := newOTLPReceiver(t)
	provider, seen := recordingProvider(t)
	srv := proctest.Start(t, "", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL, "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SERVICE_NAME=ratchet-under-test",
		"OTEL_TRACES_EXPORTER=", "OTEL_EXPORTER_OTLP_PROTOCOL="}, "--bootstrap-key", ownerKey, "--delivery-allow", "127.0.0.1/32")
	k := newContract(t, srv.URL)
	owner := k.client(srv.URL, ownerKey)
	c := ctx(t)
	tracedSetup(t, owner, provider.URL)

	job := enqueueWithHeader(t, srv.URL, "work@1", producerTP)
	if !strings.HasPrefix(job.Traceparent, "00-"+producerTrace+"-") || job.Traceparent == producerTP {
		t.Fatalf("the job keeps %q, want the enqueue span's context in trace %s", job.Traceparent, producerTrace)
	}
	enqueueSpan := job.Traceparent[36:52]
	claimed, err := owner.Claim(c, client.ClaimRequest{WorkerID: "w-1", Tools: []string{"work@1"}})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %+v, %v", claimed, err)
	}
	if tp := claimed[0].Traceparent; !strings.HasPrefix(tp, "00-"+producerTrace+"-") || tp == job.Traceparent {
		t.Errorf("the worker was handed %q, want the claim span's context in trace %s", tp, producerTrace)
	}
	claimSpan := claimed[0].Traceparent[36:52]
	if _, err := owner.ReportOne(c, client.Report{JobID: job.ID, LeaseToken: claimed[0].LeaseToken, HTTPStatus: 503}); err != nil {
		t.Fatal(err)
	}
	// The delivery tool's job, enqueued through the SDK with the body field.
	djob, _, err := owner.Enqueue(c, client.EnqueueRequest{Tool: "notify@1", Traceparent: producerTP, Tracestate: "vendor=abc"})
	if err != nil {
		t.Fatal(err)
	}
	var sent string
	select {
	case sent = <-seen:
	case <-time.After(30 * time.Second):
		t.Fatal("the provider got no delivery within 30 s")
	}
	if !strings.HasPrefix(sent, "00-"+producerTrace+"-") || sent == djob.Traceparent {
		t.Errorf("the provider saw traceparent %q, want the delivery span's context in trace %s", sent, producerTrace)
	}

	spans := recv.waitFor(t, "ratchet.enqueue", "ratchet.claim", "ratchet.report", "ratchet.delivery")
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		if got := hex.EncodeToString(s.GetTraceId()); got != producerTrace {
			t.Errorf("span %s in trace %s, want %s", s.GetName(), got, producerTrace)
		}
		byID[hex.EncodeToString(s.GetSpanId())] = s
	}
	parentOf := func(s *tracepb.Span) string { return hex.EncodeToString(s.GetParentSpanId()) }
	enq := byID[enqueueSpan]
	if enq == nil || enq.GetName() != "ratchet.enqueue" || parentOf(enq) != producerSpan || enq.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Fatalf("enqueue span %s: %v", enqueueSpan, enq)
	}
	checkAttrs(t, enq, map[string]string{"ratchet.job.id": strconv.FormatInt(job.ID, 10), "ratchet.tool": "work@1", "ratchet.endpoint": "partner", "ratchet.job.created": "true"})
	claim := byID[claimSpan]
	if claim == nil || claim.GetName() != "ratchet.claim" || parentOf(claim) != enqueueSpan {
		t.Fatalf("claim span %s: %v", claimSpan, claim)
	}
	checkAttrs(t, claim, map[string]string{"ratchet.job.id": strconv.FormatInt(job.ID, 10), "ratchet.attempt": "1", "ratchet.worker.id": "w-1"})
	for _, s := range spans {
		switch s.GetName() {
		case "ratchet.report":
			if parentOf(s) != enqueueSpan {
				t.Errorf("report span's parent %s, want the enqueue span %s", parentOf(s), enqueueSpan)
			}
			checkAttrs(t, s, map[string]string{"ratchet.job.id": strconv.FormatInt(job.ID, 10), "ratchet.attempt": "1", "ratchet.outcome": "retry", "ratchet.classification": "server_error"})
		case "ratchet.delivery":
			if parentOf(s) != djob.Traceparent[36:52] || s.GetKind() != tracepb.Span_SPAN_KIND_CLIENT || "00-"+producerTrace+"-"+hex.EncodeToString(s.GetSpanId())+"-01" != sent {
				t.Errorf("delivery span %x (parent %s), want a client span, child of %s, sent to the provider as %s", s.GetSpanId(), parentOf(s), djob.Traceparent, sent)
			}
			if s.GetTraceState() != "vendor=abc" {
				t.Errorf("delivery span's tracestate %q", s.GetTraceState())
			}
			checkAttrs(t, s, map[string]string{"ratchet.job.id": strconv.FormatInt(djob.ID, 10), "ratchet.tool": "notify@1", "ratchet.attempt": "1",
				"http.response.status_code": "200", "ratchet.outcome": "succeeded", "ratchet.classification": "success"})
		}
	}
	recv.mu.Lock()
	if len(recv.services) == 0 || recv.services[0] != "ratchet-under-test" {
		t.Errorf("service names %v, want ratchet-under-test (OTEL_SERVICE_NAME)", recv.services)
	}
	recv.mu.Unlock()
}

// checkAttrs checks span attributes, each rendered as text.
func checkAttrs(t *testing.T, s *tracepb.Span, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, a := range s.GetAttributes() {
		switch v := a.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			got[a.GetKey()] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			got[a.GetKey()] = strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			got[a.GetKey()] = strconv.FormatBool(v.BoolValue)
		}
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("span %s: %s = %q, want %q (all: %v)", s.GetName(), k, got[k], w, got)
		}
	}
}

// TestTraceparentWithoutTracing: with no OTEL_* variables nothing is
// exported, and the job still keeps the traceparent it was enqueued with
// and hands it over unchanged: to the worker in the claim, and to the
// provider on delivery. A malformed one is refused, naming the field.
func TestTraceparentWithoutTracing(t *testing.T) {
	recv := newOTLPReceiver(t)
	provider, seen := recordingProvider(t)
	srv := proctest.Start(t, "", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="},
		"--bootstrap-key", ownerKey, "--delivery-allow", "127.0.0.1/32")
	k := newContract(t, srv.URL)
	owner := k.client(srv.URL, ownerKey)
	c := ctx(t)
	tracedSetup(t, owner, provider.URL)
	job := enqueueWithHeader(t, srv.URL, "work@1", producerTP)
	if job.Traceparent != producerTP {
		t.Errorf("the job keeps %q, want %q", job.Traceparent, producerTP)
	}
	claimed, err := owner.Claim(c, client.ClaimRequest{WorkerID: "w-1", Tools: []string{"work@1"}})
	if err != nil || len(claimed) != 1 || claimed[0].Traceparent != producerTP {
		t.Fatalf("claim: %+v, %v", claimed, err)
	}
	// The Go SDK sends it in the body; the job answers with it.
	if djob, _, err := owner.Enqueue(c, client.EnqueueRequest{Tool: "notify@1", Traceparent: producerTP, Tracestate: "vendor=abc"}); err != nil ||
		djob.Traceparent != producerTP || djob.Tracestate != "vendor=abc" {
		t.Fatalf("enqueue through the SDK: %+v, %v", djob, err)
	}
	select {
	case sent := <-seen:
		if sent != producerTP {
			t.Errorf("the provider saw %q, want %q", sent, producerTP)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the provider got no delivery within 30 s")
	}
	bad := "00-" + strings.Repeat("0", 32) + "-" + producerSpan + "-01"
	_, _, err = owner.Enqueue(c, client.EnqueueRequest{Tool: "work@1", Traceparent: bad})
	if ae := apiErr(t, err, 400); len(ae.Fields) != 1 || ae.Fields[0].Field != "traceparent" || ae.Fields[0].Value != `"`+bad+`"` ||
		!strings.Contains(ae.Fields[0].Allowed, "W3C traceparent") {
		t.Errorf("all-zero trace id: %+v", ae)
	}
	_, err = owner.EnqueueBatch(c, []client.EnqueueRequest{{Tool: "work@1"}, {Tool: "work@1", Traceparent: producerTP, Tracestate: "Bad=1"}})
	if ae := apiErr(t, err, 400); len(ae.Fields) != 1 || ae.Fields[0].Field != "jobs[1].tracestate" {
		t.Errorf("bad tracestate in a batch: %+v", ae)
	}
	srv.Stop(t)
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.spans) != 0 {
		t.Errorf("%d spans exported with tracing off", len(recv.spans))
	}
}
