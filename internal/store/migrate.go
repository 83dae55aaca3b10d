package store

import (
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
)

// MigrationFile is one parsed migration of a driver.
type MigrationFile struct {
	Version int
	Name    string
	Up      string
	Down    string
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.(up|down)\.sql$`)

// LoadMigrations reads NNNN_name.up.sql / NNNN_name.down.sql files from fsys
// and validates them: numbers start at 1 with no gaps, every up has a down,
// and no file is named otherwise. Both drivers use the same numbers and names.
func LoadMigrations(fsys fs.FS) ([]MigrationFile, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	byVersion := map[int]*MigrationFile{}
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %q: name must be NNNN_name.up.sql or NNNN_name.down.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		mf := byVersion[v]
		if mf == nil {
			mf = &MigrationFile{Version: v, Name: m[2]}
			byVersion[v] = mf
		}
		if mf.Name != m[2] {
			return nil, fmt.Errorf("migration %04d has two names: %q and %q", v, mf.Name, m[2])
		}
		if m[3] == "up" {
			mf.Up = string(body)
		} else {
			mf.Down = string(body)
		}
	}
	var out []MigrationFile
	for v := 1; v <= len(byVersion); v++ {
		mf, ok := byVersion[v]
		if !ok {
			return nil, fmt.Errorf("migration %04d is missing (versions must run 1..N without gaps)", v)
		}
		if mf.Up == "" || mf.Down == "" {
			return nil, fmt.Errorf("migration %04d_%s needs both an up and a down file", v, mf.Name)
		}
		out = append(out, *mf)
	}
	slices.SortFunc(out, func(a, b MigrationFile) int { return a.Version - b.Version })
	return out, nil
}
