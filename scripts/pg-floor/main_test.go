package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestFloorBurnsDownAndCleansUp runs the floor, plain and with --record,
// at a small size on the test server: each prints its one line, leaves
// every job done and, with the record, one attempt row per job (run checks
// both itself and fails otherwise), and drops its tables. It never asserts
// on speed.
func TestFloorBurnsDownAndCleansUp(t *testing.T) {
	url := pgtest.URL(t)
	for _, tc := range []struct {
		record bool
		what   string
	}{{false, "claim and mark done only"}, {true, "claim, mark done and Ratchet's record"}} {
		var out bytes.Buffer
		if err := run(t.Context(), url, 2500, 100, 3, tc.record, &out); err != nil {
			t.Fatalf("run (record %v): %v", tc.record, err)
		}
		if re := regexp.MustCompile(`^floor: 2500 jobs in \S+ = \d+ jobs/s \(` + regexp.QuoteMeta(tc.what) + `; batch 100, 3 claimers\)\n$`); !re.MatchString(out.String()) {
			t.Errorf("output %q does not match %s", out.String(), re)
		}
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var left int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'floor_jobs_%'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d floor tables left in the schema", left)
	}
}
