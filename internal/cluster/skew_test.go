package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
)

// startSkewedPair starts node A with the machine's clock and then node B
// with its clock by ahead (ratchet serve --clock-offset), both on dbURL.
func startSkewedPair(t *testing.T, dbURL string, by time.Duration) (a, b *proctest.Server) {
	t.Helper()
	args := []string{"--database", dbURL, "--bootstrap-key", ownerKey, "--log-level", "warn"}
	a = proctest.Start(t, "", nil, args...)
	b = proctest.Start(t, "", nil, append(args, "--clock-offset", by.String())...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node A output:\n%s\nnode B output:\n%s", a.Output.String(), b.Output.String())
		}
	})
	return a, b
}

// execSQL runs one statement on the test schema.
func execSQL(t *testing.T, dbURL, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// TestSkewedNodeKeepsLeases: a worker holds a job through node A with a
// 16 s lease on an endpoint that runs one job at a time, and node B, its
// clock 8 s ahead, is asked for the endpoint's other job. Lease rescue runs
// on every node; were node B to judge the lease by its own clock it would
// find it expired after 8 s, fail the attempt as timed out, and hand the
// other job out while the first still runs (maxConcurrent 1 exceeded, and
// the holder's report, inside its lease, refused). Leases are judged by
// the database's clock, so node B leaves it alone. (With a 4 s lease and
// node B 2 s ahead, a loaded machine ended node B's long poll too close
// to the lease's end for the test to tell anything.)
func TestSkewedNodeKeepsLeases(t *testing.T) {
	const ahead, lease = 8 * time.Second, 16 * time.Second
	dbURL := pgtest.URL(t)
	nodeA, nodeB := startSkewedPair(t, dbURL, ahead)
	ctx := testCtx(t, time.Minute)
	a, b := client.New(nodeA.URL, ownerKey), client.New(nodeB.URL, ownerKey)
	if _, err := a.CreateEndpoint(ctx, "single", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 5, InitialDelayMs: 1000, Multiplier: 1, MaxDelayMs: 1000, JitterPercent: 0}}, EndpointSettings: client.EndpointSettings{DefaultTimeoutMs: lease.Milliseconds(), MaxConcurrent: 1, CircuitFailureThreshold: 1000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PublishTool(ctx, client.ToolSpec{Name: "single", Version: "1", Endpoint: "single"}); err != nil {
		t.Fatal(err)
	}
	for k := range 2 {
		if _, _, err := a.Enqueue(ctx, client.EnqueueRequest{Tool: "single@1", IdempotencyKey: fmt.Sprintf("s%d", k)}); err != nil {
			t.Fatal(err)
		}
	}
	held, err := a.Claim(ctx, client.ClaimRequest{WorkerID: "holder-on-a", Tools: []string{"single@1"}, Max: 1})
	if err != nil || len(held) != 1 {
		t.Fatalf("claim through node A: %v %+v", err, held)
	}
	claimed := time.Now()
	// Node B rescues leases every 250 ms; by its clock this one ends 8 s
	// after the claim. Its long poll for the other job lasts past that.
	got, err := b.Claim(ctx, client.ClaimRequest{WorkerID: "other-on-b", Tools: []string{"single@1"}, Max: 1, WaitMs: (lease - ahead + 2*time.Second).Milliseconds()})
	if err != nil {
		t.Fatal(err)
	}
	age := time.Since(claimed)
	if age >= lease-2*time.Second {
		t.Fatalf("the machine is too slow for this test: the long poll on node B ended %s after the claim, too close to the %s lease", age.Round(time.Millisecond), lease)
	}
	if len(got) > 0 {
		t.Errorf("node B (clock %s ahead) handed out job %d %s after job %d was claimed through node A with a %s lease: two jobs running on an endpoint with maxConcurrent 1",
			ahead, got[0].ID, age.Round(time.Millisecond), held[0].ID, lease)
	}
	// The holder finishes inside its lease.
	if _, err := a.ReportOne(ctx, client.Report{JobID: held[0].ID, LeaseToken: held[0].LeaseToken, Success: true, HTTPStatus: 200}); err != nil {
		t.Errorf("the holder's report %s after its claim, inside its %s lease, was refused: %v", time.Since(claimed).Round(time.Millisecond), lease, err)
	}
	j, err := a.GetJob(ctx, held[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Attempts) != 1 || j.Attempts[0].Outcome != "succeeded" {
		for _, at := range j.Attempts {
			t.Logf("job %d attempt %d: %s (%s) by %s", j.ID, at.Number, at.Outcome, at.Classification, at.WorkerID)
		}
		t.Errorf("job %d has %d attempts, want one that succeeded", j.ID, len(j.Attempts))
	}
}

// TestSkewedNodeKeepsRateLimit: an endpoint allows 3 claims a minute;
// node A's 3 claims are made to look 45 s old (their claim times moved
// back, as if node A had made them then). By the database's clock the
// window still holds them for 15 s more, and node B, 20 s ahead, must
// refuse a fourth claim and say the rate limit holds the job; judged by
// its own clock they would be 65 s old and it would let a fourth claim
// through within 60 s of the first three. (With node B 2 s ahead and the
// claims 58.5 s old, the 1.5 s left were spent before node B's answer on
// a loaded machine, and the job was rightly claimable.)
func TestSkewedNodeKeepsRateLimit(t *testing.T) {
	const ahead, age = 20 * time.Second, 45 * time.Second
	dbURL := pgtest.URL(t)
	nodeA, nodeB := startSkewedPair(t, dbURL, ahead)
	ctx := testCtx(t, time.Minute)
	a, b := client.New(nodeA.URL, ownerKey), client.New(nodeB.URL, ownerKey)
	const limit = 3
	rl := int64(limit)
	if _, err := a.CreateEndpoint(ctx, "metered", client.EndpointPolicy{EndpointSettings: client.EndpointSettings{DefaultTimeoutMs: 20000, MaxConcurrent: 10, RateLimitPerMinute: &rl}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PublishTool(ctx, client.ToolSpec{Name: "metered", Version: "1", Endpoint: "metered"}); err != nil {
		t.Fatal(err)
	}
	var last int64
	for k := range limit + 1 {
		j, _, err := a.Enqueue(ctx, client.EnqueueRequest{Tool: "metered@1", IdempotencyKey: fmt.Sprintf("m%d", k)})
		if err != nil {
			t.Fatal(err)
		}
		last = j.ID
	}
	js, err := a.Claim(ctx, client.ClaimRequest{WorkerID: "on-a", Tools: []string{"metered@1"}, Max: limit})
	if err != nil || len(js) != limit {
		t.Fatalf("claim through node A: %v, %d jobs, want %d", err, len(js), limit)
	}
	for _, j := range js {
		if _, err := a.ReportOne(ctx, client.Report{JobID: j.ID, LeaseToken: j.LeaseToken, Success: true, HTTPStatus: 200}); err != nil {
			t.Fatal(err)
		}
	}
	execSQL(t, dbURL, fmt.Sprintf(`UPDATE attempts SET claimed_at = claimed_at - %[1]d, finished_at = finished_at - %[1]d`, age.Milliseconds()))
	got, err := b.Claim(ctx, client.ClaimRequest{WorkerID: "on-b", Tools: []string{"metered@1"}, Max: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 0 {
		t.Errorf("node B (clock %s ahead) claimed job %d: %d claims within 60 s (rateLimitPerMinute %d)", ahead, got[0].ID, limit+1, limit)
	}
	j, err := b.GetJob(ctx, last)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 && (j.HeldBy == nil || j.HeldBy.Gate != "rate_limit") {
		t.Errorf("node B says job %d is held by %+v, want the rate_limit gate", last, j.HeldBy)
	}
	as := attempts(t, dbURL, "metered")
	claims := make([]int64, len(as))
	for i, at := range as {
		claims[i] = at.claimedAt
	}
	if n := maxInWindow(claims, 60_000); n > limit {
		t.Errorf("the attempts table holds %d claims within 60 s (rateLimitPerMinute %d)", n, limit)
	}
}
