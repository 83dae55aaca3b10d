package cluster_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

// deliveryArgs are the flags of a node that delivers to a provider on
// loopback, which the address policy refuses otherwise.
func deliveryArgs(dbURL string) []string {
	return []string{"--database", dbURL, "--bootstrap-key", ownerKey, "--log-level", "warn", "--delivery-allow", "127.0.0.1/32"}
}

// startDeliveryNodes starts n nodes at once on dbURL, each delivering.
func startDeliveryNodes(t *testing.T, dbURL string, n int) []*proctest.Server {
	t.Helper()
	proctest.Binary(t)
	nodes := make([]*proctest.Server, n)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i] = proctest.Start(t, "", nil, deliveryArgs(dbURL)...)
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		if t.Failed() {
			for i, n := range nodes {
				if n != nil {
					t.Logf("node %d output:\n%s", i, n.Output.String())
				}
			}
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	return nodes
}

// providerCall is one request the provider received.
type providerCall struct {
	path, key, webhookID string
	job, attempt         int64
	at, end              time.Time // arrival and answer (zero end: never answered)
	gone                 time.Time // when the handler returned (answered, or the caller went away)
	signed               bool      // the webhook-signature verified
}

// countingProvider is the stand-in provider of these tests, on
// 127.0.0.1: it counts the requests in flight at once (and the most it
// ever saw), keeps every request, verifies Standard Webhooks signatures
// with the standard library when it knows the secret, and answers with
// answer (which may block).
type countingProvider struct {
	srv    *httptest.Server
	key    []byte // signing key bytes; nil: requests are not checked
	answer func(w http.ResponseWriter, r *http.Request, c *providerCall)

	mu          sync.Mutex
	inFlight    int
	maxInFlight int
	calls       []providerCall
	arrivals    []providerCall // every request, as it arrived
	arrived     chan providerCall
}

func newProvider(t *testing.T, key []byte, answer func(w http.ResponseWriter, r *http.Request, c *providerCall)) *countingProvider {
	p := &countingProvider{key: key, answer: answer, arrived: make(chan providerCall, 10000)}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
	})
	return p
}

func (p *countingProvider) serve(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, _ := io.ReadAll(r.Body)
	c := providerCall{path: r.URL.Path, key: r.Header.Get("Idempotency-Key"), webhookID: r.Header.Get("webhook-id"), at: at}
	c.job, _ = strconv.ParseInt(r.Header.Get("Ratchet-Job-Id"), 10, 64)
	c.attempt, _ = strconv.ParseInt(r.Header.Get("Ratchet-Attempt"), 10, 64)
	if p.key != nil {
		// Standard Webhooks: HMAC-SHA256 over "{id}.{timestamp}.{body}",
		// base64, after "v1,"; any of the space-separated signatures.
		m := hmac.New(sha256.New, p.key)
		m.Write([]byte(c.webhookID + "." + r.Header.Get("webhook-timestamp") + "."))
		m.Write(body)
		want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
		for _, s := range strings.Fields(r.Header.Get("webhook-signature")) {
			c.signed = c.signed || hmac.Equal([]byte(s), []byte(want))
		}
	}
	p.mu.Lock()
	p.inFlight++
	p.maxInFlight = max(p.maxInFlight, p.inFlight)
	p.arrivals = append(p.arrivals, c)
	p.mu.Unlock()
	p.arrived <- c
	p.answer(w, r, &c)
	c.gone = time.Now()
	p.mu.Lock()
	p.inFlight--
	p.calls = append(p.calls, c)
	p.mu.Unlock()
}

// snapshot returns the finished calls and the most in flight at once.
func (p *countingProvider) snapshot() ([]providerCall, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls), p.maxInFlight
}

// arrivalsSoFar returns every request that arrived, answered or not.
func (p *countingProvider) arrivalsSoFar() []providerCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.arrivals)
}

