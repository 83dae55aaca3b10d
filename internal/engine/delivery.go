package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/webhook"
	"github.com/getratchet/ratchet/wire"
)

// DeliverySpec is a tool's HTTP target as published: Ratchet itself sends
// each job of the tool to it (internal/delivery), through the same claims,
// gates and reports as any worker.
type DeliverySpec struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	// Secret is the signing secret ("whsec_..."); not part of the stored
	// target document, which is shown to readers.
	Secret string `json:"-"`
	// GenerateSecret asks PublishTool to make a secret when Secret is "".
	GenerateSecret bool `json:"-"`
}

// Delivery limits.
const (
	MaxDeliveryHeaders     = 20
	MaxDeliveryHeaderBytes = 4096
)

// DeliveryMethods are the HTTP methods a delivery may use; POST is the
// default.
var DeliveryMethods = []string{"POST", "PUT", "PATCH", "DELETE"}

// ReservedDeliveryHeaders are the headers a delivery sets itself, which a
// target may not set.
var ReservedDeliveryHeaders = []string{"Content-Length", "Content-Type", "Host", "Idempotency-Key", "Ratchet-Attempt", "Ratchet-Job-Id",
	"Transfer-Encoding", "Connection", "Webhook-Id", "Webhook-Timestamp", "Webhook-Signature", "Traceparent", "Tracestate"}

// SecretHeader reports whether a static header's value is a credential,
// which is never shown after publish: Authorization, Cookie, and any name
// that mentions a key, token, secret, password or signature.
func SecretHeader(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "cookie", "key", "token", "secret", "password", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// DeliveryOf reads a tool's stored delivery target; nil for a worker tool.
func DeliveryOf(t *store.Tool) *DeliverySpec {
	if len(t.Delivery) == 0 || string(t.Delivery) == "null" {
		return nil
	}
	var d DeliverySpec
	if json.Unmarshal(t.Delivery, &d) != nil {
		return nil
	}
	d.Secret = t.DeliverySecret
	return &d
}

// deliveryTools is the dispatcher's view of the tools it delivers: their
// ids, read again at most every refreshEvery (another node may publish),
// and each tool by id (tools never change).
type deliveryTools struct {
	mu       sync.Mutex
	ids      []int64
	readAt   time.Time
	byID     sync.Map // tool id → *store.Tool
	isHTTP   sync.Map // tool id → bool, for every tool the engine has read
	outdated bool
}

const deliveryToolsRefresh = time.Second

// noteTool remembers whether a tool is delivered over HTTP, so worker
// claims skip it.
func (e *Engine) noteTool(t *store.Tool) {
	e.delivery.isHTTP.Store(t.ID, len(t.Delivery) > 0)
	if len(t.Delivery) > 0 {
		e.delivery.byID.Store(t.ID, t)
	}
}

func (e *Engine) isDeliveryTool(id int64) bool {
	v, ok := e.delivery.isHTTP.Load(id)
	return ok && v.(bool)
}

func (e *Engine) deliveryToolIDs(ctx context.Context) ([]int64, error) {
	d := &e.delivery
	d.mu.Lock()
	defer d.mu.Unlock()
	now := e.clk.Now()
	if !d.outdated && now.Sub(d.readAt) < deliveryToolsRefresh {
		return d.ids, nil
	}
	var tools []store.Tool
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		tools, err = q.ToolListDelivery(ctx)
		return err
	})
	if err != nil {
		return nil, storeErr(err, "delivery tools")
	}
	d.ids = d.ids[:0]
	for i := range tools {
		e.noteTool(&tools[i])
		d.ids = append(d.ids, tools[i].ID)
	}
	d.readAt, d.outdated = now, false
	return d.ids, nil
}

// DeliveryTool returns a delivered tool by id (cached: tools are immutable).
func (e *Engine) DeliveryTool(ctx context.Context, id int64) (*store.Tool, error) {
	if t, ok := e.delivery.byID.Load(id); ok {
		return t.(*store.Tool), nil
	}
	var t *store.Tool
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		t, err = q.ToolGetAnyProject(ctx, id)
		return err
	})
	if err != nil {
		return nil, storeErr(err, "tool "+strconv.FormatInt(id, 10))
	}
	e.noteTool(t)
	return t, nil
}

// ClaimDeliveries is the claim of the server's own dispatcher: up to max
// due jobs of every project's HTTP-delivered tools, through the same gates
// (circuit, maxConcurrent, rate limit) and leases as a worker's claim. It
// waits up to wait for work, like a worker's long poll.
func (e *Engine) ClaimDeliveries(ctx context.Context, workerID string, max int, wait time.Duration) ([]Claimed, error) {
	max = min(max, e.cfg.MaxClaim)
	wait = min(wait, e.cfg.MaxWait)
	r := ClaimRequest{WorkerID: workerID, Max: max, Wait: wait}
	return e.longPoll(ctx, wait, func() ([]Claimed, time.Time, error) {
		ids, err := e.deliveryToolIDs(ctx)
		if err != nil {
			return nil, time.Time{}, err
		}
		var jobs []Claimed
		var wakeAt int64
		if len(ids) > 0 {
			jobs, wakeAt, err = e.tryClaim(ctx, nil, r, ids)
		}
		for _, c := range jobs {
			e.noteWorker(c.Job.ProjectID, workerID, seenClaim, c.Job.ClaimedAt)
		}
		// A tool published on another node shows up within the refresh.
		next := wakeTime(wakeAt)
		if refresh := e.clk.Now().Add(deliveryToolsRefresh); len(ids) == 0 || next.IsZero() || next.After(refresh) {
			next = refresh
		}
		return jobs, next, err
	})
}

