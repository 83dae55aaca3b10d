package simulate

import (
	"math"

	"github.com/getratchet/ratchet/backoff"
)

// runStats is what one simulation reports.
type runStats struct {
	calls    int     // writes that reached the resource
	timeMs   float64 // when the last client had its final answer
	failed   int     // clients that gave up (budget refused, policy exhausted, calculator schedule used up)
	refused  int     // retries the budget refused
	hinted   int     // conflict answers that carried a retry-after hint
	clientP  [3]float64
	clientTP [3]float64
}

// client is one contender. Times are milliseconds of simulated time.
type client struct {
	src    source
	readAt float64 // when this try's read reached the resource
	tries  int     // writes so far
	prev   float64 // decorrelated jitter's previous wait
	waits  []float64
	finish float64
}

// event is a write reaching the resource. Ties (which continuous latencies
// make vanishingly rare) go to the lower client index, so the order is total.
type event struct {
	at  float64
	who int32
}

func (a event) before(b event) bool {
	return a.at < b.at || a.at == b.at && a.who < b.who
}

// sim holds a worker's reusable buffers.
type sim struct {
	cfg     *Config
	clients []client
	heap    []event
	writes  []float64 // recent write times, for the overload window
	calls   []float64
	times   []float64
}

// latency is one network hop: |Normal(mean, sd)|.
func (s *sim) latency(c *client) float64 {
	return math.Abs(float64(s.cfg.LatencySdMs*c.src.normal()) + s.cfg.LatencyMeanMs)
}

// run simulates n clients once. Only writes are events: a client's read just
// records when it reached the resource, and a write succeeds exactly when no
// write succeeded since then (lastOK < readAt), which is the version check of
// the study's server without a separate read event. The replies are folded
// into the next event's time. A try is four hops: read request, read reply,
// write request, write reply.
func (s *sim) run(mode Mode, n, run int) runStats {
	cfg := s.cfg
	cs := s.start(mode, n, run)
	var st runStats
	tokens := 0
	if cfg.Budget != nil {
		tokens = cfg.Budget.Capacity
	}
	lastOK := -1.0
	head := 0 // first write time still inside the overload window
	for len(s.heap) > 0 {
		ev := s.heap[0]
		c := &cs[ev.who]
		t := ev.at
		st.calls++
		c.tries++
		if cfg.RetryAfter != nil {
			head = s.noteWrite(t, head)
		}
		reply := t + s.latency(c)
		if lastOK < c.readAt {
			lastOK = t
			c.finish = reply
			if cfg.Budget != nil {
				tokens = min(cfg.Budget.Capacity, tokens+cfg.Budget.SuccessRefund)
			}
			s.pop()
			continue
		}
		hint := s.hint(head, &st)
		// The study's client draws the next read's hop, then its backoff.
		hop := s.latency(c)
		wait, ok := s.wait(mode, c, hint)
		if ok && cfg.Budget != nil {
			ok = spend(&tokens, cfg.Budget.RetryCost, &st)
		}
		if !ok {
			st.failed++
			c.finish = reply
			s.pop()
			continue
		}
		c.readAt = reply + hop + wait
		s.heap[0] = event{at: c.readAt + s.latency(c) + s.latency(c), who: ev.who}
		s.down(0)
	}
	s.perClient(cs, &st)
	return st
}

// start readies the buffers for n clients and seeds each client's stream
// by (Seed, n, run, client), so a run is the same on any worker; each
// client's first read and write go out at once.
func (s *sim) start(mode Mode, n, run int) []client {
	cfg := s.cfg
	if cap(s.clients) < n {
		s.clients = make([]client, n)
		s.calls = make([]float64, n)
		s.times = make([]float64, n)
	}
	cs := s.clients[:n]
	s.heap = s.heap[:0]
	s.writes = s.writes[:0]
	for i := range cs {
		c := &cs[i]
		*c = client{src: source{x: streamSeed(cfg.Seed, n, run, i)}, prev: cfg.BaseMs, waits: c.waits[:0]}
		if mode == Calc {
			c.waits = s.calcSchedule(c)
		}
		c.readAt = s.latency(c)
		s.push(event{at: c.readAt + s.latency(c) + s.latency(c), who: int32(i)})
	}
	return cs
}

