package sqlite_test

import (
	"database/sql"
	"os"
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

// TestUpgrade0003 runs migration 0003 over a database an earlier Ratchet
// left at 0002 with an attempt running.
func TestUpgrade0003(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratchet.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	files, err := sqlite.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	storetest.Upgrade0003(t, db, files, func() store.Store {
		st, err := sqlite.Open(t.Context(), path, sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

// TestUpgrade0009 runs migration 0009 over a database an earlier Ratchet
// left at 0008 with jobs and a tool.
func TestUpgrade0009(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratchet.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	files, err := sqlite.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	storetest.Upgrade0009(t, db, files, func() store.Store {
		st, err := sqlite.Open(t.Context(), path, sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

// TestUpgrade0006 runs migration 0006 over a database an earlier Ratchet
// left at 0005 with jobs and attempts.
func TestUpgrade0006(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratchet.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	files, err := sqlite.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	storetest.Upgrade0006(t, db, files, func() store.Store {
		st, err := sqlite.Open(t.Context(), path, sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

// TestOpenOddFileNames: a path is a file name, whatever it holds — "?",
// "#" and "%" are not read as the URI's query, fragment or escapes.
func TestOpenOddFileNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"a?mode=ro.db", "b#c.db", "d%20e.db", "file:f.db"} {
		dir := t.TempDir()
		st, err := sqlite.Open(t.Context(), filepath.Join(dir, name), sqlite.Options{})
		if err != nil {
			t.Fatalf("open %q: %v", name, err)
		}
		st.Close()
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			entries, _ := os.ReadDir(dir)
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			t.Errorf("open %q made %q, not that file: %v", name, got, err)
		}
	}
}
