package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/wire"
)

// KeysResult holds mode keys' figures (Result.Keys).
type KeysResult struct {
	Plain, Keyed         float64       // burn-down jobs/s: key-less, and over Keys keys at KeyLimit each
	FewKeys, ManyKeys    float64       // burn-down jobs/s with fair sharing over 100 and 100,000 keys
	FairP99, UnfairP99   time.Duration // due-to-claim p99 of keys B–K's jobs behind key A's backlog
	FairLast, UnfairLast int           // the claim order of the last of B–K's jobs
}

// runKeys is mode keys: the burn-down of N jobs on one engine, key-less
// and keyed, then claim cost against the number of keys, then fairness.
func runKeys(ctx context.Context, cfg Config, dir string, w io.Writer, res *Result) error {
	t, err := newEngineTarget(ctx, cfg, dir)
	if err != nil {
		return err
	}
	defer t.close()
	res.Driver = t.driver()
	if res.Driver != "sqlite" {
		res.Synchronous = "n/a"
	}
	printHeader(w, cfg, res)
	fmt.Fprintf(w, "keys method: each phase has an endpoint of its own (maxConcurrent 100000 unless said) and enqueues N jobs due now in batches of %d; C claimers each loop: claim up to B jobs without waiting, report them succeeded in one batch, until all N succeeded (an empty claim while jobs remain waits 1 ms); burn-down rate = N / time from the first claim.\n", cfg.EnqueueBatch)
	fmt.Fprintf(w, "fairness method: one endpoint with maxConcurrent 20, key A's %d jobs enqueued before 10 jobs each of keys B–K, all due; C claimers claim up to 20 and report at once until B–K's 100 jobs are claimed; due-to-claim = the claim's stored time - the job's due time. Once with fairKeys, once without.\n", cfg.FairBacklog)
	k := &KeysResult{}
	limit := int64(cfg.KeyLimit)
	phases := []struct {
		name string
		keys int
		lim  wire.KeyLimits
		rate *float64
	}{
		{"plain", 0, wire.KeyLimits{}, &k.Plain},
		{"keyed", cfg.Keys, wire.KeyLimits{KeyMaxConcurrent: &limit}, &k.Keyed},
		{"few", 100, wire.KeyLimits{FairKeys: true}, &k.FewKeys},
		{"many", 100_000, wire.KeyLimits{FairKeys: true}, &k.ManyKeys},
	}
	for _, ph := range phases {
		tool, err := t.keysTool(ctx, ph.name, 100_000, ph.lim)
		if err != nil {
			return err
		}
		if *ph.rate, err = t.keyedBurnDown(ctx, cfg, tool, ph.keys); err != nil {
			return fmt.Errorf("%s: %w", ph.name, err)
		}
	}
	fmt.Fprintf(w, "key-less:   %d jobs burn-down %.0f jobs/s\n", cfg.Jobs, k.Plain)
	fmt.Fprintf(w, "keyed:      %d jobs over %d keys, keyMaxConcurrent %d: %.0f jobs/s = %.2f × key-less\n", cfg.Jobs, cfg.Keys, cfg.KeyLimit, k.Keyed, k.Keyed/k.Plain)
	fmt.Fprintf(w, "claim cost: fairKeys, %d jobs over 100 keys %.0f jobs/s, over 100000 keys %.0f jobs/s (%.2f ×)\n", cfg.Jobs, k.FewKeys, k.ManyKeys, k.ManyKeys/k.FewKeys)
	if err := t.fairnessBoth(ctx, cfg, k); err != nil {
		return err
	}
	fmt.Fprintf(w, "fairness:   p99 due-to-claim of B–K's jobs: %s with fairKeys (the last went %dth), %s without (%dth)\n", ms(k.FairP99), k.FairLast, ms(k.UnfairP99), k.UnfairLast)
	res.Keys = k
	return nil
}

// fairnessBoth measures fairness with fairKeys and without.
func (t *engineTarget) fairnessBoth(ctx context.Context, cfg Config, k *KeysResult) error {
	for _, fair := range []bool{true, false} {
		tool, err := t.keysTool(ctx, "fair-"+strconv.FormatBool(fair), 20, wire.KeyLimits{FairKeys: fair})
		if err != nil {
			return err
		}
		p99, last, err := t.fairness(ctx, cfg, tool)
		if err != nil {
			return fmt.Errorf("fairness: %w", err)
		}
		if fair {
			k.FairP99, k.FairLast = p99, last
		} else {
			k.UnfairP99, k.UnfairLast = p99, last
		}
	}
	return nil
}

