package simulate

import (
	"container/heap"
	"math"
)

// RecoveryResult is one recovery scenario: a run per strategy, in the
// order of Config.Strategies.
type RecoveryResult struct {
	Config Recovery `json:"config"`
	// IdealDrainS is backlog ÷ capacity: the provider's own pace through
	// the backlog, the least drain time any strategy can reach.
	IdealDrainS float64       `json:"idealDrainS"`
	Runs        []RecoveryRun `json:"runs"`
}

// RecoveryRun is one strategy through the recovery, seen at the provider.
// Second i of the per-second series is [i, i+1) s after the provider came
// back, by when the request reached it.
type RecoveryRun struct {
	Strategy Strategy `json:"strategy"`
	Served   []int    `json:"served"`  // requests the provider served, per second
	Refused  []int    `json:"refused"` // requests it refused with 429, per second
	// Allowed is the rate the ramp allowed at the start of each second
	// (requests per second); empty for at-once, which has none.
	Allowed []float64 `json:"allowed"`
	// Backlog is the jobs not yet done (served or exhausted) at the end of
	// each second.
	Backlog []int `json:"backlog"`

	Requests       int     `json:"requests"`       // all requests after the recovery
	Refusals       int     `json:"refusals"`       // of which refused with 429
	RefusedPercent float64 `json:"refusedPercent"` // refusals ÷ requests × 100
	BusiestSecond  int     `json:"busiestSecond"`  // most requests that reached the provider in one second
	BusiestAt      int     `json:"busiestAt"`      // which second (the first, if several)
	// DrainS is when the last job was done, in seconds after the recovery
	// (to the millisecond); DrainRatio is DrainS ÷ IdealDrainS.
	DrainS     float64 `json:"drainS"`
	DrainRatio float64 `json:"drainRatio"`
	Exhausted  int     `json:"exhausted"` // jobs whose policy gave up on a 429
	Left       int     `json:"left"`      // jobs not done after MaxRecoveryS
}

// SimulateRecovery validates r and simulates each of its strategies. Every
// job draws from its own stream seeded by (Seed, backlog, job), the same
// for every strategy, so strategies are compared on common random numbers.
func SimulateRecovery(r Recovery) (RecoveryResult, error) {
	if err := r.Validate(); err != nil {
		return RecoveryResult{}, err
	}
	r.Strategies = append([]Strategy(nil), r.Strategies...)
	res := RecoveryResult{Config: r, IdealDrainS: float64(r.Backlog) / float64(r.CapacityPerS)}
	for _, s := range r.Strategies {
		run := newRecoverySim(&r, s).run()
		run.DrainRatio = math.Round(run.DrainS/res.IdealDrainS*1000) / 1000
		res.Runs = append(res.Runs, run)
	}
	return res, nil
}

// Run returns the run of strategy s, or false when the scenario did not
// simulate it.
func (r RecoveryResult) Run(s Strategy) (RecoveryRun, bool) {
	for _, run := range r.Runs {
		if run.Strategy == s {
			return run, true
		}
	}
	return RecoveryRun{}, false
}

// The kinds of events of a recovery.
const (
	evDue    = iota // a job is due: it joins the queue of the dispatcher
	evArrive        // a request reaches the provider
	evAnswer        // its answer is back at Ratchet
	evStep          // the ramp's step ends: the AIMD looks at its answers
	evWake          // the ramp's pacer allows the next request
)

// recEvent is one event; seq breaks ties in the order events were made,
// so the order is total and the run deterministic.
type recEvent struct {
	at   float64
	seq  int
	kind int
	job  int32
}

type recHeap []recEvent

