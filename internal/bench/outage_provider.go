package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Kinds of outage the provider of mode outage stages.
const (
	outage503RetryAfter = "503-retry-after" // 503 with Retry-After: N
	outage503           = "503"             // 503 with no header
	outageRefused       = "refused"         // nothing listens: connections are refused
)

// Rate-limit header styles of the recovered provider.
const (
	headersDraft = "draft" // RateLimit-Limit, -Remaining, -Reset; a 429 also says Retry-After: 1
	headersIETF  = "ietf"  // draft, plus the IETF structured fields RateLimit and RateLimit-Policy
	headersNone  = "none"  // no rate-limit header, and a bare 429
)

// providerPlan is the provider's script: down (answering as Kind says) for
// Outage from its start, then up with a token bucket of Capacity requests
// per second (burst Capacity); with Flap, down again for Flap after every
// Flap up, and so on.
type providerPlan struct {
	Kind       string
	Outage     time.Duration
	Capacity   int
	Flap       time.Duration // 0: it stays up once recovered
	Headers    string
	RetryAfter time.Duration // the outage's Retry-After with kind 503-retry-after
}

// up reports whether the provider is up at e after its start.
func (p providerPlan) up(e time.Duration) bool {
	if e < p.Outage {
		return false
	}
	return p.Flap <= 0 || ((e-p.Outage)/p.Flap)%2 == 0
}

// nextChange is the first time after e at which up changes; ok is false
// when it never does.
func (p providerPlan) nextChange(e time.Duration) (time.Duration, bool) {
	if e < p.Outage {
		return p.Outage, true
	}
	if p.Flap <= 0 {
		return 0, false
	}
	return p.Outage + ((e-p.Outage)/p.Flap+1)*p.Flap, true
}

// idealDrain is how long after the first recovery a provider serving
// exactly its capacity in its up phases takes to answer backlog requests
// with success: backlog ÷ capacity, plus the down phases that fall within.
func (p providerPlan) idealDrain(backlog int) time.Duration {
	need := time.Duration(float64(backlog) / float64(p.Capacity) * float64(time.Second))
	if p.Flap <= 0 || need == 0 {
		return need
	}
	full := need / p.Flap // whole up phases needed
	rest := need - full*p.Flap
	if rest == 0 {
		return full*2*p.Flap - p.Flap
	}
	return full*2*p.Flap + rest
}

// tokenBucket is the recovered provider's capacity: rate tokens a second
// up to burst, one per request. Times are offsets from any fixed start.
type tokenBucket struct {
	rate, burst, tokens float64
	last                time.Duration
}

// newTokenBucket is a full bucket of rate requests a second, burst rate.
func newTokenBucket(rate int) *tokenBucket {
	return &tokenBucket{rate: float64(rate), burst: float64(rate), tokens: float64(rate)}
}

// take spends a token at now if there is one (ok). remaining is the
// whole tokens left after it; reset how long until the bucket is full
// again, in whole seconds rounded up (the unit of RateLimit-Reset).
func (b *tokenBucket) take(now time.Duration) (ok bool, remaining int, reset int) {
	if now > b.last {
		b.tokens = min(b.burst, b.tokens+b.rate*(now-b.last).Seconds())
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		ok = true
	}
	reset = int(math.Ceil((b.burst - b.tokens) / b.rate))
	return ok, int(b.tokens), reset
}

