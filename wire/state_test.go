package wire_test

import (
	"testing"

	"github.com/getratchet/ratchet/wire"
)

func TestJobTransitions(t *testing.T) {
	seen := map[[2]string]bool{}
	for _, tr := range wire.JobTransitions {
		k := [2]string{string(tr.From), string(tr.Event)}
		if seen[k] {
			t.Errorf("two transitions from %s on %s", tr.From, tr.Event)
		}
		seen[k] = true
		if tr.From.Finished() {
			t.Errorf("a transition leaves final state %s", tr.From)
		}
		if to, ok := wire.NextJobState(tr.From, tr.Event); !ok || to != tr.To {
			t.Errorf("NextJobState(%s, %s) = %s, %v", tr.From, tr.Event, to, ok)
		}
	}
	for _, s := range wire.JobStates() {
		if s.Finished() {
			continue
		}
		reached := s == wire.JobScheduled
		for _, tr := range wire.JobTransitions {
			reached = reached || tr.To == s
		}
		if !reached {
			t.Errorf("no transition reaches %s", s)
		}
	}
	if _, ok := wire.NextJobState(wire.JobSucceeded, wire.EventRetry); ok {
		t.Error("a succeeded job must not be retried")
	}
	if _, ok := wire.NextJobState(wire.JobScheduled, wire.EventSucceed); ok {
		t.Error("a scheduled job cannot succeed without running")
	}
}
