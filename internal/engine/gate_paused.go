package engine

import (
	"context"
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// pausedRule holds every job of an endpoint an owner paused. It comes
// first: an owner's decision holds the endpoint whatever its circuit and
// capacity say. The pause is read from the endpoint's row, so every node
// that claims (workers' claims and HTTP delivery alike) sees it once it
// is committed.
type pausedRule struct{}

func (pausedRule) Gate() wire.Gate { return wire.GatePaused }

func (r pausedRule) admit(_ context.Context, _ store.Queries, ep *store.Endpoint, _ int64, v *gate) error {
	if ep.PausedAt != 0 {
		v.shut(r.Gate(), 0, pauseDetail(ep))
	}
	return nil
}

func (pausedRule) fast(ep *store.Endpoint) (bool, int64) { return ep.PausedAt == 0, -1 }

func (pausedRule) confirm(_ context.Context, _ store.Queries, ep *store.Endpoint, _ int64) (bool, error) {
	return ep.PausedAt == 0, nil
}

// pauseDetail is the sentence a paused endpoint's hold shows.
func pauseDetail(ep *store.Endpoint) string {
	s := fmt.Sprintf("endpoint %s was paused by %s at %s", ep.Name, ep.PausedBy, FormatTime(ep.PausedAt))
	if ep.PausedReason != "" {
		s += ": " + ep.PausedReason
	}
	return s
}