// setRateLimitHeaders writes the rate-limit headers of style: the draft's
// RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (seconds), and
// with ietf also the structured fields of draft-ietf-httpapi-ratelimit-headers
// (RateLimit-Policy: "default";q=LIMIT;w=1 and
// RateLimit: "default";r=REMAINING;t=RESET). none writes nothing.
func setRateLimitHeaders(h http.Header, style string, limit, remaining, reset int) {
	if style == headersNone {
		return
	}
	h.Set("RateLimit-Limit", strconv.Itoa(limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(reset))
	if style == headersIETF {
		h.Set("RateLimit-Policy", `"default";q=`+strconv.Itoa(limit)+";w=1")
		h.Set("RateLimit", `"default";r=`+strconv.Itoa(remaining)+";t="+strconv.Itoa(reset))
	}
}

// providerRequest is one request the provider received: when it arrived
// (since the provider's start), the job and attempt the dispatcher named,
// and the status answered.
type providerRequest struct {
	at           time.Duration
	job, attempt int64
	status       int
}

// outageProvider is the scripted provider of mode outage on 127.0.0.1.
// With kind refused it closes its listener (and every connection) while
// down and listens again on the same port when up.
type outageProvider struct {
	plan  providerPlan
	addr  string
	start time.Time

	mu       sync.Mutex
	bucket   *tokenBucket
	requests []providerRequest
	srv      *http.Server // nil while refusing
}

// newOutageProvider reserves a loopback port for the provider; run starts
// its script.
func newOutageProvider(plan providerPlan) (*outageProvider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &outageProvider{plan: plan, addr: ln.Addr().String(), bucket: newTokenBucket(plan.Capacity)}
	if plan.Kind != outageRefused {
		p.serve(ln)
		return p, nil
	}
	return p, ln.Close()
}

// url is where the tool delivers.
func (p *outageProvider) url() string { return "http://" + p.addr + "/deliver" }

// serve answers on ln; the caller holds mu or nothing runs yet.
func (p *outageProvider) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(p.answer), ReadHeaderTimeout: 10 * time.Second}
	p.srv = srv
	go func() { _ = srv.Serve(ln) }()
}

// run starts the script at now and follows it until ctx ends; it closes
// the provider when it returns.
func (p *outageProvider) run(ctx context.Context, started chan<- time.Time) error {
	p.mu.Lock()
	p.start = time.Now()
	p.mu.Unlock()
	started <- p.start
	defer p.close()
	for e := time.Duration(0); ; {
		next, ok := p.plan.nextChange(e)
		if !ok {
			<-ctx.Done()
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(p.start.Add(next))):
		}
		e = next
		if err := p.turn(p.plan.up(e)); err != nil {
			return err
		}
	}
}

// turn brings a refusing provider up (listening again on its port) or
// down (closing its listener and connections); other kinds answer by the
// time, and turn does nothing.
func (p *outageProvider) turn(up bool) error {
	if p.plan.Kind != outageRefused {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !up {
		if p.srv != nil {
			p.srv.Close()
			p.srv = nil
		}
		return nil
	}
	var ln net.Listener
	var err error
	for range 50 { // the port may linger a moment after a close
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			p.serve(ln)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("outage provider: listen again on %s: %w", p.addr, err)
}

func (p *outageProvider) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv != nil {
		p.srv.Close()
		p.srv = nil
	}
}

// answer is the provider's handler: down, it answers as the outage's kind
// says; up, 200 within the bucket and 429 above it, with the plan's
// headers. Every request is recorded.
func (p *outageProvider) answer(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	job, _ := strconv.ParseInt(r.Header.Get("Ratchet-Job-Id"), 10, 64)
	attempt, _ := strconv.ParseInt(r.Header.Get("Ratchet-Attempt"), 10, 64)
	p.mu.Lock()
	e := time.Since(p.start)
	status := http.StatusServiceUnavailable
	h := w.Header()
	switch {
	case !p.plan.up(e):
		if p.plan.Kind == outage503RetryAfter {
			h.Set("Retry-After", strconv.Itoa(int(p.plan.RetryAfter/time.Second)))
		}
	default:
		ok, remaining, reset := p.bucket.take(e)
		status = http.StatusOK
		if !ok {
			status = http.StatusTooManyRequests
			if p.plan.Headers != headersNone {
				h.Set("Retry-After", "1")
			}
		}
		setRateLimitHeaders(h, p.plan.Headers, p.plan.Capacity, remaining, reset)
	}
	p.requests = append(p.requests, providerRequest{at: e, job: job, attempt: attempt, status: status})
	p.mu.Unlock()
	w.WriteHeader(status)
	if status == http.StatusOK {
		_, _ = io.WriteString(w, `{"ok":true}`)
	}
}

// recorded is a copy of the requests received so far.
func (p *outageProvider) recorded() []providerRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]providerRequest(nil), p.requests...)
}
