package chaos

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Report is what a chaos run saw: the figures it prints and the
// invariants that broke (Violations; none when the run passed).
type Report struct {
	Seed                      uint64
	Nodes, Workers            int
	Concurrency               int
	Skew                      time.Duration // of the last node
	FaultTime, DrainTime      time.Duration // the fault phase; from its end until every job finished
	NodeKills                 []int         // per node
	PGRestarts, WorkerCrashes int
	CrashesMidCall            int      // worker crashes while the provider saw the worker calling
	LeasesAtCrash             int      // running jobs the crashed workers held, by the database when they were killed
	LeasesLost                int      // attempts of crashed workers that ended by an expired lease
	Unexpected                []string // nodes or workers that exited by themselves
	FaultErrors               []string // faults that could not be made

	Jobs           int // planned
	Acknowledged   int // enqueues a node answered
	EnqueueRetries int // enqueue batches sent again after an error
	Lost           int // acknowledged but not in the database (or under another id)
	Unacknowledged int // planned jobs never acknowledged (the producer gave up)

	States     map[string]int64 // jobs by final state
	Unfinished int64            // jobs still scheduled or running
	ByClass    map[string]map[string]int64

	Attempts, TimedOut int64 // attempts in the database; those ended by an expired lease
	Calls, CallsCut    int   // provider calls; those whose caller went away mid-call
	DeliveredTwice     int   // jobs the provider answered 200 more than once
	DuplicateSuccesses int   // jobs with more than one succeeded attempt
	SuccessWithout200  int   // succeeded attempts the provider did not answer 200

	Endpoints []EndpointFigures
	Keys      *KeyFigures // with Config.Keys; nil without

	Throughput  float64       // finished jobs per second, first enqueue to last finish
	Busy        time.Duration // first enqueue to last finish
	EnqueueSpan time.Duration // how long the producer spread the enqueues over

	Violations []string
	Dir        string // logs kept (a run that failed)
	Schema     string // schema kept (a run that failed)
}

// EndpointFigures are the limits of one endpoint and what the provider
// and the database saw of them.
type EndpointFigures struct {
	Name               string
	Jobs               int
	MaxConcurrent      int64
	PeakAtProvider     int64 // most calls in progress at once at the provider
	PeakInDatabase     int   // most attempts running at once by their claim and finish times
	RateLimit          int64 // 0: none
	CallsIn60s         int   // most calls the provider received in any 60 s
	CallsInWindow      int   // most in any 60 s less DeliveryAllowance: what the check holds to the limit
	ClaimsIn60s        int   // most claims in any 60 s by their claim times
	CallsAt            time.Duration
	ProviderCallsTotal int
	// DelayMin and DelayMax bound the time from a claim (its time in the
	// database) to the call's arrival at the provider.
	DelayMin, DelayMax time.Duration
}

// KeyFigures are the main endpoint's limit per flow key and what the
// provider and the database saw of it.
type KeyFigures struct {
	Keys             int   // flow keys the main jobs were spread over
	KeyMaxConcurrent int64 // the main endpoint's keyMaxConcurrent
	PeakAtProvider   int64 // most calls of one key in progress at once at the provider
	PeakKey          string
	PeakInDatabase   int // most attempts of one key running at once by their claim and finish times
	AtLimit          int // keys whose calls reached KeyMaxConcurrent at once at the provider
	WrongKey         int // calls whose worker named another flow key than the job was enqueued with
}

// DeliveryAllowance is taken off the rate limit's 60 s window when the
// provider counts calls. Ratchet limits claims: at most rateLimitPerMinute
// in any 60 s of claim times, which the database check holds exactly. A
// call reaches the provider a little after its claim (the claim commits,
// the worker gets the answer, sends its request), and that delay varies
// from call to call, so two calls whose claims were 60.002 s apart can
// arrive 59.96 s apart. The provider therefore counts calls in any 59 s:
// one second for delivery, well above the delays seen (the report prints
// them) and well below the two seconds of skew that broke the limit
// before nodes took the time from the database.
const DeliveryAllowance = time.Second

// OK reports whether every invariant held.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

type attemptRow struct {
	job, number               int64
	endpoint, outcome, worker string
	claimedAt, finishedAt     int64
}

// jobRow is a job as check reads it from the database.
type jobRow struct {
	id       int64
	state    string
	created  int64
	finished int64
}

