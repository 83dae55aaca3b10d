package chaos_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/chaos"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
)

// logWriter turns the run's progress lines into test log lines.
type logWriter struct {
	mu sync.Mutex
	t  *testing.T
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestShortRun is the chaos run made small enough for ./scripts/test:
// three real `ratchet serve` nodes on a private PostgreSQL cluster, the
// third with its clock 2 s ahead, three worker processes and the local
// provider, 45 s of faults (at least one node killed with SIGKILL and
// restarted, one PostgreSQL restart, one worker killed while it holds
// leases) and 2,000 jobs, then every invariant: no acknowledged enqueue
// lost, no job succeeded twice, maxConcurrent and the rate limit held at
// the provider and in the database, every job ended. The metered
// endpoint's rate limit (40 a minute for 60 jobs) binds, so its check
// checks something.
//
// It needs a PostgreSQL it may restart (pgtest.NewServer, from the
// pg_ctl ./scripts/test exports); it skips without one, and under
// RATCHET_REQUIRE_POSTGRES=1 fails instead.
func TestShortRun(t *testing.T) {
	if os.Getenv(pgtest.EnvRequire) == "1" && os.Getenv(pgtest.EnvPgCtl) == "" {
		t.Fatal("the chaos run restarts PostgreSQL and needs " + pgtest.EnvPgCtl + " (./scripts/test sets it for the cluster it starts); " +
			pgtest.EnvRequire + "=1 forbids skipping")
	}
	pg := pgtest.NewServer(t)
	bin := proctest.Binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cfg := chaos.Config{
		Binary:      bin,
		DatabaseURL: pg.URL(),
		PgCtl:       os.Getenv(pgtest.EnvPgCtl),
		PgData:      filepath.Join(pg.Dir, "data"),
		PGRestarts:  1,
		Duration:    45 * time.Second,
		Jobs:        2000,
		// The metered jobs are enqueued over the first 38 s; 24 a minute
		// binds even when a loaded machine claims them at half their pace
		// (at 40 a minute, a run beside another copy of the suite claimed
		// at most 32 in any minute, and the check below checked nothing).
		MeteredJobs: 60,
		RateLimit:   24,
		Nodes:       3,
		Skew:        2 * time.Second,
		Workers:     3,
		Concurrency: 8,
		// Fewer than the 24 handler slots, so the gate has work to do when
		// a backlog builds up (after the PostgreSQL restart).
		MaxConcurrent: 16,
		Drain:         3 * time.Minute,
		Seed:          1,
		Progress:      &logWriter{t: t},
	}
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.Print(&out)
	t.Log("\n" + out.String())
	for _, v := range rep.Violations {
		t.Errorf("invariant broken: %s", v)
	}
	kills := 0
	for _, n := range rep.NodeKills {
		kills += n
	}
	if kills < 1 || rep.PGRestarts < 1 || rep.CrashesMidCall < 1 {
		t.Errorf("the run made %d node kills, %d PostgreSQL restarts and %d worker crashes in the middle of a call; want at least one of each", kills, rep.PGRestarts, rep.CrashesMidCall)
	}
	if rep.Acknowledged != cfg.Jobs {
		t.Errorf("%d of %d enqueues acknowledged: the producer gave up on some", rep.Acknowledged, cfg.Jobs)
	}
	for _, e := range rep.Endpoints {
		if e.RateLimit > 0 && int64(e.ClaimsIn60s) != e.RateLimit {
			t.Errorf("endpoint %s: at most %d claims in 60 s; its limit %d never bound, so the check checked nothing", e.Name, e.ClaimsIn60s, e.RateLimit)
		}
	}
}

// TestShortRunKeys is a short chaos run with flow keys (--keys): the main
// endpoint's jobs over 3 keys, keyMaxConcurrent 2, with 16 handler slots
// and a maxConcurrent of 16, so the limit per key is what binds; three
// nodes on the shared test server, node kills and worker crashes every
// 6–10 s for 20 s, no PostgreSQL restart. Every invariant must hold,
// keyMaxConcurrent at the provider and in the database among them, and
// some key must reach its limit at the provider (else the check checked
// nothing).
func TestShortRunKeys(t *testing.T) {
	dbURL := pgtest.ServerURL(t)
	bin := proctest.Binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	every := [2]time.Duration{6 * time.Second, 10 * time.Second}
	cfg := chaos.Config{Binary: bin, DatabaseURL: dbURL, Duration: 20 * time.Second, Jobs: 400, Nodes: 3, Skew: 2 * time.Second,
		Workers: 2, Concurrency: 8, MaxConcurrent: 16, Keys: 3, KeyMaxConcurrent: 2, KillEvery: every, CrashEvery: every,
		Drain: 3 * time.Minute, Seed: 3, Progress: &logWriter{t: t}}
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.Print(&out)
	t.Log("\n" + out.String())
	for _, v := range rep.Violations {
		t.Errorf("invariant broken: %s", v)
	}
	if rep.Keys == nil || rep.Keys.Keys != cfg.Keys || rep.Keys.KeyMaxConcurrent != cfg.KeyMaxConcurrent {
		t.Fatalf("the report's flow keys: %+v, want %d keys at keyMaxConcurrent %d", rep.Keys, cfg.Keys, cfg.KeyMaxConcurrent)
	}
	if rep.Keys.AtLimit == 0 {
		t.Errorf("no key had %d calls at once at the provider (most %d): the limit never bound, so the check checked nothing", cfg.KeyMaxConcurrent, rep.Keys.PeakAtProvider)
	}
	if kills := rep.NodeKills[0] + rep.NodeKills[1] + rep.NodeKills[2]; kills < 1 || rep.WorkerCrashes < 1 {
		t.Errorf("the run made %d node kills and %d worker crashes; want at least one of each", kills, rep.WorkerCrashes)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := chaos.Config{Binary: "ratchet", DatabaseURL: "postgres://127.0.0.1/x", Duration: time.Minute, Jobs: 1000, Nodes: 3, Workers: 2, Concurrency: 4,
		MaxConcurrent: 8, RateLimit: 60, Lease: 10 * time.Second, KillEvery: [2]time.Duration{15 * time.Second, 30 * time.Second},
		CrashEvery: [2]time.Duration{15 * time.Second, 30 * time.Second}, Drain: time.Minute}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a good config: %v", err)
	}
	for _, tc := range []struct {
		field  string
		change func(*chaos.Config)
	}{
		{"Binary", func(c *chaos.Config) { c.Binary = "" }},
		{"DatabaseURL", func(c *chaos.Config) { c.DatabaseURL = "ratchet.db" }},
		{"PgCtl/PgData", func(c *chaos.Config) { c.PgCtl = "/usr/bin/pg_ctl" }},
		{"PGRestarts", func(c *chaos.Config) { c.PGRestarts = 2 }},
		{"Duration", func(c *chaos.Config) { c.Duration = time.Second }},
		{"MeteredJobs", func(c *chaos.Config) { c.MeteredJobs = c.Jobs }},
		{"Skew", func(c *chaos.Config) { c.Skew = 2 * time.Hour }},
		{"KillEvery", func(c *chaos.Config) { c.KillEvery = [2]time.Duration{30 * time.Second, 15 * time.Second} }},
		{"Keys", func(c *chaos.Config) { c.Keys = -1 }},
		{"KeyMaxConcurrent", func(c *chaos.Config) { c.Keys, c.KeyMaxConcurrent = 3, 0 }},
	} {
		c := ok
		tc.change(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s out of range: %v, want an error naming it", tc.field, err)
		}
	}
}