// resetPeak starts counting the most in flight at once afresh.
func (p *countingProvider) resetPeak() {
	p.mu.Lock()
	p.maxInFlight = p.inFlight
	p.mu.Unlock()
}

func (p *countingProvider) count(path string) int {
	calls, _ := p.snapshot()
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c.path, path) {
			n++
		}
	}
	return n
}

// answerOK answers 200 after a short wait, the provider's work.
func answerOK(w http.ResponseWriter, r *http.Request, c *providerCall) {
	time.Sleep(30 * time.Millisecond)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"ok":true}`)
	c.end = time.Now()
}

// TestDeliveryLimitsAcrossNodes: three `ratchet serve` nodes on one
// PostgreSQL database deliver the jobs of HTTP tools to one local provider
// (answering 200 after 30 ms), counted at the provider, not in the
// database:
//
//   - maxConcurrent 3, 300 jobs: the provider never has more than 3
//     requests of the endpoint in flight at once, every job succeeds and
//     the provider sees each job exactly once (by Idempotency-Key and
//     webhook-id), signed;
//   - rateLimitPerMinute 40, 100 jobs: within the first minute the
//     provider is called exactly 40 times and the other 60 jobs are held
//     by the rate_limit gate on every node; when the minute has passed
//     (the claim times in the table moved back 60 s, as the skew tests
//     move them, so the test need not wait a real minute) exactly 40 more
//     arrive, and 20 stay held;
//   - a circuit opened by 503s: no request while open, then exactly one
//     half-open probe across the three nodes (deliveryCircuit).
func TestDeliveryLimitsAcrossNodes(t *testing.T) {
	dbURL := pgtest.URL(t)
	key := []byte("ratchet-cluster-delivery-key-32b")
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	prov := newProvider(t, key, answerOK)
	nodes := startDeliveryNodes(t, dbURL, 3)
	ctx := testCtx(t, 4*time.Minute)
	owners := make([]*client.Client, len(nodes))
	for i, n := range nodes {
		owners[i] = client.New(n.URL, ownerKey)
	}
	o := owners[0]
	retry := client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 5, InitialDelayMs: 1000, Multiplier: 1, MaxDelayMs: 1000, JitterPercent: 0}}

	t.Run("maxConcurrent", func(t *testing.T) {
		const maxConc, jobs = 3, 300
		if _, err := o.CreateEndpoint(ctx, "capped", client.EndpointPolicy{Policy: retry, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 10000, MaxConcurrent: maxConc, CircuitFailureThreshold: 1000}}); err != nil {
			t.Fatal(err)
		}
		if _, err := o.PublishTool(ctx, client.ToolSpec{Name: "capped", Version: "1", Endpoint: "capped",
			Delivery: &wire.DeliveryTarget{URL: prov.srv.URL + "/capped/{n}", Secret: secret}}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		// Enqueue through every node, 50 at a time.
		for b := range jobs / 50 {
			reqs := make([]client.EnqueueRequest, 50)
			for k := range reqs {
				n := b*50 + k
				reqs[k] = client.EnqueueRequest{Tool: "capped@1", Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), IdempotencyKey: fmt.Sprintf("capped-%d", n)}
			}
			if _, err := owners[b%len(owners)].EnqueueBatch(ctx, reqs); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, 90*time.Second, "every capped job succeeded", func() (bool, string) {
			s := jobStates(t, dbURL, "capped")
			return s["succeeded"] == jobs, fmtStates(s)
		})
		took := time.Since(start)
		calls, peak := prov.snapshot()
		if peak > maxConc {
			t.Errorf("the provider had %d requests in flight at once (maxConcurrent %d, three nodes)", peak, maxConc)
		}
		if peak == 0 {
			t.Fatal("the provider saw no request")
		}
		// Each job reached the provider once: one request per key, the
		// first attempt, with the path and signature Ratchet promises.
		byKey := map[string][]providerCall{}
		for _, c := range calls {
			byKey[c.key] = append(byKey[c.key], c)
		}
		for n := range jobs {
			k := fmt.Sprintf("capped-%d", n)
			cs := byKey[k]
			if len(cs) != 1 {
				t.Errorf("the provider saw key %s %d times, want once (no lease expired)", k, len(cs))
				continue
			}
			c := cs[0]
			if c.attempt != 1 || c.path != fmt.Sprintf("/capped/%d", n) || c.webhookID != fmt.Sprintf("ratchet-job-%d", c.job) || !c.signed {
				t.Errorf("key %s: attempt %d path %q webhook-id %q (job %d) signed %v", k, c.attempt, c.path, c.webhookID, c.job, c.signed)
			}
		}
		if len(calls) != jobs {
			t.Errorf("the provider saw %d requests for %d jobs", len(calls), jobs)
		}
		// The table agrees: one attempt per job, none timed out, and the
		// nodes that delivered.
		workers := map[string]int{}
		for _, a := range attempts(t, dbURL, "capped") {
			workers[a.worker]++
			if a.number != 1 || a.outcome != "succeeded" {
				t.Errorf("job %d attempt %d: %s", a.jobID, a.number, a.outcome)
			}
		}
		var delivered float64
		for _, n := range nodes {
			delivered += metric(t, n, "ratchet_deliveries_total", `endpoint="capped"`, `outcome="succeeded"`)
		}
		if delivered != jobs {
			t.Errorf("the nodes' ratchet_deliveries_total sums to %v succeeded deliveries, want %d", delivered, jobs)
		}
		var perNode []int
		for _, n := range workers {
			perNode = append(perNode, n)
		}
		slices.Sort(perNode)
		t.Logf("capped: %d jobs delivered by %d nodes (attempts per node %v) in %s; the provider saw at most %d in flight (maxConcurrent %d)",
			jobs, len(workers), perNode, took.Round(time.Millisecond), peak, maxConc)
		if len(workers) < 2 {
			t.Errorf("only %d node delivered: the limit was not exercised across nodes", len(workers))
		}
	})

	t.Run("rateLimitPerMinute", func(t *testing.T) {
		const rate, jobs = 40, 100
		rl := int64(rate)
		if _, err := o.CreateEndpoint(ctx, "metered", client.EndpointPolicy{Policy: retry, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 10000, MaxConcurrent: 100, RateLimitPerMinute: &rl}}); err != nil {
			t.Fatal(err)
		}
		if _, err := o.PublishTool(ctx, client.ToolSpec{Name: "metered", Version: "1", Endpoint: "metered",
			Delivery: &wire.DeliveryTarget{URL: prov.srv.URL + "/metered?n={n}"}}); err != nil {
			t.Fatal(err)
		}
		reqs := make([]client.EnqueueRequest, jobs)
		for k := range reqs {
			reqs[k] = client.EnqueueRequest{Tool: "metered@1", Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, k)), IdempotencyKey: fmt.Sprintf("metered-%d", k)}
		}
		if _, err := owners[1].EnqueueBatch(ctx, reqs); err != nil {
			t.Fatal(err)
		}
		// window checks that the endpoint admitted exactly want requests
		// in this minute and holds the rest on every node. It must finish
		// within a minute of the window's first request: past that the
		// rate limit would rightly admit more.
		window := func(name string, from time.Time, want, held int) {
			t.Helper()
			waitFor(t, 30*time.Second, name+": the rate limit used up", func() (bool, string) {
				s := jobStates(t, dbURL, "metered")
				return s["succeeded"] == int64(want) && prov.count("/metered") >= want, fmtStates(s) + fmt.Sprintf(", provider %d", prov.count("/metered"))
			})
			first := time.Time{}
			calls, _ := prov.snapshot()
			for _, c := range calls {
				if strings.HasPrefix(c.path, "/metered") && c.at.After(from) && (first.IsZero() || c.at.Before(first)) {
					first = c.at
				}
			}
			// Every node has had time to claim more (its long poll wakes
			// at least every 5 s); none may.
			time.Sleep(6 * time.Second)
			for i, o := range owners {
				page, err := o.ListJobs(ctx, client.JobFilter{Tool: "metered", States: []wire.JobState{wire.JobScheduled}, Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Jobs) != held {
					t.Errorf("%s: node %d lists %d metered jobs scheduled, want %d", name, i, len(page.Jobs), held)
				}
				for _, j := range page.Jobs[:min(3, len(page.Jobs))] {
					got, err := o.GetJob(ctx, j.ID)
					if err != nil {
						t.Fatal(err)
					}
					if got.HeldBy == nil || got.HeldBy.Gate != "rate_limit" {
						t.Errorf("%s: node %d says metered job %d is held by %+v, want the rate_limit gate", name, i, j.ID, got.HeldBy)
					}
				}
			}
			if n := prov.count("/metered"); n != want {
				t.Errorf("%s: the provider was called %d times, want exactly %d (rateLimitPerMinute %d)", name, n, want, rate)
			}
			if since := time.Since(first); since >= 59*time.Second {
				t.Fatalf("%s: the checks ended %s after the window's first request: the machine is too slow for a one-minute window", name, since.Round(time.Millisecond))
			}
		}
		window("first minute", time.Time{}, rate, jobs-rate)
		// A minute passes: every claim of the endpoint so far is moved 60 s
		// into the past, where the sliding window no longer counts it.
		moved := time.Now()
		execSQL(t, dbURL, `UPDATE attempts SET claimed_at = claimed_at - 60000, finished_at = finished_at - 60000
			WHERE endpoint_id = (SELECT id FROM endpoints WHERE name = 'metered')`)
		window("second minute", moved, 2*rate, jobs-2*rate)
		calls, _ := prov.snapshot()
		seen := map[string]int{}
		for _, c := range calls {
			if strings.HasPrefix(c.path, "/metered") {
				seen[c.key]++
				if c.attempt != 1 {
					t.Errorf("metered key %s: attempt %d", c.key, c.attempt)
				}
			}
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("the provider saw key %s %d times", k, n)
			}
		}
		// No node had a report refused (a lease lost) or failing.
		for i, n := range nodes {
			for _, l := range strings.Split(n.Output.String(), "\n") {
				if strings.Contains(l, "delivery report") || strings.Contains(l, "delivery claim failed") {
					t.Errorf("node %d: %s", i, l)
				}
			}
		}
		t.Logf("metered: %d requests over two simulated minutes, %d keys, %d jobs held (rateLimitPerMinute %d)", prov.count("/metered"), len(seen), jobs-2*rate, rate)
	})

	t.Run("circuit", func(t *testing.T) { deliveryCircuit(t, ctx, nodes, owners, retry) })
}

// deliveryCircuit: a provider that answers 503 opens the circuit of an
// endpoint (threshold 3, maxConcurrent 5) delivered to by three nodes.
// Counted at the provider: at most threshold+maxConcurrent-1 requests went
// out before it opened (each further claim needs a slot freed by a
// reported failure), none while it is open, then exactly one half-open
// probe, which every node names, and nothing else while the provider holds
// the probe; when the probe succeeds every node delivers again and each
// job reaches the provider's 200 once.
func deliveryCircuit(t *testing.T, ctx context.Context, nodes []*proctest.Server, owners []*client.Client, retry client.Policy) {
	const jobs, threshold, maxConc, openMs = 20, 3, 5, 5000
	var mode atomic.Int32 // 0: 503 at once; 1: hold until probeDone, then 200; 2: 200
	probeDone := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(probeDone) }) }
	prov := newProvider(t, nil, func(w http.ResponseWriter, r *http.Request, c *providerCall) {
		switch mode.Load() {
		case 0:
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":"down"}`)
			return
		case 1:
			select {
			case <-probeDone:
			case <-r.Context().Done():
				return
			}
		}
		answerOK(w, r, c)
	})
	t.Cleanup(release) // before the provider's Close, which waits for a held request
	o := owners[0]
	if _, err := o.CreateEndpoint(ctx, "fragile", client.EndpointPolicy{Policy: retry, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 20000, MaxConcurrent: maxConc, CircuitFailureThreshold: threshold, CircuitOpenMs: openMs}}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.PublishTool(ctx, client.ToolSpec{Name: "fragile", Version: "1", Endpoint: "fragile",
		Delivery: &wire.DeliveryTarget{URL: prov.srv.URL + "/fragile"}}); err != nil {
		t.Fatal(err)
	}
	reqs := make([]client.EnqueueRequest, jobs)
	for k := range reqs {
		reqs[k] = client.EnqueueRequest{Tool: "fragile@1", IdempotencyKey: fmt.Sprintf("fragile-%d", k)}
	}
	if _, err := owners[2].EnqueueBatch(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	var opened time.Time
	waitFor(t, 30*time.Second, "the circuit open", func() (bool, string) {
		ep, err := o.GetEndpoint(ctx, "fragile")
		if err != nil {
			return false, err.Error()
		}
		if ep.Circuit.State == "open" {
			opened, err = time.Parse(time.RFC3339Nano, ep.Circuit.OpenedAt)
			return err == nil, ep.Circuit.OpenedAt
		}
		return false, string(ep.Circuit.State)
	})
	// Requests claimed before the circuit opened may land just after;
	// then nothing until it half-opens.
	time.Sleep(2 * time.Second)
	before := len(prov.arrivalsSoFar())
	mode.Store(1)
	prov.resetPeak()
	if since := time.Since(opened); since > (openMs-1000)*time.Millisecond {
		t.Fatalf("%s passed between the circuit opening and the count, too close to its %d ms open period: the machine is too slow for this test", since.Round(time.Millisecond), openMs)
	}
	if before < threshold || before > threshold+maxConc-1 {
		t.Errorf("%d requests reached the provider before the circuit opened, want %d to %d (threshold %d, maxConcurrent %d)", before, threshold, threshold+maxConc-1, threshold, maxConc)
	}
	waitFor(t, openMs*time.Millisecond+20*time.Second, "the half-open probe", func() (bool, string) {
		n := len(prov.arrivalsSoFar())
		return n > before, fmt.Sprint(n)
	})
	probeAt := time.Now()
	as := prov.arrivalsSoFar()
	probe := as[before]
	if d := probe.at.Sub(opened); d < openMs*time.Millisecond-100*time.Millisecond {
		// The database's clock and this machine's are the same clock here;
		// the 100 ms allow for the time of the API call.
		t.Errorf("the first request after the circuit opened came %s after it opened, inside the %d ms open period", d.Round(time.Millisecond), openMs)
	}
	for i, o := range owners {
		ep, err := o.GetEndpoint(ctx, "fragile")
		if err != nil {
			t.Fatal(err)
		}
		if ep.Circuit.State != "half_open" || ep.Circuit.ProbeJobID != probe.job {
			t.Errorf("node %d sees the circuit %q with probe %d while the provider holds job %d's request", i, ep.Circuit.State, ep.Circuit.ProbeJobID, probe.job)
		}
	}
	// Every node's dispatcher polls at least every 5 s; give them time to
	// (wrongly) send a second request while the probe is held.
	time.Sleep(time.Until(probeAt.Add(6 * time.Second)))
	if n := len(prov.arrivalsSoFar()); n != before+1 {
		t.Errorf("%d requests reached the provider while the half-open probe was held, want only the probe", n-before)
	}
	_, peak := prov.snapshot()
	if peak != 1 {
		t.Errorf("%d requests in flight at once while half-open, want 1", peak)
	}
	mode.Store(2)
	release()
	waitFor(t, 60*time.Second, "every fragile job succeeded", func() (bool, string) {
		n, left := 0, 0
		page, err := o.ListJobs(ctx, client.JobFilter{Tool: "fragile", Limit: 100})
		if err != nil {
			return false, err.Error()
		}
		for _, j := range page.Jobs {
			if j.State == wire.JobSucceeded {
				n++
			} else {
				left++
			}
		}
		return n == jobs, fmt.Sprintf("%d succeeded, %d not", n, left)
	})
	for i, o := range owners {
		if ep, err := o.GetEndpoint(ctx, "fragile"); err != nil || ep.Circuit.State != "closed" {
			t.Errorf("node %d: circuit %+v, %v; want closed", i, ep, err)
		}
	}
	calls, _ := prov.snapshot()
	ok := map[string]int{}
	for _, c := range calls {
		if !c.end.IsZero() {
			ok[c.key]++
		}
	}
	for k := range jobs {
		if n := ok[fmt.Sprintf("fragile-%d", k)]; n != 1 {
			t.Errorf("job fragile-%d got the provider's 200 %d times, want once", k, n)
		}
	}
	t.Logf("fragile: %d requests before the circuit opened (threshold %d, maxConcurrent %d), the probe (job %d) %s after it opened, %d requests in all for %d jobs",
		before, threshold, maxConc, probe.job, probe.at.Sub(opened).Round(time.Millisecond), len(prov.arrivalsSoFar()), jobs)
}

