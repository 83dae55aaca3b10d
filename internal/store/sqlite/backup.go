package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	sqlite "modernc.org/sqlite"
)

// BackupSummary is what Backup copied.
type BackupSummary struct {
	Bytes       int64 // size of the copy
	Jobs        int64
	Endpoints   int64
	Tools       int64
	NewestJobID int64 // 0 when there is no job
}

// Backup writes a consistent copy of the database at src to the new file
// dst, while servers may go on writing to src, and checks the copy.
//
// It runs VACUUM INTO through this driver: one read transaction, so the
// copy is the database as of one commit (in WAL mode writers go on
// meanwhile), written compactly to a file SQLite accepts only when it is
// empty. SQLite's online backup API (which modernc.org/sqlite exposes as
// NewBackup) copies page by page and starts over when another process
// writes between its steps, which a busy server does all the time; and it
// creates the destination itself, where Backup first creates dst 0600 with
// O_EXCL, so a backup never replaces a file and is never readable by
// others, even for a moment. The copy is synced, then opened and checked
// with PRAGMA integrity_check and counted.
func Backup(ctx context.Context, src, dst string) (*BackupSummary, error) {
	if st, err := os.Stat(src); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("no SQLite database at %s (--database): %v", src, statErr(err))
	}
	f, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s (--to) already exists; a backup never overwrites a file: name a new one, or remove that one first", dst)
	}
	if err != nil {
		return nil, fmt.Errorf("create the backup file %s (--to): %w", dst, err)
	}
	sum, err := backupInto(ctx, src, dst, f)
	if err != nil {
		os.Remove(dst)
		return nil, err
	}
	return sum, nil
}

// statErr says why a database path is not one.
func statErr(err error) string {
	if err == nil {
		return "not a regular file"
	}
	return err.Error()
}

// backupInto fills the empty file f (dst) from src, syncs it and checks it.
func backupInto(ctx context.Context, src, dst string, f *os.File) (*BackupSummary, error) {
	defer f.Close()
	if err := f.Chmod(0o600); err != nil {
		return nil, err
	}
	db := sql.OpenDB(&cachingConnector{dsn: "file:" + uriPath(src) + "?_pragma=busy_timeout(10000)", drv: &sqlite.Driver{}})
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		return nil, fmt.Errorf("copy %s into %s: %w", src, dst, err)
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("sync %s: %w", dst, err)
	}
	if d, err := os.Open(filepath.Dir(dst)); err == nil {
		_ = d.Sync() // the new name survives a crash too
		d.Close()
	}
	return Inspect(ctx, dst)
}

// Inspect checks the integrity of the database file at path (PRAGMA
// integrity_check) and counts what it holds. It opens the file with the
// same driver, without creating it or applying migrations.
func Inspect(ctx context.Context, path string) (*BackupSummary, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(&cachingConnector{dsn: "file:" + uriPath(path) + "?mode=rw&_pragma=busy_timeout(10000)", drv: &sqlite.Driver{}})
	defer db.Close()
	var problems []string
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", path, err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return nil, err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("check %s: %w", path, err)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s failed PRAGMA integrity_check: %s", path, strings.Join(problems, "; "))
	}
	sum := &BackupSummary{Bytes: st.Size()}
	err = db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM jobs), (SELECT count(*) FROM endpoints), (SELECT count(*) FROM tools), (SELECT coalesce(max(id), 0) FROM jobs)`).
		Scan(&sum.Jobs, &sum.Endpoints, &sum.Tools, &sum.NewestJobID)
	if err != nil {
		return nil, fmt.Errorf("count the jobs, endpoints and tools of %s (a Ratchet database?): %w", path, err)
	}
	return sum, nil
}
