package storetest

import (
	"database/sql"
	"slices"
	"strconv"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
)

// Upgrade0003 checks migration 0003 on a database left at 0002 by an
// earlier Ratchet, holding a running attempt the old way: a row of
// attempts with finished_at 0. db is a raw connection to an empty
// database, files the driver's migrations, and open opens the driver on
// the same database (without migrating). After Migrate the running
// attempt is the job's (store.RunningAttempt), read back the same, and
// can be finished; nothing else changed.
func Upgrade0003(t *testing.T, db *sql.DB, files []store.MigrationFile, open func() store.Store) {
	t.Helper()
	ctx := t.Context()
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT '')`)
	for _, f := range files[:2] {
		exec(f.SQL)
		exec(`INSERT INTO schema_migrations (version, name) VALUES (` + strconv.Itoa(f.Version) + `, '` + f.Name + `')`)
	}
	exec(`INSERT INTO projects (id, name, plan, created_at) VALUES (1, 'p', 'PRO', 1)`)
	exec(`INSERT INTO endpoints (id, project_id, name, policy, default_timeout_ms, max_concurrent, circuit_threshold, circuit_open_ms, version, created_at, updated_at)
		VALUES (1, 1, 'stripe', '{}', 30000, 10, 5, 30000, 1, 1, 1)`)
	exec(`INSERT INTO tools (id, project_id, name, version, endpoint_id, created_at) VALUES (1, 1, 'charge', 'v1', 1, 1)`)
	// Job 1 runs its second attempt; job 2 succeeded; job 3 never ran.
	exec(`INSERT INTO jobs (id, project_id, tool_id, tool, version, endpoint_id, endpoint, payload, policy, max_attempts, timeout_ms, attempt, state,
		due_at, lease_token, lease_expires_at, worker_id, created_at, updated_at, finished_at) VALUES
		(1, 1, 1, 'charge', 'v1', 1, 'stripe', '{}', '{}', 5, 30000, 2, 'running', 4000, 'L2', 35000, 'w-2', 1, 5000, 0),
		(2, 1, 1, 'charge', 'v1', 1, 'stripe', '{}', '{}', 5, 30000, 1, 'succeeded', 1000, 'L3', 0, 'w-1', 1, 3500, 3500),
		(3, 1, 1, 'charge', 'v1', 1, 'stripe', '{}', '{}', 5, 30000, 0, 'scheduled', 9000, '', 0, '', 1, 1, 0)`)
	exec(`INSERT INTO attempts (job_id, number, endpoint_id, worker_id, lease_token, claimed_at, finished_at, outcome, classification, http_status) VALUES
		(1, 1, 1, 'w-1', 'L1', 1000, 2000, 'failed', 'http_status', 503),
		(1, 2, 1, 'w-2', 'L2', 5000, 0, '', '', 0),
		(2, 1, 1, 'w-1', 'L3', 3000, 3500, 'succeeded', 'success', 200)`)

	st := open()
	applied, err := st.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"0003_claim_path"}; !slices.Equal(applied[:min(1, len(applied))], want) {
		t.Fatalf("Migrate applied %v, want %v first", applied, want)
	}
	var rows int64
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM attempts`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 2 {
		t.Errorf("attempts rows after 0003 = %d, want the 2 finished ones", rows)
	}
	first := store.Attempt{JobID: 1, Number: 1, EndpointID: 1, WorkerID: "w-1", LeaseToken: "L1", ClaimedAt: 1000, FinishedAt: 2000, Outcome: "failed",
		Classification: "http_status", HTTPStatus: 503}
	running := store.Attempt{JobID: 1, Number: 2, EndpointID: 1, WorkerID: "w-2", LeaseToken: "L2", ClaimedAt: 5000}
	read(t, st, func(q store.Queries) error {
		as, err := q.AttemptList(ctx, 1)
		if err != nil {
			return err
		}
		if len(as) != 2 || as[0] != first || as[1] != running {
			t.Errorf("attempts of the running job after 0003 = %+v, want %+v and %+v", as, first, running)
		}
		j, err := q.JobGetAnyProject(ctx, 1)
		if err != nil {
			return err
		}
		if got := store.RunningAttempt(j); got != running {
			t.Errorf("RunningAttempt after 0003 = %+v, want %+v", got, running)
		}
		as, err = q.AttemptList(ctx, 2)
		if err != nil {
			return err
		}
		if len(as) != 1 || as[0].Outcome != "succeeded" || as[0].ClaimedAt != 3000 {
			t.Errorf("attempts of the finished job after 0003 = %+v", as)
		}
		if as, err = q.AttemptList(ctx, 3); err != nil || len(as) != 0 {
			t.Errorf("attempts of the job that never ran = %+v, %v", as, err)
		}
		return nil
	})
	done := running
	done.FinishedAt, done.Outcome, done.Classification = 6000, "succeeded", "success"
	tx(t, st, func(q store.Queries) error { return q.AttemptFinish(ctx, &done) })
	read(t, st, func(q store.Queries) error {
		a, err := q.AttemptGet(ctx, &store.AttemptGetParams{JobID: 1, Number: 2})
		if err == nil && *a != done {
			t.Errorf("finished attempt after 0003 = %+v, want %+v", *a, done)
		}
		return err
	})
}

