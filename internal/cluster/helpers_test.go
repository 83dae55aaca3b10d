// Package cluster_test runs several real `ratchet serve` processes on one
// PostgreSQL database and checks what issue 5 promises of them: no job is
// handed to two workers at once, an endpoint's maxConcurrent, rate limit and
// circuit hold across every node, long-poll wake-ups travel between nodes,
// lease rescue runs everywhere without double work, and the nodes ride out a
// PostgreSQL restart.
//
// The tests need a PostgreSQL server: ./scripts/test starts a throwaway one
// (or set RATCHET_TEST_POSTGRES_URL). Without it they skip, and under
// RATCHET_REQUIRE_POSTGRES=1 they fail instead.
package cluster_test

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
)

const ownerKey = "rk_cluster_owner_key_0123456789abcdef"

func testCtx(t *testing.T, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}

// startNodes starts n `ratchet serve` processes on one database at the same
// time, all with the same bootstrap key, so their migrations and bootstraps
// race as they would when a deployment rolls out.
func startNodes(t *testing.T, dbURL string, n int) []*proctest.Server {
	t.Helper()
	proctest.Binary(t) // build once, before the race starts
	nodes := make([]*proctest.Server, n)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func() {
			// proctest.Start fails the test with t.Fatal, which ends only this
			// goroutine; the deferred Done still runs and Failed is checked
			// below on the test goroutine.
			defer wg.Done()
			nodes[i] = proctest.Start(t, "", nil, "--database", dbURL, "--bootstrap-key", ownerKey, "--log-level", "warn")
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

// query runs one SQL query on the test schema and returns its rows as int64s.
func query(t *testing.T, dbURL, sql string, args ...any) [][]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var out [][]int64
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		row := make([]int64, len(vals))
		for i, v := range vals {
			switch x := v.(type) {
			case int64:
				row[i] = x
			case int32:
				row[i] = int64(x)
			case nil:
			default:
				t.Fatalf("%s: column %d is %T", sql, i, v)
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// attemptRow is one row of the attempts table.
type attemptRow struct {
	jobID, number, claimedAt, finishedAt int64
	lease, worker, outcome               string
}

func attempts(t *testing.T, dbURL, endpoint string) []attemptRow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Finished attempts are rows of attempts; a running one is its job's
	// claim columns until it finishes.
	rows, err := conn.Query(ctx, `SELECT a.job_id, a.number, a.claimed_at, a.finished_at, a.lease_token, a.worker_id, a.outcome
		FROM attempts a JOIN endpoints e ON e.id = a.endpoint_id WHERE e.name = $1
		UNION ALL
		SELECT j.id, j.attempt, j.claimed_at, 0, j.lease_token, j.worker_id, ''
		FROM jobs j JOIN endpoints e ON e.id = j.endpoint_id WHERE e.name = $1 AND j.state = 'running'
		ORDER BY 3, 1`, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []attemptRow
	for rows.Next() {
		var a attemptRow
		if err := rows.Scan(&a.jobID, &a.number, &a.claimedAt, &a.finishedAt, &a.lease, &a.worker, &a.outcome); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// maxOverlap is the most intervals [from, to) open at one instant; an
// interval with to == 0 is still open.
func maxOverlap(as []attemptRow) (int, int64) {
	type ev struct {
		at    int64
		delta int
	}
	var evs []ev
	for _, a := range as {
		evs = append(evs, ev{a.claimedAt, +1})
		if a.finishedAt > 0 {
			evs = append(evs, ev{a.finishedAt, -1})
		}
	}
	// Ends sort before starts at the same millisecond: [from, to) is half-open.
	slices.SortFunc(evs, func(a, b ev) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.delta, b.delta)
	})
	cur, best, at := 0, 0, int64(0)
	for _, e := range evs {
		cur += e.delta
		if cur > best {
			best, at = cur, e.at
		}
	}
	return best, at
}

// maxInWindow is the most claims in any sliding window of w milliseconds
// (claims at c-w < t <= c, as the rate-limit gate counts them).
func maxInWindow(claims []int64, w int64) int {
	best := 0
	for i, c := range claims {
		n := 0
		for _, d := range claims[:i+1] {
			if d > c-w {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

// metric sums the samples of a Prometheus metric on a node whose labels
// contain every one of match (e.g. `classification="timed_out"`).
func metric(t *testing.T, node *proctest.Server, name string, match ...string) float64 {
	t.Helper()
	resp, err := http.Get(node.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
line:
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
			continue
		}
		for _, m := range match {
			if !strings.Contains(l, m) {
				continue line
			}
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", l, err)
		}
		sum += v
	}
	return sum
}

// status is the HTTP status of a client error, 0 for none or a transport
// error.
func status(err error) int {
	var ae *client.Error
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// waitFor polls cond until it holds or the deadline passes. It is for
// "eventually" conditions (every job finished), never for speed.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s: %s", what, d, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// jobStates counts the endpoint's jobs by state, straight from the table.
func jobStates(t *testing.T, dbURL, endpoint string) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT state, count(*) FROM jobs WHERE endpoint = $1 GROUP BY state`, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var s string
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		out[s] = n
	}
	return out
}

func fmtStates(m map[string]int64) string { return fmt.Sprint(m) }
