// Package sqlite is the embedded store driver: one SQLite file in WAL mode,
// through modernc.org/sqlite (pure Go, so `ratchet` stays a static binary
// with no cgo toolchain needed).
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/sqlstore"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations returns the driver's validated migration files.
func Migrations() ([]store.MigrationFile, error) {
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	return store.LoadMigrations(sub)
}

// Options tune the driver.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: "FULL" (default: a commit
	// survives power loss) or "NORMAL" (survives a process crash, not power
	// loss; faster).
	Synchronous string
	// Existing opens the file read-write without creating it (SQLite's
	// mode=rw): for the commands that must find a database, never make
	// one. Default false: the file is made, private, if missing.
	Existing bool
}

// DB is the SQLite store.
type DB struct {
	path   string
	writer *sql.DB // one connection: SQLite has one writer
	reader *sql.DB
	ckpt   *sql.DB // one connection for background checkpoints
	wake   chan struct{}

	dirty  chan struct{}   // a write committed; the checkpointer may run
	txq    chan *txRequest // transactions waiting for the writer (commits)
	txDone chan struct{}   // closed when commits has returned
	// waiting counts the callers of Tx waiting to hand their transaction
	// to the writer, and largestGroup is the most transactions one commit
	// has carried: what the tests watch to know that groups formed.
	waiting, largestGroup atomic.Int64
	stop                  chan struct{}
	stopOnce              sync.Once
	done                  chan struct{}
}

// checkpointEvery paces the background checkpoints. Checkpointing is what
// moves committed pages from the WAL into the database file. Left to
// SQLite, the commit that grows the WAL past wal_autocheckpoint copies
// 1000 pages and syncs the file while holding the single writer: a
// 5–10 ms stall every few hundred transactions, which was the p99 of the
// due-to-claim lag. A PASSIVE checkpoint from another connection runs
// beside the writer instead; wal_autocheckpoint stays as the backstop for
// when it cannot keep up (readers holding old snapshots).
const checkpointEvery = 50 * time.Millisecond

// Open opens (creating if needed) the database file at path.
func Open(ctx context.Context, path string, opt Options) (*DB, error) {
	sync := strings.ToUpper(opt.Synchronous)
	if sync == "" {
		sync = "FULL"
	}
	if sync != "FULL" && sync != "NORMAL" {
		return nil, fmt.Errorf("sqlite synchronous: %q is not allowed; must be FULL or NORMAL", opt.Synchronous)
	}
	q := url.Values{}
	if opt.Existing {
		q.Add("mode", "rw")
	} else if err := createPrivate(path); err != nil {
		return nil, err
	}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+sync+")")
	q.Add("_pragma", "foreign_keys(1)")
	// Statement journals in memory: a multi-row UPDATE (JobsUpdate,
	// JobsClaimDue) keeps one, and past 64 KiB SQLite spills it to a temp
	// file, a pwrite per page (4% of the burn-down's CPU).
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Add("_pragma", "wal_autocheckpoint(4000)") // backstop, see checkpointEvery
	q.Add("_txlock", "immediate")
	dsn := "file:" + uriPath(path) + "?" + q.Encode()
	w := sql.OpenDB(&cachingConnector{dsn: dsn, drv: &sqlite.Driver{}})
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	r := sql.OpenDB(&cachingConnector{dsn: dsn, drv: &sqlite.Driver{}})
	r.SetMaxOpenConns(4)
	c := sql.OpenDB(&cachingConnector{dsn: dsn, drv: &sqlite.Driver{}})
	c.SetMaxOpenConns(1)
	db := &DB{path: path, writer: w, reader: r, ckpt: c, wake: make(chan struct{}, 1),
		dirty: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		txq: make(chan *txRequest), txDone: make(chan struct{})}
	go db.checkpoints()
	go db.commits()
	if err := w.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// createPrivate creates the database file, empty and readable by its owner
// only (0600, whatever the umask), when it does not exist yet: it holds the
// delivery signing secrets. SQLite gives the -wal and -shm files it creates
// beside it the mode of the database file (unix VFS, findCreateFileMode and
// robust_open, which fchmods past the umask), so they are 0600 too. An
// existing file keeps the mode its owner gave it.
func createPrivate(path string) error {
	if path == "" || strings.HasPrefix(path, ":memory:") {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create the database file: %w", err)
	}
	// OpenFile's mode passed through the umask, which can only have taken
	// bits away; Chmod makes it exactly 0600.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("make the database file %s private: %w", path, err)
	}
	return f.Close()
}

