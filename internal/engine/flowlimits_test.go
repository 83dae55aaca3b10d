package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/api"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// Limits per flow key (docs/flow-control.md), on both drivers.
func TestKeyConcurrency(t *testing.T)         { testKeyConcurrency(t, newHarness(t)) }
func TestKeyConcurrencyPostgres(t *testing.T) { testKeyConcurrency(t, newPGHarnessBare(t)) }
func TestKeyRate(t *testing.T)                { testKeyRate(t, newHarness(t)) }
func TestKeyRatePostgres(t *testing.T)        { testKeyRate(t, newPGHarnessBare(t)) }
func TestKeyOrdered(t *testing.T)             { testKeyOrdered(t, newHarness(t)) }
func TestKeyOrderedPostgres(t *testing.T)     { testKeyOrdered(t, newPGHarnessBare(t)) }
func TestFairKeys(t *testing.T)               { testFairKeys(t, newHarness(t)) }
func TestFairKeysPostgres(t *testing.T)       { testFairKeys(t, newPGHarnessBare(t)) }
func TestKeyLimitsRefused(t *testing.T)       { testKeyLimitsRefused(t, newHarness(t)) }

// keyEndpoint makes endpoint "acme" with these settings beside the seed
// policy, and tool "call@1" on it.
func keyEndpoint(h *harness, settings string) {
	h.t.Helper()
	h.endpoint("acme", strings.TrimSuffix(seedEndpoint, "}")+","+settings+"}")
	h.tool(`{"name":"call","version":"1","endpoint":"acme"}`)
}

// enqueueKeys enqueues one job per key given, in order, in one batch.
func (h *harness) enqueueKeys(keys ...string) []*store.Job {
	h.t.Helper()
	rs := make([]engine.EnqueueRequest, len(keys))
	for i, k := range keys {
		rs[i] = engine.EnqueueRequest{Tool: "call@1", Payload: json.RawMessage(`{}`), FlowKey: k}
	}
	out, err := h.e.EnqueueBatch(h.ctx, h.owner, rs)
	if err != nil {
		h.t.Fatal(err)
	}
	jobs := make([]*store.Job, len(out))
	for i, o := range out {
		jobs[i] = o.Job
	}
	return jobs
}

// byKey counts claimed jobs per flow key.
func byKey(cs []engine.Claimed) map[string]int {
	m := map[string]int{}
	for _, c := range cs {
		m[c.Job.FlowKey]++
	}
	return m
}

