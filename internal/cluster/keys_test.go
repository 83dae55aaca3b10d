package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

// keyCall is one request of a flow key at the provider.
type keyCall struct {
	job, attempt int64
	n            int       // the job's place among its key's jobs, from the path
	at, end      time.Time // arrival and answer; end zero: the caller went away first
	status       int       // the answer; 0 when none was given
}

// keyLog is what the provider saw of one flow key.
type keyLog struct {
	inFlight, peak int
	calls          []keyCall // in arrival order
}

// keyProvider is the provider of TestKeyLimitsAcrossNodes: a
// countingProvider whose requests name their flow key and the job's place
// among its key's jobs in the path (/{endpoint}/{key}/{n}, the delivery
// URL template filled from the payload). Per key it counts the requests
// in flight at once, and the most it ever saw, and keeps every request in
// arrival order. It answers after work, 200, or 503 when fail says so.
// A request counts as in flight from its arrival until its answer is
// decided, before the node can read it: the count never runs behind the
// node's.
type keyProvider struct {
	*countingProvider
	work time.Duration
	fail func(key string, n int, attempt int64) bool // nil: never

	mu   sync.Mutex
	keys map[string]*keyLog
}

func newKeyProvider(t *testing.T, work time.Duration, fail func(key string, n int, attempt int64) bool) *keyProvider {
	kp := &keyProvider{work: work, fail: fail, keys: map[string]*keyLog{}}
	kp.countingProvider = newProvider(t, nil, kp.answer)
	return kp
}

func (kp *keyProvider) answer(w http.ResponseWriter, r *http.Request, c *providerCall) {
	parts := strings.Split(strings.Trim(c.path, "/"), "/")
	n, err := strconv.Atoi(parts[len(parts)-1])
	if len(parts) != 3 || err != nil {
		http.Error(w, "want /{endpoint}/{key}/{n}", http.StatusNotFound)
		return
	}
	key := parts[1]
	kp.mu.Lock()
	l := kp.keys[key]
	if l == nil {
		l = &keyLog{}
		kp.keys[key] = l
	}
	l.inFlight++
	l.peak = max(l.peak, l.inFlight)
	l.calls = append(l.calls, keyCall{job: c.job, attempt: c.attempt, n: n, at: c.at})
	i := len(l.calls) - 1
	kp.mu.Unlock()
	status := http.StatusOK
	if kp.fail != nil && kp.fail(key, n, c.attempt) {
		status = http.StatusServiceUnavailable
	}
	var end time.Time
	tm := time.NewTimer(kp.work)
	select {
	case <-tm.C:
		end = time.Now()
	case <-r.Context().Done():
		tm.Stop()
		status = 0
	}
	kp.mu.Lock()
	l.inFlight--
	l.calls[i].end, l.calls[i].status = end, status
	kp.mu.Unlock()
	if status != 0 {
		c.end = end
		w.WriteHeader(status)
	}
}

// logs copies what the provider saw, by key.
func (kp *keyProvider) logs() map[string]keyLog {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	out := make(map[string]keyLog, len(kp.keys))
	for k, l := range kp.keys {
		out[k] = keyLog{inFlight: l.inFlight, peak: l.peak, calls: slices.Clone(l.calls)}
	}
	return out
}

// fresh lists the jobs whose requests arrived less than d ago and are
// still waiting for their answer.
func (kp *keyProvider) fresh(d time.Duration) map[int64]bool {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	out := map[int64]bool{}
	for _, l := range kp.keys {
		for _, c := range l.calls {
			if c.end.IsZero() && c.status == 0 && time.Since(c.at) < d {
				out[c.job] = true
			}
		}
	}
	return out
}

// total is the number of requests that arrived, of every key.
func (kp *keyProvider) total() int {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	n := 0
	for _, l := range kp.keys {
		n += len(l.calls)
	}
	return n
}

// keyedJob is a job the test enqueued: its id, flow key and place among
// its key's jobs.
type keyedJob struct {
	id  int64
	key string
	n   int
}

