package engine

import (
	"context"
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// circuitRule holds an endpoint whose circuit is open, until its open time
// has passed; then (and while half-open without a probe) it admits one
// claim, the probe, which the caller records. A half-open circuit whose
// probe runs holds everything until the probe's outcome closes or reopens
// it (report.go).
type circuitRule struct{}

func (circuitRule) Gate() wire.Gate { return wire.GateCircuit }

func (r circuitRule) admit(_ context.Context, _ store.Queries, ep *store.Endpoint, now int64, v *gate) error {
	switch ep.CircuitState {
	case wire.CircuitOpen:
		reopen := HalfOpensAt(ep)
		if now < reopen {
			v.shut(r.Gate(), reopen, openDetail(ep))
			return nil
		}
		v.halfOpen = true
		v.narrow(1)
	case wire.CircuitHalfOpen:
		if ep.CircuitProbeJob != 0 {
			v.shut(r.Gate(), 0, fmt.Sprintf("the circuit of endpoint %q is half-open and its probe (job %d) is running", ep.Name, ep.CircuitProbeJob))
			return nil
		}
		v.halfOpen = true
		v.narrow(1)
	}
	return nil
}

// HalfOpensAt is when an open circuit lets its probe go: when the
// provider's Retry-After asked (CircuitProbeAt), else circuitOpenMs after
// it opened.
func HalfOpensAt(ep *store.Endpoint) int64 {
	if ep.CircuitProbeAt > 0 { // an owner's open clears it
		return ep.CircuitProbeAt
	}
	return ep.CircuitOpenedAt + ep.CircuitOpenMs
}

// openDetail says why an open circuit holds.
func openDetail(ep *store.Endpoint) string {
	if ep.CircuitOpenedBy != "" {
		return fmt.Sprintf("the circuit of endpoint %q was opened by hand by %s at %s; it half-opens at the until time", ep.Name, ep.CircuitOpenedBy, FormatTime(ep.CircuitOpenedAt))
	}
	if ep.CircuitProbeAt > 0 {
		return fmt.Sprintf("the circuit of endpoint %q is open after %d provider-unhealthy failures; it half-opens at the until time, when the provider's Retry-After asked to come back", ep.Name, ep.CircuitFailures)
	}
	return fmt.Sprintf("the circuit of endpoint %q is open after %d provider-unhealthy failures; it half-opens at the until time", ep.Name, ep.CircuitFailures)
}

// fast: only an endpoint whose circuit is closed is claimed optimistically
// (a probe is one claim, recorded on the locked path).
func (circuitRule) fast(ep *store.Endpoint) (bool, int64) {
	return ep.CircuitState == wire.CircuitClosed, -1
}

func (circuitRule) confirm(_ context.Context, _ store.Queries, ep *store.Endpoint, _ int64) (bool, error) {
	return ep.CircuitState == wire.CircuitClosed, nil
}
