package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

// TestBudgetsAndWindowsHoldAcrossThreeNodesPostgres: three engines on one
// PostgreSQL schema stand for three nodes, on one fake clock, each with
// three claimers racing. Whatever the interleaving, the endpoint's daily
// budget (40, days of Europe/Paris) and monthly budget (60), its quiet
// hours (22:00-07:00 Paris) and the keys' daily budgets of a keyed
// endpoint (5 each) are never exceeded: the optimistic path confirms
// under the endpoint's lock, the keyed path counts under it.
func TestBudgetsAndWindowsHoldAcrossThreeNodesPostgres(t *testing.T) {
	url := pgtest.URL(t)
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, st)
	h.endpoint("metered", `{"preset":"STANDARD","maxConcurrent":1000,"dailyCallBudget":40,"monthlyCallBudget":60,"budgetTimeZone":"Europe/Paris","quietHours":"22:00-07:00"}`)
	h.tool(`{"name":"call","version":"1","endpoint":"metered"}`)
	h.endpoint("tenants", `{"preset":"STANDARD","maxConcurrent":1000,"keyDailyCallBudget":5,"budgetTimeZone":"Europe/Paris"}`)
	h.tool(`{"name":"tenant","version":"1","endpoint":"tenants"}`)
	for i := range 200 {
		h.enqueue("call@1", nil)
		h.enqueueKey("tenant@1", fmt.Sprintf("k%d", i%4))
	}
	type node struct {
		e     *engine.Engine
		owner *engine.Principal
	}
	var nodes []node
	for range 3 {
		st, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		e, err := engine.New(engine.Config{Store: st, Clock: h.clk})
		if err != nil {
			t.Fatal(err)
		}
		owner, err := e.Authenticate(h.ctx, mustOwnerSecret(t, h))
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, node{e, owner})
	}
	// race has every node's claimers claim tool until none gets any, and
	// returns how many jobs each key (or "" for none) was handed.
	race := func(tool string) map[string]int {
		var mu sync.Mutex
		got, seen := map[string]int{}, map[int64]bool{}
		var wg sync.WaitGroup
		for n, nd := range nodes {
			for w := range 3 {
				wg.Go(func() {
					for empty := 0; empty < 3; {
						cs, err := nd.e.Claim(h.ctx, nd.owner, engine.ClaimRequest{WorkerID: fmt.Sprintf("n%d-w%d", n, w), Tools: []string{tool}, Max: 4})
						if err != nil {
							t.Errorf("claim: %v", err)
							return
						}
						if len(cs) == 0 {
							empty++
							continue
						}
						mu.Lock()
						for _, c := range cs {
							if seen[c.Job.ID] {
								t.Errorf("job %d handed out twice", c.Job.ID)
							}
							seen[c.Job.ID] = true
							got[c.Job.FlowKey]++
						}
						mu.Unlock()
						if _, err := nd.e.ReportBatch(h.ctx, nd.owner, reports(cs, classifyOK)); err != nil {
							t.Errorf("report: %v", err)
							return
						}
					}
				})
			}
		}
		wg.Wait()
		return got
	}
	// 10:00 in Paris, December 2nd.
	if got := race("call@1"); got[""] != 40 {
		t.Errorf("the first day: %d claimed, dailyCallBudget 40", got[""])
	}
	keys := race("tenant@1")
	for k, n := range keys {
		if n != 5 {
			t.Errorf("key %s: %d claimed in a day, keyDailyCallBudget 5", k, n)
		}
	}
	if len(keys) != 4 {
		t.Errorf("keys served: %v, want the 4", keys)
	}
	h.clk.Set(at("2026-12-02T23:00:00Z")) // midnight in Paris: a new day, in the quiet hours
	if got := race("call@1"); got[""] != 0 {
		t.Errorf("in the quiet hours: %d claimed", got[""])
	}
	if hd := h.hold(h.firstScheduled("call@1").ID); hd.Gate != wire.GateDeliveryWindow || hd.Until != "2026-12-03T06:00:00.000Z" {
		t.Errorf("at midnight: hold = %+v, want delivery_window until 07:00 Paris", hd)
	}
	if got := race("tenant@1"); len(got) != 4 || got["k0"] != 5 {
		t.Errorf("the keys' next day: %v, want 5 each", got)
	}
	h.clk.Set(at("2026-12-03T06:00:00Z")) // 07:00: the window ends; 20 left of the month
	if got := race("call@1"); got[""] != 20 {
		t.Errorf("the second day: %d claimed, want the month's 20 left", got[""])
	}
	if hd := h.hold(h.firstScheduled("call@1").ID); hd.Gate != wire.GateMonthlyBudget || hd.Until != "2026-12-31T23:00:00.000Z" {
		t.Errorf("after the month's budget: hold = %+v", hd)
	}
}