// flowRows counts the endpoint's rows in flow_keys, parked ones too.
func (h *harness) flowRows() int {
	h.t.Helper()
	var n int
	err := h.st.Read(h.ctx, func(q store.Queries) error {
		eps, err := q.EndpointList(h.ctx, 0)
		if err != nil {
			return err
		}
		for _, ep := range eps {
			keys, err := q.FlowKeysReady(h.ctx, &store.FlowKeysReadyParams{EndpointID: ep.ID, Now: store.FlowKeyParked, Limit: 1_000_000})
			if err != nil {
				return err
			}
			n += len(keys)
		}
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

func testKeyConcurrency(t *testing.T, h *harness) {
	keyEndpoint(h, `"keyMaxConcurrent":2`)
	jobs := h.enqueueKeys("a", "a", "a", "a", "b", "b", "b", "", "", "")
	got := h.claim([]string{"call@1"}, 10)
	if m := byKey(got); m["a"] != 2 || m["b"] != 2 || m[""] != 3 {
		t.Fatalf("claimed per key %v, want a:2 b:2 and the 3 key-less (no limit of their own)", m)
	}
	if hd := h.hold(jobs[2].ID); hd.Gate != wire.GateKeyConcurrent || hd.Detail != `key "a" has 2 of 2 in flight (keyMaxConcurrent)` {
		t.Fatalf("hold of a's third job: %+v", hd)
	}
	if more := h.claim([]string{"call@1"}, 10); len(more) != 0 {
		t.Fatalf("claimed %v with every key at its limit", byKey(more))
	}
	// The busiest keys say the same: a's 2 due jobs and b's 1 held by
	// their concurrency; key-less jobs are not listed.
	l, err := h.e.FlowKeys(h.ctx, h.owner, "acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, k := range l.Keys {
		row := fmt.Sprintf("%s r%d s%d d%d h%d", k.Key, k.Running, k.Scheduled, k.Due, k.Held)
		if k.HeldBy != nil {
			row += " " + string(k.HeldBy.Gate)
		}
		rows = append(rows, row)
	}
	if got, want := strings.Join(rows, "; "), "a r2 s2 d2 h2 key_concurrency; b r2 s1 d1 h1 key_concurrency"; !l.Keyed || got != want {
		t.Errorf("FlowKeys (keyed %v) = %s\nwant %s", l.Keyed, got, want)
	}
	if l, err := h.e.FlowKeys(h.ctx, h.owner, "acme", 1); err != nil || len(l.Keys) != 1 || l.Keys[0].Key != "a" {
		t.Errorf("FlowKeys with limit 1 = %+v, %v", l, err)
	}
	for _, c := range got {
		if c.Job.FlowKey == "a" {
			h.succeed(c)
			break
		}
	}
	if m := byKey(h.claim([]string{"call@1"}, 10)); len(m) != 1 || m["a"] != 1 {
		t.Fatalf("after one of a's finished: claimed %v, want a:1", m)
	}

	// The endpoint's own maxConcurrent (10) holds above the keys': seven
	// run, and of key c's five only three fit.
	h.enqueueKeys("c", "c", "c", "c", "c")
	if m := byKey(h.claim([]string{"call@1"}, 10)); m["c"] != 2 {
		t.Fatalf("with 8 of the endpoint's 10 running: claimed %v, want c:2", m)
	}

	// An endpoint that becomes keyed holds the jobs it queued before.
	h.endpoint("late", seedEndpoint)
	h.tool(`{"name":"late","version":"1","endpoint":"late"}`)
	for range 3 {
		if _, err := h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: "late@1", FlowKey: "z"}); err != nil {
			t.Fatal(err)
		}
	}
	ep, _ := h.e.Endpoint(h.ctx, h.owner, "late")
	pol, _ := engine.CurrentPolicy(ep)
	pol.KeyMaxConcurrent = ptr(int64(1))
	if _, err := h.e.UpdateEndpointPolicy(h.ctx, h.owner, "late", ep.Version, pol); err != nil {
		t.Fatal(err)
	}
	if got := h.claim([]string{"late@1"}, 10); len(got) != 1 {
		t.Fatalf("endpoint made keyed with 3 of key z queued: claimed %d, want 1", len(got))
	}
}

func testKeyRate(t *testing.T, h *harness) {
	keyEndpoint(h, `"keyRateLimitPerMinute":3`)
	jobs := h.enqueueKeys("a", "a", "a", "a", "a", "b")
	got := h.claim([]string{"call@1"}, 10)
	if m := byKey(got); m["a"] != 3 || m["b"] != 1 {
		t.Fatalf("claimed per key %v, want a:3 b:1", m)
	}
	for _, c := range got {
		h.succeed(c)
	}
	if more := h.claim([]string{"call@1"}, 10); len(more) != 0 {
		t.Fatalf("claimed %v within a's minute", byKey(more))
	}
	// The window is 61 s: the minute and a second for delivery (see
	// engine.KeyRateWindowMs).
	window := time.Duration(engine.KeyRateWindowMs) * time.Millisecond
	until := engine.FormatTime(h.clk.Now().Add(window).UnixMilli())
	if hd := h.hold(jobs[3].ID); hd.Gate != wire.GateKeyRate || hd.Until != until ||
		hd.Detail != `key "a" had 3 claims in the last 61 s (keyRateLimitPerMinute 3, and a second for delivery)` {
		t.Fatalf("hold of a's fourth job: %+v, want key_rate until %s", hd, until)
	}
	// Exactly a minute after a's claims: a fourth claim now could reach
	// the provider within 60 s of the first, had the first been delivered
	// a few milliseconds slower (TestKeyLimitsAcrossNodes saw 59.98 s).
	h.clk.Advance(time.Minute)
	if more := h.claim([]string{"call@1"}, 10); len(more) != 0 {
		t.Fatalf("claimed %v a minute after a's claims, inside the second kept for delivery", byKey(more))
	}
	h.clk.Advance(window - time.Minute - time.Millisecond)
	if more := h.claim([]string{"call@1"}, 10); len(more) != 0 {
		t.Fatalf("claimed %v a millisecond before a's window ended", byKey(more))
	}
	h.clk.Advance(time.Millisecond)
	if m := byKey(h.claim([]string{"call@1"}, 10)); m["a"] != 2 {
		t.Fatalf("after a's window: claimed %v, want a:2", m)
	}
}

func testKeyOrdered(t *testing.T, h *harness) {
	keyEndpoint(h, `"keyOrdered":true`)
	jobs := h.enqueueKeys("a", "a", "a", "b", "", "")
	got := h.claim([]string{"call@1"}, 10)
	ids := map[int64]bool{}
	for _, c := range got {
		ids[c.Job.ID] = true
	}
	// One job per ordered key, its first; key-less jobs are not ordered.
	if len(got) != 4 || !ids[jobs[0].ID] || !ids[jobs[3].ID] || !ids[jobs[4].ID] || !ids[jobs[5].ID] {
		t.Fatalf("claimed %v, want jobs %d, %d, %d, %d", ids, jobs[0].ID, jobs[3].ID, jobs[4].ID, jobs[5].ID)
	}
	if hd := h.hold(jobs[1].ID); hd.Gate != wire.GateKeyOrder {
		t.Fatalf("hold of a's second job while its first runs: %+v", hd)
	}
	// a's first fails and waits for its retry: a's next does not jump it.
	for _, c := range got {
		if c.Job.ID == jobs[0].ID {
			h.fail(c, 503, nil)
		}
	}
	if more := h.claim([]string{"call@1"}, 10); len(more) != 0 {
		t.Fatalf("claimed %v while a's first waits for its retry", byKey(more))
	}
	if hd := h.hold(jobs[1].ID); hd.Gate != wire.GateKeyOrder || hd.Detail != fmt.Sprintf(`key "a" is ordered: job %d, enqueued before this one, runs first`, jobs[0].ID) {
		t.Fatalf("hold of a's second job behind its first's retry: %+v", hd)
	}
	if l, err := h.e.FlowKeys(h.ctx, h.owner, "acme", 10); err != nil || len(l.Keys) != 2 || l.Keys[0].Key != "a" || l.Keys[0].Held != 2 ||
		l.Keys[0].HeldBy == nil || l.Keys[0].HeldBy.Gate != wire.GateKeyOrder || l.Keys[0].HeldBy.Until == "" {
		t.Fatalf("FlowKeys while a's first waits for its retry: %+v, %v", l, err)
	}
	h.clk.Advance(20 * time.Second)
	retry := h.claim([]string{"call@1"}, 10)
	if len(retry) != 1 || retry[0].Job.ID != jobs[0].ID || retry[0].Job.Attempt != 2 {
		t.Fatalf("after the backoff: claimed %+v, want a's first again", retry)
	}
	h.succeed(retry[0])
	for _, want := range []*store.Job{jobs[1], jobs[2]} {
		next := h.claim([]string{"call@1"}, 10)
		if len(next) != 1 || next[0].Job.ID != want.ID {
			t.Fatalf("claimed %v, want a's next, job %d", next, want.ID)
		}
		h.succeed(next[0])
	}
}

// testFairKeys: key a's backlog of 300 is enqueued before keys b–k's 5
// each. With fair sharing the small keys' jobs are all claimed within the
// first rounds; without it, behind the backlog.
func testFairKeys(t *testing.T, h *harness) {
	twenty := strings.Replace(seedEndpoint, `"maxConcurrent":10`, `"maxConcurrent":20`, 1)
	h.endpoint("fair", strings.TrimSuffix(twenty, "}")+`,"fairKeys":true}`)
	h.endpoint("fifo", twenty)
	h.tool(`{"name":"fair","version":"1","endpoint":"fair"}`)
	h.tool(`{"name":"fifo","version":"1","endpoint":"fifo"}`)
	for _, tool := range []string{"fair@1", "fifo@1"} {
		var rs []engine.EnqueueRequest
		for range 300 {
			rs = append(rs, engine.EnqueueRequest{Tool: tool, FlowKey: "a"})
		}
		for k := 'b'; k <= 'k'; k++ {
			for range 5 {
				rs = append(rs, engine.EnqueueRequest{Tool: tool, FlowKey: string(k)})
			}
		}
		if _, err := h.e.EnqueueBatch(h.ctx, h.owner, rs); err != nil {
			t.Fatal(err)
		}
	}
	// lastSmall is the claim order at which the last job of b–k went.
	lastSmall := func(tool string) int {
		n, last := 0, 0
		for {
			got := h.claim([]string{tool}, 20)
			if len(got) == 0 {
				return last
			}
			for _, c := range got {
				n++
				if c.Job.FlowKey != "a" {
					last = n
				}
				h.succeed(c)
			}
		}
	}
	fair, fifo := lastSmall("fair@1"), lastSmall("fifo@1")
	t.Logf("the last of b–k's 50 jobs went %dth of 350 with fair sharing, %dth without", fair, fifo)
	// Eleven keys take turns: b–k's 50 jobs are done within about five
	// rounds of eleven.
	if fair > 100 {
		t.Errorf("fair sharing: the last of b–k's jobs went %dth of 350, want within the first 100", fair)
	}
	if fifo != 350 {
		t.Errorf("without fair sharing: the last of b–k's jobs went %dth, want 350th (behind a's backlog)", fifo)
	}
	if n := h.flowRows(); n != 0 {
		t.Errorf("%d flow key rows left with nothing scheduled or running", n)
	}
}

func testKeyLimitsRefused(t *testing.T, h *harness) {
	for _, c := range []struct{ body, field, value string }{
		{`{"keyMaxConcurrent":0}`, "keyMaxConcurrent", "0"},
		{`{"keyMaxConcurrent":"5"}`, "keyMaxConcurrent", `"5"`},
		{`{"keyRateLimitPerMinute":1000001}`, "keyRateLimitPerMinute", "1000001"},
		{`{"keyOrdered":"yes"}`, "keyOrdered", `"yes"`},
		{`{"fairKeys":1}`, "fairKeys", "1"},
	} {
		fields, err := backoff.ReadObject([]byte(c.body), "endpoint")
		if err != nil {
			t.Fatal(err)
		}
		_, err = api.DecodeEndpointPolicy(fields, false, nil)
		if err == nil || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), c.value) {
			t.Errorf("%s: %v, want an error naming %s and %s", c.body, err, c.field, c.value)
		}
	}
}

