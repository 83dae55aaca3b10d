package engine_test

import (
	"testing"

	"github.com/getratchet/ratchet/wire"
)

// A provider that answers every call 503 with Retry-After is down: its
// failures count toward the circuit, which opens at the threshold and
// holds the rest of the backlog, as explain says. Before, the hint made
// each 503 a throttle that never counted, and the endpoint stayed
// "closed, 0 failures" while its jobs spent their attempts. On both
// drivers.
func TestSheddingProviderOpensTheCircuit(t *testing.T) { testSheddingOpens(t, newHarness(t)) }
func TestSheddingProviderOpensTheCircuitPostgres(t *testing.T) {
	testSheddingOpens(t, newPGHarnessBare(t))
}

func testSheddingOpens(t *testing.T, h *harness) {
	h.endpoint("mailer", `{"preset":"STANDARD","maxConcurrent":10,"circuitFailureThreshold":3,"circuitOpenMs":60000}`)
	h.tool(`{"name":"send","version":"1","endpoint":"mailer"}`)
	for range 5 {
		h.enqueue("send@1", nil)
	}
	claimed := h.claim([]string{"send@1"}, 3)
	if len(claimed) != 3 {
		t.Fatalf("claimed %d, want 3", len(claimed))
	}
	for i, c := range claimed {
		r := h.fail(c, 503, map[string]string{"Retry-After": "5"})
		if !r.Decision.CountsTowardCircuit || r.Decision.Classification != "retry_after" {
			t.Fatalf("503 with Retry-After, attempt %d: %+v, want retry_after counted toward the circuit", i+1, r.Decision)
		}
	}
	ep, err := h.e.Endpoint(h.ctx, h.owner, "mailer")
	if err != nil {
		t.Fatal(err)
	}
	if ep.CircuitState != wire.CircuitOpen || ep.CircuitFailures != 3 {
		t.Fatalf("after 3 × 503 with Retry-After the circuit is %s with %d failures, want open with 3", ep.CircuitState, ep.CircuitFailures)
	}
	// The two jobs never tried are due and held by the open circuit.
	if c := h.claim([]string{"send@1"}, 5); len(c) != 0 {
		t.Fatalf("claimed %d jobs through an open circuit", len(c))
	}
	job := h.enqueue("send@1", nil)
	hold, err := h.e.Explain(h.ctx, h.owner, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if hold.Gate != wire.GateCircuit {
		t.Fatalf("a due job of the shedding endpoint is held by %s (%s), want the circuit", hold.Gate, hold.Detail)
	}
}