// check reads the database and the provider's records and decides.
func (r *run) check(ctx context.Context) (*Report, error) {
	cfg := r.cfg
	rep := &Report{Seed: cfg.Seed, EnqueueSpan: enqueueSpan(cfg.Duration), Nodes: cfg.Nodes, Workers: cfg.Workers, Concurrency: cfg.Concurrency, Skew: cfg.Skew,
		NodeKills: r.kills, PGRestarts: r.pgRestarts, WorkerCrashes: r.crashes, CrashesMidCall: r.midCall, LeasesAtCrash: r.leasesCut,
		Unexpected: r.unexpected, FaultErrors: r.faultErrors, Jobs: cfg.Jobs, Acknowledged: len(r.acked), EnqueueRetries: r.enqueueRetry,
		States: map[string]int64{}, ByClass: map[string]map[string]int64{}}
	jobs, as, err := r.readResults(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the results: %w", err)
	}
	firstCreated, lastFinished := r.tallyJobs(rep, jobs)
	calls := r.prov.records()
	r.tallySuccesses(rep, calls, as)
	claimedAt := make(map[[2]int64]int64, len(as))
	for _, a := range as {
		claimedAt[[2]int64{a.job, a.number}] = a.claimedAt
	}
	for _, ep := range []struct {
		name  string
		conc  int64
		limit int64
	}{{mainEndpoint, cfg.MaxConcurrent, 0}, {meteredEndpoint, 4, cfg.RateLimit}} {
		f := EndpointFigures{Name: ep.name, MaxConcurrent: ep.conc, RateLimit: ep.limit, PeakAtProvider: r.prov.peak(ep.name)}
		r.endpointFigures(&f, calls, as, claimedAt)
		rep.Endpoints = append(rep.Endpoints, f)
	}
	if cfg.Keys > 0 {
		rep.Keys = r.keyFigures(jobs, calls, as)
	}
	if lastFinished > firstCreated && firstCreated > 0 {
		rep.Busy = time.Duration(lastFinished-firstCreated) * time.Millisecond
		done := rep.States["succeeded"] + rep.States["failed"] + rep.States["exhausted"]
		rep.Throughput = float64(done) / rep.Busy.Seconds()
	}
	rep.decide()
	return rep, nil
}

// readResults reads every job by its idempotency key, and every attempt:
// the finished ones and the running ones (the claim columns of running
// jobs; none once every job finished), so the limits can be checked on
// what was still in progress too.
func (r *run) readResults(ctx context.Context) (map[string]jobRow, []attemptRow, error) {
	jobs := map[string]jobRow{}
	var as []attemptRow
	err := r.withConn(ctx, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `SELECT id, COALESCE(idempotency_key, ''), state, created_at, finished_at FROM jobs`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k string
			var j jobRow
			if err := rows.Scan(&j.id, &k, &j.state, &j.created, &j.finished); err != nil {
				rows.Close()
				return err
			}
			jobs[k] = j
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = conn.Query(ctx, `SELECT a.job_id, a.number, e.name, a.outcome, a.worker_id, a.claimed_at, a.finished_at
			FROM attempts a JOIN endpoints e ON e.id = a.endpoint_id
			UNION ALL
			SELECT j.id, j.attempt, j.endpoint, '', j.worker_id, j.claimed_at, 0 FROM jobs j WHERE j.state = 'running'`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a attemptRow
			if err := rows.Scan(&a.job, &a.number, &a.endpoint, &a.outcome, &a.worker, &a.claimedAt, &a.finishedAt); err != nil {
				return err
			}
			as = append(as, a)
		}
		return rows.Err()
	})
	return jobs, as, err
}

// tallyJobs holds the planned jobs against the database: acknowledged
// enqueues that are missing (lost), planned ones never acknowledged, and
// the final states overall and by endpoint and class. It returns the
// first creation and last finish times, which bound the busy time.
func (r *run) tallyJobs(rep *Report, jobs map[string]jobRow) (firstCreated, lastFinished int64) {
	for _, p := range r.plan {
		j, ok := jobs[p.key]
		if id, acked := r.acked[p.key]; acked && (!ok || j.id != id) {
			rep.Lost++
		} else if !acked {
			rep.Unacknowledged++
		}
		if ok {
			rep.States[j.state]++
			if rep.ByClass[p.endpoint+"/"+p.class.String()] == nil {
				rep.ByClass[p.endpoint+"/"+p.class.String()] = map[string]int64{}
			}
			rep.ByClass[p.endpoint+"/"+p.class.String()][j.state]++
			if firstCreated == 0 || j.created < firstCreated {
				firstCreated = j.created
			}
			lastFinished = max(lastFinished, j.finished)
		}
	}
	rep.Unfinished = rep.States["scheduled"] + rep.States["running"]
	return firstCreated, lastFinished
}