// TestDeliveryNodeKilledMidRequest: a node delivers a job to a provider
// that holds the request open; the node is killed with SIGKILL while the
// provider holds it. A second node, started after the kill, finds the
// lease expired (10 s), records the attempt as timed_out and retries it;
// the provider answers the second request 200 and the job succeeds: the
// job is never lost, and it reached the provider exactly twice. (The kill
// must come inside the lease; at 3 s a loaded machine killed too late.)
func TestDeliveryNodeKilledMidRequest(t *testing.T) {
	dbURL := pgtest.URL(t)
	release := make(chan struct{})
	var dropped sync.WaitGroup
	dropped.Add(1)
	first := true
	var mu sync.Mutex
	prov := newProvider(t, nil, func(w http.ResponseWriter, r *http.Request, c *providerCall) {
		mu.Lock()
		hold := first
		first = false
		mu.Unlock()
		if hold {
			// Never answers: waits for the caller to go away (or the test
			// to end).
			select {
			case <-r.Context().Done():
				dropped.Done()
			case <-release:
			}
			return
		}
		answerOK(w, r, c)
	})
	// Registered after the provider's Close, so it runs first: Close waits
	// for a held request.
	t.Cleanup(func() { close(release) })
	nodeA := proctest.Start(t, "", nil, deliveryArgs(dbURL)...)
	var nodeB *proctest.Server
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node A output:\n%s", nodeA.Output.String())
			if nodeB != nil {
				t.Logf("node B output:\n%s", nodeB.Output.String())
			}
		}
	})
	ctx := testCtx(t, time.Minute)
	a := client.New(nodeA.URL, ownerKey)
	const lease = 10000
	if _, err := a.CreateEndpoint(ctx, "partner", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 3, InitialDelayMs: 1000, Multiplier: 1, MaxDelayMs: 1000, JitterPercent: 0}}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 20000, MaxConcurrent: 10, CircuitFailureThreshold: 1000}}); err != nil {
		t.Fatal(err)
	}
	timeout := int64(lease)
	if _, err := a.PublishTool(ctx, client.ToolSpec{Name: "notify", Version: "1", Endpoint: "partner", TimeoutMs: &timeout,
		Delivery: &wire.DeliveryTarget{URL: prov.srv.URL + "/orders/{orderId}"}}); err != nil {
		t.Fatal(err)
	}
	j, _, err := a.Enqueue(ctx, client.EnqueueRequest{Tool: "notify@1", Payload: json.RawMessage(`{"orderId":42}`), IdempotencyKey: "order-42"})
	if err != nil {
		t.Fatal(err)
	}
	var held providerCall
	select {
	case held = <-prov.arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("node A did not deliver the job within 30 s")
	}
	nodeA.Kill()
	killed := time.Now()
	if gap := killed.Sub(held.at); gap > lease*time.Millisecond*9/10 {
		t.Fatalf("node A was killed %s after the request arrived, too late for a %d ms lease: the machine is too slow for this test", gap, lease)
	}
	// The connection went away with the process, unanswered.
	waitDropped := make(chan struct{})
	go func() { dropped.Wait(); close(waitDropped) }()
	select {
	case <-waitDropped:
	case <-time.After(10 * time.Second):
		t.Fatal("the provider's held request was not dropped within 10 s of node A's SIGKILL")
	}
	nodeB = proctest.Start(t, "", nil, deliveryArgs(dbURL)...)
	b := client.New(nodeB.URL, ownerKey)
	var got *client.Job
	waitFor(t, 30*time.Second, "the job succeeded on node B", func() (bool, string) {
		got, err = b.GetJob(ctx, j.ID)
		if err != nil {
			return false, err.Error()
		}
		return got.State == wire.JobSucceeded, string(got.State)
	})
	t.Logf("job %d: request held at %s, node A killed %s later, succeeded %s after the kill",
		j.ID, held.at.Format("15:04:05.000"), killed.Sub(held.at).Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
	if len(got.Attempts) != 2 {
		t.Fatalf("job %d has %d attempts, want 2: %+v", j.ID, len(got.Attempts), got.Attempts)
	}
	a1, a2 := got.Attempts[0], got.Attempts[1]
	if a1.Number != 1 || a1.Outcome != "timed_out" || a1.HTTPStatus != nil || a1.NextDueAt == nil {
		t.Errorf("attempt 1: number %d outcome %q classification %q status %v next due %v; want timed_out with a retry", a1.Number, a1.Outcome, a1.Classification, a1.HTTPStatus, a1.NextDueAt)
	}
	if a2.Number != 2 || a2.Outcome != "succeeded" || a2.HTTPStatus == nil || *a2.HTTPStatus != 200 || a2.RequestMs == nil || a2.ResponseExcerpt != `{"ok":true}` || a2.ResponseHeaders["Content-Type"] != "application/json" {
		t.Errorf("attempt 2: %+v; want succeeded with HTTP 200, requestMs, the Content-Type header and the body excerpt", a2)
	}
	if a1.WorkerID == a2.WorkerID || !strings.HasPrefix(a1.WorkerID, "ratchet-delivery/") || !strings.HasPrefix(a2.WorkerID, "ratchet-delivery/") {
		t.Errorf("attempts by %q and %q: want two different nodes' dispatchers", a1.WorkerID, a2.WorkerID)
	}
	calls, _ := prov.snapshot()
	if len(calls) != 2 {
		t.Fatalf("the provider saw %d requests, want 2 (the held one and the retry)", len(calls))
	}
	for i, c := range calls {
		if c.key != "order-42" || c.job != j.ID || c.attempt != int64(i+1) || c.path != "/orders/42" {
			t.Errorf("provider request %d: key %q job %d attempt %d path %q", i+1, c.key, c.job, c.attempt, c.path)
		}
	}
	if calls[0].end != (time.Time{}) || calls[1].end.IsZero() {
		t.Errorf("the held request answered at %v, the retry at %v: want the first never answered", calls[0].end, calls[1].end)
	}
}

