package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// failWith claims one job of tool and reports a failure with status and
// message.
func (h *harness) failWith(tool string, status int, msg string) engine.ReportResult {
	h.t.Helper()
	c := h.claimOne(tool)
	r, err := h.e.Report(h.ctx, h.owner, engine.ReportRequest{JobID: c.Job.ID, LeaseToken: c.LeaseToken,
		Report: classify.Report{HTTPStatus: status, Message: msg}})
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// failureFixture: on endpoint payments (maxConcurrent 3), six jobs
// exhausted by a 503 whose message differs only in numbers and request
// ids, a minute apart, then two failed by a 400 naming a customer.
func failureFixture(t *testing.T) *harness {
	return failureFixtureOn(t, newHarness(t))
}

// failureFixtureOn is failureFixture on the harness h.
func failureFixtureOn(t *testing.T, h *harness) *harness {
	h.endpoint("payments", `{"maxConcurrent":3}`)
	h.tool(`{"name":"pay","version":"1","endpoint":"payments"}`)
	one := int64(1)
	for i := range 6 {
		h.enqueue("pay@1", &one)
		h.failWith("pay@1", 503, fmt.Sprintf("timeout after %dms on req %04x", 2990+i*7, 0x8f3a+i*0x1111))
		h.clk.Advance(time.Minute)
	}
	for i := range 2 {
		h.enqueue("pay@1", &one)
		h.failWith("pay@1", 400, fmt.Sprintf("no such customer \"cus_%d\"", i))
		h.clk.Advance(time.Minute)
	}
	return h
}

// TestFailureGroups: failures group by classification and fingerprint,
// the largest first, with counts per state, first and last seen and a
// sparkline that sums to the count.
func TestFailureGroups(t *testing.T) {
	h := failureFixture(t)
	start := t0.UnixMilli()
	list, err := h.e.FailureGroups(h.ctx, h.owner, "payments", 0, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Groups) != 2 || list.Scanned != 8 || list.Capped {
		t.Fatalf("groups: %+v", list)
	}
	g := list.Groups[0]
	if g.Classification != "server_error" || g.Fingerprint != "timeout after <n>ms on req <hex>" || g.Count != 6 || g.Exhausted != 6 || g.Failed != 0 ||
		g.FirstSeen != engine.FormatTime(start) || g.LastSeen != engine.FormatTime(start+5*60_000) || g.Group != classify.GroupID(g.Classification, g.Fingerprint) ||
		g.Example != "timeout after 3025ms on req e48f" {
		t.Errorf("timeout group: %+v", g)
	}
	b := list.Groups[1]
	if b.Classification != "client_error" || b.Fingerprint != `no such customer "…"` || b.Count != 2 || b.Failed != 2 {
		t.Errorf("customer group: %+v", b)
	}
	for _, g := range list.Groups {
		var sum int64
		for _, n := range g.Sparkline {
			sum += n
		}
		if len(g.Sparkline) != 8 || sum != g.Count {
			t.Errorf("group %s: sparkline %v, want 8 buckets summing to %d", g.Group, g.Sparkline, g.Count)
		}
	}
	// All eight failed within the last 24 h: in the last bucket of a
	// 24-hour range's 8 three-hour buckets.
	if list.Groups[0].Sparkline[7] != 6 || list.BucketMs != 3*3600_000 {
		t.Errorf("sparkline %v, bucket %d ms", list.Groups[0].Sparkline, list.BucketMs)
	}
	// A range that ends before the customer failures leaves them out.
	early, err := h.e.FailureGroups(h.ctx, h.owner, "payments", start, start+6*60_000, 6)
	if err != nil || len(early.Groups) != 1 || early.Groups[0].Count != 6 || early.Groups[0].Sparkline[0] != 1 || early.Groups[0].Sparkline[5] != 1 {
		t.Fatalf("first six minutes: %v %+v", err, early)
	}
	_, err = h.e.FailureGroups(h.ctx, h.owner, "payments", start, start, 6)
	wantKind(t, "since = until", err, engine.KindInvalid)
	_, err = h.e.FailureGroups(h.ctx, h.owner, "nope", 0, 0, 6)
	wantKind(t, "no such endpoint", err, engine.KindNotFound)
}

// TestReplayFailuresPacedAndAudited: a group's preview counts without
// changing anything; a replay with a stale count does nothing; a replay
// with the confirmed count replays each job once, writes one audit entry,
// and the new jobs never run more than maxConcurrent (3) at a time.
func TestReplayFailuresPacedAndAudited(t *testing.T) {
	h := failureFixture(t)
	list, _ := h.e.FailureGroups(h.ctx, h.owner, "payments", 0, 0, 0)
	f := engine.FailureFilter{Endpoint: "payments", Group: list.Groups[0].Group}
	pre, err := h.e.ReplayFailures(h.ctx, h.owner, f, true, 0)
	if err != nil || pre.Count != 6 || pre.Skipped != 0 || pre.Scanned != 8 || len(pre.Done) != 0 {
		t.Fatalf("preview: %v %+v", err, pre)
	}
	_, err = h.e.ReplayFailures(h.ctx, h.owner, f, false, 5)
	wantKind(t, "replay with a stale count", err, engine.KindConflict)
	if c := h.claim([]string{"pay@1"}, 10); len(c) != 0 {
		t.Fatalf("a preview or a refused replay made %d jobs claimable", len(c))
	}
	res, err := h.e.ReplayFailures(h.ctx, h.owner, f, false, 6)
	if err != nil || len(res.Done) != 6 || len(res.Failed) != 0 {
		t.Fatalf("replay: %v %+v", err, res)
	}
	audit, _ := h.e.Audit(h.ctx, h.owner, "endpoint:payments", 0, 10)
	if len(audit) != 1 || audit[0].Action != "failures.replay" ||
		!strings.HasPrefix(audit[0].Detail, "replayed 6 of 6 failed jobs (endpoint payments, group "+f.Group+") as jobs ") {
		t.Fatalf("audit: %+v", audit)
	}
	// Pacing: each claim asks for 10, and gets only the room left. The
	// probe's answer closed the circuit, so the recovery ramp paces the
	// claims too: a second passes between claims.
	inFlight, done := []engine.Claimed{}, 0
	for done < 6 {
		h.clk.Advance(time.Second)
		got := h.claim([]string{"pay@1"}, 10)
		inFlight = append(inFlight, got...)
		if len(inFlight) > 3 {
			t.Fatalf("%d replayed jobs in flight on an endpoint with maxConcurrent 3", len(inFlight))
		}
		if len(inFlight) == 0 {
			t.Fatalf("nothing claimable with %d of 6 replays done", done)
		}
		h.succeed(inFlight[0])
		inFlight, done = inFlight[1:], done+1
	}
	again, err := h.e.ReplayFailures(h.ctx, h.owner, f, true, 0)
	if err != nil || again.Count != 0 || again.Skipped != 6 {
		t.Fatalf("preview after the replay: %v %+v", err, again)
	}
	// Confirming a count of 0 replays nothing and writes no audit entry.
	if none, err := h.e.ReplayFailures(h.ctx, h.owner, f, false, 0); err != nil || none.Count != 0 || len(none.Done) != 0 {
		t.Fatalf("replay of an empty selection: %v %+v", err, none)
	}
	if audit, _ := h.e.Audit(h.ctx, h.owner, "endpoint:payments", 0, 10); len(audit) != 1 {
		t.Errorf("%d audit entries after a replay and an empty one, want 1", len(audit))
	}
	after, _ := h.e.FailureGroups(h.ctx, h.owner, "payments", 0, 0, 0)
	if after.Groups[0].Replayed != 6 || after.Groups[1].Replayed != 0 {
		t.Errorf("replayed counts after: %+v", after.Groups)
	}
	// Filters narrow; an unknown endpoint is not found; since after until is invalid.
	byClass, _ := h.e.ReplayFailures(h.ctx, h.owner, engine.FailureFilter{Classification: "client_error"}, true, 0)
	byState, _ := h.e.ReplayFailures(h.ctx, h.owner, engine.FailureFilter{State: wire.JobFailed}, true, 0)
	if byClass.Count != 2 || byState.Count != 2 {
		t.Errorf("by classification %+v, by state %+v: want 2 each", byClass, byState)
	}
	_, err = h.e.ReplayFailures(h.ctx, h.owner, engine.FailureFilter{Endpoint: "nope"}, true, 0)
	wantKind(t, "unknown endpoint", err, engine.KindNotFound)
	_, err = h.e.ReplayFailures(h.ctx, h.owner, engine.FailureFilter{Since: 2000, Until: 1000}, true, 0)
	wantKind(t, "since after until", err, engine.KindInvalid)
}

// TestConcurrentReplaysReplayOnce: two replays of one group at once, with
// the same confirmed count, make one new job per failed job between them;
// the job one replays the other reports as replayed already. On SQLite
// here and on PostgreSQL (TestConcurrentReplaysReplayOncePostgres), where
// the two transactions do run at once.
func TestConcurrentReplaysReplayOnce(t *testing.T) {
	concurrentReplays(t, failureFixture(t))
}

func concurrentReplays(t *testing.T, h *harness) {
	list, err := h.e.FailureGroups(h.ctx, h.owner, "payments", 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := engine.FailureFilter{Endpoint: "payments", Group: list.Groups[0].Group}
	results := make([]*engine.FailureReplayResult, 2)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			// The later of the two may find the selection changed (a
			// conflict on the count, nothing done) or, when both read it
			// before either wrote, meet each job replayed by the other.
			res, err := h.e.ReplayFailures(h.ctx, h.owner, f, false, 6)
			var ee *engine.Error
			if err != nil && (!errors.As(err, &ee) || ee.Kind != engine.KindConflict) {
				t.Error(err)
			}
			results[i] = res
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	done := 0
	for _, r := range results {
		if r != nil {
			done += len(r.Done)
		}
	}
	scheduled, _, err := h.e.CountJobs(h.ctx, h.owner, store.JobFilter{States: []wire.JobState{wire.JobScheduled}})
	if done != 6 || scheduled != 6 {
		t.Fatalf("two replays of 6 jobs at once made %d new jobs (%d scheduled, %v); want 6", done, scheduled, err)
	}
	for _, r := range results {
		if r == nil {
			continue
		}
		for _, f := range r.Failed {
			if f.Err.Kind != engine.KindConflict || !strings.Contains(f.Err.Message, "was replayed already, as job ") {
				t.Errorf("refused job %d: %v", f.ID, f.Err)
			}
		}
	}
}
