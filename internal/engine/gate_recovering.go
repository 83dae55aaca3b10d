package engine

import (
	"context"
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// recoveringRule holds an endpoint whose recovery ramp (recovery.go)
// allowed its claims for the last second: while ep.Recovery.Rate is set,
// at most that many claims a second (rounded up) are made, over a sliding
// second of the endpoint's claim times since the ramp started, on every
// node (the claims are
// counted in the attempts, the rate is the endpoint's row).
type recoveringRule struct{}

func (recoveringRule) Gate() wire.Gate { return wire.GateRecovering }

// RecoveryWindowMs is the ramp's window: the rate is claims per second,
// counted over a sliding second.
const RecoveryWindowMs = 1000

func (r recoveringRule) admit(ctx context.Context, q store.Queries, ep *store.Endpoint, now int64, v *gate) error {
	if ep.Recovery.Rate == 0 {
		return nil
	}
	allow := recoveryAllowance(ep.Recovery.Rate)
	n, earliest, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: ep.ID, Since: recoveryWindowStart(ep, now), Limit: allow})
	if err != nil {
		return err
	}
	v.narrow(allow - n)
	if v.allowed <= 0 {
		v.shut(r.Gate(), earliest+RecoveryWindowMs, fmt.Sprintf("endpoint %q is recovering: %d of the %d claims a second it allows (a rate of %s) were made in the last second, %s",
			ep.Name, n, allow, formatRate(ep.Recovery.Rate), recoveryPhase(ep)))
	}
	return nil
}

// fast: a recovering endpoint is claimed on the locked path, where the
// claims of the last second are counted.
func (recoveringRule) fast(ep *store.Endpoint) (bool, int64) {
	return ep.Recovery.Rate == 0, -1
}

func (recoveringRule) confirm(_ context.Context, _ store.Queries, ep *store.Endpoint, _ int64) (bool, error) {
	return ep.Recovery.Rate == 0, nil
}

// recoveryWindowStart is where the ramp's sliding second starts at now:
// a second back, but not before the ramp started (the claims made before
// it, at the old admission, are not the ramp's; a claim of the ramp's
// first millisecond was made before it).
func recoveryWindowStart(ep *store.Endpoint, now int64) int64 {
	return max(now-RecoveryWindowMs+1, ep.Recovery.StartedAt+1)
}

// recoveryAllowance is the claims a window admits at rate (thousandths of
// a claim a second), rounded up: at least one.
func recoveryAllowance(rate int64) int64 {
	return max(1, (rate+999)/1000)
}

// formatRate prints a rate in thousandths as claims a second: "12",
// "3.5".
func formatRate(rate int64) string {
	if rate%1000 == 0 {
		return fmt.Sprint(rate / 1000)
	}
	return fmt.Sprintf("%.1f", float64(rate)/1000)
}

// recoveryPhase says how the ramp moves next, for explain and the API.
func recoveryPhase(ep *store.Endpoint) string {
	r := ep.Recovery
	if r.Ceiling == 0 || r.Rate < r.Ceiling {
		return "doubling each second while the provider answers well"
	}
	return fmt.Sprintf("growing by %s a second while the provider answers well", formatRate(recoveryStepOf(r.Ceiling)))
}