// checkpoints runs a PASSIVE checkpoint after writes, at most once per
// checkpointEvery, until Close. A failed checkpoint is harmless: the pages
// stay in the WAL for the next one (or the writer's own).
func (db *DB) checkpoints() {
	defer close(db.done)
	for {
		select {
		case <-db.stop:
			return
		case <-db.dirty:
		}
		_, _ = db.ckpt.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		t := time.NewTimer(checkpointEvery)
		select {
		case <-db.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Driver returns "sqlite".
func (db *DB) Driver() string { return "sqlite" }

// ConcurrentWriters is false: one writer connection runs transactions one
// after another.
func (db *DB) ConcurrentWriters() bool { return false }

// Close stops the checkpointer and closes the pools.
func (db *DB) Close() error {
	db.stopOnce.Do(func() { close(db.stop) })
	<-db.done
	<-db.txDone
	return errors.Join(db.ckpt.Close(), db.reader.Close(), db.writer.Close())
}

// Ping checks the file answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.writer.PingContext(ctx); err != nil {
		return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
	}
	return nil
}

// Notify wakes this process's waiting claimers; a SQLite file has one
// server process.
func (db *DB) Notify(context.Context) error {
	select {
	case db.wake <- struct{}{}:
	default:
	}
	return nil
}

// Wakeups delivers Notify calls.
func (db *DB) Wakeups() <-chan struct{} { return db.wake }

// Tx runs fn in a write transaction on the single writer, grouped with
// the transactions queued beside it (see group.go). It returns once the
// transaction committed durably, or failed; a caller whose context ends
// while it waits for its turn is answered with the context's error and its
// function never runs.
func (db *DB) Tx(ctx context.Context, fn func(store.Queries) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &txRequest{ctx: ctx, fn: fn, done: make(chan error, 1)}
	var err error
	db.waiting.Add(1)
	select {
	case db.txq <- r:
	case <-ctx.Done():
		err = ctx.Err() // not handed over: it never runs
	case <-db.stop:
		err = errClosed
	}
	db.waiting.Add(-1)
	if err != nil {
		return err
	}
	err = <-r.done
	if p, ok := err.(*panicked); ok {
		panic(p.value)
	}
	return err
}

// Read runs fn in a read transaction on the reader pool.
func (db *DB) Read(ctx context.Context, fn func(store.Queries) error) error {
	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return translate(err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	return fn(&sqlstore.Queries{Tx: tx, D: dialect})
}

// Migrate applies pending migrations, each in its own transaction.
func (db *DB) Migrate(ctx context.Context) ([]string, error) {
	files, err := Migrations()
	if err != nil {
		return nil, err
	}
	if _, err := db.writer.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	done, err := db.appliedVersions(ctx)
	if err != nil {
		return nil, err
	}
	var applied []string
	for _, m := range files {
		if done[m.Version] {
			continue
		}
		tx, err := db.writer.BeginTx(ctx, nil)
		if err != nil {
			return applied, err
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			_ = tx.Rollback()
			return applied, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES (?, ?)`, m.Version, m.Name); err != nil {
			_ = tx.Rollback()
			return applied, err
		}
		if err := tx.Commit(); err != nil {
			return applied, err
		}
		applied = append(applied, fmt.Sprintf("%04d_%s", m.Version, m.Name))
	}
	return applied, nil
}

func (db *DB) appliedVersions(ctx context.Context) (map[int]bool, error) {
	rows, err := db.writer.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	done := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		done[v] = true
	}
	return done, translate(rows.Err())
}

// Migrations lists the driver's migrations with their status.
func (db *DB) Migrations(ctx context.Context) ([]store.Migration, error) {
	files, err := Migrations()
	if err != nil {
		return nil, err
	}
	// A failed query is an error: read as "no schema_migrations table", it
	// would report every migration as unapplied.
	done := map[int]bool{}
	var exists int
	if err := db.writer.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'`).Scan(&exists); err != nil {
		return nil, fmt.Errorf("look for schema_migrations: %w", translate(err))
	}
	if exists > 0 {
		if done, err = db.appliedVersions(ctx); err != nil {
			return nil, err
		}
	}
	out := make([]store.Migration, len(files))
	for i, f := range files {
		out[i] = store.Migration{Version: f.Version, Name: f.Name, Applied: done[f.Version]}
	}
	return out, nil
}

var dialect = &sqlstore.Dialect{Translate: translate, Now: sqlstore.SQLiteNowSQL}

// translate maps SQLite errors to the store's sentinels.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		// SQLite turns ENOSPC into SQLITE_FULL (its extended codes keep
		// the primary code in the low byte).
		if se.Code()&0xff == sqlite3.SQLITE_FULL {
			return fmt.Errorf("%w: %v", store.ErrStorageFull, err)
		}
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %v", store.ErrConflict, err)
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR:
			return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
		}
	}
	return err
}

// uriPath escapes a file path for a SQLite URI filename: "%", "?" and "#"
// would otherwise start an escape, the query or the fragment, so a file
// named "a?b.db" opened "a" with a parameter "b.db".
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// commitErr is a failed commit's error. When the context ended first,
// database/sql rolled the transaction back and Commit says only that it is
// done (sql.ErrTxDone): the context's error says why, so a client that went
// away is not answered as a server error, and nothing was committed.
func commitErr(ctx context.Context, err error) error {
	if errors.Is(err, sql.ErrTxDone) && ctx.Err() != nil {
		return ctx.Err()
	}
	return translate(err)
}
