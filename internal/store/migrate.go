package store

import (
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
)

// MigrationFile is one parsed migration of a driver.
type MigrationFile struct {
	Version int
	Name    string
	SQL     string
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// LoadMigrations reads NNNN_name.sql files from fsys and validates them:
// numbers start at 1 with no gaps, each number has one file, and no file is
// named otherwise. Both drivers use the same numbers and names.
//
// Migrations only go forward. Nothing ever ran a down migration (`ratchet
// migrate` has up and status), so none are kept: to undo an upgrade,
// restore the backup taken before it.
func LoadMigrations(fsys fs.FS) ([]MigrationFile, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	byVersion := map[int]MigrationFile{}
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			if strings.HasSuffix(e.Name(), ".down.sql") || strings.HasSuffix(e.Name(), ".up.sql") {
				return nil, fmt.Errorf("migration file %q: migrations only go forward; name it NNNN_name.sql, with no down file", e.Name())
			}
			return nil, fmt.Errorf("migration file %q: name must be NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		if prev, ok := byVersion[v]; ok {
			return nil, fmt.Errorf("migration %04d has two files: %04d_%s.sql and %s", v, v, prev.Name, e.Name())
		}
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(string(body)) == "" {
			return nil, fmt.Errorf("migration file %q is empty", e.Name())
		}
		byVersion[v] = MigrationFile{Version: v, Name: m[2], SQL: string(body)}
	}
	out := make([]MigrationFile, 0, len(byVersion))
	for v := 1; v <= len(byVersion); v++ {
		mf, ok := byVersion[v]
		if !ok {
			return nil, fmt.Errorf("migration %04d is missing (versions must run 1..N without gaps)", v)
		}
		out = append(out, mf)
	}
	return out, nil
}
