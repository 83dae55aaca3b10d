package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
)

// TestRescueOnEveryNode: workers on three nodes claim jobs and never report,
// so every lease expires, and every node runs lease rescue. Each expired
// lease must become exactly one timed_out attempt: the sum of the nodes'
// rescue counts equals the timed_out attempts in the table, and no job has
// two attempts with one lease.
func TestRescueOnEveryNode(t *testing.T) {
	dbURL := pgtest.URL(t)
	nodes := startNodes(t, dbURL, 3)
	ctx := testCtx(t, 2*time.Minute)
	o := client.New(nodes[0].URL, ownerKey)
	const jobs, attemptsPerJob = 90, 2
	if _, err := o.CreateEndpoint(ctx, "lossy", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: attemptsPerJob, InitialDelayMs: 1000, Multiplier: 1, MaxDelayMs: 1000, JitterPercent: 0}}, EndpointSettings: client.EndpointSettings{DefaultTimeoutMs: 1000, MaxConcurrent: 1000, CircuitFailureThreshold: 1000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.PublishTool(ctx, client.ToolSpec{Name: "lossy", Version: "1", Endpoint: "lossy"}); err != nil {
		t.Fatal(err)
	}
	reqs := make([]client.EnqueueRequest, jobs)
	for i := range reqs {
		reqs[i] = client.EnqueueRequest{Tool: "lossy@1"}
	}
	if _, err := o.EnqueueBatch(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	// Crashing workers: claim through every node, never report.
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var claimed atomic.Int64
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client.New(n.URL, ownerKey)
			for cctx.Err() == nil {
				js, err := c.Claim(cctx, client.ClaimRequest{WorkerID: fmt.Sprintf("crash-%d", i), Tools: []string{"lossy@1"}, Max: 7, WaitMs: 1000})
				if err == nil {
					claimed.Add(int64(len(js)))
				}
			}
		}()
	}
	waitFor(t, 60*time.Second, "every job exhausted by expired leases", func() (bool, string) {
		s := jobStates(t, dbURL, "lossy")
		return s["exhausted"] == jobs, fmtStates(s)
	})
	stop()
	wg.Wait()

	as := attempts(t, dbURL, "lossy")
	timedOut := 0
	seen := map[string]bool{}
	for _, a := range as {
		if a.outcome == "timed_out" {
			timedOut++
		} else {
			t.Errorf("job %d attempt %d: outcome %q, want timed_out", a.jobID, a.number, a.outcome)
		}
		k := fmt.Sprintf("%d/%s", a.jobID, a.lease)
		if seen[k] {
			t.Errorf("job %d has two attempts with lease %s", a.jobID, a.lease)
		}
		seen[k] = true
	}
	if timedOut != jobs*attemptsPerJob || claimed.Load() != int64(timedOut) {
		t.Errorf("%d timed_out attempts from %d claims, want %d", timedOut, claimed.Load(), jobs*attemptsPerJob)
	}
	var rescued float64
	per := make([]float64, len(nodes))
	for i, n := range nodes {
		per[i] = metric(t, n, "ratchet_reports_total", `classification="timed_out"`)
		rescued += per[i]
	}
	t.Logf("rescues per node %v, %d timed_out attempts", per, timedOut)
	if int(rescued) != timedOut {
		t.Errorf("the nodes rescued %v leases in all, the table holds %d timed_out attempts: some lease was rescued twice", rescued, timedOut)
	}
}

// TestPostgresRestartUnderLoad stops PostgreSQL while two nodes serve SDK
// workers, checks that requests meanwhile fail with 503 (never 500) and
// that the nodes come back by themselves when PostgreSQL does, with every
// job finished.
func TestPostgresRestartUnderLoad(t *testing.T) {
	pg := pgtest.NewServer(t)
	dbURL := pg.URL()
	nodes := startNodes(t, dbURL, 2)
	ctx := testCtx(t, 2*time.Minute)
	o := client.New(nodes[0].URL, ownerKey)
	const jobs = 300
	if _, err := o.CreateEndpoint(ctx, "api", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 10, InitialDelayMs: 1000, Multiplier: 1, MaxDelayMs: 1000, JitterPercent: 0}}, EndpointSettings: client.EndpointSettings{DefaultTimeoutMs: 5000, MaxConcurrent: 16, CircuitFailureThreshold: 1000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.PublishTool(ctx, client.ToolSpec{Name: "call", Version: "1", Endpoint: "api"}); err != nil {
		t.Fatal(err)
	}
	reqs := make([]client.EnqueueRequest, jobs)
	for i := range reqs {
		reqs[i] = client.EnqueueRequest{Tool: "call@1", Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), IdempotencyKey: fmt.Sprintf("k%d", i)}
	}
	if _, err := o.EnqueueBatch(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	var handled atomic.Int64
	var errMu sync.Mutex
	var status500 []string
	wctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, n := range nodes {
		w := client.NewWorker(client.New(n.URL, ownerKey), client.WorkerOptions{ID: fmt.Sprintf("w%d", i), Concurrency: 8, Wait: time.Second,
			OnError: func(err error) {
				if status(err) == http.StatusInternalServerError {
					errMu.Lock()
					status500 = append(status500, err.Error())
					errMu.Unlock()
				}
			}})
		w.Handle("call@1", func(ctx context.Context, j *client.ClaimedJob) error {
			handled.Add(1)
			time.Sleep(20 * time.Millisecond)
			return nil
		})
		wg.Add(1)
		go func() { defer wg.Done(); _ = w.Run(wctx) }()
	}
	defer func() { stop(); wg.Wait() }()

	waitFor(t, 60*time.Second, "a third of the jobs handled", func() (bool, string) {
		return handled.Load() >= jobs/3, fmt.Sprint(handled.Load())
	})
	pg.Stop(t)
	// During the outage every node answers 503: readiness, reads, writes.
	for i, n := range nodes {
		resp, err := http.Get(n.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("node %d /readyz during the outage: %d, want 503", i, resp.StatusCode)
		}
		c := client.New(n.URL, ownerKey)
		_, err = c.GetEndpoint(ctx, "api")
		if s := status(err); s != http.StatusServiceUnavailable {
			t.Errorf("node %d GET endpoint during the outage: %v, want 503", i, err)
		}
		_, _, err = c.Enqueue(ctx, client.EnqueueRequest{Tool: "call@1", IdempotencyKey: "during-outage"})
		if s := status(err); s != http.StatusServiceUnavailable {
			t.Errorf("node %d enqueue during the outage: %v, want 503", i, err)
		}
	}
	pg.Start(t)
	for i, n := range nodes {
		waitFor(t, 30*time.Second, fmt.Sprintf("node %d ready again", i), func() (bool, string) {
			resp, err := http.Get(n.URL + "/readyz")
			if err != nil {
				return false, err.Error()
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, resp.Status
		})
	}
	waitFor(t, 60*time.Second, "every job succeeded after the restart", func() (bool, string) {
		s := jobStates(t, dbURL, "api")
		return s["succeeded"] == jobs, fmtStates(s)
	})
	stop()
	wg.Wait()
	if n := metricsStatus(t, nodes, "500"); n > 0 {
		t.Errorf("the nodes answered %v requests with 500", n)
	}
	if len(status500) > 0 {
		t.Errorf("workers saw %d answers with 500, e.g. %s", len(status500), strings.Join(status500[:min(3, len(status500))], "; "))
	}
	t.Logf("%d handler runs for %d jobs across a PostgreSQL restart", handled.Load(), jobs)
}
