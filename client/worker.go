package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Handler runs one claimed job. Return nil for success. Any error is a
// failed attempt: wrap a provider response with CheckResponse or
// ResponseError so its status and headers reach Ratchet's classification,
// return a network error as it is (its kind is detected), or mark the
// decision yourself with Permanent or RetryAfter. ctx is cancelled when the
// job is cancelled, its lease is lost, or the worker stops hard.
type Handler func(ctx context.Context, job *ClaimedJob) error

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	ID          string        // worker id shown on attempts; default hostname-pid
	Concurrency int           // handlers running at once; default 4
	Batch       int           // most jobs per claim; default Concurrency
	Wait        time.Duration // long-poll wait per claim; default 10 s
	// ReportBatch is the most reports sent in one request; default 100.
	ReportBatch int
	// OnError is told about claim, heartbeat and report errors (which the
	// worker retries by itself); nil to ignore.
	OnError func(error)
}

// Worker claims jobs for its registered tools and runs their handlers.
type Worker struct {
	c        *Client
	opt      WorkerOptions
	handlers map[string]Handler

	reports chan pending
}

type pending struct {
	r    Report
	done chan struct{}
}

// NewWorker makes a worker.
func NewWorker(c *Client, opt WorkerOptions) *Worker {
	if opt.ID == "" {
		host, _ := os.Hostname()
		opt.ID = host + "-" + strconv.Itoa(os.Getpid())
	}
	if opt.Concurrency <= 0 {
		opt.Concurrency = 4
	}
	if opt.Batch <= 0 || opt.Batch > opt.Concurrency {
		opt.Batch = opt.Concurrency
	}
	if opt.Wait <= 0 {
		opt.Wait = 10 * time.Second
	}
	if opt.ReportBatch <= 0 {
		opt.ReportBatch = 100
	}
	return &Worker{c: c, opt: opt, handlers: map[string]Handler{}, reports: make(chan pending, 4*opt.Concurrency)}
}

// Handle registers the handler of a tool@version.
func (w *Worker) Handle(tool string, h Handler) { w.handlers[tool] = h }

func (w *Worker) onError(err error) {
	if w.opt.OnError != nil && err != nil {
		w.opt.OnError(err)
	}
}

// Run claims and runs jobs until ctx ends. Then it stops claiming, lets the
// running handlers finish, sends their reports and returns nil.
func (w *Worker) Run(ctx context.Context) error {
	if len(w.handlers) == 0 {
		return errors.New("ratchet worker: no handlers registered")
	}
	tools := make([]string, 0, len(w.handlers))
	for t := range w.handlers {
		tools = append(tools, t)
	}
	slots := make(chan struct{}, w.opt.Concurrency)
	giveBack(slots, w.opt.Concurrency)
	// Handlers get a context that outlives ctx so a graceful stop lets them
	// finish; it is cancelled only per job (cancel, lost lease).
	jobsCtx := context.WithoutCancel(ctx)
	var running sync.WaitGroup
	reporterDone := make(chan struct{})
	go func() { w.reporter(); close(reporterDone) }()

	failures := 0
	for ctx.Err() == nil {
		free, ok := w.takeSlots(ctx, slots)
		if !ok {
			continue
		}
		jobs, err := w.c.Claim(ctx, ClaimRequest{WorkerID: w.opt.ID, Tools: tools, Max: free, WaitMs: w.opt.Wait.Milliseconds()})
		if err != nil {
			giveBack(slots, free)
			if ctx.Err() != nil {
				break
			}
			w.onError(fmt.Errorf("claim: %w", err))
			pause(ctx, apiBackoff(failures, err))
			failures++
			continue
		}
		failures = 0
		giveBack(slots, free-len(jobs))
		for i := range jobs {
			j := jobs[i]
			running.Go(func() {
				defer func() { slots <- struct{}{} }()
				w.run(jobsCtx, &j)
			})
		}
	}
	running.Wait()
	close(w.reports)
	<-reporterDone
	return nil
}

