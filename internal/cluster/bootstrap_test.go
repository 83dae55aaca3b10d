package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
)

// TestBootstrapRace: nodes that start together on an empty database each
// try to bootstrap the first project. Exactly one may create it; the others
// must start normally (no error) without a second project, with a given
// key and with generated ones.
func TestBootstrapRace(t *testing.T) {
	const nodes = 4
	for round := range 4 {
		dbURL := pgtest.URL(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		engines := make([]*engine.Engine, nodes)
		for i := range engines {
			st, err := postgres.Open(ctx, dbURL, postgres.Options{MaxConns: 2})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if engines[i], err = engine.New(engine.Config{Store: st}); err != nil {
				t.Fatal(err)
			}
		}
		key := ownerKey
		if round%2 == 1 {
			key = "" // each node would generate its own
		}
		created := make([]bool, nodes)
		errs := make([]error, nodes)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, e := range engines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				created[i], _, errs[i] = e.Bootstrap(ctx, key)
			}()
		}
		close(start)
		wg.Wait()
		n := 0
		for i := range engines {
			if errs[i] != nil {
				t.Errorf("round %d (key %q): node %d failed to bootstrap: %v", round, key, i, errs[i])
			}
			if created[i] {
				n++
			}
		}
		if n != 1 {
			t.Errorf("round %d (key %q): %d nodes created the first project, want 1", round, key, n)
		}
		if got := query(t, dbURL, `SELECT count(*) FROM projects`)[0][0]; got != 1 {
			t.Errorf("round %d (key %q): %d projects after a concurrent bootstrap, want 1", round, key, got)
		}
	}
}
