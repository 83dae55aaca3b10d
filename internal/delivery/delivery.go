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
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/engine"
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
	cfg       Config
	eng       *engine.Engine
	client    *http.Client
	log       *slog.Logger
	stop      chan struct{}
	stopOnce  sync.Once
	templates sync.Map // tool id → *webhook.Template
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

// Stop makes Run stop claiming. Requests in flight go on until Run's
// context ends.
func (d *Dispatcher) Stop() { d.stopOnce.Do(func() { close(d.stop) }) }

// Run claims and delivers until Stop or ctx ends, then waits for the
// requests in flight. Cancelling ctx abandons them without a report: their
// leases expire and the engine's rescue records them as timed out and
// schedules the retry, on whichever node is up.
func (d *Dispatcher) Run(ctx context.Context) {
	cctx, cancelClaims := context.WithCancel(ctx)
	defer cancelClaims()
	go d.cancelOnStop(cctx, cancelClaims)
	slots := make(chan struct{}, d.cfg.Concurrency)
	// Finished attempts are reported in batches: whatever finished while
	// the previous batch was written goes in the next, one transaction.
	results := make(chan attempted, d.cfg.Concurrency)
	reported := make(chan struct{})
	go func() { d.reporter(ctx, results); close(reported) }()
	var inflight sync.WaitGroup
	defer func() {
		inflight.Wait()
		close(results)
		<-reported
	}()
	failures := 0
	for {
		free, ok := d.takeSlots(cctx, slots)
		if !ok {
			return
		}
		jobs, err := d.eng.ClaimDeliveries(cctx, d.cfg.WorkerID, free, claimWait)
		claimed := d.cfg.Clock.Now()
		for range free - len(jobs) {
			<-slots
		}
		if err != nil {
			if cctx.Err() != nil {
				return
			}
			failures++
			d.log.Warn("delivery claim failed", "err", err)
			if !d.pause(cctx, failures) {
				return
			}
			continue
		}
		failures = 0
		for _, c := range jobs {
			inflight.Go(func() {
				a, ok := d.try(ctx, c, claimed)
				<-slots
				if ok {
					results <- a
				}
			})
		}
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

// takeSlots waits for one free request slot, then takes as many more as
// are free at once: the most jobs to claim now. It reports false when ctx
// ended first.
func (d *Dispatcher) takeSlots(ctx context.Context, slots chan struct{}) (int, bool) {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return 0, false
	}
	free := 1
	for free < d.cfg.Concurrency {
		select {
		case slots <- struct{}{}:
			free++
		default:
			return free, true
		}
	}
	return free, true
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

// maxReportBatch bounds one report batch of the dispatcher.
const maxReportBatch = 200

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
	spec := engine.DeliveryOf(t)
	url, msg := d.target(t.ID, spec, c)
	if msg != "" {
		return unsendable(msg)
	}
	rctx, cancel := context.WithTimeout(ctx, d.timeout(c, claimed))
	defer cancel()
	req, msg := d.request(rctx, spec, url, c)
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

// target is the URL of job c: the URL template of tool toolID's delivery
// target spec, rendered from the job's payload. msg says why there is
// none (no target, an invalid template, a payload that does not fill it).
func (d *Dispatcher) target(toolID int64, spec *engine.DeliverySpec, c engine.Claimed) (url, msg string) {
	if spec == nil {
		return "", "the tool has no delivery target"
	}
	tpl, err := d.template(toolID, spec.URL)
	if err != nil {
		return "", "the delivery URL is invalid: " + err.Error()
	}
	url, err = tpl.Render(c.Job.Payload)
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
	lease := time.Duration(c.LeaseExpiresAt-c.Job.ClaimedAt) * time.Millisecond
	left := lease - clock.Since(d.cfg.Clock, claimed)
	return left - min(lease/10, 2*time.Second)
}

// request builds the request of job c to url: the tool's method and
// headers, the job's payload, the idempotency key and the job's id and
// attempt, and the Standard Webhooks signature when the tool has a
// secret. msg says why it cannot be built.
func (d *Dispatcher) request(ctx context.Context, spec *engine.DeliverySpec, url string, c engine.Claimed) (*http.Request, string) {
	req, err := http.NewRequestWithContext(ctx, spec.Method, url, bytes.NewReader(c.Job.Payload))
	if err != nil {
		return nil, "the delivery request could not be built: " + err.Error()
	}
	for k, v := range spec.Headers {
		req.Header.Set(k, v)
	}
	id := strconv.FormatInt(c.Job.ID, 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", d.cfg.UserAgent)
	if !wire.HeaderValueOK(c.IdempotencyKey) {
		// Refused at enqueue today; a job stored before that check would
		// otherwise fail every attempt as a network error.
		return nil, "the idempotency key " + strconv.QuoteToASCII(c.IdempotencyKey) + " is not a valid header value"
	}
	for k, v := range spec.Headers {
		if !wire.HeaderValueOK(v) {
			return nil, "the tool's header " + strconv.QuoteToASCII(k) + " has a value that is not a valid header value"
		}
	}
	req.Header.Set("Idempotency-Key", c.IdempotencyKey)
	req.Header.Set("Ratchet-Job-Id", id)
	req.Header.Set("Ratchet-Attempt", strconv.FormatInt(c.Job.Attempt, 10))
	setTraceHeaders(req, c)
	if spec.Secret != "" {
		key, err := webhook.ParseSecret(spec.Secret)
		if err != nil {
			return nil, "the signing secret is invalid: " + err.Error()
		}
		msgID, now := "ratchet-job-"+id, d.cfg.Clock.Now()
		req.Header.Set(webhook.HeaderID, msgID)
		req.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		req.Header.Set(webhook.HeaderSignature, webhook.Sign(key, msgID, now, c.Job.Payload))
	}
	return req, ""
}

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
	res.Headers = engine.DeliveryHeaders(resp.Header)
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

func (d *Dispatcher) template(toolID int64, raw string) (*webhook.Template, error) {
	if t, ok := d.templates.Load(toolID); ok {
		return t.(*webhook.Template), nil
	}
	t, err := webhook.ParseTemplate(raw)
	if err != nil {
		return nil, err
	}
	d.templates.Store(toolID, t)
	return t, nil
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
