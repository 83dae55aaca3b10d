package chaos

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The provider's answers, by class of job (class): most succeed at once,
// some are flaky (503 with Retry-After the first time their key is seen,
// 200 after), some are refused for good (400: the job fails) and some
// never get better (503 every time: the job is exhausted).
type class uint8

const (
	classOK class = iota
	classFlaky
	classPermanent
	classHopeless
)

func (c class) String() string {
	return [...]string{"ok", "flaky", "permanent", "hopeless"}[c]
}

// classOf is the class of the main endpoint's job number n: 80 % ok, 15 %
// flaky, 3 % permanent, 2 % hopeless, spread by the seed.
func classOf(seed uint64, n int) class {
	switch h := splitmix(seed^uint64(n)*0x9e3779b97f4a7c15) % 100; {
	case h < 3:
		return classPermanent
	case h < 5:
		return classHopeless
	case h < 20:
		return classFlaky
	default:
		return classOK
	}
}

// splitmix is SplitMix64's output function: a well-mixed hash of x.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// call is one request the provider received.
type call struct {
	endpoint string
	key      string // Idempotency-Key
	job      int64
	attempt  int64
	worker   string
	flowKey  string        // the X-Ratchet-Flow-Key the worker sent: the claimed job's key
	at, end  time.Duration // arrival and answer, since the provider started
	status   int           // the answer; 0 when the caller went away first
}

// provider is the local test provider the workers call: POST /{endpoint}
// with the job's Idempotency-Key and X-Ratchet-Job, X-Ratchet-Attempt,
// X-Ratchet-Worker and X-Ratchet-Flow-Key headers. It counts calls in
// progress per endpoint and per flow key (and the most it ever saw), and
// keeps every call for the checks.
type provider struct {
	seed     uint64
	classes  map[string]class  // by idempotency key, for the main endpoint
	flowKeys map[string]string // the planned flow key by idempotency key; none for a job without
	byKey    map[string]*gauge // per flow key; fixed after newProvider
	started  time.Time
	srv      *http.Server
	url      string

	mu       sync.Mutex
	calls    []call
	seen     map[string]int // calls per idempotency key
	byWorker map[string]int // calls in progress per worker

	inflight map[string]*gauge // per endpoint; fixed after newProvider
}

// gauge counts calls in progress and remembers the most at once.
type gauge struct{ now, peak atomic.Int64 }

func (g *gauge) inc() {
	n := g.now.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (g *gauge) dec() { g.now.Add(-1) }

// newProvider listens on a loopback port. flowKeys are the jobs' planned
// flow keys, by idempotency key.
func newProvider(seed uint64, endpoints []string, classes map[string]class, flowKeys map[string]string) (*provider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &provider{seed: seed, classes: classes, started: time.Now(), seen: map[string]int{}, byWorker: map[string]int{}, inflight: map[string]*gauge{}}
	for _, e := range endpoints {
		p.inflight[e] = &gauge{}
	}
	p.flowKeys, p.byKey = flowKeys, map[string]*gauge{}
	for _, k := range flowKeys {
		if p.byKey[k] == nil {
			p.byKey[k] = &gauge{}
		}
	}
	p.url = "http://" + ln.Addr().String()
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *provider) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
}