// takeSlots waits for one free handler slot, then takes as many more as
// are free at once, up to the claim batch: the most jobs to claim now. It
// reports false when ctx ended first.
func (w *Worker) takeSlots(ctx context.Context, slots chan struct{}) (int, bool) {
	select {
	case <-ctx.Done():
		return 0, false
	case <-slots:
	}
	free := 1
	for free < w.opt.Batch {
		select {
		case <-slots:
			free++
		default:
			return free, true
		}
	}
	return free, true
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// giveBack returns n handler slots.
func giveBack(slots chan struct{}, n int) {
	for range n {
		slots <- struct{}{}
	}
}

// heartbeat extends j's lease every third of its timeout (at least every
// 100 ms) until ctx ends. It cancels the job's context when the lease is
// gone (conflict or not found: stop working on it) or a cancel was
// requested.
func (w *Worker) heartbeat(ctx context.Context, cancel context.CancelFunc, j *ClaimedJob) {
	every := time.Duration(j.TimeoutMs) * time.Millisecond / 3
	if every < 100*time.Millisecond {
		every = 100 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			res, err := w.c.Heartbeat(ctx, j.ID, j.LeaseToken)
			switch {
			case err != nil && (IsConflict(err) || IsNotFound(err)):
				cancel()
				return
			case err != nil:
				w.onError(fmt.Errorf("heartbeat job %d: %w", j.ID, err))
			case res.CancelRequested:
				cancel()
			}
		}
	}
}

// callHandler runs h on j; a panic becomes the job's error, and a tool
// without a handler a permanent failure.
func callHandler(ctx context.Context, h Handler, j *ClaimedJob) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panic: %v", p)
		}
	}()
	if h == nil {
		return Permanent(fmt.Errorf("no handler registered for %s@%s", j.Tool, j.Version))
	}
	return h(ctx, j)
}

// run executes one job with heartbeats and queues its report.
func (w *Worker) run(ctx context.Context, j *ClaimedJob) {
	h := w.handlers[j.Tool+"@"+j.Version]
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		w.heartbeat(jctx, cancel, j)
	}()
	err := callHandler(jctx, h, j)
	cancel()
	<-hbDone
	r := ToReport(err)
	r.JobID, r.LeaseToken = j.ID, j.LeaseToken
	done := make(chan struct{})
	w.reports <- pending{r: r, done: done}
	<-done
}

// reporter sends queued reports in batches until the queue closes.
func (w *Worker) reporter() {
	for first := range w.reports {
		batch := []pending{first}
	fill:
		for len(batch) < w.opt.ReportBatch {
			select {
			case p, ok := <-w.reports:
				if !ok {
					break fill
				}
				batch = append(batch, p)
			default:
				break fill
			}
		}
		rs := make([]Report, len(batch))
		for i, p := range batch {
			rs[i] = p.r
		}
		for attempt := 0; ; attempt++ {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := w.c.ReportBatch(ctx, rs)
			cancel()
			if err == nil {
				break
			}
			var ae *Error
			if errors.As(err, &ae) && ae.Status < 500 {
				w.onError(fmt.Errorf("report rejected: %w", err))
				break
			}
			// The server is unreachable or unavailable: keep the reports and
			// retry; a lease that expires meanwhile is rescued server-side
			// and the late report is refused harmlessly.
			w.onError(fmt.Errorf("report: %w", err))
			if attempt >= 30 {
				break
			}
			time.Sleep(apiBackoff(attempt, err))
		}
		for _, p := range batch {
			close(p.done)
		}
	}
}

// ResponseError is a failed provider response, with what Ratchet needs to
// classify it.
type ResponseError struct {
	Status  int
	Headers map[string]string
	Message string
}

// Error reads "provider answered STATUS MESSAGE".
func (e *ResponseError) Error() string {
	return fmt.Sprintf("provider answered %d %s", e.Status, e.Message)
}

