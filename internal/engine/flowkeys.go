package engine

import (
	"context"
	"fmt"
	"strconv"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// FlowKeys lists an endpoint's busiest flow keys (the most running and
// scheduled jobs; at most limit) and, on a keyed endpoint, how many of
// each key's due jobs its own limits hold now and which limit: the jobs
// held per key that the endpoint's /held list (its own gates) does not
// show.
func (e *Engine) FlowKeys(ctx context.Context, p *Principal, name string, limit int) (*wire.FlowKeyList, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > wire.MaxKeysLimit {
		limit = wire.DefaultKeysLimit
	}
	out := &wire.FlowKeyList{Endpoint: name, Keys: []wire.FlowKeyLoad{}}
	err := e.st.Read(ctx, func(q store.Queries) error {
		ep, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ProjectID, Name: name})
		if err != nil {
			return err
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		out.Now, out.Keyed = FormatTime(now), keyed(ep)
		loads, capped, err := q.FlowKeysBusiest(ctx, ep.ID, now, limit)
		if err != nil {
			return err
		}
		out.Capped = capped
		keys := make([]*keyTurn, len(loads))
		for i, l := range loads {
			keys[i] = &keyTurn{key: l.Key, running: l.Running}
		}
		if keyed(ep) && ep.KeyRateLimitPerMinute != nil {
			if err := keyCounts(ctx, q, ep, keys, now); err != nil {
				return err
			}
		}
		heads, err := orderedHeads(ctx, q, ep, loads)
		if err != nil {
			return err
		}
		for i, l := range loads {
			w := e.keyLoad(ep, l, keys[i], now)
			if due, ok := heads[l.Key]; ok && due > now && l.Running == 0 && l.Due > 0 {
				w.Held, w.HeldBy = l.Due, &wire.Hold{Gate: wire.GateKeyOrder, Until: FormatTime(due),
					Detail: fmt.Sprintf("key %q is ordered: its first job in enqueue order waits until its due time", l.Key)}
			}
			out.Keys = append(out.Keys, w)
		}
		return nil
	})
	return out, storeErr(err, "endpoint "+strconv.Quote(name))
}

// keyLoad is one key's row: when the key's own limits are closed now
// (keyClosed, as explain asks) its due jobs are all held, by that limit;
// while it has room they are claimable and none is held.
func (e *Engine) keyLoad(ep *store.Endpoint, l store.FlowKeyLoad, k *keyTurn, now int64) wire.FlowKeyLoad {
	w := wire.FlowKeyLoad{Key: l.Key, Running: l.Running, Scheduled: l.Scheduled, Due: l.Due}
	if !keyed(ep) || l.Due == 0 {
		return w
	}
	if hd := e.keyClosed(ep, k, now); hd != nil {
		w.Held, w.HeldBy = l.Due, hd
	}
	return w
}

// orderedHeads is the due time of each key's first job in enqueue order on
// an ordered endpoint (nil otherwise): that job runs next, so while it
// waits (for its retry) every due job of its key waits.
func orderedHeads(ctx context.Context, q store.Queries, ep *store.Endpoint, loads []store.FlowKeyLoad) (map[string]int64, error) {
	if !ep.KeyOrdered {
		return nil, nil
	}
	names := make([]string, len(loads))
	for i, l := range loads {
		names[i] = l.Key
	}
	return q.FlowKeysNext(ctx, ep.ID, names, true)
}