// TestDeliverySkewedNodeKeepsItsLease: a node whose clock runs 5 s behind
// the database's delivers to a provider that never answers, with a 10 s
// lease. The request's timeout must come from the lease as the database
// granted it, not from the node's clock: judged by its own clock the lease
// would have 15 s left, the request would still be open when every other
// node (and its own rescue, on the database's clock) takes the lease as
// expired, and the retry would reach the provider while the first request
// still waits: one job delivered twice at once. So: the provider never
// has two requests of one job open at once, and the node drops each
// request inside the lease (under 10 s after it opened; by its own clock
// it would hold it about 14 s). The lease is 10 s, which leaves the node
// a second (a tenth of it) to report after it drops the request; each
// attempt ends with that report, a network timeout, unless the report
// came after the lease (on a loaded machine under -race it came 2 s after
// the drop), when the rescue records it as timed out: that is logged, not
// failed, since what is tested is when the request ends.
func TestDeliverySkewedNodeKeepsItsLease(t *testing.T) {
	dbURL := pgtest.URL(t)
	release := make(chan struct{})
	prov := newProvider(t, nil, func(w http.ResponseWriter, r *http.Request, c *providerCall) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	node := proctest.Start(t, "", nil, append(deliveryArgs(dbURL), "--clock-offset", "-5s")...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node output:\n%s", node.Output.String())
		}
	})
	ctx := testCtx(t, 2*time.Minute)
	o := client.New(node.URL, ownerKey)
	if _, err := o.CreateEndpoint(ctx, "slow", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 2, InitialDelayMs: 1000, Multiplier: 1, MaxDelayMs: 1000, JitterPercent: 0}}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 10_000, MaxConcurrent: 10, CircuitFailureThreshold: 1000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.PublishTool(ctx, client.ToolSpec{Name: "slow", Version: "1", Endpoint: "slow", Delivery: &wire.DeliveryTarget{URL: prov.srv.URL + "/slow"}}); err != nil {
		t.Fatal(err)
	}
	j, _, err := o.Enqueue(ctx, client.EnqueueRequest{Tool: "slow@1", IdempotencyKey: "slow-1"})
	if err != nil {
		t.Fatal(err)
	}
	var got *client.Job
	waitFor(t, 90*time.Second, "the job exhausted", func() (bool, string) {
		got, err = o.GetJob(ctx, j.ID)
		if err != nil {
			return false, err.Error()
		}
		return got.State == wire.JobExhausted, string(got.State)
	})
	// The provider's handlers return when the node drops the request;
	// wait for the last one to be counted.
	waitFor(t, 10*time.Second, "the provider saw both requests end", func() (bool, string) {
		calls, _ := prov.snapshot()
		return len(calls) == 2, fmt.Sprint(len(calls))
	})
	calls, peak := prov.snapshot()
	slices.SortFunc(calls, func(a, b providerCall) int { return a.at.Compare(b.at) })
	for i, c := range calls {
		held := c.gone.Sub(c.at)
		t.Logf("request %d (attempt %d): opened %s, dropped by the node %s later", i+1, c.attempt, c.at.Format("15:04:05.000"), held.Round(time.Millisecond))
		if held >= 10*time.Second {
			t.Errorf("request %d was held %s, not dropped inside its 10 s lease: the node timed it by its own clock, 5 s behind", i+1, held.Round(time.Millisecond))
		}
	}
	if peak > 1 {
		t.Errorf("the provider had %d requests of job %d open at once: the retry went out while the first request, past its lease, still waited", peak, j.ID)
	}
	for _, a := range got.Attempts {
		t.Logf("attempt %d: %s (%s) %s", a.Number, a.Outcome, a.Classification, a.Message)
		switch {
		case a.Outcome == "failed" && a.Classification == "network_timeout":
		case a.Outcome == "timed_out":
			t.Logf("attempt %d: the node's report came after the lease, and the rescue recorded it", a.Number)
		default:
			t.Errorf("attempt %d: %s (%s); want failed as network_timeout (or timed_out when the report came late)", a.Number, a.Outcome, a.Classification)
		}
	}
}
