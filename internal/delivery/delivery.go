// Package delivery is the dispatcher of `ratchet serve`: a worker that
// lives inside the server and runs the jobs of tools with an HTTP target.
// It claims through the engine's own claim (so the circuit, maxConcurrent
// and the rate limit hold cluster-wide, as for any worker), sends one
// request per attempt with the lease as its timeout, and reports what the
// provider answered through the engine's report, so classification,
// retries and the circuit have one implementation.
package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/tracing"
	"github.com/getratchet/ratchet/internal/webhook"
	"github.com/getratchet/ratchet/wire"
)

// Defaults.
const (
	DefaultConcurrency = 32
	// MaxResponseBytes is how much of a response body is read; the rest
	// is not, and the connection is closed.
	MaxResponseBytes = 64 << 10
	// claimWait is the long poll of each claim: short enough that a
	// shutdown is noticed at once (the claim's context is cancelled), long
	// enough that an idle node asks rarely.
	claimWait = 5 * time.Second
)

// Observer receives what the dispatcher did, for metrics.
type Observer interface {
	Delivered(endpoint, classification, outcome string, d time.Duration)
}

// Config builds a Dispatcher.
type Config struct {
	Engine      *engine.Engine
	Concurrency int            // requests in flight at once on this node; default DefaultConcurrency
	Policy      webhook.Policy // where requests may connect
	Logger      *slog.Logger
	Observer    Observer // nil for none
	WorkerID    string   // names this node's attempts; default "ratchet-delivery/<host>/<pid>" (the server gives one that lasts across restarts)
	// Clock stamps webhook-timestamp, times requests and the waits after
	// a failed claim, and measures how much of a lease is left; default
	// clock.Real. It must not be a development clock that jumps (a
	// lease's remainder is counted on it), so the server passes its system
	// clock, not the engine's.
	Clock clock.Clock
	// UserAgent is sent with every request.
	UserAgent string
	// Tracer records a ratchet.delivery span per attempt and sends its
	// context as the request's traceparent; nil sends the job's own.
	Tracer *tracing.Tracer
}

// Dispatcher delivers the jobs of HTTP tools. Run it once per node.
type Dispatcher struct {
	cfg      Config
	eng      *engine.Engine
	client   *http.Client
	log      *slog.Logger
	stop     chan struct{}
	stopOnce sync.Once
	targets  sync.Map // tool id → *target
}

// New builds a dispatcher.
func New(cfg Config) *Dispatcher {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.WorkerID == "" {
		host, _ := os.Hostname()
		cfg.WorkerID = "ratchet-delivery/" + host + "/" + strconv.Itoa(os.Getpid())
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "Ratchet-Delivery"
	}
	return &Dispatcher{cfg: cfg, eng: cfg.Engine, log: cfg.Logger, stop: make(chan struct{}), client: NewClient(cfg.Policy, cfg.Concurrency)}
}

// NewClient is the HTTP client deliveries use: it connects only to
// addresses the policy allows, checked on the resolved address at connect
// time (so a name that resolves, or rebinds, to a refused address is
// refused), follows no redirect, uses no proxy from the environment (a
// proxy would connect for it, unchecked) and verifies TLS.
func NewClient(policy webhook.Policy, conns int) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return err
			}
			return policy.Check(ap.Addr())
		}}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConns:           4 * conns,
		MaxIdleConnsPerHost:    conns,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Stop makes Run stop claiming. Jobs already claimed, in flight or
// waiting in the claim-ahead buffer, go on until Run's context ends.
func (d *Dispatcher) Stop() { d.stopOnce.Do(func() { close(d.stop) }) }

