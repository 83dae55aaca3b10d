package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

// claimRec is what a worker saw of one attempt: the lease it held and when
// its handler ran (wall clock, on this machine).
type claimRec struct {
	job, attempt int64
	lease, node  string
	start, end   time.Time
}

type recorder struct {
	mu   sync.Mutex
	recs []claimRec
}

func (r *recorder) add(c claimRec) {
	r.mu.Lock()
	r.recs = append(r.recs, c)
	r.mu.Unlock()
}

// TestThreeNodes starts three `ratchet serve` processes on one schema at
// once and checks, across all of them: one bootstrap; long-poll wake-ups
// from one node to another; SDK workers on every node never holding one job
// twice at once; maxConcurrent and rateLimitPerMinute never exceeded
// cluster wide (from the attempts table); every job finished; and a circuit
// opened through one node refusing claims on all, then half-opening and
// closing as every node sees it.
func TestThreeNodes(t *testing.T) {
	dbURL := pgtest.URL(t)
	nodes := startNodes(t, dbURL, 3)
	// The subtests share one context; the load alone may take minutes on
	// a loaded machine.
	ctx := testCtx(t, 10*time.Minute)
	owners := make([]*client.Client, len(nodes))
	for i, n := range nodes {
		owners[i] = client.New(n.URL, ownerKey)
		if _, err := owners[i].Me(ctx); err != nil {
			t.Fatalf("node %d does not know the bootstrap key: %v", i, err)
		}
	}
	if n := query(t, dbURL, `SELECT count(*) FROM projects`)[0][0]; n != 1 {
		t.Fatalf("three nodes started together made %d projects, want 1", n)
	}
	a, b, c := owners[0], owners[1], owners[2]

	t.Run("wakeup across nodes", func(t *testing.T) { wakeupAcrossNodes(t, ctx, a, b) })
	t.Run("load", func(t *testing.T) { loadOnAllNodes(t, ctx, dbURL, nodes, owners) })
	t.Run("circuit", func(t *testing.T) { circuitOnAllNodes(t, ctx, a, b, c) })
}