// DeliveryResult is what a delivery saw, beyond the classify.Report the
// decision is made from.
type DeliveryResult struct {
	classify.Report
	// Unsendable says the request could not be built (Message says why):
	// the attempt is one permanent failure, classify.RequestInvalid.
	Unsendable      bool
	Duration        time.Duration
	ResponseHeaders map[string]string // the headers that mattered
	Excerpt         string            // the start of the body, as read
}

// MaxExcerptBytes bounds the body excerpt an attempt keeps.
const MaxExcerptBytes = 1024

// Delivered is one finished delivery attempt of a claimed job.
type Delivered struct {
	Claimed Claimed
	Result  DeliveryResult
}

// ReportDeliveries records the outcomes of the dispatcher's attempts,
// exactly as workers' reports would be (classification, retry arithmetic,
// circuit), plus what each request saw: one report batch per project, so
// many deliveries cost one transaction, as a worker's batch report does.
// The items of the answer are in the order of ds.
func (e *Engine) ReportDeliveries(ctx context.Context, ds []Delivered) ([]BatchItem, error) {
	out := make([]BatchItem, len(ds))
	byProject := map[int64][]int{}
	var projects []int64
	for i, d := range ds {
		pid := d.Claimed.Job.ProjectID
		if _, ok := byProject[pid]; !ok {
			projects = append(projects, pid)
		}
		byProject[pid] = append(byProject[pid], i)
	}
	for _, pid := range projects {
		idx := byProject[pid]
		for lo := 0; lo < len(idx); lo += MaxBatch {
			part := idx[lo:min(lo+MaxBatch, len(idx))]
			rs := make([]ReportRequest, len(part))
			for k, i := range part {
				rs[k] = deliveryReport(ds[i].Claimed, ds[i].Result)
			}
			items, err := e.ReportBatch(ctx, &Principal{ProjectID: pid, Scope: wire.ScopeOwner}, rs)
			if err != nil {
				return nil, err
			}
			for k, i := range part {
				out[i] = items[k]
			}
		}
	}
	return out, nil
}

// ReportDelivery is ReportDeliveries of one attempt.
func (e *Engine) ReportDelivery(ctx context.Context, c Claimed, r DeliveryResult) (ReportResult, error) {
	items, err := e.ReportDeliveries(ctx, []Delivered{{Claimed: c, Result: r}})
	if err != nil {
		return ReportResult{}, err
	}
	return items[0].ReportResult, items[0].Err
}

func deliveryReport(c Claimed, r DeliveryResult) ReportRequest {
	r.Message = truncate(CleanText(r.Message), wire.MaxMessageBytes)
	var headers string
	if len(r.ResponseHeaders) > 0 {
		clean := make(map[string]string, len(r.ResponseHeaders))
		for k, v := range r.ResponseHeaders {
			clean[CleanText(k)] = truncate(CleanText(v), 512)
		}
		b, _ := json.Marshal(clean)
		headers = string(b)
	}
	return ReportRequest{JobID: c.Job.ID, LeaseToken: c.LeaseToken, Report: r.Report, unsendable: r.Unsendable,
		detail: &store.Attempt{RequestMs: max(1, r.Duration.Milliseconds()), ResponseHeaders: headers,
			ResponseExcerpt: truncate(CleanText(r.Excerpt), MaxExcerptBytes)}}
}

// checkDeliveryHost refuses, at publish, a delivery URL whose host is an
// address the server would refuse to connect to.
func (e *Engine) checkDeliveryHost(d *DeliverySpec) error {
	t, err := webhook.ParseTemplate(d.URL)
	if err != nil {
		return invalidField("delivery.url", strconv.QuoteToASCII(d.URL), err.Error())
	}
	if err := e.cfg.DeliveryPolicy.CheckHost(t.Host); err != nil {
		var re *webhook.RefusedError
		if errors.As(err, &re) {
			return invalidField("delivery.url", strconv.QuoteToASCII(d.URL), "must not be a "+re.Class+" address ("+re.Addr.String()+
				"); deliveries go to public addresses unless the server is started with --delivery-allow listing it")
		}
		return invalidField("delivery.url", strconv.QuoteToASCII(d.URL), err.Error())
	}
	return nil
}

// deliveryHeaderNames are the response headers an attempt keeps: the ones
// classification reads and the rate-limit hints shown to people.
var deliveryHeaderNames = []string{classify.HeaderRetryAfter, classify.HeaderStripeShouldRetry, classify.HeaderWebhookDelivery,
	"X-RateLimit-Reset", "RateLimit-Reset", "X-RateLimit-Remaining", "RateLimit-Remaining", "Location", "Content-Type"}

// DeliveryHeaders picks from a response the headers an attempt records
// and classification reads.
func DeliveryHeaders(h http.Header) map[string]string {
	var out map[string]string
	for _, n := range deliveryHeaderNames {
		if vs := h.Values(n); len(vs) > 0 {
			if out == nil {
				out = map[string]string{}
			}
			out[n] = strings.Join(vs, ", ")
		}
	}
	return out
}