// Run claims and delivers until Stop or ctx ends, then waits for the
// requests in flight. Cancelling ctx abandons them without a report: their
// leases expire and the engine's rescue records them as timed out and
// schedules the retry, on whichever node is up.
//
// Run keeps the provider busy the way a fast worker does: it claims ahead
// (up to Concurrency jobs wait, claimed, for a request slot while
// Concurrency requests are in flight), so a request slot that comes free
// starts the next job at once instead of waiting for a claim; it claims
// only when at least Concurrency jobs' room is free, so each claim is one
// transaction for many jobs; and it reports finished attempts in batches
// (see reporter). A job that waited in the buffer longer than its lease's
// margin is not sent (see send). The gates hold as for any claim: jobs in
// the buffer count as running for maxConcurrent, and a circuit that opens
// meanwhile stops the next claim, not the jobs already claimed — as for a
// worker holding a batch.
func (d *Dispatcher) Run(ctx context.Context) {
	cctx, cancelClaims := context.WithCancel(ctx)
	defer cancelClaims()
	go d.cancelOnStop(cctx, cancelClaims)
	h := newHolding(d.cfg.Concurrency)
	// Finished attempts are reported in batches: whatever finished while
	// the previous batch was written goes in the next, one transaction.
	results := make(chan attempted, h.limit)
	reported := make(chan struct{})
	go func() { d.reporter(ctx, results); close(reported) }()
	ready := make(chan queued, h.limit)
	var senders sync.WaitGroup
	for range d.cfg.Concurrency {
		senders.Go(func() { d.sender(ctx, ready, results, h) })
	}
	d.claimLoop(cctx, ready, h)
	// Jobs already claimed are still sent (each within its lease); then
	// every finished attempt is reported.
	close(ready)
	senders.Wait()
	close(results)
	<-reported
}

// claimLoop claims into ready whenever there is room for a claim's worth
// of jobs, until ctx (the claims' context) ends.
func (d *Dispatcher) claimLoop(ctx context.Context, ready chan<- queued, h *holding) {
	failures := 0
	for {
		free, ok := h.room(ctx)
		if !ok {
			return
		}
		jobs, err := d.eng.ClaimDeliveries(ctx, d.cfg.WorkerID, free, claimWait)
		claimed := d.cfg.Clock.Now()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			d.log.Warn("delivery claim failed", "err", err)
			if !d.pause(ctx, failures) {
				return
			}
			continue
		}
		failures = 0
		h.add(len(jobs))
		for _, c := range jobs {
			ready <- queued{c: c, claimed: claimed} // never blocks: ready holds h.limit
		}
	}
}

// sender runs one request slot: it sends the jobs of ready one after the
// other and passes each finished attempt to results.
func (d *Dispatcher) sender(ctx context.Context, ready <-chan queued, results chan<- attempted, h *holding) {
	for q := range ready {
		a, ok := d.send(ctx, q)
		h.done()
		if ok {
			results <- a
		}
	}
}

// send runs the attempt of a job taken from the claim-ahead buffer. A job
// that waited there longer than its lease's margin is not sent: its
// request would have less time than its timeout promises. It is reported
// at once as a retryable attempt that was never sent (the dispatcher's own
// decision, worker_retry, with error kind "other", so the provider's
// circuit does not count it) rather than left to its lease, which would
// record a timed-out attempt that counts. ok is false when ctx ended
// (shutdown): the job is left to its lease.
func (d *Dispatcher) send(ctx context.Context, q queued) (attempted, bool) {
	if ctx.Err() != nil {
		return attempted{}, false
	}
	waited := clock.Since(d.cfg.Clock, q.claimed)
	if m := margin(q.c); waited > m {
		yes := true
		res := engine.DeliveryResult{}
		res.ErrorKind, res.Retryable = "other", &yes
		res.Message = "not sent: the job waited " + waited.Round(time.Millisecond).String() + " for a request slot after its claim, more than its lease's margin of " +
			m.String() + "; retried without counting toward the circuit"
		_, span := d.startSpan(ctx, q.c)
		return attempted{Delivered: engine.Delivered{Claimed: q.c, Result: res}, span: span, end: d.cfg.Clock.Now()}, true
	}
	return d.try(ctx, q.c, q.claimed)
}

// queued is a claimed job waiting in the claim-ahead buffer, with the time
// its claim returned on the dispatcher's clock.
type queued struct {
	c       engine.Claimed
	claimed time.Time
}

// holding counts the jobs a dispatcher holds, claimed and not yet
// finished: those in flight (at most the concurrency) and those waiting in
// the claim-ahead buffer.
type holding struct {
	limit   int // most jobs held: the concurrency in flight and as many waiting
	ahead   int // a claim waits until this much room is free
	mu      sync.Mutex
	held    int
	changed chan struct{} // a token when held went down
}

func newHolding(concurrency int) *holding {
	return &holding{limit: 2 * concurrency, ahead: concurrency, changed: make(chan struct{}, 1)}
}