// keyedEndpoint creates endpoint name with the key limits lim (maxConcurrent
// 50, far above what the keys may use, so only their limits bind; the
// lease leaseMs) and its tool name@1, delivered to kp at
// /{name}/{key}/{n}. With fromPayload the tool takes the flow key from the
// payload (flowKeyFrom /key); otherwise each enqueue names it.
func keyedEndpoint(t *testing.T, ctx context.Context, o *client.Client, name string, lim client.KeyLimits, retry client.Policy, leaseMs int64, kp *keyProvider, fromPayload bool) {
	t.Helper()
	if _, err := o.CreateEndpoint(ctx, name, client.EndpointPolicy{Policy: retry, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: leaseMs, MaxConcurrent: 50, CircuitFailureThreshold: 1000, KeyLimits: lim}}); err != nil {
		t.Fatal(err)
	}
	spec := client.ToolSpec{Name: name, Version: "1", Endpoint: name, Delivery: &wire.DeliveryTarget{URL: kp.srv.URL + "/" + name + "/{key}/{n}"}}
	if fromPayload {
		spec.FlowKeyFrom = "/key"
	}
	if _, err := o.PublishTool(ctx, spec); err != nil {
		t.Fatal(err)
	}
}

// enqueueKeyed enqueues perKey jobs of each of keys for tool name@1, the
// keys interleaved (job n of every key before job n+1 of any), in batches
// of 10 through the nodes in turn, and returns them in enqueue order,
// which is their ids' order.
func enqueueKeyed(t *testing.T, ctx context.Context, owners []*client.Client, name string, keys []string, perKey int, fromPayload bool) []keyedJob {
	t.Helper()
	var plan []keyedJob
	for n := range perKey {
		for _, k := range keys {
			plan = append(plan, keyedJob{key: k, n: n})
		}
	}
	for b := 0; b*10 < len(plan); b++ {
		part := plan[b*10 : min(len(plan), (b+1)*10)]
		reqs := make([]client.EnqueueRequest, len(part))
		for i, j := range part {
			reqs[i] = client.EnqueueRequest{Tool: name + "@1", Payload: json.RawMessage(fmt.Sprintf(`{"key":%q,"n":%d}`, j.key, j.n)),
				IdempotencyKey: fmt.Sprintf("%s-%s-%d", name, j.key, j.n)}
			if !fromPayload {
				reqs[i].FlowKey = j.key
			}
		}
		items, err := owners[b%len(owners)].EnqueueBatch(ctx, reqs)
		if err != nil {
			t.Fatal(err)
		}
		for i, it := range items {
			part[i].id = it.ID
		}
	}
	if !slices.IsSortedFunc(plan, func(a, b keyedJob) int { return int(a.id - b.id) }) {
		t.Fatalf("the ids of jobs enqueued one batch after another are not ascending: %v", plan)
	}
	return plan
}

// waitSucceeded waits until all jobs of endpoint name succeeded.
func waitSucceeded(t *testing.T, dbURL, name string, jobs int, d time.Duration) {
	t.Helper()
	waitFor(t, d, "every "+name+" job succeeded", func() (bool, string) {
		s := jobStates(t, dbURL, name)
		return s["succeeded"] == int64(jobs), fmtStates(s)
	})
}

// checkKeyPeaks fails the test when a key had more than limit requests in
// flight at the provider at once, and when no key ever reached limit (the
// limit never bound: the check checked nothing). It returns the peaks.
func checkKeyPeaks(t *testing.T, logs map[string]keyLog, limit int) map[string]int {
	t.Helper()
	peaks, most := map[string]int{}, 0
	for k, l := range logs {
		peaks[k] = l.peak
		most = max(most, l.peak)
		if l.peak > limit {
			t.Errorf("key %s had %d requests in flight at the provider at once (limit %d, three nodes)", k, l.peak, limit)
		}
	}
	if most < limit {
		t.Errorf("no key had more than %d requests in flight at once: the limit of %d never bound", most, limit)
	}
	return peaks
}

// nodesUsed counts the workers (one per node) of the attempts, and fails
// the test when fewer than two nodes delivered.
func nodesUsed(t *testing.T, as []attemptRow) int {
	t.Helper()
	workers := map[string]bool{}
	for _, a := range as {
		workers[a.worker] = true
	}
	if len(workers) < 2 {
		t.Errorf("only %d node delivered: the limits were not exercised across nodes", len(workers))
	}
	return len(workers)
}

