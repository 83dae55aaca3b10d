package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/wire"
)

// TestExplainNotDue: a job enqueued with runAt (attempt 0) is held by its
// due time because it is scheduled for then, not by a backoff delay; a
// retry is held by its backoff delay; a job not due on a paused endpoint or
// behind an open circuit says that too.
func TestExplainNotDue(t *testing.T) {
	h := newHarness(t)
	h.endpoint("payments", seedEndpoint)
	h.tool(`{"name":"pay","version":"1","endpoint":"payments"}`)
	runAt := h.clk.Now().Add(time.Hour)
	later, err := h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: "pay@1", RunAt: ptr(runAt)})
	if err != nil {
		t.Fatal(err)
	}
	explain := func(id int64) *engine.Hold {
		t.Helper()
		hold, err := h.e.Explain(h.ctx, h.owner, id)
		if err != nil {
			t.Fatal(err)
		}
		return hold
	}
	want := "not due yet: scheduled to run at " + engine.FormatTime(runAt.UnixMilli())
	if hold := explain(later.Job.ID); hold.Gate != wire.GateDueTime || hold.Detail != want || hold.Until != engine.FormatTime(runAt.UnixMilli()) {
		t.Errorf("a job scheduled for later: %+v, want detail %q", hold, want)
	}

	retry := h.enqueue("pay@1", nil)
	h.fail(h.claimOne("pay@1"), 503, nil)
	if hold := explain(retry.ID); hold.Gate != wire.GateDueTime || hold.Detail != "not due yet: the backoff delay has not passed" {
		t.Errorf("a retry: %+v", hold)
	}

	hinted := h.enqueue("pay@1", nil)
	h.fail(h.claimOne("pay@1"), 429, map[string]string{"Retry-After": "600"})
	if hold := explain(hinted.ID); hold.Gate != wire.GateDueTime || hold.Detail != "not due yet: the provider's Retry-After hint or the backoff delay, whichever was longer, has not passed" {
		t.Errorf("a retry after a Retry-After hint: %+v", hold)
	}

	if _, err := h.e.PauseEndpoint(h.ctx, h.owner, "payments", "provider incident #12"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{later.Job.ID, retry.ID} {
		if hold := explain(id); hold.Gate != wire.GateDueTime || !strings.Contains(hold.Detail, "; and then held by its endpoint: endpoint payments was paused by bootstrap owner") || !strings.Contains(hold.Detail, "provider incident #12") {
			t.Errorf("job %d not due on a paused endpoint: %+v", id, hold)
		}
	}
	if _, err := h.e.ResumeEndpoint(h.ctx, h.owner, "payments"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.OpenCircuit(h.ctx, h.owner, "payments"); err != nil {
		t.Fatal(err)
	}
	if hold := explain(later.Job.ID); !strings.HasPrefix(hold.Detail, want+"; and then held by its endpoint: ") || !strings.Contains(hold.Detail, "circuit") {
		t.Errorf("a job not due behind an open circuit: %+v", hold)
	}
}