// wakeupAcrossNodes: a worker long-polls node B with a 20 s wait while
// nothing is due; a job enqueued through node A reaches it well before the
// wait ends. Node B has no timer that would fire (no job of the tool
// exists) and nothing happens on node B itself, so only A's NOTIFY can
// wake it.
func wakeupAcrossNodes(t *testing.T, ctx context.Context, a, b *client.Client) {
	if _, err := a.CreateEndpoint(ctx, "ping", client.EndpointPolicy{EndpointSettings: wire.EndpointSettings{MaxConcurrent: 10}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PublishTool(ctx, client.ToolSpec{Name: "ping", Version: "1", Endpoint: "ping"}); err != nil {
		t.Fatal(err)
	}
	const wait = 20 * time.Second
	type result struct {
		jobs []client.ClaimedJob
		err  error
		at   time.Time
	}
	got := make(chan result, 1)
	go func() {
		jobs, err := b.Claim(ctx, client.ClaimRequest{WorkerID: "poller-on-b", Tools: []string{"ping@1"}, Max: 1, WaitMs: wait.Milliseconds()})
		got <- result{jobs, err, time.Now()}
	}()
	// Give the long poll time to reach its wait on node B. Were it slower,
	// the claim would find the job at once and the check below still holds.
	time.Sleep(500 * time.Millisecond)
	enqueued := time.Now()
	j, _, err := a.Enqueue(ctx, client.EnqueueRequest{Tool: "ping@1"})
	if err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || len(r.jobs) != 1 || r.jobs[0].ID != j.ID {
		t.Fatalf("long poll on node B: %v %+v", r.err, r.jobs)
	}
	took := r.at.Sub(enqueued)
	t.Logf("a job enqueued on node A reached a long poll on node B after %s (wait %s)", took.Round(time.Millisecond), wait)
	// Not a speed assertion: anything short of the wait proves the wake-up
	// came from node A; a timer on node B would fire only at 20 s.
	if took > wait/2 {
		t.Fatalf("the long poll on node B returned %s after the enqueue on node A: it was not woken (LISTEN/NOTIFY)", took)
	}
	if _, err := b.ReportOne(ctx, client.Report{JobID: j.ID, LeaseToken: r.jobs[0].LeaseToken, Success: true}); err != nil {
		t.Fatal(err)
	}
}

// loadOnAllNodes runs an SDK worker on every node against two endpoints:
// "limited" (maxConcurrent 4, far below the 3×6 handler slots) and
// "metered" (rateLimitPerMinute 20 with 30 jobs, so the limit binds within
// the test).
func loadOnAllNodes(t *testing.T, ctx context.Context, dbURL string, nodes []*proctest.Server, owners []*client.Client) {
	const (
		maxConc   = 4
		limitJobs = 240
		rate      = 20
		meterJobs = 30
	)
	o := owners[0]
	if _, err := o.CreateEndpoint(ctx, "limited", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 5, InitialDelayMs: 1000, Multiplier: 1, MaxDelayMs: 1000, JitterPercent: 0}}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 20000, MaxConcurrent: maxConc, CircuitFailureThreshold: 1000}}); err != nil {
		t.Fatal(err)
	}
	rl := int64(rate)
	if _, err := o.CreateEndpoint(ctx, "metered", client.EndpointPolicy{EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 20000, MaxConcurrent: 100, RateLimitPerMinute: &rl}}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []client.ToolSpec{{Name: "limited", Version: "1", Endpoint: "limited"}, {Name: "metered", Version: "1", Endpoint: "metered"}} {
		if _, err := o.PublishTool(ctx, tool); err != nil {
			t.Fatal(err)
		}
	}
	// Enqueue through every node.
	for i := range limitJobs / 40 {
		reqs := make([]client.EnqueueRequest, 40)
		for k := range reqs {
			reqs[k] = client.EnqueueRequest{Tool: "limited@1", Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i*40+k))}
		}
		if _, err := owners[i%len(owners)].EnqueueBatch(ctx, reqs); err != nil {
			t.Fatal(err)
		}
	}
	reqs := make([]client.EnqueueRequest, meterJobs)
	for k := range reqs {
		reqs[k] = client.EnqueueRequest{Tool: "metered@1", IdempotencyKey: fmt.Sprintf("m%d", k)}
	}
	if _, err := owners[1].EnqueueBatch(ctx, reqs); err != nil {
		t.Fatal(err)
	}

	var rec recorder
	var errMu sync.Mutex
	var workerErrs []string
	wctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, n := range nodes {
		node := fmt.Sprintf("node%d", i)
		w := client.NewWorker(client.New(n.URL, ownerKey), client.WorkerOptions{ID: "worker-" + node, Concurrency: 6, Wait: 2 * time.Second,
			OnError: func(err error) {
				errMu.Lock()
				workerErrs = append(workerErrs, node+": "+err.Error())
				errMu.Unlock()
			}})
		handler := func(retryable bool) client.Handler {
			return func(ctx context.Context, j *client.ClaimedJob) error {
				start := time.Now()
				time.Sleep(time.Duration(2+rand.IntN(10)) * time.Millisecond) // the provider call
				rec.add(claimRec{job: j.ID, attempt: j.Attempt, lease: j.LeaseToken, node: node, start: start, end: time.Now()})
				if retryable && j.Attempt == 1 && j.ID%5 == 0 {
					return &client.ResponseError{Status: 503} // retried a second later, on whichever node
				}
				return nil
			}
		}
		w.Handle("limited@1", handler(true))
		w.Handle("metered@1", handler(false))
		wg.Add(1)
		go func() { defer wg.Done(); _ = w.Run(wctx) }()
	}
	stopped := false
	stopWorkers := func() {
		if !stopped {
			stopped = true
			stop()
			wg.Wait()
		}
	}
	defer stopWorkers()

	waitFor(t, 3*time.Minute, "the metered rate limit was used up", func() (bool, string) {
		m := jobStates(t, dbURL, "metered")
		return m["succeeded"] >= rate, "metered " + fmtStates(m)
	})
	// The remaining metered jobs stay held by the rate limit on every node,
	// while the window of the first claims lasts: a loaded machine may take
	// more than a minute over the limited jobs below, and then the next
	// window rightly lets the rest go (the window check at the end holds
	// either way).
	page, err := owners[0].ListJobs(ctx, client.JobFilter{Tool: "metered", States: []wire.JobState{wire.JobScheduled}, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if first := attempts(t, dbURL, "metered")[0].claimedAt; time.Since(time.UnixMilli(first)) > 45*time.Second {
		t.Logf("the metered claims began %s ago: not checking the held jobs", time.Since(time.UnixMilli(first)).Round(time.Second))
		page.Jobs = nil
	} else if len(page.Jobs) != meterJobs-rate {
		t.Errorf("%d metered jobs still scheduled, want %d", len(page.Jobs), meterJobs-rate)
	}
	for i, o := range owners {
		for _, j := range page.Jobs[:min(3, len(page.Jobs))] {
			got, err := o.GetJob(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.HeldBy == nil || got.HeldBy.Gate != "rate_limit" {
				t.Errorf("node %d: metered job %d is held by %+v, want the rate_limit gate", i, j.ID, got.HeldBy)
			}
		}
	}
	waitFor(t, 3*time.Minute, "every limited job succeeded", func() (bool, string) {
		l := jobStates(t, dbURL, "limited")
		return l["succeeded"] == limitJobs, "limited " + fmtStates(l)
	})
	stopWorkers()
	if n := metricsStatus(t, nodes, "500"); n > 0 {
		t.Errorf("the nodes answered %v requests with 500", n)
	}
	for _, e := range workerErrs {
		t.Errorf("worker error: %s", e)
	}

	// No job was held by two workers at once: a job's handler runs never
	// overlap, and every attempt had a lease of its own.
	byJob := map[int64][]claimRec{}
	leases := map[string]bool{}
	for _, r := range rec.recs {
		byJob[r.job] = append(byJob[r.job], r)
		k := fmt.Sprintf("%d/%s", r.job, r.lease)
		if leases[k] {
			t.Errorf("job %d: lease %s handed out twice", r.job, r.lease)
		}
		leases[k] = true
	}
	for id, rs := range byJob {
		sort.Slice(rs, func(i, j int) bool { return rs[i].start.Before(rs[j].start) })
		for i := 1; i < len(rs); i++ {
			if rs[i].start.Before(rs[i-1].end) {
				t.Errorf("job %d ran on %s (attempt %d) while %s still ran attempt %d", id, rs[i].node, rs[i].attempt, rs[i-1].node, rs[i-1].attempt)
			}
			if rs[i].attempt != rs[i-1].attempt+1 {
				t.Errorf("job %d: attempt %d followed attempt %d", id, rs[i].attempt, rs[i-1].attempt)
			}
		}
	}
	perNode := map[string]int{}
	for _, r := range rec.recs {
		perNode[r.node]++
	}
	if len(perNode) != len(nodes) {
		t.Errorf("handler runs per node %v: every node's worker should have claimed", perNode)
	}

	// The attempts table agrees, cluster wide: each attempt's [claimed,
	// finished) interval; no more than maxConcurrent open at any instant, no
	// more than rateLimitPerMinute claims in any 60 s window.
	la := attempts(t, dbURL, "limited")
	if peak, at := maxOverlap(la); peak > maxConc {
		t.Errorf("%d limited attempts were running at %d (maxConcurrent %d)", peak, at, maxConc)
		for _, a := range la {
			if a.claimedAt <= at && (a.finishedAt == 0 || a.finishedAt > at) {
				t.Logf("  job %d attempt %d claimed %d finished %d by %s lease %s", a.jobID, a.number, a.claimedAt, a.finishedAt, a.worker, a.lease[:8])
			}
		}
	} else {
		t.Logf("limited: %d attempts on %d jobs, peak %d running (maxConcurrent %d), handler runs per node %v", len(la), limitJobs, peak, maxConc, perNode)
	}
	ma := attempts(t, dbURL, "metered")
	claims := make([]int64, len(ma))
	for i, a := range ma {
		claims[i] = a.claimedAt
	}
	if n := maxInWindow(claims, 60_000); n > rate {
		t.Errorf("%d metered claims within 60 s (rateLimitPerMinute %d)", n, rate)
	}
	if len(ma) < rate {
		t.Errorf("%d metered attempts, want at least the rate limit %d", len(ma), rate)
	}
	// Every attempt the workers ran is in the table with the same lease.
	inTable := map[string]bool{}
	for _, a := range append(la, ma...) {
		inTable[fmt.Sprintf("%d/%d/%s", a.jobID, a.number, a.lease)] = true
		if a.finishedAt == 0 {
			t.Errorf("job %d attempt %d never finished", a.jobID, a.number)
		}
	}
	for _, r := range rec.recs {
		if !inTable[fmt.Sprintf("%d/%d/%s", r.job, r.attempt, r.lease)] {
			t.Errorf("job %d attempt %d with lease %s is not in the attempts table", r.job, r.attempt, r.lease)
		}
	}
	if len(rec.recs) != len(la)+len(ma) {
		t.Errorf("workers ran %d attempts, the table holds %d", len(rec.recs), len(la)+len(ma))
	}
}

// metricsStatus counts the API requests every node answered with a status.
func metricsStatus(t *testing.T, nodes []*proctest.Server, code string) float64 {
	var n float64
	for _, node := range nodes {
		n += metric(t, node, "ratchet_http_request_duration_seconds_count", `code="`+code+`"`)
	}
	return n
}

// circuitOnAllNodes opens the circuit of an endpoint through node A, checks
// that claims through every node are refused, lets the half-open probe go
// to node B, sees it from all nodes, closes it with a success reported
// through node C, and sees every node claim again.
func circuitOnAllNodes(t *testing.T, ctx context.Context, a, b, c *client.Client) {
	const openMs = 4000
	// Retries wait 6 s: with 1 s, a loaded machine took longer than that
	// between the first failure and the second claim, which then handed
	// out the first job's retry beside the second job.
	if _, err := a.CreateEndpoint(ctx, "fragile", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 10, InitialDelayMs: 6000, Multiplier: 1, MaxDelayMs: 6000, JitterPercent: 0}}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 20000, MaxConcurrent: 10, CircuitFailureThreshold: 2, CircuitOpenMs: openMs}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PublishTool(ctx, client.ToolSpec{Name: "fragile", Version: "1", Endpoint: "fragile"}); err != nil {
		t.Fatal(err)
	}
	nodes := map[string]*client.Client{"A": a, "B": b, "C": c}
	names := []string{"A", "B", "C"}
	claim := func(node string, wait time.Duration) []client.ClaimedJob {
		t.Helper()
		js, err := nodes[node].Claim(ctx, client.ClaimRequest{WorkerID: "w-" + node, Tools: []string{"fragile@1"}, Max: 5, WaitMs: wait.Milliseconds()})
		if err != nil {
			t.Fatalf("claim through node %s: %v", node, err)
		}
		return js
	}
	circuitOn := func(node string) client.Endpoint {
		t.Helper()
		ep, err := nodes[node].GetEndpoint(ctx, "fragile")
		if err != nil {
			t.Fatal(err)
		}
		return *ep
	}
	// Two provider failures through node A open the circuit.
	for k := range 2 {
		j, _, err := a.Enqueue(ctx, client.EnqueueRequest{Tool: "fragile@1", IdempotencyKey: fmt.Sprintf("f%d", k)})
		if err != nil {
			t.Fatal(err)
		}
		js := claim("A", 5*time.Second)
		if len(js) != 1 || js[0].ID != j.ID {
			t.Fatalf("claim %d through node A: %+v", k, js)
		}
		if _, err := a.ReportOne(ctx, client.Report{JobID: j.ID, LeaseToken: js[0].LeaseToken, HTTPStatus: 503}); err != nil {
			t.Fatal(err)
		}
	}
	opened := time.Now()
	// A job due now: with the circuit open no node may hand it out.
	held, _, err := b.Enqueue(ctx, client.EnqueueRequest{Tool: "fragile@1", IdempotencyKey: "f-held"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if ep := circuitOn(n); ep.Circuit.State != "open" {
			t.Errorf("node %s sees the circuit %q after two failures through node A, want open", n, ep.Circuit.State)
		}
	}
	for _, n := range names {
		js := claim(n, 0)
		j, err := nodes[n].GetJob(ctx, held.ID)
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(opened) >= openMs*time.Millisecond {
			// The machine was too slow to look within the open period; the
			// probe checks below still run.
			t.Logf("node %s: checked after the circuit's open period; skipping the refusal check", n)
			continue
		}
		if len(js) != 0 {
			t.Errorf("node %s handed out %d jobs while the circuit was open", n, len(js))
		}
		if j.HeldBy == nil || j.HeldBy.Gate != "circuit" {
			t.Errorf("node %s: the due job is held by %+v, want the circuit gate", n, j.HeldBy)
		}
	}
	// After circuitOpenMs the next claim is the single half-open probe;
	// node B's long poll wakes for it by the gate's own timer.
	probe := claim("B", 10*time.Second)
	for len(probe) == 0 && time.Since(opened) < 30*time.Second {
		probe = claim("B", 5*time.Second)
	}
	if len(probe) != 1 {
		t.Fatalf("node B got %d jobs as the half-open probe, want 1", len(probe))
	}
	for _, n := range names {
		ep := circuitOn(n)
		if ep.Circuit.State != "half_open" || ep.Circuit.ProbeJobID != probe[0].ID {
			t.Errorf("node %s sees the circuit %q with probe %d, want half_open with probe %d", n, ep.Circuit.State, ep.Circuit.ProbeJobID, probe[0].ID)
		}
	}
	for _, n := range []string{"A", "C"} {
		if js := claim(n, 0); len(js) != 0 {
			t.Errorf("node %s handed out %d jobs while the probe ran", n, len(js))
		}
	}
	// The probe succeeds, reported through node C: closed everywhere.
	if _, err := c.ReportOne(ctx, client.Report{JobID: probe[0].ID, LeaseToken: probe[0].LeaseToken, Success: true, HTTPStatus: 200}); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if ep := circuitOn(n); ep.Circuit.State != "closed" {
			t.Errorf("node %s sees the circuit %q after the probe succeeded, want closed", n, ep.Circuit.State)
		}
	}
	// And every node hands out work again: the other two jobs (due by now),
	// one at a time through each node.
	left := 2
	for _, n := range names {
		if left == 0 {
			break
		}
		js, err := nodes[n].Claim(ctx, client.ClaimRequest{WorkerID: "w-" + n, Tools: []string{"fragile@1"}, Max: 1, WaitMs: 5000})
		if err != nil || len(js) != 1 {
			t.Fatalf("node %s after the circuit closed: %v %+v", n, err, js)
		}
		if _, err := nodes[n].ReportOne(ctx, client.Report{JobID: js[0].ID, LeaseToken: js[0].LeaseToken, Success: true}); err != nil {
			t.Fatal(err)
		}
		left--
	}
	page, err := a.ListJobs(ctx, client.JobFilter{Tool: "fragile"})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range page.Jobs {
		if j.State != "succeeded" {
			t.Errorf("fragile job %d is %s", j.ID, j.State)
		}
	}
	if len(page.Jobs) != 3 {
		t.Errorf("%d fragile jobs, want 3", len(page.Jobs))
	}
}
