package engine_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/wire"
)

// Every gate that holds a claim counts its holds (ratchet_gate_holds_total,
// docs/operations.md), on both drivers: for each gate of wire.Gates() a
// claim runs into it and the observer must hear of it. Before, a job held
// by its flow key's keyMaxConcurrent (or keyRateLimitPerMinute, or its
// order) was counted only by a claim that took nothing, and the claim
// that filled the key took a job while later claims skip a parked key: no
// series at all, though explain showed the hold.
func TestEveryGateCountsItsHolds(t *testing.T) { testEveryGateCountsItsHolds(t, newHarness(t)) }
func TestEveryGateCountsItsHoldsPostgres(t *testing.T) {
	testEveryGateCountsItsHolds(t, newPGHarnessBare(t))
}

// holdCounter records GateHeld calls.
type holdCounter struct {
	mu    sync.Mutex
	holds map[wire.Gate]int
}

func (c *holdCounter) Claimed(string, int, []time.Duration) {}
func (c *holdCounter) Reported(string, string)              {}
func (c *holdCounter) QuotaIgnored(string)                  {}
func (c *holdCounter) GateHeld(g wire.Gate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holds[g]++
}

func (c *holdCounter) count(g wire.Gate) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.holds[g]
}

// gateHoldScenario is the endpoint settings that make a gate hold (in
// place of the seed's maxConcurrent and rateLimitPerMinute) and what else
// it needs (a pause, a failure) before the claims.
type gateHoldScenario struct {
	settings string
	before   func(h *harness, obs *engine.Engine, endpoint, tool string)
}

// gateHoldScenarios are the scenarios per gate. A gate added later may
// add its own from its test file (an init in gate_<value>_test.go), so the
// gate stays a unit.
var gateHoldScenarios = map[wire.Gate]gateHoldScenario{
	wire.GatePaused: {`"maxConcurrent":10`, func(h *harness, _ *engine.Engine, endpoint, _ string) {
		if _, err := h.e.PauseEndpoint(h.ctx, h.owner, endpoint, "incident"); err != nil {
			h.t.Fatal(err)
		}
	}},
	wire.GateCircuit: {`"maxConcurrent":10,"circuitFailureThreshold":1,"circuitOpenMs":60000`, func(h *harness, obs *engine.Engine, _, tool string) {
		c, err := obs.Claim(h.ctx, h.owner, engine.ClaimRequest{WorkerID: "w", Tools: []string{tool}, Max: 1})
		if err != nil || len(c) != 1 {
			h.t.Fatalf("claim %s: %d jobs, %v", tool, len(c), err)
		}
		h.fail(c[0], 503, nil)
	}},
	wire.GateMaxConcurrent: {`"maxConcurrent":1`, nil},
	wire.GateRateLimit:     {`"maxConcurrent":10,"rateLimitPerMinute":1`, nil},
	wire.GateKeyOrder:      {`"maxConcurrent":10,"keyOrdered":true`, nil},
	wire.GateKeyConcurrent: {`"maxConcurrent":10,"keyMaxConcurrent":1`, nil},
	wire.GateKeyRate:       {`"maxConcurrent":10,"keyRateLimitPerMinute":1`, nil},
}

// notHolds are the gates no claim is held by: a claim reads only
// endpoints with due jobs, and none is the absence of a hold.
var notHolds = map[wire.Gate]string{
	wire.GateDueTime: "a job not yet due is not a claim's hold: its endpoint is not read",
	wire.GateNone:    "nothing holds the job",
}

func testEveryGateCountsItsHolds(t *testing.T, h *harness) {
	counter := &holdCounter{holds: map[wire.Gate]int{}}
	obs, err := engine.New(engine.Config{Store: h.st, Clock: h.clk, Rand: func() float64 { return h.u }, Observer: counter})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range wire.Gates() {
		if _, ok := notHolds[g]; ok {
			continue
		}
		sc, ok := gateHoldScenarios[g]
		if !ok {
			t.Errorf("gate %s has no scenario here: add one, so its holds are known to count", g)
			continue
		}
		name := strings.ReplaceAll(string(g), "_", "-")
		h.endpoint(name, strings.Replace(seedEndpoint, `"maxConcurrent":10,"rateLimitPerMinute":null`, sc.settings, 1))
		h.tool(`{"name":"` + name + `","version":"1","endpoint":"` + name + `"}`)
		tool := name + "@1"
		for range 3 {
			if _, err := h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: tool, Payload: json.RawMessage(`{}`), FlowKey: "acct"}); err != nil {
				t.Fatal(err)
			}
		}
		before := counter.count(g)
		if sc.before != nil {
			sc.before(h, obs, name, tool)
		}
		// The first claim fills what a limit allows, the second finds it
		// full.
		for range 2 {
			if _, err := obs.Claim(h.ctx, h.owner, engine.ClaimRequest{WorkerID: "w", Tools: []string{tool}, Max: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if counter.count(g) == before {
			t.Errorf("gate %s held claims of %s and was not counted (counted so far: %v)", g, tool, counter.holds)
		}
	}
}