func (h recHeap) Len() int { return len(h) }
func (h recHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}
func (h recHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *recHeap) Push(x any)   { *h = append(*h, x.(recEvent)) }
func (h *recHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// recJob is one held job.
type recJob struct {
	src   source
	tries int  // requests made, for the policy's arithmetic
	spent int  // attempts counted against maxAttempts
	ok    bool // the provider served its last request
}

// recoverySim is one strategy's run.
type recoverySim struct {
	cfg      *Recovery
	strategy Strategy
	jobs     []recJob
	events   recHeap
	seq      int
	queue    []int32 // due jobs in the order they became due
	head     int
	inflight int
	done     int
	window   map[int]int // requests that reached the provider per second
	out      RecoveryRun
	doneAt   []int // jobs done per second
	pace     *pacer
	lastDone float64 // when the last job was done, ms
}

func newRecoverySim(cfg *Recovery, s Strategy) *recoverySim {
	sim := &recoverySim{cfg: cfg, strategy: s, window: map[int]int{}}
	sim.out.Strategy = s
	sim.jobs = make([]recJob, cfg.Backlog)
	for i := range sim.jobs {
		sim.jobs[i].src = source{x: streamSeed(cfg.Seed, cfg.Backlog, 0, i)}
	}
	if s != AtOnce {
		sim.pace = newPacer(cfg.Ramp, s == Learned)
	}
	return sim
}

func (s *recoverySim) push(at float64, kind int, job int32) {
	heap.Push(&s.events, recEvent{at: at, seq: s.seq, kind: kind, job: job})
	s.seq++
}

// hop is one network hop: |Normal(mean, sd)| milliseconds, from the job's
// own stream.
func (s *recoverySim) hop(j *recJob) float64 {
	return math.Abs(float64(s.cfg.LatencySdMs*j.src.normal()) + s.cfg.LatencyMeanMs)
}

// run simulates from the moment the circuit closes (every held job due at
// once) until every job is done or MaxRecoveryS has passed.
func (s *recoverySim) run() RecoveryRun {
	for i := range s.jobs {
		s.push(0, evDue, int32(i))
	}
	if s.pace != nil {
		s.push(s.cfg.Ramp.StepMs, evStep, -1)
	}
	end := float64(MaxRecoveryS) * 1000
	for s.events.Len() > 0 && s.done < len(s.jobs) {
		ev := heap.Pop(&s.events).(recEvent)
		if ev.at >= end {
			break
		}
		s.handle(ev)
	}
	s.finish()
	return s.out
}

// handle applies one event.
func (s *recoverySim) handle(ev recEvent) {
	t := ev.at
	switch ev.kind {
	case evDue:
		s.queue = append(s.queue, ev.job)
		s.pump(t)
	case evArrive:
		s.arrive(t, ev.job)
	case evAnswer:
		s.answer(t, ev.job)
		s.pump(t)
	case evStep:
		old := s.pace.rate
		s.pace.step()
		s.record(t, old)
		s.push(t+s.cfg.Ramp.StepMs, evStep, -1)
		s.pump(t)
	case evWake:
		s.pace.wakeAt = -1
		s.pump(t)
	}
}

// record notes, at a step at time t, the rate old that was in force for
// every second that started before t and is not noted yet: Allowed[i] is
// the rate at i seconds.
func (s *recoverySim) record(t, old float64) {
	for float64(len(s.out.Allowed))*1000 < t {
		s.out.Allowed = append(s.out.Allowed, old)
	}
}

// pump sends due jobs while the endpoint has room in flight and, under a
// ramp, the pacer allows.
func (s *recoverySim) pump(t float64) {
	for s.head < len(s.queue) && s.inflight < s.cfg.MaxConcurrent {
		if s.pace != nil && !s.pace.admit(t) {
			if s.pace.wakeAt != s.pace.next {
				s.pace.wakeAt = s.pace.next
				s.push(s.pace.next, evWake, -1)
			}
			return
		}
		id := s.queue[s.head]
		s.head++
		j := &s.jobs[id]
		j.tries++
		s.inflight++
		s.out.Requests++
		s.push(t+s.hop(j), evArrive, id)
	}
	if s.head > 4096 && s.head*2 > len(s.queue) {
		s.queue = s.queue[:copy(s.queue, s.queue[s.head:])]
		s.head = 0
	}
}

// arrive is the provider: a fixed window of one second, the first
// CapacityPerS requests of each served, the rest refused with 429.
func (s *recoverySim) arrive(t float64, id int32) {
	sec := int(t / 1000)
	s.window[sec]++
	for len(s.out.Served) <= sec {
		s.out.Served = append(s.out.Served, 0)
		s.out.Refused = append(s.out.Refused, 0)
	}
	j := &s.jobs[id]
	j.ok = s.window[sec] <= s.cfg.CapacityPerS
	if j.ok {
		s.out.Served[sec]++
	} else {
		s.out.Refused[sec]++
		s.out.Refusals++
	}
	s.push(t+s.hop(j), evAnswer, id)
}

// answer is Ratchet reading the provider's answer: a served job is done;
// a throttled one waits max(policy delay, Retry-After), or is exhausted.
func (s *recoverySim) answer(t float64, id int32) {
	s.inflight--
	j := &s.jobs[id]
	if s.pace != nil {
		s.pace.answer(j.ok, float64(s.cfg.CapacityPerS))
	}
	if j.ok {
		s.jobDone(t)
		return
	}
	if s.cfg.ThrottleSpendsAttempt {
		j.spent++
	}
	p := s.cfg.Policy
	u := j.src.float()
	if j.spent >= p.MaxAttempts {
		s.out.Exhausted++
		s.jobDone(t)
		return
	}
	// Without spending attempts, the arithmetic still follows the tries,
	// up to the policy's last delay.
	d, err := p.Delay(min(j.tries, p.MaxAttempts-1), u, int64(s.cfg.RetryAfterS)*1000)
	if err != nil { // Validate has accepted the policy
		s.out.Exhausted++
		s.jobDone(t)
		return
	}
	s.push(t+float64(d.SelectedMs), evDue, id)
}

func (s *recoverySim) jobDone(t float64) {
	s.done++
	s.lastDone = t
	sec := int(t / 1000)
	for len(s.doneAt) <= sec {
		s.doneAt = append(s.doneAt, 0)
	}
	s.doneAt[sec]++
}

// finish sums up the run: the backlog per second, the busiest second, the
// share refused and the drain time.
func (s *recoverySim) finish() {
	r := &s.out
	n := max(len(r.Served), len(s.doneAt))
	for len(r.Served) < n {
		r.Served = append(r.Served, 0)
		r.Refused = append(r.Refused, 0)
	}
	left := len(s.jobs)
	r.Backlog = make([]int, n)
	for i := range n {
		if i < len(s.doneAt) {
			left -= s.doneAt[i]
		}
		r.Backlog[i] = left
		if k := r.Served[i] + r.Refused[i]; k > r.BusiestSecond {
			r.BusiestSecond, r.BusiestAt = k, i
		}
	}
	if s.pace != nil {
		for len(r.Allowed) < n {
			r.Allowed = append(r.Allowed, s.pace.rate)
		}
		r.Allowed = r.Allowed[:n]
	} else {
		r.Allowed = []float64{}
	}
	r.Left = len(s.jobs) - s.done
	if r.Requests > 0 {
		r.RefusedPercent = math.Round(float64(r.Refusals)/float64(r.Requests)*1e5) / 1e3
	}
	r.DrainS = math.Round(s.lastDone) / 1000
}

// pacer is the ramp: an AIMD on the admitted rate (see RampParams), and
// the spacing of admissions at that rate.
type pacer struct {
	p       RampParams
	learn   bool    // read the provider's RateLimit headers
	learned bool    // an answer has stated the limit
	rate    float64 // requests per second allowed now
	ceiling float64 // LimitPerS, or the learned limit when lower
	slow    bool    // in slow start: no throttle seen yet
	cutAt   float64 // the rate of the last cut: the additive increase is a share of it, as the engine's ramp
	next    float64 // earliest time of the next admission, ms
	last    float64 // time of the last admission, ms
	wakeAt  float64 // when a wake event is pending, or −1

	throttled, answered, held bool // in the current step
}

func newPacer(p RampParams, learn bool) *pacer {
	return &pacer{p: p, learn: learn, ceiling: p.LimitPerS, slow: p.SlowStartFactor > 1, wakeAt: -1, last: math.Inf(-1),
		rate: min(p.LimitPerS, max(1, p.StartPercent/100*p.LimitPerS))}
}

// admit reports whether a request may go at time t, and if so spaces the
// next one 1/rate later. A refusal marks the step as one where the rate
// held a job back.
func (p *pacer) admit(t float64) bool {
	if t < p.next {
		p.held = true
		return false
	}
	p.last = t
	p.next = t + 1000/p.rate
	return true
}

// answer notes one answer: served (ok) or throttled. Under learn, the
// first answer tells the provider's limit (capacity per second, as its
// RateLimit-Limit and window say); the rate jumps to it, capped by the
// configured limit, and slow start ends.
func (p *pacer) answer(ok bool, capacity float64) {
	p.answered = true
	if !ok {
		p.throttled = true
	}
	if p.learn && !p.learned {
		p.learned = true
		p.ceiling = min(p.p.LimitPerS, capacity)
		p.rate, p.slow = p.ceiling, false
		p.next = min(p.next, p.last+1000/p.rate)
	}
}

// increaseBase is what the additive increase is a share of: the rate of
// the last cut, as the engine's ramp (internal/engine/recovery.go) —
// the provider's pace as last found — or the configured limit before any
// cut (learned limits).
func (p *pacer) increaseBase() float64 {
	if p.cutAt > 0 {
		return p.cutAt
	}
	return p.p.LimitPerS
}

// step ends an AIMD step: a throttle cuts the rate (once, however many
// came), a clean step that held jobs back grows it, by slow start's factor
// or by the additive increase.
func (p *pacer) step() {
	switch {
	case p.throttled:
		p.rate = min(p.ceiling, max(1, p.rate*p.p.DecreaseFactor))
		p.slow, p.cutAt = false, p.rate
	case p.answered && p.held && p.slow:
		p.rate = min(p.ceiling, p.rate*p.p.SlowStartFactor)
	case p.answered && p.held:
		p.rate = min(p.ceiling, p.rate+max(1, p.p.IncreasePercent/100*p.increaseBase()))
	}
	p.throttled, p.answered, p.held = false, false, false
	p.next = min(p.next, p.last+1000/p.rate)
}