// room waits until at least ahead jobs' room is free and returns the free
// room, the most to claim now; false when ctx ended first. With nothing
// waiting in the buffer the room is always at least ahead (at most the
// concurrency is in flight), so a claim never waits while slots idle.
func (h *holding) room(ctx context.Context) (int, bool) {
	for {
		if ctx.Err() != nil {
			return 0, false
		}
		h.mu.Lock()
		free := h.limit - h.held
		h.mu.Unlock()
		if free >= h.ahead {
			return free, true
		}
		select {
		case <-h.changed:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// add counts n jobs claimed.
func (h *holding) add(n int) {
	h.mu.Lock()
	h.held += n
	h.mu.Unlock()
}

// done counts one job finished (sent and answered, or not sent).
func (h *holding) done() {
	h.mu.Lock()
	h.held--
	h.mu.Unlock()
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// cancelOnStop cancels the claims (cancel) when Stop is called; it
// returns when ctx, the claims' context, ends.
func (d *Dispatcher) cancelOnStop(ctx context.Context, cancel context.CancelFunc) {
	select {
	case <-d.stop:
		cancel()
	case <-ctx.Done():
	}
}

// pause waits after the failures-th claim failure in a row, 200 ms more
// each time up to 5 s, so a store that is down is not hammered. It
// reports false when ctx ended first.
func (d *Dispatcher) pause(ctx context.Context, failures int) bool {
	backoff := d.cfg.Clock.NewTimer(min(time.Duration(failures)*200*time.Millisecond, 5*time.Second))
	select {
	case <-backoff.C():
		return true
	case <-ctx.Done():
		backoff.Stop()
		return false
	}
}

// maxReportBatch bounds one report batch of the dispatcher: the engine's
// batch limit, so a backlog of finished attempts (one claim's worth and
// more) is one transaction.
const maxReportBatch = engine.MaxBatch

// reporter reports finished attempts in batches until in is closed.
func (d *Dispatcher) reporter(ctx context.Context, in <-chan attempted) {
	ctx = context.WithoutCancel(ctx) // an attempt that finished is reported even on shutdown
	for first := range in {
		batch := []attempted{first}
	more:
		for len(batch) < maxReportBatch {
			select {
			case r, ok := <-in:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		d.report(ctx, batch)
	}
}

func (d *Dispatcher) report(ctx context.Context, batch []attempted) {
	ds := make([]engine.Delivered, len(batch))
	for i := range batch {
		ds[i] = batch[i].Delivered
	}
	items, err := d.eng.ReportDeliveries(ctx, ds)
	if err != nil {
		// The leases expire and the rescue records the attempts.
		d.log.Warn("delivery report failed", "attempts", len(batch), "err", err)
		for _, a := range batch {
			tracing.Fail(a.span, err)
			a.span.End(trace.WithTimestamp(a.end))
		}
		return
	}
	for i, it := range items {
		c := batch[i].Claimed
		batch[i].finish(it)
		if it.Err != nil {
			d.log.Warn("delivery report refused", "job", c.Job.ID, "attempt", c.Job.Attempt, "err", it.Err)
			continue
		}
		if d.cfg.Observer != nil && !it.Duplicate {
			d.cfg.Observer.Delivered(c.Job.Endpoint, it.Decision.Classification, string(it.Decision.Outcome), batch[i].Result.Duration)
		}
	}
}

// Deliver runs one attempt of a claimed job and reports it. When ctx ends
// first it reports nothing: the lease expires and the attempt is recorded
// as timed out.
func (d *Dispatcher) Deliver(ctx context.Context, c engine.Claimed) {
	a, ok := d.try(ctx, c, d.cfg.Clock.Now())
	if !ok {
		return
	}
	d.report(context.WithoutCancel(ctx), []attempted{a})
}

// attempt sends the request of a job claimed at claimed (this machine's
// time, when the claim returned). ok is false when ctx ended (shutdown):
// the attempt is left to its lease.
func (d *Dispatcher) attempt(ctx context.Context, c engine.Claimed, claimed time.Time) (engine.DeliveryResult, bool) {
	var res engine.DeliveryResult
	// unsendable: the request cannot be built from this job and tool, so
	// nothing is sent and retrying cannot help.
	unsendable := func(msg string) (engine.DeliveryResult, bool) {
		res.Unsendable, res.Message = true, msg
		return res, true
	}
	t, err := d.eng.DeliveryTool(ctx, c.Job.ToolID)
	if err != nil {
		if ctx.Err() != nil {
			return res, false
		}
		res.ErrorKind, res.Message = "other", "reading the tool's delivery target failed: "+err.Error()
		return res, true
	}
	tt := d.targetOf(t)
	url, msg := tt.url(c)
	if msg != "" {
		return unsendable(msg)
	}
	rctx, cancel := context.WithTimeout(ctx, d.timeout(c, claimed))
	defer cancel()
	req, msg := d.request(rctx, tt, url, c)
	if msg != "" {
		return unsendable(msg)
	}
	start := d.cfg.Clock.Now()
	resp, err := d.client.Do(req)
	if err != nil {
		res.Duration = clock.Since(d.cfg.Clock, start)
		if ctx.Err() != nil {
			return res, false
		}
		var refused *webhook.RefusedError
		if errors.As(err, &refused) {
			// A target the server will not reach does not become
			// reachable by retrying: the job fails, saying why.
			no := false
			res.ErrorKind, res.Retryable, res.Message = "connect", &no, refused.Error()
			return res, true
		}
		res.ErrorKind, res.Message = ErrorKind(err), err.Error()
		return res, true
	}
	defer resp.Body.Close()
	return d.readResponse(ctx, resp, start)
}

// target is what the requests of one tool share, worked out once per
// tool (tools never change): its delivery spec, parsed URL template,
// signing key, and the header of its spec that no request may carry.
type target struct {
	spec      *engine.DeliverySpec
	tpl       *webhook.Template
	tplErr    error
	key       []byte // nil without a secret
	keyErr    error
	badHeader string // a header whose value is not a valid header value
}

// targetOf returns the target of tool t, cached by id.
func (d *Dispatcher) targetOf(t *store.Tool) *target {
	if tt, ok := d.targets.Load(t.ID); ok {
		return tt.(*target)
	}
	tt := &target{spec: engine.DeliveryOf(t)}
	if tt.spec != nil {
		tt.tpl, tt.tplErr = webhook.ParseTemplate(tt.spec.URL)
		if tt.spec.Secret != "" {
			tt.key, tt.keyErr = webhook.ParseSecret(tt.spec.Secret)
		}
		for k, v := range tt.spec.Headers {
			if !wire.HeaderValueOK(v) {
				tt.badHeader = k
			}
		}
	}
	d.targets.Store(t.ID, tt)
	return tt
}

// url is the URL of job c: the target's URL template rendered from the
// job's payload. msg says why there is none (no target, an invalid
// template, a payload that does not fill it).
func (tt *target) url(c engine.Claimed) (url, msg string) {
	if tt.spec == nil {
		return "", "the tool has no delivery target"
	}
	if tt.tplErr != nil {
		return "", "the delivery URL is invalid: " + tt.tplErr.Error()
	}
	url, err := tt.tpl.Render(c.Job.Payload)
	if err != nil {
		return "", err.Error()
	}
	return url, ""
}

// timeout is how long the request of job c, claimed at claimed, may take:
// the lease, less a margin to report in before the rescue would take the
// attempt as timed out. The lease's length is the claim's (both ends
// stamped by the same clock, the database's on PostgreSQL), counted from
// when the claim returned on the dispatcher's clock (the machine's,
// monotonic, never a development clock): this node's own clock may run
// behind the one that judges the lease, and a timeout read from it would
// outlast the lease, letting the retry go out while this request still
// waits.
func (d *Dispatcher) timeout(c engine.Claimed, claimed time.Time) time.Duration {
	left := lease(c) - clock.Since(d.cfg.Clock, claimed)
	return left - margin(c)
}

// lease is the length of job c's lease, as the claim stamped it.
func lease(c engine.Claimed) time.Duration {
	return time.Duration(c.LeaseExpiresAt-c.Job.ClaimedAt) * time.Millisecond
}

// margin is the part of job c's lease kept to report in: a tenth, at most
// 2 s. A job may also wait at most this long in the claim-ahead buffer.
func margin(c engine.Claimed) time.Duration {
	return min(lease(c)/10, 2*time.Second)
}

// request builds the request of job c to url: the tool's method and
// headers, the job's payload, the idempotency key and the job's id and
// attempt, and the Standard Webhooks signature when the tool has a
// secret. msg says why it cannot be built.
func (d *Dispatcher) request(ctx context.Context, tt *target, url string, c engine.Claimed) (*http.Request, string) {
	spec := tt.spec
	req, err := http.NewRequestWithContext(ctx, spec.Method, url, bytes.NewReader(c.Job.Payload))
	if err != nil {
		return nil, "the delivery request could not be built: " + err.Error()
	}
	if !wire.HeaderValueOK(c.IdempotencyKey) {
		// Refused at enqueue today; a job stored before that check would
		// otherwise fail every attempt as a network error.
		return nil, "the idempotency key " + strconv.QuoteToASCII(c.IdempotencyKey) + " is not a valid header value"
	}
	if tt.badHeader != "" {
		return nil, "the tool's header " + strconv.QuoteToASCII(tt.badHeader) + " has a value that is not a valid header value"
	}
	// The header map is built at its final size, with keys already in
	// canonical form where they are constants (Header.Set would
	// canonicalize each again).
	h := make(http.Header, len(spec.Headers)+10)
	for k, v := range spec.Headers {
		h.Set(k, v)
	}
	id := strconv.FormatInt(c.Job.ID, 10)
	h["Content-Type"] = jsonType
	h["User-Agent"] = []string{d.cfg.UserAgent}
	h["Idempotency-Key"] = []string{c.IdempotencyKey}
	h["Ratchet-Job-Id"] = []string{id}
	h["Ratchet-Attempt"] = []string{strconv.FormatInt(c.Job.Attempt, 10)}
	req.Header = h
	setTraceHeaders(req, c)
	if spec.Secret != "" {
		if tt.keyErr != nil {
			return nil, "the signing secret is invalid: " + tt.keyErr.Error()
		}
		msgID, now := "ratchet-job-"+id, d.cfg.Clock.Now()
		req.Header.Set(webhook.HeaderID, msgID)
		req.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		req.Header.Set(webhook.HeaderSignature, webhook.Sign(tt.key, msgID, now, c.Job.Payload))
	}
	return req, ""
}

// jsonType is the Content-Type of every request, shared: the transport
// only reads it.
var jsonType = []string{"application/json"}

// readResponse reads the provider's answer to a request sent at start: its
// status, headers and the start of its body (up to MaxResponseBytes; the
// message notes a body cut short or not read in full). ok is false when
// ctx ended meanwhile.
func (d *Dispatcher) readResponse(ctx context.Context, resp *http.Response, start time.Time) (engine.DeliveryResult, bool) {
	var res engine.DeliveryResult
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	res.Duration = clock.Since(d.cfg.Clock, start)
	if ctx.Err() != nil {
		return res, false
	}
	res.HTTPStatus = resp.StatusCode
	res.Success = resp.StatusCode >= 200 && resp.StatusCode < 300
	res.Headers = responseHeaders(resp.Header)
	res.ResponseHeaders = res.Headers
	res.Excerpt = string(body[:min(len(body), engine.MaxExcerptBytes)])
	switch {
	case rerr != nil:
		// The status decides (the provider answered); the note says the
		// body did not arrive in full.
		res.Message = "HTTP " + strconv.Itoa(resp.StatusCode) + "; the response body was not read in full: " + rerr.Error()
	case len(body) > MaxResponseBytes:
		res.Message = "HTTP " + strconv.Itoa(resp.StatusCode) + "; the response body is longer than " + strconv.Itoa(MaxResponseBytes) + " bytes and was not read further"
	}
	return res, true
}

// responseHeaders picks from a response the headers an attempt keeps:
// those engine.DeliveryHeaders keeps (what Classify reads and what is
// shown), and every rate-limit header classify.ReadQuota reads, so that a
// provider's limit can be learned from delivery as from a worker's report.
// Only those names are kept, each value cut to one byte over
// classify.MaxQuotaHeaderBytes: a longer value is still refused as too
// large, never read cut short.
func responseHeaders(h http.Header) map[string]string {
	out := engine.DeliveryHeaders(h)
	for _, n := range classify.QuotaHeaders() {
		vs := h.Values(n)
		if len(vs) == 0 {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		for k := range out { // one key per name, whatever the spelling kept above
			if strings.EqualFold(k, n) {
				delete(out, k)
			}
		}
		v := strings.Join(vs, ", ")
		out[n] = v[:min(len(v), classify.MaxQuotaHeaderBytes+1)]
	}
	return out
}

// ErrorKind names a request error the way a worker's report does
// (docs/errors.md, network errors).
func ErrorKind(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	var authErr x509.UnknownAuthorityError
	var recErr tls.RecordHeaderError
	var opErr *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.As(err, &dnsErr):
		return "dns"
	case errors.As(err, &certErr), errors.As(err, &hostErr), errors.As(err, &authErr), errors.As(err, &recErr):
		return "tls"
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.As(err, &opErr) && opErr.Op == "dial":
		return "connect"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return "reset"
	}
	return "other"
}