// tallySuccesses counts the provider's calls and the attempts, and checks
// that a job succeeds once and only after a 200 from the provider.
func (r *run) tallySuccesses(rep *Report, calls []call, as []attemptRow) {
	rep.Calls = len(calls)
	ok200 := map[[2]int64]bool{}
	per := map[int64]int{}
	for _, c := range calls {
		if c.status == 0 {
			rep.CallsCut++
		}
		if c.status == 200 {
			ok200[[2]int64{c.job, c.attempt}] = true
			per[c.job]++
		}
	}
	for _, n := range per {
		if n > 1 {
			rep.DeliveredTwice++
		}
	}
	succ := map[int64]int{}
	for _, a := range as {
		rep.Attempts++
		switch a.outcome {
		case "timed_out":
			rep.TimedOut++
			if r.crashed[a.worker] {
				rep.LeasesLost++
			}
		case "succeeded":
			succ[a.job]++
			if !ok200[[2]int64{a.job, a.number}] {
				rep.SuccessWithout200++
			}
		}
	}
	for _, n := range succ {
		if n > 1 {
			rep.DuplicateSuccesses++
		}
	}
}

// endpointFigures fills f with what the provider and the database saw of
// the limits of endpoint f.Name: its jobs, the claim-to-call delays, the
// most attempts running at once and, under a rate limit, the most calls
// and claims in a window. claimedAt maps (job, attempt) to its claim time.
func (r *run) endpointFigures(f *EndpointFigures, calls []call, as []attemptRow, claimedAt map[[2]int64]int64) {
	for _, p := range r.plan {
		if p.endpoint == f.Name {
			f.Jobs++
		}
	}
	var arrivals, claims []time.Duration
	first := true
	for _, c := range calls {
		if c.endpoint != f.Name {
			continue
		}
		arrivals = append(arrivals, c.at)
		if at, ok := claimedAt[[2]int64{c.job, c.attempt}]; ok {
			d := time.Duration(r.prov.started.Add(c.at).UnixMilli()-at) * time.Millisecond
			if first || d < f.DelayMin {
				f.DelayMin = d
			}
			if first || d > f.DelayMax {
				f.DelayMax = d
			}
			first = false
		}
	}
	var eas []attemptRow
	for _, a := range as {
		if a.endpoint == f.Name {
			eas = append(eas, a)
			claims = append(claims, time.Duration(a.claimedAt)*time.Millisecond)
		}
	}
	f.ProviderCallsTotal = len(arrivals)
	slices.Sort(arrivals)
	slices.Sort(claims)
	f.PeakInDatabase = peakOverlap(eas)
	if f.RateLimit > 0 {
		f.CallsIn60s, _ = maxInWindow(arrivals, time.Minute)
		f.CallsInWindow, f.CallsAt = maxInWindow(arrivals, time.Minute-DeliveryAllowance)
		f.ClaimsIn60s, _ = maxInWindow(claims, time.Minute)
	}
}

// keyFigures holds the main endpoint's keyMaxConcurrent against the
// provider's count of calls in progress per key and against the attempts
// of each key in the database (jobs maps idempotency keys to jobs, which
// gives each attempt its planned key), and counts the calls whose worker
// saw another key than the job was enqueued with.
func (r *run) keyFigures(jobs map[string]jobRow, calls []call, as []attemptRow) *KeyFigures {
	f := &KeyFigures{Keys: r.cfg.Keys, KeyMaxConcurrent: r.cfg.KeyMaxConcurrent}
	keys := r.prov.keyPeaks()
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if keys[k] > f.PeakAtProvider {
			f.PeakAtProvider, f.PeakKey = keys[k], k
		}
		if keys[k] >= f.KeyMaxConcurrent {
			f.AtLimit++
		}
	}
	keyOf := map[int64]string{}
	planned := map[string]string{}
	for _, p := range r.plan {
		if j, ok := jobs[p.key]; ok && p.flowKey != "" {
			keyOf[j.id] = p.flowKey
		}
		planned[p.key] = p.flowKey
	}
	byKey := map[string][]attemptRow{}
	for _, a := range as {
		if k := keyOf[a.job]; k != "" {
			byKey[k] = append(byKey[k], a)
		}
	}
	for _, kas := range byKey {
		f.PeakInDatabase = max(f.PeakInDatabase, peakOverlap(kas))
	}
	for _, c := range calls {
		if c.flowKey != planned[c.key] {
			f.WrongKey++
		}
	}
	return f
}

