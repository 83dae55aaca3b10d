package store_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/getratchet/ratchet/internal/store"
)

func TestLoadMigrations(t *testing.T) {
	t.Parallel()
	file := func(body string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(body)} }
	got, err := store.LoadMigrations(fstest.MapFS{
		"0002_more.sql":    file("CREATE INDEX i ON t (a);"),
		"0001_initial.sql": file("CREATE TABLE t (a INTEGER);"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.MigrationFile{{Version: 1, Name: "initial", SQL: "CREATE TABLE t (a INTEGER);"}, {Version: 2, Name: "more", SQL: "CREATE INDEX i ON t (a);"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("LoadMigrations = %+v, want %+v", got, want)
	}
	for _, c := range []struct {
		name  string
		fsys  fstest.MapFS
		error string
	}{
		{"a down file", fstest.MapFS{"0001_initial.sql": file("x"), "0001_initial.down.sql": file("y")}, "only go forward"},
		{"an up file", fstest.MapFS{"0001_initial.up.sql": file("x")}, "only go forward"},
		{"a gap", fstest.MapFS{"0001_initial.sql": file("x"), "0003_later.sql": file("y")}, "0002 is missing"},
		{"not starting at 1", fstest.MapFS{"0002_more.sql": file("x")}, "0001 is missing"},
		{"two files of a version", fstest.MapFS{"0001_initial.sql": file("x"), "0001_other.sql": file("y")}, "two files"},
		{"an empty file", fstest.MapFS{"0001_initial.sql": file(" \n")}, "empty"},
		{"another name", fstest.MapFS{"0001_Initial.sql": file("x")}, "NNNN_name.sql"},
	} {
		if got, err := store.LoadMigrations(c.fsys); err == nil || !strings.Contains(err.Error(), c.error) {
			t.Errorf("LoadMigrations with %s = %+v, %v; want an error saying %q", c.name, got, err, c.error)
		}
	}
}