// TestKeyLimitsAcrossNodes: three `ratchet serve` nodes on one PostgreSQL
// database deliver the jobs of keyed endpoints over HTTP to one local
// provider, which counts per flow key (taken from the request's path):
//
//   - keyMaxConcurrent 2, 5 keys × 30 jobs, answers after 150 ms: never
//     more than 2 requests of a key in flight at once (and 2 reached),
//     at least two nodes delivered, every job succeeded at its one and
//     only attempt, seen once at the provider;
//   - keyRateLimitPerMinute 4, 2 keys × 6 jobs: 4 requests of each key
//     arrive at once, the other 2 are held by the key_rate gate on every
//     node, and arrive a minute later; no 60 s window of arrivals holds
//     more than 4 of one key, nor any 61 s of claims in the database
//     (engine.KeyRateWindowMs: with a window of exactly 60 s, the fifth
//     request of a key arrived 59.98 s after the first);
//   - keyOrdered, 4 keys × 15 jobs (the key from the payload), two jobs
//     answered 503 at their first attempt: per key the provider sees the
//     jobs in enqueue order, never two at once, each failing job's retry
//     before its key's next job, and other keys' requests while it waits;
//   - kill -9 (last, as it leaves two nodes): keyMaxConcurrent 2 with
//     requests held 500 ms, one node killed with SIGKILL while the
//     provider holds a request it sent (one that arrived under 250 ms
//     before: a node picked by its running jobs alone had, in one run,
//     its requests all answered and its report not yet made): the limit still holds at the provider, and
//     a job ran again only after its earlier attempt's lease (8 s) expired
//     (timed_out, by the killed node).
func TestKeyLimitsAcrossNodes(t *testing.T) {
	dbURL := pgtest.URL(t)
	nodes := startDeliveryNodes(t, dbURL, 3)
	ctx := testCtx(t, 10*time.Minute)
	owners := make([]*client.Client, len(nodes))
	for i, n := range nodes {
		owners[i] = client.New(n.URL, ownerKey)
	}
	retry := client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 5, InitialDelayMs: 2000, Multiplier: 1, MaxDelayMs: 2000, JitterPercent: 0}}
	t.Run("keyMaxConcurrent", func(t *testing.T) { keyConcurrency(t, ctx, dbURL, owners, retry) })
	t.Run("keyRateLimitPerMinute", func(t *testing.T) { keyRate(t, ctx, dbURL, owners, retry) })
	t.Run("keyOrdered", func(t *testing.T) { keyOrdered(t, ctx, dbURL, owners, retry) })
	t.Run("kill -9", func(t *testing.T) { keyKill(t, ctx, dbURL, nodes, owners, retry) })
}

func keyConcurrency(t *testing.T, ctx context.Context, dbURL string, owners []*client.Client, retry client.Policy) {
	const limit, perKey = 2, 30
	keys := []string{"c1", "c2", "c3", "c4", "c5"}
	kp := newKeyProvider(t, 150*time.Millisecond, nil)
	lim := int64(limit)
	keyedEndpoint(t, ctx, owners[0], "percap", client.KeyLimits{KeyMaxConcurrent: &lim}, retry, 10000, kp, false)
	start := time.Now()
	jobs := enqueueKeyed(t, ctx, owners, "percap", keys, perKey, false)
	waitSucceeded(t, dbURL, "percap", len(jobs), 3*time.Minute)
	took := time.Since(start)
	logs := kp.logs()
	peaks := checkKeyPeaks(t, logs, limit)
	seen := map[int64]int{}
	for _, l := range logs {
		for _, c := range l.calls {
			seen[c.job]++
		}
	}
	for _, j := range jobs {
		if seen[j.id] != 1 {
			t.Errorf("job %d (key %s) reached the provider %d times, want once", j.id, j.key, seen[j.id])
		}
	}
	as := attempts(t, dbURL, "percap")
	for _, a := range as {
		if a.number != 1 || a.outcome != "succeeded" {
			t.Errorf("job %d attempt %d: %q, want one succeeded attempt", a.jobID, a.number, a.outcome)
		}
	}
	if len(as) != len(jobs) {
		t.Errorf("%d attempts for %d jobs", len(as), len(jobs))
	}
	t.Logf("keyMaxConcurrent %d: %d jobs over %d keys delivered by %d nodes in %s; peak in flight per key at the provider %v",
		limit, len(jobs), len(keys), nodesUsed(t, as), took.Round(time.Millisecond), peaks)
}