// peakOverlap is the most attempts whose [claimed, finished) intervals
// hold one instant; a running attempt (finished 0) stays open.
func peakOverlap(as []attemptRow) int {
	type ev struct {
		at    int64
		delta int
	}
	evs := make([]ev, 0, 2*len(as))
	for _, a := range as {
		evs = append(evs, ev{a.claimedAt, +1})
		if a.finishedAt > 0 {
			evs = append(evs, ev{a.finishedAt, -1})
		}
	}
	// Ends before starts at the same millisecond: [from, to) is half-open.
	slices.SortFunc(evs, func(a, b ev) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.delta, b.delta)
	})
	cur, best := 0, 0
	for _, e := range evs {
		cur += e.delta
		best = max(best, cur)
	}
	return best
}

// decide lists the invariants that broke.
func (rep *Report) decide() {
	v := func(format string, args ...any) {
		rep.Violations = append(rep.Violations, fmt.Sprintf(format, args...))
	}
	if rep.Lost > 0 {
		v("no acknowledged enqueue lost: %d acknowledged jobs are missing from the database", rep.Lost)
	}
	if rep.DuplicateSuccesses > 0 {
		v("no job succeeds twice: %d jobs have more than one succeeded attempt", rep.DuplicateSuccesses)
	}
	if rep.SuccessWithout200 > 0 {
		v("a success is a 200 from the provider: %d succeeded attempts were never answered 200", rep.SuccessWithout200)
	}
	for _, e := range rep.Endpoints {
		if e.PeakAtProvider > e.MaxConcurrent {
			v("maxConcurrent holds at the provider: endpoint %s had %d calls at once (maxConcurrent %d)", e.Name, e.PeakAtProvider, e.MaxConcurrent)
		}
		if int64(e.PeakInDatabase) > e.MaxConcurrent {
			v("maxConcurrent holds in the database: endpoint %s had %d attempts running at once by their claim and finish times (maxConcurrent %d)", e.Name, e.PeakInDatabase, e.MaxConcurrent)
		}
		if e.RateLimit > 0 && int64(e.CallsInWindow) > e.RateLimit {
			v("the rate limit holds at the provider: endpoint %s received %d calls within %s (rateLimitPerMinute %d, less %s for delivery), the last %s into the run",
				e.Name, e.CallsInWindow, time.Minute-DeliveryAllowance, e.RateLimit, DeliveryAllowance, fmtDur(e.CallsAt))
		}
		if e.RateLimit > 0 && int64(e.ClaimsIn60s) > e.RateLimit {
			v("the rate limit holds in the database: endpoint %s had %d claims within 60 s (rateLimitPerMinute %d)", e.Name, e.ClaimsIn60s, e.RateLimit)
		}
	}
	if k := rep.Keys; k != nil {
		if k.PeakAtProvider > k.KeyMaxConcurrent {
			v("keyMaxConcurrent holds at the provider: key %s of endpoint %s had %d calls at once (keyMaxConcurrent %d)", k.PeakKey, mainEndpoint, k.PeakAtProvider, k.KeyMaxConcurrent)
		}
		if int64(k.PeakInDatabase) > k.KeyMaxConcurrent {
			v("keyMaxConcurrent holds in the database: a key of endpoint %s had %d attempts running at once by their claim and finish times (keyMaxConcurrent %d)", mainEndpoint, k.PeakInDatabase, k.KeyMaxConcurrent)
		}
		if k.WrongKey > 0 {
			v("every job carries its flow key: %d calls came from jobs claimed with another key than they were enqueued with", k.WrongKey)
		}
	}
	if n := rep.Unfinished + rep.States["cancelled"]; n > 0 {
		v("every job ends succeeded, failed or exhausted: %d do not (%s)", n, fmtStates(rep.States))
	}
	if len(rep.Unexpected) > 0 {
		v("no process exits by itself: %s", strings.Join(rep.Unexpected, "; "))
	}
}

// Print writes the figures and the verdict.
func (rep *Report) Print(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	rep.printFaults(p)
	p("")
	rep.printJobs(p)
	p("")
	rep.printEndpoints(p)
	p("")
	rep.printVerdict(p)
}