// noteWrite records a write at t for the overload window and returns the
// new head: the first write time still inside the window. The buffer is
// compacted now and then to stay small.
func (s *sim) noteWrite(t float64, head int) int {
	s.writes = append(s.writes, t)
	for s.writes[head] <= t-s.cfg.RetryAfter.WindowMs {
		head++
	}
	if head > 4096 && head*2 > len(s.writes) {
		s.writes = s.writes[:copy(s.writes, s.writes[head:])]
		head = 0
	}
	return head
}

// hint is the Retry-After the resource sends with a conflict: RetryAfter.Ms
// while more than Overload writes since head are in the window (counted
// in st.hinted), else 0 for none.
func (s *sim) hint(head int, st *runStats) float64 {
	if r := s.cfg.RetryAfter; r != nil && len(s.writes)-head > r.Overload {
		st.hinted++
		return r.Ms
	}
	return 0
}

// spend takes a retry's cost from the budget's tokens, and reports false
// (counting a refusal) when too few are left.
func spend(tokens *int, cost int, st *runStats) bool {
	if *tokens < cost {
		st.refused++
		return false
	}
	*tokens -= cost
	return true
}

// perClient fills in the last finish time and the per-client percentiles
// of calls and times.
func (s *sim) perClient(cs []client, st *runStats) {
	n := len(cs)
	calls, times := s.calls[:n], s.times[:n]
	for i := range cs {
		calls[i] = float64(cs[i].tries)
		times[i] = cs[i].finish
		st.timeMs = max(st.timeMs, cs[i].finish)
	}
	st.clientP = percentiles3(calls)
	st.clientTP = percentiles3(times)
}

// wait is the backoff after a client's failed try number c.tries, with the
// resource's hint (0 for none) as a floor. It reports false when the client
// gives up instead.
func (s *sim) wait(mode Mode, c *client, hint float64) (float64, bool) {
	cfg := s.cfg
	n := c.tries
	var w float64
	switch mode {
	case NoBackoff:
	case Exponential:
		w = expo(cfg, n)
	case Full:
		w = expo(cfg, n) * c.src.float()
	case Equal:
		v := expo(cfg, n)
		w = v/2 + float64(v/2*c.src.float())
	case Decorrelated:
		c.prev = math.Min(cfg.CapMs, cfg.BaseMs+float64((float64(c.prev*3)-cfg.BaseMs)*c.src.float()))
		w = c.prev
	case Policy:
		// The policy's own formula, retry-after floor and 24-hour limit. Its
		// sample is in [0, 1]; ours is in [0, 1), which is the same law.
		d, err := cfg.Policy.Delay(n, c.src.float(), int64(math.Ceil(hint)))
		if err != nil || d.Exhausted {
			return 0, false
		}
		return float64(d.SelectedMs), true
	case Calc:
		if n > len(c.waits) {
			return 0, false
		}
		w = c.waits[n-1]
	}
	return max(w, hint), true
}

// expo is the study's min(cap, base × 2^n); the first wait (n = 1) is twice the base.
func expo(cfg *Config, n int) float64 {
	return math.Min(cfg.CapMs, math.Ldexp(cfg.BaseMs, min(n, 2000)))
}

// calcSchedule runs the calculator for one client with a seed of its own and
// returns its waits in milliseconds.
func (s *sim) calcSchedule(c *client) []float64 {
	in := *s.cfg.Calc
	in.Seed = uint32(c.src.uint64() >> 32)
	sch, err := backoff.Calculate(in)
	out := c.waits[:0]
	if err != nil { // Validate has already accepted the setting
		return out
	}
	for _, r := range sch.Rows {
		out = append(out, r.WaitMs())
	}
	return out
}

func (s *sim) push(e event) {
	s.heap = append(s.heap, e)
	i := len(s.heap) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s.heap[i].before(s.heap[p]) {
			break
		}
		s.heap[i], s.heap[p] = s.heap[p], s.heap[i]
		i = p
	}
}

func (s *sim) pop() {
	last := len(s.heap) - 1
	s.heap[0] = s.heap[last]
	s.heap = s.heap[:last]
	if last > 0 {
		s.down(0)
	}
}

func (s *sim) down(i int) {
	h := s.heap
	n := len(h)
	e := h[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].before(h[l]) {
			m = r
		}
		if !h[m].before(e) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = e
}
