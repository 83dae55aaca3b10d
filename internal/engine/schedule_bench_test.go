package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/sqlite"
	"github.com/getratchet/ratchet/wire"
)

// txTimer is a store that adds up the time spent inside its write
// transactions.
type txTimer struct {
	store.Store
	inTx time.Duration
}

func (s *txTimer) Tx(ctx context.Context, fn func(q store.Queries) error) error {
	start := time.Now()
	defer func() { s.inTx += time.Since(start) }()
	return s.Store.Tx(ctx, fn)
}

// BenchmarkScheduleCatchUp fires 50 minutely schedules after the clock
// jumped a week (10,080 ticks each to walk for catch-up) and reports the
// time inside write transactions (tx-ms/op) beside the whole (fire-ms/op):
// the ticks are worked out before the transaction, so enqueues wait on
// the writer only for the writes, not for the cron arithmetic.
func BenchmarkScheduleCatchUp(b *testing.B) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "ratchet.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	timer := &txTimer{Store: st}
	h := newHarnessOn(&testing.T{}, timer)
	h.endpoint("stripe", seedEndpoint)
	h.tool(`{"name":"charge","version":"1","endpoint":"stripe"}`)
	for i := range 50 {
		h.schedule(wire.ScheduleCreate{Name: fmt.Sprintf("s%02d", i), Cron: "* * * * *", Overlap: wire.OverlapAllow})
	}
	var whole time.Duration
	timer.inTx = 0
	for b.Loop() {
		h.clk.Advance(7 * 24 * time.Hour)
		start := time.Now()
		if n, err := h.e.FireSchedules(h.ctx); err != nil || n != 50 {
			b.Fatalf("fired %d, %v; want 50 jobs", n, err)
		}
		whole += time.Since(start)
	}
	b.ReportMetric(float64(timer.inTx.Microseconds())/1000/float64(b.N), "tx-ms/op")
	b.ReportMetric(float64(whole.Microseconds())/1000/float64(b.N), "fire-ms/op")
}