// printFaults writes the setup of the run and the faults it made.
func (rep *Report) printFaults(p func(format string, args ...any)) {
	skew := "every node on the machine's clock"
	if rep.Skew != 0 {
		skew = fmt.Sprintf("node %d's clock %s", rep.Nodes, fmtOffset(rep.Skew))
	}
	p("Chaos run: %d nodes on one PostgreSQL (%s), %d worker processes × %d handlers, seed %d.", rep.Nodes, skew, rep.Workers, rep.Concurrency, rep.Seed)
	p("")
	p("Faults (%s): %s with SIGKILL, each restarted (per node %v); %s; %s with SIGKILL (%d in the middle of a provider call), leaving %s behind (%d expired leases in all).",
		fmtDur(rep.FaultTime), plural(sum(rep.NodeKills), "node kill"), rep.NodeKills, plural(rep.PGRestarts, "PostgreSQL restart"),
		plural(rep.WorkerCrashes, "worker crash"), rep.CrashesMidCall, plural(rep.LeasesAtCrash, "lease"), rep.LeasesLost)
	for _, e := range rep.FaultErrors {
		p("  fault not made: %s", e)
	}
}

// printJobs writes what became of the jobs: enqueues, final states (by
// endpoint and class too), attempts and provider calls.
func (rep *Report) printJobs(p func(format string, args ...any)) {
	p("Jobs: %d enqueued, %d acknowledged, %d acknowledged but lost, %d never acknowledged; %d enqueue batches sent again after an error.",
		rep.Jobs, rep.Acknowledged, rep.Lost, rep.Unacknowledged, rep.EnqueueRetries)
	p("Final states: %s.", fmtStates(rep.States))
	var classes []string
	for k := range rep.ByClass {
		classes = append(classes, k)
	}
	slices.Sort(classes)
	for _, k := range classes {
		p("  %-20s %s", k+":", fmtStates(rep.ByClass[k]))
	}
	p("Attempts: %d, of which %d ended by an expired lease; provider calls: %d, %d cut off by a crash; %d jobs answered 200 more than once (at-least-once delivery; the idempotency key deduplicates).",
		rep.Attempts, rep.TimedOut, rep.Calls, rep.CallsCut, rep.DeliveredTwice)
	p("Duplicate successes: %d. Successes without a 200 from the provider: %d.", rep.DuplicateSuccesses, rep.SuccessWithout200)
}

// printEndpoints writes the table of each endpoint's limits and what the
// provider and the database saw of them.
func (rep *Report) printEndpoints(p func(format string, args ...any)) {
	p("| Endpoint | Jobs | maxConcurrent | Most calls at once (provider) | Most running (database) | rateLimitPerMinute | Most calls in %d s (in 60 s) (provider) | Most claims in 60 s (database) | Claim to call |", int((time.Minute-DeliveryAllowance)/time.Second))
	p("|---|---|---|---|---|---|---|---|---|")
	for _, e := range rep.Endpoints {
		rl, calls, claims := "none", "—", "—"
		if e.RateLimit > 0 {
			rl, calls, claims = fmt.Sprint(e.RateLimit), fmt.Sprintf("%d (%d)", e.CallsInWindow, e.CallsIn60s), fmt.Sprint(e.ClaimsIn60s)
		}
		p("| %s | %d | %d | %d | %d | %s | %s | %s | %s–%s |", e.Name, e.Jobs, e.MaxConcurrent, e.PeakAtProvider, e.PeakInDatabase, rl, calls, claims, e.DelayMin, e.DelayMax)
	}
	if k := rep.Keys; k != nil {
		p("")
		p("Flow keys: the %s jobs over %d keys, keyMaxConcurrent %d: most calls of one key at once %d at the provider (key %s; %d keys reached the limit), most attempts of one key running %d in the database; %d calls named another key than their job's.",
			mainEndpoint, k.Keys, k.KeyMaxConcurrent, k.PeakAtProvider, k.PeakKey, k.AtLimit, k.PeakInDatabase, k.WrongKey)
	}
}

// printVerdict writes the times, the invariants that broke (or that all
// held) and where the logs and schema of a failed run were kept.
func (rep *Report) printVerdict(p func(format string, args ...any)) {
	p("Time: %s of faults, then %s until every job finished; %.0f jobs/s from the first enqueue to the last finish (%s; the producer spread the enqueues over %s).",
		fmtDur(rep.FaultTime), fmtDur(rep.DrainTime), rep.Throughput, fmtDur(rep.Busy), fmtDur(rep.EnqueueSpan))
	if rep.OK() {
		p("Invariants: all held.")
	} else {
		p("Invariants BROKEN:")
		for _, v := range rep.Violations {
			p("  - %s", v)
		}
	}
	if rep.Dir != "" {
		p("Logs kept in %s.", rep.Dir)
	}
	if rep.Schema != "" {
		p("Schema %s kept for inspection.", rep.Schema)
	}
}
