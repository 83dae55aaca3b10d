package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/getratchet/ratchet/internal/store/sqlite"
)

// TestOpenExistingCreatesNothing: with Options.Existing a missing file is
// an error and nothing is made in its place; an existing database opens
// as usual.
func TestOpenExistingCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	if st, err := sqlite.Open(t.Context(), missing, sqlite.Options{Existing: true}); err == nil {
		st.Close()
		t.Errorf("opened a missing file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %d files behind, e.g. %s", len(entries), entries[0].Name())
	}
	db := filepath.Join(dir, "ratchet.db")
	st, err := sqlite.Open(t.Context(), db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = sqlite.Open(t.Context(), db, sqlite.Options{Existing: true})
	if err != nil {
		t.Fatalf("an existing database: %v", err)
	}
	defer st.Close()
	if _, err := st.Migrations(t.Context()); err != nil {
		t.Errorf("an existing database: %v", err)
	}
}