// keysTool makes endpoint name with these limits and a tool on it.
func (t *engineTarget) keysTool(ctx context.Context, name string, maxConcurrent int64, lim wire.KeyLimits) (string, error) {
	_, err := t.e.CreateEndpoint(ctx, t.p, name, engine.EndpointPolicy{Policy: backoff.PresetPolicy(backoff.Standard), EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 300_000, MaxConcurrent: maxConcurrent, CircuitFailureThreshold: engine.DefaultCircuitThreshold, CircuitOpenMs: engine.DefaultCircuitOpenMs, KeyLimits: lim}})
	if err == nil {
		_, err = t.e.PublishTool(ctx, t.p, engine.ToolSpec{Name: name, Version: "1", Endpoint: name, Description: "does nothing (ratchet bench --mode keys)"})
	}
	return name + "@1", err
}

// enqueueKeyed enqueues n jobs of tool, job i with key keyOf(i) ("" for none).
func (t *engineTarget) enqueueKeyed(ctx context.Context, cfg Config, tool string, n int, keyOf func(i int) string) error {
	for lo := 0; lo < n; lo += cfg.EnqueueBatch {
		reqs := make([]engine.EnqueueRequest, min(cfg.EnqueueBatch, n-lo))
		for i := range reqs {
			reqs[i] = engine.EnqueueRequest{Tool: tool, Payload: t.noJSON, FlowKey: keyOf(lo + i)}
		}
		if _, err := t.e.EnqueueBatch(ctx, t.p, reqs); err != nil {
			return err
		}
	}
	return nil
}

// keyedBurnDown enqueues N jobs over keys keys (0: key-less) and burns
// them down; it returns the burn-down rate.
func (t *engineTarget) keyedBurnDown(ctx context.Context, cfg Config, tool string, keys int) (float64, error) {
	keyOf := func(i int) string {
		if keys == 0 {
			return ""
		}
		return "k" + strconv.Itoa(i%keys)
	}
	if err := t.enqueueKeyed(ctx, cfg, tool, cfg.Jobs, keyOf); err != nil {
		return 0, err
	}
	var done atomic.Int64
	var first firstErr
	var wg sync.WaitGroup
	start := time.Now()
	for i := range cfg.Claimers {
		wg.Go(func() {
			for done.Load() < int64(cfg.Jobs) && ctx.Err() == nil {
				cs, err := t.e.Claim(ctx, t.p, engine.ClaimRequest{WorkerID: "bench-" + strconv.Itoa(i), Tools: []string{tool}, Max: cfg.Batch})
				if err == nil && len(cs) > 0 {
					err = t.reportSuccess(ctx, claimedOf(cs))
					done.Add(int64(len(cs)))
				} else if err == nil {
					time.Sleep(time.Millisecond)
				}
				if first.keep(err) {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := first.get(); err != nil {
		return 0, err
	}
	return float64(cfg.Jobs) / time.Since(start).Seconds(), ctx.Err()
}

func claimedOf(cs []engine.Claimed) []claimed {
	out := make([]claimed, len(cs))
	for i, c := range cs {
		out[i] = claimed{id: c.Job.ID, lease: c.LeaseToken}
	}
	return out
}

// fairness enqueues key A's backlog, then 10 jobs each of keys B–K, and
// claims until B–K's are all claimed; it returns their due-to-claim p99
// and the claim order of the last of them.
func (t *engineTarget) fairness(ctx context.Context, cfg Config, tool string) (time.Duration, int, error) {
	if err := t.enqueueKeyed(ctx, cfg, tool, cfg.FairBacklog, func(int) string { return "A" }); err != nil {
		return 0, 0, err
	}
	if err := t.enqueueKeyed(ctx, cfg, tool, 100, func(i int) string { return string(rune('B' + i%10)) }); err != nil {
		return 0, 0, err
	}
	var mu sync.Mutex
	var lags []time.Duration
	order, last := 0, 0
	var first firstErr
	var wg sync.WaitGroup
	for i := range cfg.Claimers {
		wg.Go(func() {
			for ctx.Err() == nil && first.get() == nil {
				mu.Lock()
				finished := len(lags) == 100
				mu.Unlock()
				if finished {
					return
				}
				cs, err := t.e.Claim(ctx, t.p, engine.ClaimRequest{WorkerID: "fair-" + strconv.Itoa(i), Tools: []string{tool}, Max: 20})
				mu.Lock()
				for _, c := range cs {
					order++
					if c.Job.FlowKey != "A" {
						lags = append(lags, time.Duration(c.Job.ClaimedAt-c.Job.DueAt)*time.Millisecond)
						last = order
					}
				}
				mu.Unlock()
				if err == nil && len(cs) > 0 {
					err = t.reportSuccess(ctx, claimedOf(cs))
				}
				if first.keep(err) {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := first.get(); err != nil {
		return 0, 0, err
	}
	slices.Sort(lags)
	return quantile(lags, 0.99), last, ctx.Err()
}

// firstErr keeps the first error of several goroutines.
type firstErr struct {
	mu  sync.Mutex
	err error
}

// keep notes err unless one came first, and reports whether err is one.
func (f *firstErr) keep(err error) bool {
	if err == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
	return true
}

// get is the first error kept (nil: none).
func (f *firstErr) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
