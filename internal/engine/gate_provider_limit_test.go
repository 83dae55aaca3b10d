package engine_test

import (
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// The provider limit's scenario for TestEveryGateCountsItsHolds: the
// provider said one request a minute (stored as learned), so the second
// claim is held and counted.
func init() {
	gateHoldScenarios[wire.GateProviderLimit] = gateHoldScenario{`"maxConcurrent":10`, func(h *harness, _ *engine.Engine, endpoint, _ string) {
		h.learn(endpoint, store.LearnedLimit{Limit: 1, WindowMs: 60_000, At: h.clk.Now().UnixMilli(), Source: "ietf"})
	}}
}

// learn stores a learned limit on the endpoint, as a provider's headers
// would have.
func (h *harness) learn(endpoint string, l store.LearnedLimit) {
	h.t.Helper()
	err := h.st.Tx(h.ctx, func(q store.Queries) error {
		ep, err := q.EndpointGetInProject(h.ctx, &store.EndpointGetInProjectParams{ProjectID: h.owner.ProjectID, Name: endpoint})
		if err != nil {
			return err
		}
		ep.Learned = l
		return q.EndpointUpdateLearned(h.ctx, ep)
	})
	if err != nil {
		h.t.Fatal(err)
	}
}

// TestProviderLimitGate: a learned limit holds claims over its window and
// explain names it; a reset the provider announced holds everything until
// then; a limit not said again for learnedFor stops holding.
func TestProviderLimitGate(t *testing.T) {
	bothDrivers(t, func(t *testing.T, h *harness) {
		h.endpoint("api", `{"maxConcurrent":100}`)
		h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
		for range 30 {
			h.enqueue("call@1", nil)
		}
		now := h.clk.Now().UnixMilli()
		h.learn("api", store.LearnedLimit{Limit: 5, WindowMs: 1000, At: now, Source: "ratelimit"})
		if got := h.claim([]string{"call@1"}, 100); len(got) != 5 {
			t.Fatalf("claimed %d under a learned 5 a second", len(got))
		}
		list, _ := h.e.Jobs(h.ctx, h.owner, store.JobFilter{States: []wire.JobState{wire.JobScheduled}})
		hd := h.hold(list[0].ID)
		if hd.Gate != wire.GateProviderLimit || hd.Detail != `endpoint "api" made 5 claims in the provider's window of 1 s, the limit it learned from the provider (ratelimit headers)` {
			t.Fatalf("hold = %+v", hd)
		}
		h.clk.Advance(time.Second)
		if got := h.claim([]string{"call@1"}, 100); len(got) != 5 {
			t.Fatalf("claimed %d in the next second", len(got))
		}
		// None remain until a reset 10 s away.
		now = h.clk.Now().UnixMilli()
		h.learn("api", store.LearnedLimit{Limit: 5, WindowMs: 1000, At: now, ResetAt: now + 10_000, Source: "x-ratelimit"})
		h.clk.Advance(9 * time.Second)
		if got := h.claim([]string{"call@1"}, 100); len(got) != 0 {
			t.Fatalf("claimed %d before the provider's reset", len(got))
		}
		h.clk.Advance(time.Second)
		if got := h.claim([]string{"call@1"}, 100); len(got) != 5 {
			t.Fatalf("claimed %d at the reset", len(got))
		}
		// Not said again for a minute: the limit no longer holds.
		h.clk.Advance(61 * time.Second)
		if got := h.claim([]string{"call@1"}, 100); len(got) != 15 {
			t.Fatalf("claimed %d after the learned limit lapsed, want the 15 left", len(got))
		}
	})
}