// headersOfInterest are passed to Ratchet: those its classification reads
// (Retry-After, Stripe-Should-Retry, webhook-delivery) and the rate-limit
// headers it learns a provider's limit from (docs/errors.md, "Rate-limit
// headers Ratchet reads"). Only these names are sent, so a report's
// headers are bounded in count.
var headersOfInterest = []string{"Retry-After", "Stripe-Should-Retry", "webhook-delivery",
	"RateLimit", "RateLimit-Policy", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Reset-After",
	"X-Rate-Limit-Limit", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset"}

// MaxHeaderValueBytes bounds each header value FromResponse keeps: one
// byte over the 8 KiB Ratchet reads, so a longer value is still refused
// there as too large rather than read cut short.
const MaxHeaderValueBytes = 8192 + 1

// FromResponse builds a ResponseError from a response (the body is not
// read), with its status and the headers of interest, several values of one
// joined by ", ". Returned from a handler, a 2xx one is a success that
// still tells Ratchet the provider's rate limit; CheckResponse returns nil
// for a 2xx instead.
func FromResponse(resp *http.Response) *ResponseError {
	h := map[string]string{}
	for _, name := range headersOfInterest {
		if v := resp.Header.Values(name); len(v) > 0 {
			s := strings.Join(v, ", ")
			h[name] = s[:min(len(s), MaxHeaderValueBytes)]
		}
	}
	return &ResponseError{Status: resp.StatusCode, Headers: h, Message: http.StatusText(resp.StatusCode)}
}

// CheckResponse returns nil for a 2xx response and a *ResponseError
// otherwise.
func CheckResponse(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return nil
	}
	return FromResponse(resp)
}

type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks an error as not retryable: the job fails at once.
func Permanent(err error) error { return permanent{err} }

type retryAfter struct {
	err error
	d   time.Duration
}

func (r retryAfter) Error() string { return r.err.Error() }
func (r retryAfter) Unwrap() error { return r.err }

// RetryAfter asks for the next attempt no sooner than d (the policy delay
// still applies when it is longer).
func RetryAfter(err error, d time.Duration) error { return retryAfter{err, d} }

// ToReport maps a handler's result to a report: success for nil, the
// explicit decision of Permanent and RetryAfter, the status and headers of
// a ResponseError (a success when its status is 2xx and no decision was
// made), and the kind of a network error.
func ToReport(err error) Report {
	if err == nil {
		return Report{Success: true}
	}
	r := Report{Message: truncate(err.Error(), 1000)}
	var pe permanent
	if errors.As(err, &pe) {
		f := false
		r.Retryable = &f
	}
	var ra retryAfter
	if errors.As(err, &ra) {
		ms := ra.d.Milliseconds()
		r.RetryAfterMs = &ms
	}
	var re *ResponseError
	if errors.As(err, &re) {
		r.HTTPStatus, r.Headers = re.Status, re.Headers
		// A 2xx answer returned as is (FromResponse) is a success.
		r.Success = re.Status >= 200 && re.Status <= 299 && r.Retryable == nil && r.RetryAfterMs == nil
		return r
	}
	r.ErrorKind = ErrorKind(err)
	return r
}

// ErrorKind names the kind of a Go network error: dns, connect, timeout,
// reset, tls or other.
func ErrorKind(err error) string {
	var dnsErr *net.DNSError
	var tlsErr *tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	var opErr *net.OpError
	var ne net.Error
	switch {
	case errors.As(err, &dnsErr):
		return "dns"
	case errors.As(err, &tlsErr), errors.As(err, &certErr):
		return "tls"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &opErr) && opErr.Op == "dial":
		return "connect"
	}
	return "other"
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// apiBackoff is the wait before retry n (from 0) of a failed call to
// Ratchet itself: full jitter, a uniform draw from 0 to min(5 s, 100 ms ×
// 2^n), so that workers that lost the server together do not come back
// together; and never less than the Retry-After of a 503.
func apiBackoff(n int, err error) time.Duration {
	ceiling := min(100*time.Millisecond<<min(n, 16), 5*time.Second)
	d := time.Duration(rand.Int64N(int64(ceiling) + 1))
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > d {
		d = e.RetryAfter
	}
	return d
}
