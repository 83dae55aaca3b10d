package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/sqlite"
	"github.com/getratchet/ratchet/internal/store/storetest"
)

// TestConformance runs the shared store suite on a fresh database file per
// subtest.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ratchet.db"), sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}