// keyRate: see TestKeyLimitsAcrossNodes. It takes a little over a minute:
// the held jobs wait for the real window to pass.
func keyRate(t *testing.T, ctx context.Context, dbURL string, owners []*client.Client, retry client.Policy) {
	const limit, perKey = 4, 6
	keys := []string{"r1", "r2"}
	kp := newKeyProvider(t, 50*time.Millisecond, nil)
	lim := int64(limit)
	keyedEndpoint(t, ctx, owners[0], "perrate", client.KeyLimits{KeyRateLimitPerMinute: &lim}, retry, 10000, kp, false)
	start := time.Now()
	jobs := enqueueKeyed(t, ctx, owners, "perrate", keys, perKey, false)
	first := limit * len(keys)
	waitSucceeded(t, dbURL, "perrate", first, time.Minute)
	// Every node's dispatcher polls at least every 5 s: give them time to
	// (wrongly) claim more.
	time.Sleep(6 * time.Second)
	if n := kp.total(); n != first {
		t.Errorf("%d requests reached the provider in the first minute, want exactly %d (%d keys, keyRateLimitPerMinute %d)", n, first, len(keys), limit)
	}
	for i, o := range owners {
		page, err := o.ListJobs(ctx, client.JobFilter{Tool: "perrate", States: []wire.JobState{wire.JobScheduled}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Jobs) != len(jobs)-first {
			t.Errorf("node %d lists %d jobs scheduled, want %d", i, len(page.Jobs), len(jobs)-first)
		}
		for _, j := range page.Jobs {
			got, err := o.GetJob(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.HeldBy == nil || got.HeldBy.Gate != wire.GateKeyRate {
				t.Errorf("node %d says job %d (key %s) is held by %+v, want the key_rate gate", i, j.ID, got.FlowKey, got.HeldBy)
			}
		}
	}
	if since := time.Since(start); since > 55*time.Second {
		t.Fatalf("the first minute's checks ended %s after the enqueue: the machine is too slow to tell the window's end", since.Round(time.Millisecond))
	}
	waitSucceeded(t, dbURL, "perrate", len(jobs), 3*time.Minute)
	checkRateWindows(t, dbURL, kp.logs(), jobs, limit)
	t.Logf("keyRateLimitPerMinute %d: %d jobs over %d keys in %s", limit, len(jobs), len(keys), time.Since(start).Round(time.Millisecond))
}

// checkRateWindows holds every key to limit requests in any 60 s at the
// provider (by arrival, to the microsecond, nothing allowed for delivery)
// and to limit claims in any 61 s in the database (the minute and the
// second engine.KeyRateWindowMs keeps for delivery); each key must reach
// the limit in some window, and every job must reach the provider once.
func checkRateWindows(t *testing.T, dbURL string, logs map[string]keyLog, jobs []keyedJob, limit int) {
	t.Helper()
	keyOf := map[int64]string{}
	for _, j := range jobs {
		keyOf[j.id] = j.key
	}
	claims := map[string][]int64{}
	for _, a := range attempts(t, dbURL, "perrate") {
		claims[keyOf[a.jobID]] = append(claims[keyOf[a.jobID]], a.claimedAt)
	}
	for k, l := range logs {
		var at []int64
		for _, c := range l.calls {
			at = append(at, c.at.UnixMicro())
		}
		slices.Sort(at)
		atProvider, inDB := maxInWindow(at, 60_000_000), maxInWindow(claims[k], engine.KeyRateWindowMs)
		// The closest the (limit+1)th request came to the one limit before it.
		gap := time.Duration(1<<62 - 1)
		for i := limit; i < len(at); i++ {
			gap = min(gap, time.Duration(at[i]-at[i-limit])*time.Microsecond)
		}
		t.Logf("key %s: %d requests; at most %d in any 60 s at the provider, %d claims in any 61 s in the database; request i+%d came %s after request i at the closest",
			k, len(at), atProvider, inDB, limit, gap)
		if atProvider != limit || inDB != limit {
			t.Errorf("key %s: %d requests in a 60 s window at the provider, %d claims in the database; want exactly %d (keyRateLimitPerMinute)", k, atProvider, inDB, limit)
		}
		if len(at) != len(claims[k]) {
			t.Errorf("key %s: %d requests at the provider, %d attempts in the database", k, len(at), len(claims[k]))
		}
	}
	if len(logs) != 2 {
		t.Errorf("the provider saw %d keys, want 2", len(logs))
	}
}

// keyOrdered: see TestKeyLimitsAcrossNodes.
func keyOrdered(t *testing.T, ctx context.Context, dbURL string, owners []*client.Client, retry client.Policy) {
	const perKey = 15
	keys := []string{"o1", "o2", "o3", "o4"}
	failing := map[string]int{"o1": 1, "o2": 4} // the job of each key (by place) answered 503 once
	kp := newKeyProvider(t, 150*time.Millisecond, func(key string, n int, attempt int64) bool {
		f, ok := failing[key]
		return ok && f == n && attempt == 1
	})
	keyedEndpoint(t, ctx, owners[0], "inorder", client.KeyLimits{KeyOrdered: true}, retry, 10000, kp, true)
	start := time.Now()
	jobs := enqueueKeyed(t, ctx, owners, "inorder", keys, perKey, true)
	waitSucceeded(t, dbURL, "inorder", len(jobs), 3*time.Minute)
	logs := kp.logs()
	checkKeyPeaks(t, logs, 1)
	byKey := map[string][]int64{}
	for _, j := range jobs {
		byKey[j.key] = append(byKey[j.key], j.id)
	}
	for _, k := range keys {
		var seq []int64 // job ids as they arrived, a retry folded into its first attempt
		for _, c := range logs[k].calls {
			if len(seq) == 0 || seq[len(seq)-1] != c.job {
				seq = append(seq, c.job)
			}
		}
		if !slices.Equal(seq, byKey[k]) {
			t.Errorf("key %s: the provider saw jobs %v, want them once each (a retry right after its first attempt) in enqueue order %v", k, seq, byKey[k])
		}
		want := perKey
		if _, ok := failing[k]; ok {
			want++
		}
		if len(logs[k].calls) != want {
			t.Errorf("key %s: %d requests, want %d", k, len(logs[k].calls), want)
		}
	}
	for k, n := range failing {
		checkHeldBackAlone(t, logs, k, n)
	}
	as := attempts(t, dbURL, "inorder")
	t.Logf("keyOrdered: %d jobs over %d keys (2 failing once) delivered by %d nodes in %s", len(jobs), len(keys), nodesUsed(t, as), time.Since(start).Round(time.Millisecond))
}

// checkHeldBackAlone: the job at place n of key failed its first attempt
// (503) and succeeded its second; between the two no other job of its key
// reached the provider, and jobs of other keys did.
func checkHeldBackAlone(t *testing.T, logs map[string]keyLog, key string, n int) {
	t.Helper()
	var failed, retried *keyCall
	for i, c := range logs[key].calls {
		switch {
		case c.n == n && c.attempt == 1:
			failed = &logs[key].calls[i]
		case c.n == n && c.attempt == 2:
			retried = &logs[key].calls[i]
		}
	}
	if failed == nil || retried == nil || failed.status != http.StatusServiceUnavailable || retried.status != http.StatusOK {
		t.Errorf("key %s job %d: first attempt %+v, second %+v; want 503 then 200", key, n, failed, retried)
		return
	}
	own, others := 0, 0
	for k, l := range logs {
		for _, c := range l.calls {
			if c.at.After(failed.end) && c.at.Before(retried.at) {
				if k == key {
					own++
				} else {
					others++
				}
			}
		}
	}
	t.Logf("key %s: job %d failed, retried %s later; meanwhile %d requests of other keys, %d of its own",
		key, failed.job, retried.at.Sub(failed.end).Round(time.Millisecond), others, own)
	if own > 0 {
		t.Errorf("key %s: %d of its requests reached the provider while job %d waited for its retry", key, own, failed.job)
	}
	if others == 0 {
		t.Errorf("key %s: while job %d waited for its retry, no other key's request reached the provider: the failing job held back every key", key, failed.job)
	}
}

// keyKill: see TestKeyLimitsAcrossNodes. It kills one of nodes.
func keyKill(t *testing.T, ctx context.Context, dbURL string, nodes []*proctest.Server, owners []*client.Client, retry client.Policy) {
	const limit, perKey, leaseMs = 2, 20, 8000
	keys := []string{"x1", "x2", "x3", "x4"}
	// The provider holds each request 3 s, and the victim is a node whose
	// request arrived within the last second: a loaded machine took over
	// half a second from choosing the node to killing it, and with
	// requests held 500 ms the kill found none in flight.
	kp := newKeyProvider(t, 3*time.Second, nil)
	lim := int64(limit)
	keyedEndpoint(t, ctx, owners[0], "killed", client.KeyLimits{KeyMaxConcurrent: &lim}, retry, leaseMs, kp, false)
	start := time.Now()
	jobs := enqueueKeyed(t, ctx, owners, "killed", keys, perKey, false)
	waitFor(t, time.Minute, "20 requests at the provider", func() (bool, string) {
		return kp.total() >= 20, fmt.Sprint(kp.total())
	})
	var victim, running int
	var worker string
	waitFor(t, time.Minute, "a node with a request just arrived at the provider", func() (bool, string) {
		victim, worker, running = nodeMidRequest(t, dbURL, nodes, "killed", kp.fresh(time.Second))
		return victim >= 0, fmt.Sprint(kp.total(), " requests")
	})
	nodes[victim].Kill()
	killed := time.Now()
	t.Logf("node %d (%s) killed with SIGKILL holding %d running jobs, %s after the enqueue", victim, worker, running, killed.Sub(start).Round(time.Millisecond))
	waitSucceeded(t, dbURL, "killed", len(jobs), 3*time.Minute)
	logs := kp.logs()
	peaks := checkKeyPeaks(t, logs, limit)
	calls, cut := map[[2]int64]int{}, 0
	for _, l := range logs {
		for _, c := range l.calls {
			calls[[2]int64{c.job, c.attempt}]++
			if c.status == 0 {
				cut++
			}
		}
	}
	if cut == 0 {
		t.Errorf("no request was in flight at the provider when node %d was killed", victim)
	}
	reruns := checkReruns(t, attempts(t, dbURL, "killed"), calls, worker, leaseMs)
	t.Logf("kill -9: %d jobs over %d keys in %s; %d requests cut by the kill, %d jobs ran again after their lease expired; peak in flight per key %v",
		len(jobs), len(keys), time.Since(start).Round(time.Millisecond), cut, reruns, peaks)
}

// nodeMidRequest finds a node running a job of endpoint name whose
// request is in fresh (it just reached the provider, which holds it for
// a while yet), by the worker ids of the database (each node's
// DeliveryWorkerID); -1 for none. It returns the node's
// worker id and its running jobs.
func nodeMidRequest(t *testing.T, dbURL string, nodes []*proctest.Server, name string, fresh map[int64]bool) (int, string, int) {
	t.Helper()
	running, holding := map[string]int{}, ""
	for _, a := range attempts(t, dbURL, name) {
		if a.outcome == "" {
			running[a.worker]++
			if fresh[a.jobID] {
				holding = a.worker
			}
		}
	}
	for i, nd := range nodes {
		if holding != "" && nd.DeliveryWorkerID(t) == holding {
			return i, holding, running[holding]
		}
	}
	return -1, "", 0
}

// checkReruns: every job's attempts end with one success, and every
// earlier attempt is the killed worker's, timed out (its lease expired:
// finished no sooner than leaseMs after its claim); the provider saw each
// attempt once (a timed-out one at most once: the node may have died
// between the claim and the request). It returns the jobs that ran more than once, and fails the
// test when none did (the kill cut no job's attempt).
func checkReruns(t *testing.T, as []attemptRow, calls map[[2]int64]int, killed string, leaseMs int64) int {
	t.Helper()
	byJob := map[int64][]attemptRow{}
	for _, a := range as {
		byJob[a.jobID] = append(byJob[a.jobID], a)
		if n := calls[[2]int64{a.jobID, a.number}]; n > 1 || n == 0 && a.outcome != "timed_out" {
			t.Errorf("job %d attempt %d reached the provider %d times, want once", a.jobID, a.number, calls[[2]int64{a.jobID, a.number}])
		}
	}
	reruns := 0
	for id, js := range byJob {
		slices.SortFunc(js, func(a, b attemptRow) int { return int(a.number - b.number) })
		last := js[len(js)-1]
		if last.outcome != "succeeded" {
			t.Errorf("job %d: last attempt %d %q", id, last.number, last.outcome)
		}
		if len(js) > 1 {
			reruns++
		}
		for _, a := range js[:len(js)-1] {
			if a.outcome != "timed_out" || a.worker != killed || a.finishedAt-a.claimedAt < leaseMs {
				t.Errorf("job %d ran again after attempt %d by %s, %q after %d ms: only an attempt of the killed node whose %d ms lease expired may be run again",
					id, a.number, a.worker, a.outcome, a.finishedAt-a.claimedAt, leaseMs)
			}
		}
	}
	if reruns == 0 {
		t.Errorf("no job ran again: the kill cut no attempt")
	}
	return reruns
}