// TestKeyedClaimWantsMore: a claim asks for more than the keys hold (12
// keys of one job each, room for two each, a claim of 20). It takes the
// twelve and returns; it went round the keys forever before, each having
// taken a job earlier in the claim.
func TestKeyedClaimWantsMore(t *testing.T) {
	h := newHarness(t)
	h.endpoint("acme", strings.Replace(seedEndpoint, `"maxConcurrent":10`, `"maxConcurrent":50,"keyMaxConcurrent":2`, 1))
	h.tool(`{"name":"call","version":"1","endpoint":"acme"}`)
	var keys []string
	for i := range 12 {
		keys = append(keys, fmt.Sprintf("k%d", i))
	}
	h.enqueueKeys(keys...)
	done := make(chan []engine.Claimed, 1)
	go func() {
		c, err := h.e.Claim(h.ctx, h.owner, engine.ClaimRequest{WorkerID: "w", Tools: []string{"call@1"}, Max: 20})
		if err != nil {
			t.Error(err)
		}
		done <- c
	}()
	select {
	case got := <-done:
		if len(got) != 12 {
			t.Fatalf("claimed %d jobs, want the 12", len(got))
		}
	case <-time.After(time.Minute):
		t.Fatal("the claim did not return in a minute")
	}
}

// A key with room under its limits holds none of its due jobs: explain
// calls each of them claimable, so the busiest keys say 0 held too (a
// key with 0 in flight and 23 due, limit 2, was listed "21 held by the
// concurrency limit per key").
func TestKeyRoomHoldsNothing(t *testing.T)         { testKeyRoomHoldsNothing(t, newHarness(t)) }
func TestKeyRoomHoldsNothingPostgres(t *testing.T) { testKeyRoomHoldsNothing(t, newPGHarnessBare(t)) }

