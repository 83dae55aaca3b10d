package engine

import (
	"context"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// perKeyStatements is how few keys a round claims from with a statement
// each (several jobs per key); with more, a round claims one job of each
// key in one statement.
const perKeyStatements = 8

// KeyRateWindowMs is the window of keyRateLimitPerMinute: a key may have
// that many claims in any 61 s, the minute and DeliveryMarginMs. The limit
// is there to keep a provider's quota per account, counted where the
// requests arrive; a request reaches the provider a varying few
// milliseconds after its claim (the claim commits, the node or worker
// sends), and with a window of exactly 60 s a request that went out
// quickly after the claim that ended the window landed within 60 s of one
// that went out slowly: three nodes delivering four a minute per key, the
// fifth request of a key arrived 59.98 s after the first
// (TestKeyLimitsAcrossNodes). With the margin the provider sees at most
// the limit in any 60 s while delivery delays differ by less than a
// second.
const KeyRateWindowMs = RateWindowMs + DeliveryMarginMs

// DeliveryMarginMs is what KeyRateWindowMs adds to the minute for the
// time from a claim to its request's arrival.
const DeliveryMarginMs = 1000

// keyTurn is what a keyed claim knows of one flow key as it hands out jobs.
type keyTurn struct {
	key     string
	running int64            // its running jobs before this claim
	claims  store.FlowClaims // its claims in the rate window before this claim
	day     store.FlowClaims // its claims since midnight (budgetTimeZone) before this claim
	month   store.FlowClaims // its claims since the 1st (budgetTimeZone) before this claim
	took    int64            // jobs this claim gave it
	done    bool             // it gets no more in this claim
	offered bool             // this claim looked at it: its ready time is rewritten
}

// claimKeyed claims up to want jobs of a keyed endpoint (its row locked,
// its own gates open): the keys longest waiting first, one job per key per
// round while there are many, so a key with a large backlog takes its turn
// like a key with one job; each key within its own limits. See
// docs/flow-control.md.
func (e *Engine) claimKeyed(ctx context.Context, q store.Queries, p *claimPass, ep *store.Endpoint, want int64) ([]store.Job, error) {
	names, err := q.FlowKeysReady(ctx, &store.FlowKeysReadyParams{EndpointID: ep.ID, Now: p.now, Limit: int(want) + perKeyStatements})
	if err != nil || len(names) == 0 {
		if err == nil {
			err = e.flowWake(ctx, q, p, ep)
		}
		return nil, err
	}
	keys := make([]*keyTurn, len(names))
	for i, k := range names {
		keys[i] = &keyTurn{key: k}
	}
	if err := keyCounts(ctx, q, ep, keys, p.now); err != nil {
		return nil, err
	}
	// Stamp the claims after the keys were counted, as claimLocked does
	// after the endpoint's count: a report (which does not lock the
	// endpoint) committing between the two reads frees a slot this claim
	// then takes, and an earlier stamp would read as the key running over
	// its limit in the attempts table (a loaded chaos run showed 4 at
	// keyMaxConcurrent 2, the provider never more than 2).
	if p.now, err = e.txNow(ctx, q); err != nil {
		return nil, err
	}
	lim := flowLimits{ep}
	var out []store.Job
	left := want
	for left > 0 {
		var round []*keyTurn
		for _, k := range keys {
			if !k.done && lim.room(k) != 0 {
				round = append(round, k)
			} else if !k.done {
				k.done, k.offered = true, true
			}
		}
		if len(round) == 0 {
			break
		}
		jobs, err := e.claimRound(ctx, q, p, ep, lim, round, left)
		if err != nil {
			return nil, err
		}
		out = append(out, jobs...)
		left -= int64(len(jobs))
	}
	return out, e.flowAfter(ctx, q, p, ep, lim, keys)
}

// keyCounts reads what the endpoint's limits per key need of each key:
// its running jobs, and its claims in the rate window (KeyRateWindowMs)
// ending at now, today and this month (the budgets' periods).
func keyCounts(ctx context.Context, q store.Queries, ep *store.Endpoint, keys []*keyTurn, now int64) error {
	var limited []string // key '' has no limits of its own
	for _, k := range keys {
		if k.key != "" {
			limited = append(limited, k.key)
		}
	}
	needs := keyNeedsOf(ep)
	if needs.running {
		running, err := q.FlowKeysRunning(ctx, ep.ID, limited)
		if err != nil {
			return err
		}
		for _, k := range keys {
			k.running = running[k.key]
		}
	}
	for _, c := range []struct {
		need, budget bool // budget: a period that may reach past the retention
		since        int64
		dst          func(k *keyTurn) *store.FlowClaims
	}{
		{needs.claims, false, now - KeyRateWindowMs + 1, func(k *keyTurn) *store.FlowClaims { return &k.claims }},
		{needs.day, true, dayOf(now, budgetZone(ep)).start, func(k *keyTurn) *store.FlowClaims { return &k.day }},
		{needs.month, true, monthOf(now, budgetZone(ep)).start, func(k *keyTurn) *store.FlowClaims { return &k.month }},
	} {
		if !c.need {
			continue
		}
		claims, err := q.FlowKeysClaims(ctx, ep.ID, limited, c.since)
		if err != nil {
			return err
		}
		var pruned map[string]int64
		if c.budget {
			// Add the claims of the attempts retention deleted
			// (budgetUsed).
			if pruned, err = q.FlowKeysPrunedClaims(ctx, ep.ID, limited, c.since); err != nil {
				return err
			}
		}
		for _, k := range keys {
			*c.dst(k) = claims[k.key]
			c.dst(k).N += pruned[k.key]
		}
	}
	return nil
}

// claimRound gives each key of round its share of left: with few keys a
// statement each for several jobs, with many one job each in one
// statement. A key that gets less than it asked for is done.
func (e *Engine) claimRound(ctx context.Context, q store.Queries, p *claimPass, ep *store.Endpoint, lim flowLimits, round []*keyTurn, left int64) ([]store.Job, error) {
	var out []store.Job
	byKey := map[string]*keyTurn{}
	var many []string
	share := (left + int64(len(round)) - 1) / int64(len(round))
	for _, k := range round {
		if left <= 0 {
			break // the keys not reached keep their place for the next claim
		}
		k.offered = true
		ask := min(share, left)
		if room := lim.room(k); room >= 0 {
			ask = min(ask, room)
		}
		if k.key == "" || len(round) <= perKeyStatements && ask > 1 {
			jobs, err := e.claimOfKey(ctx, q, p, ep, k, ask)
			if err != nil {
				return nil, err
			}
			left -= int64(len(jobs))
			out = append(out, jobs...)
			continue
		}
		byKey[k.key] = k
		many = append(many, k.key)
		left--
	}
	jobs, err := e.claimOneEach(ctx, q, p, ep, many, byKey)
	return append(out, jobs...), err
}

// claimOneEach claims one job of each key of many in one statement. A key
// that gave nothing is done (and, ordered, every key: its one job was all
// it had room for); the others go round again while jobs are wanted.
// Counting what a key took in the whole claim instead, a key served in an
// earlier round was offered again and again while the claim wanted more.
func (e *Engine) claimOneEach(ctx context.Context, q store.Queries, p *claimPass, ep *store.Endpoint, many []string, byKey map[string]*keyTurn) ([]store.Job, error) {
	if len(many) == 0 {
		return nil, nil
	}
	jobs, err := q.JobsClaimKeys(ctx, &store.JobsClaimKeysParams{EndpointID: ep.ID, ToolIDs: p.toolIDs, Keys: many, Ordered: ep.KeyOrdered,
		WorkerID: p.r.WorkerID, LeaseToken: p.lease, Now: p.now})
	got := map[string]int{}
	for _, j := range jobs {
		byKey[j.FlowKey].took++
		got[j.FlowKey]++
	}
	for _, k := range many {
		if got[k] == 0 || ep.KeyOrdered {
			byKey[k].done = true
		}
	}
	return jobs, err
}

// claimOfKey claims up to ask jobs of key k in a statement of its own; k
// is done when it had fewer.
func (e *Engine) claimOfKey(ctx context.Context, q store.Queries, p *claimPass, ep *store.Endpoint, k *keyTurn, ask int64) ([]store.Job, error) {
	jobs, err := q.JobsClaimDue(ctx, &store.JobsClaimDueParams{EndpointID: ep.ID, ToolIDs: p.toolIDs, Limit: int(ask),
		WorkerID: p.r.WorkerID, LeaseToken: p.lease, Now: p.now, ByKey: true, FlowKey: k.key})
	k.took += int64(len(jobs))
	k.done = int64(len(jobs)) < ask
	return jobs, err
}

// flowAfter rewrites the ready time of every key this claim looked at:
// parked at its concurrency limit, the end of its rate window or the
// renewal of its budget, its next
// job's due time, or now (it was served and has more due: it waits behind
// the keys waiting longer); a key with nothing scheduled is forgotten.
func (e *Engine) flowAfter(ctx context.Context, q store.Queries, p *claimPass, ep *store.Endpoint, lim flowLimits, keys []*keyTurn) error {
	var offered []string
	for _, k := range keys {
		if k.offered {
			offered = append(offered, k.key)
		}
	}
	next, err := q.FlowKeysNext(ctx, ep.ID, offered, ep.KeyOrdered)
	if err != nil {
		return err
	}
	ready := map[string]int64{}
	var gone []string
	held := map[wire.Gate]gate{} // each limit that holds a due job of a key, once
	for _, k := range keys {
		if !k.offered {
			continue
		}
		due, ok := next[k.key]
		if !ok {
			gone = append(gone, k.key)
			continue
		}
		at := max(due, p.now)
		if lim.room(k) == 0 && k.key != "" {
			g := e.keyGate(ep, k, p.now)
			if g.until > 0 {
				at = max(at, g.until) // a rate window ends, a budget renews
			} else {
				at = store.FlowKeyParked
			}
			if _, seen := held[g.gate]; !seen && due <= p.now {
				held[g.gate] = g
			}
		}
		ready[k.key] = at
	}
	if err := q.FlowKeysDelete(ctx, ep.ID, gone); err != nil {
		return err
	}
	if err := q.FlowKeysSet(ctx, ep.ID, ready); err != nil {
		return err
	}
	p.holdKeys(held)
	return e.flowWake(ctx, q, p, ep)
}

// holdKeys notes each limit of a key that holds a due job, in the order of
// wire.Gates. A key's limit holds its due jobs whether or not the claim
// took jobs of other keys, or of this key up to its limit: counted only
// when the claim took nothing, a key at its keyMaxConcurrent was never
// counted (the claim that filled it took a job, and later claims skip it).
func (p *claimPass) holdKeys(held map[wire.Gate]gate) {
	for _, g := range wire.Gates() {
		if h, ok := held[g]; ok {
			p.hold(h)
		}
	}
}

// flowWake sets the claim's wake-up to the earliest time a key of the
// endpoint becomes ready (a rate window ending, a job falling due).
func (e *Engine) flowWake(ctx context.Context, q store.Queries, p *claimPass, ep *store.Endpoint) error {
	at, err := q.FlowKeysWake(ctx, ep.ID, p.now)
	if err == nil {
		p.soonest(at)
	}
	return err
}

// keyHold says which limit of its flow key holds a due job of a keyed
// endpoint whose own gates are open (nil: none).
func (e *Engine) keyHold(ctx context.Context, q store.Queries, ep *store.Endpoint, j *store.Job, now int64) (*Hold, error) {
	k := &keyTurn{key: j.FlowKey}
	if err := keyCounts(ctx, q, ep, []*keyTurn{k}, now); err != nil {
		return nil, err
	}
	for _, r := range keyRules {
		if jh, ok := r.(jobHolder); ok && r.active(ep) {
			if h, err := jh.jobHold(ctx, q, ep, j, k); err != nil || h != nil {
				return h, err
			}
		}
	}
	return e.keyClosed(ep, k, now), nil
}

// keyClosed is the limit of its own that holds key k now (nil: it has
// room, so its due jobs are claimable). Explain and the busiest keys both
// ask it, so they never disagree about a key.
func (e *Engine) keyClosed(ep *store.Endpoint, k *keyTurn, now int64) *Hold {
	if (flowLimits{ep}).room(k) != 0 {
		return nil
	}
	g := e.keyGate(ep, k, now)
	return g.hold()
}

// flowSweepInterval is how often each node gives every key of a keyed
// endpoint with jobs scheduled a row in flow_keys. Every write keeps the
// rows in step (sqlstore's flowTouch); the sweep covers one race: a job
// enqueued on one node in the moment another made its endpoint keyed.
const flowSweepInterval = time.Minute

// SweepFlowKeys runs FlowKeysRebuild on every keyed endpoint.
func (e *Engine) SweepFlowKeys(ctx context.Context) error {
	var eps []store.Endpoint
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		eps, err = q.EndpointList(ctx, 0)
		return err
	})
	if err != nil {
		return err
	}
	for i := range eps {
		if !keyed(&eps[i]) {
			continue
		}
		if err := e.st.Tx(ctx, func(q store.Queries) error { return q.FlowKeysRebuild(ctx, eps[i].ID, false) }); err != nil {
			return err
		}
	}
	return nil
}