// ServeHTTP answers one delivery as its job's class says, after the work
// takes its time, and records the call; a call whose caller goes away
// mid-call is recorded with status 0 and not answered.
func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ep := r.URL.Path[1:]
	g, ok := p.inflight[ep]
	if r.Method != http.MethodPost || !ok {
		http.Error(w, "POST /{endpoint} only", http.StatusNotFound)
		return
	}
	// Read the body first: the server then watches the connection, and the
	// request's context ends as soon as a crashed worker's socket closes.
	_, _ = io.Copy(io.Discard, r.Body)
	c := call{endpoint: ep, key: r.Header.Get("Idempotency-Key"), worker: r.Header.Get("X-Ratchet-Worker"), flowKey: r.Header.Get("X-Ratchet-Flow-Key")}
	c.job, _ = strconv.ParseInt(r.Header.Get("X-Ratchet-Job"), 10, 64)
	c.attempt, _ = strconv.ParseInt(r.Header.Get("X-Ratchet-Attempt"), 10, 64)
	// Counted by the planned key, what the producer enqueued; the key
	// the worker sent is checked against it.
	kg := p.byKey[p.flowKeys[c.key]]
	if kg == nil {
		kg = &gauge{}
	}
	g.inc()
	kg.inc()
	c.at = time.Since(p.started)
	p.mu.Lock()
	p.seen[c.key]++
	first := p.seen[c.key] == 1
	p.byWorker[c.worker]++
	p.mu.Unlock()

	// The work: 5–25 ms, the same for a key and attempt in every run.
	work := time.Duration(5+splitmix(p.seed^uint64(c.job)<<8^uint64(c.attempt))%21) * time.Millisecond
	t := time.NewTimer(work)
	select {
	case <-t.C:
		c.status = p.status(c.key, first, w.Header())
	case <-r.Context().Done():
		t.Stop()
	}
	c.end = time.Since(p.started)
	kg.dec()
	g.dec()
	p.mu.Lock()
	p.calls = append(p.calls, c)
	p.byWorker[c.worker]--
	p.mu.Unlock()
	if c.status != 0 {
		w.WriteHeader(c.status)
	}
}

// status is the answer to a call for key by its job's class: flaky jobs
// get 503 with Retry-After the first time, permanent ones 400, hopeless
// ones 503 always, the rest 200.
func (p *provider) status(key string, first bool, h http.Header) int {
	switch p.classes[key] {
	case classFlaky:
		if first {
			h.Set("Retry-After", "1")
			return http.StatusServiceUnavailable
		}
	case classPermanent:
		return http.StatusBadRequest
	case classHopeless:
		return http.StatusServiceUnavailable
	}
	return http.StatusOK
}

// busiest is the worker with the most calls in progress now, and how
// many; "" when none has any.
func (p *provider) busiest() (string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	best, n := "", 0
	for w, k := range p.byWorker {
		if k > n {
			best, n = w, k
		}
	}
	return best, n
}

// records returns the calls so far.
func (p *provider) records() []call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

// dump writes every call as CSV (times in milliseconds since the
// provider started, and as unix milliseconds), for a run that failed.
func (p *provider) dump(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "endpoint,idempotency_key,job,attempt,worker,arrived_ms,answered_ms,arrived_unix_ms,status,flow_key")
	for _, c := range p.records() {
		fmt.Fprintf(w, "%s,%s,%d,%d,%s,%.3f,%.3f,%d,%d,%s\n", c.endpoint, c.key, c.job, c.attempt, c.worker,
			float64(c.at.Microseconds())/1000, float64(c.end.Microseconds())/1000, p.started.Add(c.at).UnixMilli(), c.status, c.flowKey)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// peak is the most calls of the endpoint the provider ever had at once.
func (p *provider) peak(endpoint string) int64 { return p.inflight[endpoint].peak.Load() }

// keyPeaks is the most calls of each flow key the provider ever had at
// once, by key.
func (p *provider) keyPeaks() map[string]int64 {
	out := make(map[string]int64, len(p.byKey))
	for k, g := range p.byKey {
		out[k] = g.peak.Load()
	}
	return out
}

// maxInWindow is the most of the times (sorted ascending) that fall in
// any window of length w: times t with last-w < t <= last, for each time
// taken as last, as the rate-limit gate counts claims.
func maxInWindow(times []time.Duration, w time.Duration) (best int, at time.Duration) {
	lo := 0
	for hi, t := range times {
		for times[lo] <= t-w {
			lo++
		}
		if n := hi - lo + 1; n > best {
			best, at = n, t
		}
	}
	return best, at
}
