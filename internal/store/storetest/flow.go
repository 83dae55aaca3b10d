package storetest

import (
	"maps"
	"slices"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// testFlowKeys: the rows of flow_keys follow the jobs of keyed endpoints
// whatever writes them, and the per-key reads and claims see one key each.
func testFlowKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	f.ep.KeyMaxConcurrent = ptr(2)
	tx(t, s, func(q store.Queries) error {
		return q.EndpointUpdatePolicy(ctx, &store.EndpointUpdatePolicyParams{Endpoint: f.ep, ExpectedVersion: f.ep.Version})
	})
	if got := getEndpoint(t, s, f.ep.ID); !eqPtr(got.KeyMaxConcurrent, ptr(2)) || got.KeyRateLimitPerMinute != nil || got.KeyOrdered || got.FairKeys {
		t.Fatalf("keyed endpoint read back as %+v", got)
	}
	plain := newEndpoint(t, s, f.p.ID, "plain")
	plainTool := newTool(t, s, f.p.ID, plain.ID, "send", "v1")
	keyed := func(due int64, key string) *store.Job { j := job(f.p, f.ep, f.tool, due); j.FlowKey = key; return j }
	a1, a2, b1, none := keyed(1000, "a"), keyed(2000, "a"), keyed(1500, "b"), keyed(500, "")
	other := job(f.p, plain, plainTool, 100)
	other.FlowKey = "a"
	f.insert(t, s, a1, a2, b1, none, other)
	tools := []int64{f.tool.ID}

	ready := func(ep *store.Endpoint, now int64) []string {
		t.Helper()
		var keys []string
		read(t, s, func(q store.Queries) (err error) {
			keys, err = q.FlowKeysReady(ctx, &store.FlowKeysReadyParams{EndpointID: ep.ID, Now: now, Limit: 100})
			return err
		})
		return keys
	}
	// Rows for the keyed endpoint only, by ready time (each key's first due).
	if got := ready(f.ep, 5000); !slices.Equal(got, []string{"", "a", "b"}) {
		t.Errorf("ready keys at 5000 = %q, want '', a, b", got)
	}
	if got := ready(f.ep, 999); !slices.Equal(got, []string{""}) {
		t.Errorf("ready keys at 999 = %q, want ''", got)
	}
	if got := ready(plain, 5000); len(got) != 0 {
		t.Errorf("an endpoint that is not keyed has rows %q", got)
	}
	read(t, s, func(q store.Queries) error {
		next, err := q.FlowKeysNext(ctx, f.ep.ID, []string{"a", "b", "", "zz"}, false)
		if want := map[string]int64{"a": 1000, "b": 1500, "": 500}; err != nil || !maps.Equal(next, want) {
			t.Errorf("FlowKeysNext = %v, %v; want %v", next, err, want)
		}
		return err
	})

	// One job of each key asked for, oldest due first.
	var got []store.Job
	tx(t, s, func(q store.Queries) (err error) {
		got, err = q.JobsClaimKeys(ctx, &store.JobsClaimKeysParams{EndpointID: f.ep.ID, ToolIDs: tools, Keys: []string{"b", "a"}, WorkerID: "w", LeaseToken: "l", Now: 5000})
		return err
	})
	if !slices.Equal(ids(got), []int64{a1.ID, b1.ID}) || got[0].State != wire.JobRunning || got[0].FlowKey != "a" {
		t.Fatalf("JobsClaimKeys(b, a) = %+v, want jobs %d and %d running", got, a1.ID, b1.ID)
	}
	read(t, s, func(q store.Queries) error {
		running, err := q.FlowKeysRunning(ctx, f.ep.ID, []string{"a", "b", "c"})
		if want := map[string]int64{"a": 1, "b": 1}; err != nil || !maps.Equal(running, want) {
			t.Errorf("FlowKeysRunning = %v, %v; want %v", running, err, want)
		}
		return err
	})
	// a's first fails and is due again at 9000: its head in enqueue order
	// is not due, so an ordered claim takes nothing of a; a plain one
	// takes its second.
	reschedule(t, s, a1.ID, 9000)
	read(t, s, func(q store.Queries) error {
		claims, err := q.FlowKeysClaims(ctx, f.ep.ID, []string{"a", "b"}, 0)
		if want := map[string]store.FlowClaims{"a": {N: 1, Earliest: 5000}, "b": {N: 1, Earliest: 5000}}; err != nil || !maps.Equal(claims, want) {
			t.Errorf("FlowKeysClaims = %v, %v; want %v (a's finished attempt, b's running one)", claims, err, want)
		}
		if claims, _ := q.FlowKeysClaims(ctx, f.ep.ID, []string{"a"}, 5001); len(claims) != 0 {
			t.Errorf("FlowKeysClaims since 5001 = %v, want none", claims)
		}
		head, err := q.FlowKeyHead(ctx, f.ep.ID, "a")
		if err != nil || head != a1.ID {
			t.Errorf("FlowKeyHead(a) = %d, %v; want %d", head, err, a1.ID)
		}
		next, err := q.FlowKeysNext(ctx, f.ep.ID, []string{"a"}, true)
		if err != nil || next["a"] != 9000 {
			t.Errorf("FlowKeysNext(a, ordered) = %v, %v; want its head's 9000", next, err)
		}
		return err
	})
	claimKeys := func(ordered bool) []store.Job {
		t.Helper()
		var got []store.Job
		tx(t, s, func(q store.Queries) (err error) {
			got, err = q.JobsClaimKeys(ctx, &store.JobsClaimKeysParams{EndpointID: f.ep.ID, ToolIDs: tools, Keys: []string{"a"}, Ordered: ordered, WorkerID: "w", LeaseToken: "l2", Now: 6000})
			return err
		})
		return got
	}
	if got := claimKeys(true); len(got) != 0 {
		t.Errorf("ordered claim of a behind its head's retry = %v, want none", ids(got))
	}
	if got := claimKeys(false); !slices.Equal(ids(got), []int64{a2.ID}) {
		t.Errorf("claim of a = %v, want %d", ids(got), a2.ID)
	}
	// Key '' by JobsClaimDue's key filter.
	tx(t, s, func(q store.Queries) (err error) {
		got, err = q.JobsClaimDue(ctx, &store.JobsClaimDueParams{EndpointID: f.ep.ID, ToolIDs: tools, Limit: 10, WorkerID: "w", LeaseToken: "l3", Now: 6000, ByKey: true})
		return err
	})
	if !slices.Equal(ids(got), []int64{none.ID}) {
		t.Errorf("claim of key '' = %v, want %d", ids(got), none.ID)
	}

	// Ready times as written; parked keys wake nobody.
	tx(t, s, func(q store.Queries) error {
		return q.FlowKeysSet(ctx, f.ep.ID, map[string]int64{"a": 7000, "b": store.FlowKeyParked, "": 6500})
	})
	read(t, s, func(q store.Queries) error {
		at, err := q.FlowKeysWake(ctx, f.ep.ID, 6000)
		if err != nil || at != 6500 {
			t.Errorf("FlowKeysWake(6000) = %d, %v; want 6500", at, err)
		}
		at, _ = q.FlowKeysWake(ctx, f.ep.ID, 7000)
		if at != 0 {
			t.Errorf("FlowKeysWake(7000) = %d, want 0 (b is parked)", at)
		}
		return err
	})
	// b's job finishing offers its parked key again, at the job's write
	// time (its updatedAt, 1000 here, ahead of the others).
	setState(t, s, b1, wire.JobSucceeded, 8000)
	if got := ready(f.ep, 8000); !slices.Equal(got, []string{"b", "", "a"}) {
		t.Errorf("ready keys at 8000 after b's job finished = %q, want b, '', a", got)
	}
	tx(t, s, func(q store.Queries) error { return q.FlowKeysDelete(ctx, f.ep.ID, []string{"", "b"}) })
	if got := ready(f.ep, store.FlowKeyParked); !slices.Equal(got, []string{"a"}) {
		t.Errorf("after deleting '' and b: %q, want a", got)
	}
	// A rebuild gives each key with a job scheduled a row: a (9000 is
	// later than its 7000) and none for '' and b, which have none.
	tx(t, s, func(q store.Queries) error { return q.FlowKeysRebuild(ctx, f.ep.ID, false) })
	if got := ready(f.ep, 7000); !slices.Equal(got, []string{"a"}) {
		t.Errorf("after a rebuild: %q, want a at 7000", got)
	}
	tx(t, s, func(q store.Queries) error { return q.FlowKeysRebuild(ctx, f.ep.ID, true) })
	if got := ready(f.ep, store.FlowKeyParked); len(got) != 0 {
		t.Errorf("after clearing: %q", got)
	}
}