// Upgrade0006 checks migration 0006 on a database left at 0005 holding
// jobs: the counters start at the count of the jobs (and follow later
// writes), and each job's last classification and last failure's message
// are filled from its finished attempts. db, files and open are as for
// Upgrade0003.
func Upgrade0006(t *testing.T, db *sql.DB, files []store.MigrationFile, open func() store.Store) {
	t.Helper()
	ctx := t.Context()
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT '')`)
	for _, f := range files[:5] {
		exec(f.SQL)
		exec(`INSERT INTO schema_migrations (version, name) VALUES (` + strconv.Itoa(f.Version) + `, '` + f.Name + `')`)
	}
	exec(`INSERT INTO projects (id, name, plan, created_at) VALUES (1, 'p', 'PRO', 1)`)
	exec(`INSERT INTO endpoints (id, project_id, name, policy, default_timeout_ms, max_concurrent, circuit_threshold, circuit_open_ms, version, created_at, updated_at)
		VALUES (1, 1, 'stripe', '{}', 30000, 10, 5, 30000, 1, 1, 1), (2, 1, 'openai', '{}', 30000, 10, 5, 30000, 1, 1, 1)`)
	exec(`INSERT INTO tools (id, project_id, name, version, endpoint_id, created_at) VALUES (1, 1, 'charge', 'v1', 1, 1), (2, 1, 'chat', 'v1', 2, 1)`)
	// Job 1 failed twice then succeeded; job 2 failed for good; job 3
	// never ran; job 4 (openai) runs its first attempt.
	exec(`INSERT INTO jobs (id, project_id, tool_id, tool, version, endpoint_id, endpoint, payload, policy, max_attempts, timeout_ms, attempt, state,
		due_at, lease_token, lease_expires_at, worker_id, created_at, updated_at, finished_at, claimed_at) VALUES
		(1, 1, 1, 'charge', 'v1', 1, 'stripe', '{}', '{}', 5, 30000, 3, 'succeeded', 4000, '', 0, 'w', 1, 5000, 5000, 0),
		(2, 1, 1, 'charge', 'v1', 1, 'stripe', '{}', '{}', 5, 30000, 1, 'failed', 1000, '', 0, 'w', 1, 3500, 3500, 0),
		(3, 1, 1, 'charge', 'v1', 1, 'stripe', '{}', '{}', 5, 30000, 0, 'scheduled', 9000, '', 0, '', 1, 1, 0, 0),
		(4, 1, 2, 'chat', 'v1', 2, 'openai', '{}', '{}', 5, 30000, 1, 'running', 9000, 'L', 99000, 'w', 1, 1, 0, 7000)`)
	exec(`INSERT INTO attempts (job_id, number, endpoint_id, worker_id, lease_token, claimed_at, finished_at, outcome, classification, http_status, message) VALUES
		(1, 1, 1, 'w', 'L1', 1000, 2000, 'failed', 'server_error', 503, 'first 503'),
		(1, 2, 1, 'w', 'L2', 2500, 3000, 'timed_out', 'timed_out', 0, 'lease expired'),
		(1, 3, 1, 'w', 'L3', 4000, 5000, 'succeeded', 'success', 200, ''),
		(2, 1, 1, 'w', 'L4', 3000, 3500, 'failed', 'client_error', 400, 'bad request')`)

	st := open()
	applied, err := st.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) == 0 || applied[0] != "0006_job_counts" {
		t.Fatalf("Migrate applied %v, want 0006_job_counts first", applied)
	}
	want := map[int64][2]string{1: {"success", "lease expired"}, 2: {"client_error", "bad request"}, 3: {"", ""}, 4: {"", ""}}
	for id, w := range want {
		j := getJob(t, st, id)
		if j.LastClassification != w[0] || j.LastError != w[1] {
			t.Errorf("job %d after 0006: last classification %q, last error %q; want %q, %q", id, j.LastClassification, j.LastError, w[0], w[1])
		}
	}
	p := &store.Project{ID: 1}
	checkCounters(t, st, p)
	read(t, st, func(q store.Queries) error {
		m, err := q.JobCountsByState(ctx, 1)
		if err == nil && (m["succeeded"] != 1 || m["failed"] != 1 || m["scheduled"] != 1 || m["running"] != 1) {
			t.Errorf("counters after 0006: %v, want one job in each of succeeded, failed, scheduled and running", m)
		}
		return err
	})
	// The triggers follow the next writes.
	tx(t, st, func(q store.Queries) error {
		j, err := q.JobGetAnyProject(ctx, 3)
		if err != nil {
			return err
		}
		j.State, j.FinishedAt = "cancelled", 10_000
		return q.JobUpdate(ctx, j)
	})
	checkCounters(t, st, p)
}

// Upgrade0009 checks migration 0009 on a database left at 0008 holding
// jobs in several states and a tool: they read back with no flow key (and
// the tool with no flowKeyFrom), a key-less job is in no key's list, and
// a job inserted afterwards keeps its key and is found by it. db, files
// and open are as for Upgrade0003.
func Upgrade0009(t *testing.T, db *sql.DB, files []store.MigrationFile, open func() store.Store) {
	t.Helper()
	ctx := t.Context()
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT '')`)
	for _, f := range files[:8] {
		exec(f.SQL)
		exec(`INSERT INTO schema_migrations (version, name) VALUES (` + strconv.Itoa(f.Version) + `, '` + f.Name + `')`)
	}
	exec(`INSERT INTO projects (id, name, plan, created_at) VALUES (1, 'p', 'PRO', 1)`)
	exec(`INSERT INTO endpoints (id, project_id, name, policy, default_timeout_ms, max_concurrent, circuit_threshold, circuit_open_ms, version, created_at, updated_at)
		VALUES (1, 1, 'stripe', '{}', 30000, 10, 5, 30000, 1, 1, 1)`)
	exec(`INSERT INTO tools (id, project_id, name, version, endpoint_id, created_at) VALUES (1, 1, 'charge', 'v1', 1, 1)`)
	// Ids from the sequence (1, 2, 3), so the insert after the upgrade
	// takes the next one on PostgreSQL too.
	exec(`INSERT INTO jobs (project_id, tool_id, tool, version, endpoint_id, endpoint, payload, policy, max_attempts, timeout_ms, attempt, state,
		due_at, lease_token, lease_expires_at, worker_id, created_at, updated_at, finished_at, claimed_at) VALUES
		(1, 1, 'charge', 'v1', 1, 'stripe', '{"customer":"c1"}', '{}', 5, 30000, 1, 'succeeded', 1000, '', 0, 'w', 1, 3500, 3500, 0),
		(1, 1, 'charge', 'v1', 1, 'stripe', '{}', '{}', 5, 30000, 0, 'scheduled', 9000, '', 0, '', 1, 1, 0, 0),
		(1, 1, 'charge', 'v1', 1, 'stripe', '{}', '{}', 5, 30000, 1, 'running', 9000, 'L', 99000, 'w', 1, 1, 0, 7000)`)

	st := open()
	applied, err := st.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) == 0 || applied[0] != "0009_flow_keys" {
		t.Fatalf("Migrate applied %v, want 0009_flow_keys first", applied)
	}
	for id := int64(1); id <= 3; id++ {
		if j := getJob(t, st, id); j.FlowKey != "" || j.State == "" {
			t.Errorf("job %d after 0009: flow key %q, state %q; want no key and its state kept", id, j.FlowKey, j.State)
		}
	}
	read(t, st, func(q store.Queries) error {
		tool, err := q.ToolGetAnyProject(ctx, 1)
		if err == nil && tool.FlowKeyFrom != "" {
			t.Errorf("tool after 0009: flowKeyFrom %q, want none", tool.FlowKeyFrom)
		}
		return err
	})
	j := &store.Job{ProjectID: 1, ToolID: 1, Tool: "charge", Version: "v1", EndpointID: 1, Endpoint: "stripe", Payload: []byte(`{}`), Policy: []byte(`{}`),
		MaxAttempts: 5, TimeoutMs: 30000, State: "scheduled", DueAt: 10_000, CreatedAt: 10_000, UpdatedAt: 10_000, FlowKey: "acct_42"}
	tx(t, st, func(q store.Queries) error { return q.JobInsert(ctx, j) })
	read(t, st, func(q store.Queries) error {
		for key, want := range map[string][]int64{"acct_42": {j.ID}, "c1": nil} {
			jobs, err := q.JobList(ctx, store.JobFilter{ProjectID: 1, FlowKey: key})
			if err != nil {
				return err
			}
			var ids []int64
			for _, x := range jobs {
				ids = append(ids, x.ID)
			}
			if !slices.Equal(ids, want) {
				t.Errorf("jobs of flow key %q after 0009 = %v, want %v", key, ids, want)
			}
		}
		return nil
	})
}
