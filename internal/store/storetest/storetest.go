// Package storetest is the conformance suite every store driver must pass.
// It is written against store.Store and store.Queries only, never against a
// driver, so SQLite and PostgreSQL are held to the very same semantics. A
// semantic change to the store lands here first.
//
// Every time the suite passes is a plain unix-millisecond number chosen by the
// test; drivers must never read a clock of their own, except in Queries.Now,
// which reads the database's clock when asked.
package storetest

import (
	"testing"

	"github.com/getratchet/ratchet/internal/store"
)

// Opener returns a new, empty, not yet migrated store that nothing else
// uses, and arranges for it to be closed when the test ends.
type Opener func(t *testing.T) store.Store

// Run runs the conformance suite. Every subtest opens its own store with
// open, so subtests run in parallel.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"Projects", testProjects},
		{"ProjectWrites", testProjectWrites},
		{"Keys", testKeys},
		{"Endpoints", testEndpoints},
		{"EndpointUpdatePolicy", testEndpointUpdatePolicy},
		{"EndpointCircuit", testEndpointCircuit},
		{"EndpointPause", testEndpointPause},
		{"Audit", testAudit},
		{"Tools", testTools},
		{"Runs", testRuns},
		{"JobInsert", testJobInsert},
		{"JobsInsert", testJobsInsert},
		{"JobIdempotency", testJobIdempotency},
		{"JobUpdate", testJobUpdate},
		{"JobsBatch", testJobsBatch},
		{"JobList", testJobList},
		{"JobSearch", testJobSearch},
		{"JobCounters", testJobCounters},
		{"ConcurrentJobCounters", testConcurrentJobCounters},
		{"CountDue", testCountDue},
		{"JobCountsByState", testJobCountsByState},
		{"DueEndpoints", testDueEndpoints},
		{"JobsClaimable", testJobsClaimable},
		{"JobsClaim", testJobsClaim},
		{"JobsClaimDue", testJobsClaimDue},
		{"CountRunning", testCountRunning},
		{"CountScheduled", testCountScheduled},
		{"AttemptsFinishedSince", testAttemptsFinishedSince},
		{"ClaimsSince", testClaimsSince},
		{"NextDueAt", testNextDueAt},
		{"ExpiredLeases", testExpiredLeases},
		{"JobsPrune", testJobsPrune},
		{"Attempts", testAttempts},
		{"AttemptsBatch", testAttemptsBatch},
		{"AttemptOutcomes", testAttemptOutcomes},
		{"Workers", testWorkers},
		{"HistoryCursor", testHistoryCursor},
		{"HistoryRollUp", testHistoryRollUp},
		{"Now", testNow},
		{"TxRollback", testTxRollback},
		{"Read", testRead},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ConcurrentClaims", testConcurrentClaims},
		{"ConcurrentClaimsDue", testConcurrentClaimsDue},
		{"Notify", testNotify},
		{"Ping", testPing},
		{"Close", testClose},
	}
	t.Run("Migrate", func(t *testing.T) {
		t.Parallel()
		testMigrate(t, open(t))
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			if _, err := s.Migrate(t.Context()); err != nil {
				t.Fatalf("migrate: %v", err)
			}
			tc.fn(t, s)
		})
	}
}