func testKeyRoomHoldsNothing(t *testing.T, h *harness) {
	keyEndpoint(h, `"keyMaxConcurrent":2`)
	keys := make([]string, 23)
	for i := range keys {
		keys[i] = "tenant-1"
	}
	jobs := h.enqueueKeys(keys...)
	if hd := h.hold(jobs[22].ID); hd.Gate != wire.GateNone {
		t.Fatalf("explain of a due job of a key with room: %+v, want claimable", hd)
	}
	l, err := h.e.FlowKeys(h.ctx, h.owner, "acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Keys) != 1 || l.Keys[0].Held != 0 || l.Keys[0].HeldBy != nil {
		t.Fatalf("FlowKeys = %+v, want tenant-1 with 0 held, as explain says", l.Keys)
	}
	// Once the key's room is taken, explain and the list agree again: all
	// of its due jobs wait for the concurrency limit.
	if got := h.claim([]string{"call@1"}, 10); len(got) != 2 {
		t.Fatalf("claimed %d, want the key's 2", len(got))
	}
	if hd := h.hold(jobs[22].ID); hd.Gate != wire.GateKeyConcurrent {
		t.Fatalf("explain with the key full: %+v", hd)
	}
	l, err = h.e.FlowKeys(h.ctx, h.owner, "acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	if k := l.Keys[0]; k.Held != 21 || k.HeldBy == nil || k.HeldBy.Gate != wire.GateKeyConcurrent {
		t.Fatalf("FlowKeys with the key full = %+v, want 21 held by key_concurrency", k)
	}
}
