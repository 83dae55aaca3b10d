package engine_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
)

// TestKeyLimitsRacePostgres: six workers claim at once from one keyed
// endpoint on PostgreSQL while a producer enqueues, each holding its jobs
// a moment before reporting. The workers' own count of each key's jobs in
// hand (taken down before the report, so never above the database's)
// never passes the key's limit; with ordered keys each key's jobs are
// claimed in enqueue order, one at a time; every job runs once.
func TestKeyLimitsRacePostgres(t *testing.T) {
	for _, c := range []struct {
		name, settings string
		limit          int
		ordered        bool
	}{{"concurrency", `"keyMaxConcurrent":3`, 3, false}, {"ordered", `"keyOrdered":true`, 1, true}} {
		t.Run(c.name, func(t *testing.T) {
			h := newPGHarnessBare(t)
			keyEndpoint(h, c.settings)
			const keys, perKey = 8, 25
			var mu sync.Mutex
			inHand, enqueued, claimed := map[string]int{}, map[string][]int64{}, map[string][]int64{}
			var over []string
			var wg sync.WaitGroup
			wg.Go(func() {
				for round := range perKey {
					var ks []string
					for k := range keys {
						ks = append(ks, fmt.Sprintf("acct_%d", (k+round)%keys))
					}
					mu.Lock() // ids in enqueue order per key
					for _, j := range h.enqueueKeys(ks...) {
						enqueued[j.FlowKey] = append(enqueued[j.FlowKey], j.ID)
					}
					mu.Unlock()
				}
			})
			done := make(chan struct{})
			for w := range 6 {
				wg.Go(func() {
					for {
						select {
						case <-done:
							return
						default:
						}
						cs, err := h.e.Claim(h.ctx, h.owner, engine.ClaimRequest{WorkerID: fmt.Sprintf("w%d", w), Tools: []string{"call@1"}, Max: 5})
						if err != nil {
							t.Error(err)
							return
						}
						if len(cs) == 0 {
							time.Sleep(2 * time.Millisecond)
							continue
						}
						mu.Lock()
						for _, cl := range cs {
							k := cl.Job.FlowKey
							inHand[k]++
							claimed[k] = append(claimed[k], cl.Job.ID)
							if inHand[k] > c.limit {
								over = append(over, fmt.Sprintf("%s: %d in hand", k, inHand[k]))
							}
						}
						mu.Unlock()
						time.Sleep(time.Millisecond)
						mu.Lock()
						for _, cl := range cs {
							inHand[cl.Job.FlowKey]--
						}
						mu.Unlock()
						if _, err := h.e.ReportBatch(h.ctx, h.owner, reports(cs, classifyOK)); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			deadline := time.Now().Add(2 * time.Minute)
			for {
				mu.Lock()
				n := 0
				for _, ids := range claimed {
					n += len(ids)
				}
				mu.Unlock()
				if n == keys*perKey || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			close(done)
			wg.Wait()
			if len(over) > 0 {
				t.Errorf("over the key's limit of %d: %v", c.limit, over)
			}
			for k, ids := range enqueued {
				got := claimed[k]
				if len(got) != len(ids) {
					t.Errorf("key %s: %d claims of %d jobs", k, len(got), len(ids))
					h.st.Read(h.ctx, func(q store.Queries) error {
						rows, _ := q.FlowKeysReady(h.ctx, &store.FlowKeysReadyParams{EndpointID: 1, Now: store.FlowKeyParked, Limit: 100})
						next, _ := q.FlowKeysNext(h.ctx, 1, []string{k}, true)
						run, _ := q.FlowKeysRunning(h.ctx, 1, []string{k})
						head, _ := q.FlowKeyHead(h.ctx, 1, k)
						t.Logf("the key's state: rows %q next %v running %v head %d now %d", rows, next, run, head, time.Now().UnixMilli())
						return nil
					})
					continue
				}
				if c.ordered && !slices.Equal(got, ids) {
					t.Errorf("key %s claimed in order %v, enqueued %v", k, got, ids)
				}
			}
		})
	}
}
