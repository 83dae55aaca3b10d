package engine

import (
	"context"
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// deliveryWindowRule holds an endpoint during its quietHours, read on the
// wall clock of its budgetTimeZone, until the window ends (budget.go's
// quietAt). It reads no counts: whether a moment is quiet depends on the
// settings and the time alone.
type deliveryWindowRule struct{}

func (deliveryWindowRule) Gate() wire.Gate { return wire.GateDeliveryWindow }

// quiet says whether ep's quiet hours hold claims at t, and until when.
func (deliveryWindowRule) quiet(ep *store.Endpoint, t int64) (bool, int64) {
	if ep.QuietHours == "" {
		return false, 0
	}
	w, ok := wire.ParseWindow(ep.QuietHours)
	if !ok {
		return false, 0 // checked when saved; a value no parser reads holds nothing
	}
	return quietAt(w, budgetZone(ep), t)
}

func (r deliveryWindowRule) admit(_ context.Context, _ store.Queries, ep *store.Endpoint, now int64, v *gate) error {
	if quiet, end := r.quiet(ep, now); quiet {
		v.shut(r.Gate(), end, fmt.Sprintf("endpoint %q is in its quiet hours %s (quietHours, %s); claims resume at %s",
			ep.Name, ep.QuietHours, zoneName(ep), FormatTime(end)))
	}
	return nil
}

// fast is open: the unlocked read has no time, so fastAt decides (see
// timedFast).
func (deliveryWindowRule) fast(*store.Endpoint) (bool, int64) { return true, -1 }

// fastAt shuts the optimistic path while quiet.
func (r deliveryWindowRule) fastAt(ep *store.Endpoint, now int64) (bool, int64) {
	quiet, _ := r.quiet(ep, now)
	return !quiet, -1
}

// confirm refuses claims stamped in a quiet window.
func (r deliveryWindowRule) confirm(_ context.Context, _ store.Queries, ep *store.Endpoint, t0 int64) (bool, error) {
	quiet, _ := r.quiet(ep, t0)
	return !quiet, nil
}
