package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestFloorBurnsDownAndCleansUp runs the floor at a small size on the test
// server: it prints its one line, leaves every job done (run checks that
// itself and fails otherwise) and drops its table. It never asserts on
// speed.
func TestFloorBurnsDownAndCleansUp(t *testing.T) {
	url := pgtest.URL(t)
	var out bytes.Buffer
	if err := run(t.Context(), url, 2500, 100, 3, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	if re := regexp.MustCompile(`^floor: 2500 jobs in \S+ = \d+ jobs/s \(claim and mark done only; batch 100, 3 claimers\)\n$`); !re.MatchString(out.String()) {
		t.Errorf("output %q does not match %s", out.String(), re)
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
