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

// testCase is one case of the conformance suite.
type testCase struct {
	name string
	fn   func(t *testing.T, s store.Store)
	// covers names the methods of store.Queries and store.Store whose
	// behaviour the case checks, so a method's cases can be found by its
	// name. TestCasesCoverTheStore fails when a method is in no case's
	// list, or a name is not a method the case reaches.
	covers []string
	// fresh hands the case its store not yet migrated.
	fresh bool
}

// cases is the conformance suite, in the order Run starts it.
var cases = []testCase{
	{name: "Migrate", fn: testMigrate, covers: []string{"Migrate", "Migrations", "Driver"}, fresh: true},
	{name: "Projects", fn: testProjects, covers: []string{"ProjectCreate", "ProjectGet", "ProjectCount", "ProjectSetPlan"}},
	{name: "ProjectWrites", fn: testProjectWrites, covers: []string{"ProjectNoteWrite", "ProjectWrites"}},
	{name: "Keys", fn: testKeys, covers: []string{"KeyCreate", "KeyByHash", "KeyList", "KeyRevoke"}},
	{name: "EnumsStored", fn: testEnumsStored, covers: []string{"ProjectCreate", "ProjectGet", "KeyCreate", "KeyByHash", "EndpointUpdateCircuit", "EndpointGetAnyProject"}},
	{name: "Endpoints", fn: testEndpoints, covers: []string{"EndpointCreate", "EndpointGetInProject", "EndpointGetAnyProject", "EndpointList"}},
	{name: "EndpointAllFields", fn: testEndpointAllFields, covers: []string{"EndpointCreate", "EndpointGetInProject", "EndpointGetAnyProject", "EndpointList", "EndpointUpdatePolicy", "EndpointUpdateCircuit", "EndpointUpdateLearned", "EndpointUpdatePause"}},
	{name: "EndpointUpdatePolicy", fn: testEndpointUpdatePolicy, covers: []string{"EndpointUpdatePolicy"}},
	{name: "FlowKeys", fn: testFlowKeys, covers: []string{"FlowKeysReady", "FlowKeysRunning", "FlowKeysClaims", "JobsClaimKeys", "FlowKeysNext",
		"FlowKeysSet", "FlowKeysDelete", "FlowKeysRebuild", "FlowKeyHead", "FlowKeysWake"}},
	{name: "FlowKeysBusiest", fn: testFlowKeysBusiest, covers: []string{"FlowKeysBusiest"}},
	{name: "JobsFailed", fn: testJobsFailed, covers: []string{"JobsFailed", "JobReplayedBy"}},
	{name: "EndpointCircuit", fn: testEndpointCircuit, covers: []string{"EndpointUpdateCircuit"}},
	{name: "EndpointPause", fn: testEndpointPause, covers: []string{"EndpointUpdatePause"}},
	{name: "Audit", fn: testAudit, covers: []string{"AuditInsert", "AuditList"}},
	{name: "EndpointEvents", fn: testEndpointEvents, covers: []string{"EndpointEventInsert", "EndpointEventList", "EndpointEventsAfter", "EndpointEventsPrune"}},
	{name: "AlertConfig", fn: testAlertConfig, covers: []string{"AlertSinkCreate", "AlertSinkList", "AlertSinkDelete", "AlertSettingsGet", "AlertSettingsPut"}},
	{name: "Alerts", fn: testAlerts, covers: []string{"AlertFeedGet", "AlertFeedSet", "AlertInsert", "AlertByKey", "AlertAddCount", "AlertsCount",
		"AlertDeliveriesInsert", "AlertDeliveriesDue", "AlertDeliveryFinish", "AlertDeliveryList", "AlertSinkDelete", "AlertsPrune"}},
	{name: "RunList", fn: testRunList, covers: []string{"RunList"}},
	{name: "Tools", fn: testTools, covers: []string{"ToolCreate", "ToolGetInProject", "ToolGetAnyProject", "ToolList", "ToolListDelivery"}},
	{name: "Schedules", fn: testSchedules, covers: []string{"ScheduleCreate", "ScheduleGetInProject", "ScheduleList", "SchedulesDue", "ScheduleAdvance",
		"ScheduleSetPaused", "ScheduleDelete", "ScheduleTickInsert", "ScheduleTickList"}},
	{name: "ScheduleTicks", fn: testScheduleTicks, covers: []string{"ScheduleTickList", "ScheduleTicksLatest", "ScheduleTickCounts", "ScheduleTicksPrune"}},
	{name: "Runs", fn: testRuns, covers: []string{"RunCreate", "RunGetInProject", "RunFinish"}},
	{name: "JobInsert", fn: testJobInsert, covers: []string{"JobInsert", "JobGetInProject", "JobGetAnyProject", "JobByIdempotencyKey"}},
	{name: "JobsInsert", fn: testJobsInsert, covers: []string{"JobsInsert"}},
	{name: "JobIdempotency", fn: testJobIdempotency, covers: []string{"JobInsert", "JobByIdempotencyKey"}},
	{name: "JobUpdate", fn: testJobUpdate, covers: []string{"JobUpdate"}},
	{name: "JobsBatch", fn: testJobsBatch, covers: []string{"JobsGetInProject", "JobsUpdate"}},
	{name: "JobList", fn: testJobList, covers: []string{"JobList", "JobCount"}},
	{name: "JobSort", fn: testJobSort, covers: []string{"JobList", "JobCount", "JobScanEnd"}},
	{name: "JobSearch", fn: testJobSearch, covers: []string{"JobList", "JobCount", "JobCountGroupByState", "JobScanEnd"}},
	{name: "JobCounters", fn: testJobCounters, covers: []string{"JobCountsByState", "JobCountsByEndpoint", "JobCountGroupByState"}},
	{name: "ConcurrentJobCounters", fn: testConcurrentJobCounters, covers: []string{"JobCountsByState"}},
	{name: "CountDue", fn: testCountDue, covers: []string{"CountDue"}},
	{name: "JobCountsByState", fn: testJobCountsByState, covers: []string{"JobCountsByState"}},
	{name: "DueEndpoints", fn: testDueEndpoints, covers: []string{"DueEndpoints"}},
	{name: "JobsClaimable", fn: testJobsClaimable, covers: []string{"JobsClaimable"}},
	{name: "JobsClaim", fn: testJobsClaim, covers: []string{"JobsClaim"}},
	{name: "JobsClaimDue", fn: testJobsClaimDue, covers: []string{"JobsClaimDue"}},
	{name: "CountRunning", fn: testCountRunning, covers: []string{"CountRunning"}},
	{name: "CountScheduled", fn: testCountScheduled, covers: []string{"CountScheduled"}},
	{name: "AttemptsFinishedSince", fn: testAttemptsFinishedSince, covers: []string{"AttemptsFinishedSince"}},
	{name: "AttemptsFinishedIn", fn: testAttemptsFinishedIn, covers: []string{"AttemptsFinishedIn"}},
	{name: "ClaimsSince", fn: testClaimsSince, covers: []string{"ClaimsSince"}},
	{name: "NextDueAt", fn: testNextDueAt, covers: []string{"NextDueAt"}},
	{name: "ExpiredLeases", fn: testExpiredLeases, covers: []string{"ExpiredLeases"}},
	{name: "JobsPrune", fn: testJobsPrune, covers: []string{"JobsPrune"}},
	{name: "PrunedClaims", fn: testPrunedClaims, covers: []string{"JobsPrune", "PrunedClaimsCount", "FlowKeysPrunedClaims"}},
	{name: "Attempts", fn: testAttempts, covers: []string{"AttemptGet", "AttemptList", "AttemptFinish"}},
	{name: "AttemptsBatch", fn: testAttemptsBatch, covers: []string{"AttemptsByKeys", "AttemptsFinish"}},
	{name: "AttemptOutcomes", fn: testAttemptOutcomes, covers: []string{"AttemptOutcomes"}},
	{name: "Workers", fn: testWorkers, covers: []string{"WorkersTouch", "WorkerList", "WorkersPrune"}},
	{name: "HistoryCursor", fn: testHistoryCursor, covers: []string{"HistoryCursorGet", "HistoryCursorSet"}},
	{name: "HistoryRollUp", fn: testHistoryRollUp, covers: []string{"HistoryCompute", "HistoryInsert", "HistoryList", "HistoryPrune"}},
	{name: "Now", fn: testNow, covers: []string{"Now"}},
	{name: "TxRollback", fn: testTxRollback, covers: []string{"Tx"}},
	{name: "TxContextEnded", fn: testTxContextEnded, covers: []string{"Tx", "ProjectCreate"}},
	{name: "Read", fn: testRead, covers: []string{"Read"}},
	{name: "ConcurrentWriters", fn: testConcurrentWriters, covers: []string{"ConcurrentWriters", "Tx"}},
	{name: "ConcurrentClaims", fn: testConcurrentClaims, covers: []string{"JobsClaimable", "JobsClaim"}},
	{name: "ConcurrentClaimsDue", fn: testConcurrentClaimsDue, covers: []string{"JobsClaimDue"}},
	{name: "Notify", fn: testNotify, covers: []string{"Notify", "Wakeups"}},
	{name: "Ping", fn: testPing, covers: []string{"Ping"}},
	{name: "Close", fn: testClose, covers: []string{"Close"}},
}

// Run runs the conformance suite. Every subtest opens its own store with
// open, so subtests run in parallel.
func Run(t *testing.T, open Opener) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			if !tc.fresh {
				if _, err := s.Migrate(t.Context()); err != nil {
					t.Fatalf("migrate: %v", err)
				}
			}
			tc.fn(t, s)
		})
	}
}
