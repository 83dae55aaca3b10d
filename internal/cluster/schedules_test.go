package cluster_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

// TestScheduleOneJobPerTickAcrossNodes: three nodes fire the same 20
// schedules (@every 10s, spread over 9 s, so ticks fire all through each
// 10 s); one node is killed with SIGKILL after the first ticks fired.
// Every tick of every schedule, from its first to its latest, has exactly
// one job whose idempotency key names the schedule and the tick: none
// lost, none twice.
func TestScheduleOneJobPerTickAcrossNodes(t *testing.T) {
	dbURL := pgtest.URL(t)
	nodes := startNodes(t, dbURL, 3)
	ctx := testCtx(t, 2*time.Minute)
	o := client.New(nodes[0].URL, ownerKey)
	if _, err := o.CreateEndpoint(ctx, "cron", client.EndpointPolicy{}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.PublishTool(ctx, client.ToolSpec{Name: "tick", Version: "1", Endpoint: "cron"}); err != nil {
		t.Fatal(err)
	}
	const schedules, every = 20, 10_000
	for i := range schedules {
		if _, err := o.CreateSchedule(ctx, client.ScheduleCreate{Name: fmt.Sprintf("s%02d", i), Cron: "@every 10s", Tool: "tick@1",
			Payload: []byte(`{"at":"{{tickAt}}"}`), Overlap: wire.OverlapAllow, CatchUp: wire.CatchUpAll, SpreadMs: 9_000}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int64 { return query(t, dbURL, `SELECT count(*) FROM schedule_ticks`)[0][0] }
	waitFor(t, 40*time.Second, "the first ticks", func() (bool, string) { n := count(); return n >= 5, fmt.Sprint(n, " ticks") })
	nodes[1].Kill()
	// Two more rounds of ticks on the two survivors.
	waitFor(t, 60*time.Second, "three ticks of every schedule", func() (bool, string) {
		rows := query(t, dbURL, `SELECT count(*) FROM schedules s WHERE (SELECT count(*) FROM schedule_ticks t WHERE t.schedule_id = s.id) < 3`)
		return rows[0][0] == 0, fmt.Sprint(rows[0][0], " schedules with fewer than 3 ticks")
	})
	checkTicks(t, dbURL, every)
}

// checkTicks checks every schedule's ticks: consecutive from the first
// tick after its creation, each with its own job keyed by the tick.
func checkTicks(t *testing.T, dbURL string, every int64) {
	t.Helper()
	rows := query(t, dbURL, `SELECT s.id, s.created_at, t.tick_at, t.job_id, (SELECT count(*) FROM jobs j WHERE j.idempotency_key = 'schedule:' || s.id || ':' || t.tick_at)
		FROM schedules s JOIN schedule_ticks t ON t.schedule_id = s.id ORDER BY s.id, t.tick_at`)
	prev := map[int64]int64{}
	for _, r := range rows {
		id, created, tick, job, keyed := r[0], r[1], r[2], r[3], r[4]
		want := prev[id] + every
		if prev[id] == 0 {
			want = (created/every + 1) * every
		}
		if tick != want {
			t.Errorf("schedule %d: tick %d after %d, want %d (a tick lost or doubled)", id, tick, prev[id], want)
		}
		if job == 0 || keyed != 1 {
			t.Errorf("schedule %d tick %d: job %d, %d jobs with its key; want one", id, tick, job, keyed)
		}
		prev[id] = tick
	}
	// The nodes keep firing: jobs and ticks are counted in one statement
	// (one snapshot), where a tick and its job commit together; counted
	// apart from the rows above, a tick fired in between had its job
	// counted but not its row.
	jobs := query(t, dbURL, `SELECT count(*), count(DISTINCT idempotency_key), (SELECT count(*) FROM schedule_ticks) FROM jobs`)[0]
	if jobs[0] != jobs[2] || jobs[1] != jobs[0] {
		t.Errorf("%d jobs (%d keys) for %d ticks; want one each", jobs[0], jobs[1], jobs[2])
	}
	t.Logf("%d ticks of %d schedules, one job each", len(rows), len(prev))
}