func getEndpoint(t *testing.T, s store.Store, id int64) *store.Endpoint {
	t.Helper()
	var ep *store.Endpoint
	read(t, s, func(q store.Queries) (err error) {
		ep, err = q.EndpointGetAnyProject(t.Context(), &store.EndpointGetAnyProjectParams{ID: id})
		return err
	})
	return ep
}

// testFlowKeysBusiest: the busiest keys of one endpoint, running and
// scheduled jobs counted (due ones apart), most first, key-less and
// finished jobs and other endpoints left out.
func testFlowKeysBusiest(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	plain := newEndpoint(t, s, f.p.ID, "plain")
	plainTool := newTool(t, s, f.p.ID, plain.ID, "send", "v1")
	keyed := func(due int64, key string) *store.Job { j := job(f.p, f.ep, f.tool, due); j.FlowKey = key; return j }
	a1, a2, a3, b1, b2, c1, none := keyed(100, "a"), keyed(200, "a"), keyed(9000, "a"), keyed(100, "b"), keyed(100, "b"), keyed(9000, "c"), keyed(100, "")
	done := keyed(100, "d")
	other := job(f.p, plain, plainTool, 100)
	other.FlowKey = "a"
	f.insert(t, s, a1, a2, a3, b1, b2, c1, none, done, other)
	claim(t, s, "w", "l", 150, a1.ID, b1.ID, b2.ID)
	setState(t, s, done, wire.JobSucceeded, 160)

	busiest := func(limit int) []store.FlowKeyLoad {
		t.Helper()
		var got []store.FlowKeyLoad
		read(t, s, func(q store.Queries) error {
			var capped bool
			var err error
			got, capped, err = q.FlowKeysBusiest(ctx, f.ep.ID, 1000, limit)
			if capped {
				t.Error("capped with 8 jobs")
			}
			return err
		})
		return got
	}
	want := []store.FlowKeyLoad{{Key: "a", Running: 1, Scheduled: 2, Due: 1}, {Key: "b", Running: 2}, {Key: "c", Scheduled: 1}}
	if got := busiest(10); !slices.Equal(got, want) {
		t.Errorf("busiest keys = %+v\nwant %+v", got, want)
	}
	if got := busiest(2); !slices.Equal(got, want[:2]) {
		t.Errorf("the 2 busiest keys = %+v", got)
	}
}
