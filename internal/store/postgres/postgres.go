// Package postgres is the store driver for several Ratchet nodes sharing one
// PostgreSQL database, through pgx v5.
//
// The queries are the shared sqlstore ones, run over pgx's database/sql
// adapter with numbered placeholders and row locks. Transactions are READ
// COMMITTED: the engine serialises every gate decision by locking the
// endpoint row (EndpointGetAnyProject with Lock) and takes jobs with FOR
// UPDATE SKIP LOCKED, so nodes never hand one job out twice nor overrun an
// endpoint's limits. Reads run in a read-only REPEATABLE READ snapshot and
// take no locks.
//
// Wake-ups travel by LISTEN/NOTIFY on one channel: Notify sends a
// notification, and a dedicated connection listens and feeds Wakeups,
// reconnecting by itself with backoff when the server goes away.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations returns the driver's validated migration files. Their numbers
// and names are the SQLite driver's.
func Migrations() ([]store.MigrationFile, error) {
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	return store.LoadMigrations(sub)
}

// IsURL reports whether a database URL selects this driver.
func IsURL(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// Options tune the driver. The zero value is ready to use.
type Options struct {
	// MaxConns caps the connection pool. Default 8: enough to keep two cores
	// busy while some connections wait on row locks; PostgreSQL gives every
	// connection a process, so more mostly adds contention.
	MaxConns int
	// Channel is the LISTEN/NOTIFY channel. Default "ratchet_wakeup". Nodes
	// that share a database must use the same channel.
	Channel string
	// ConnectTimeout bounds each connection attempt. Default 5s.
	ConnectTimeout time.Duration
	// Logger receives listener reconnect notices. Default slog.Default().
	Logger *slog.Logger
}

// Validate checks the options and names the field at fault.
func (o Options) Validate() error {
	if o.MaxConns < 0 || o.MaxConns > 1000 {
		return fmt.Errorf("postgres MaxConns: %d is out of range; must be 0 (default 8) to 1000", o.MaxConns)
	}
	if o.ConnectTimeout < 0 {
		return fmt.Errorf("postgres ConnectTimeout: %s is negative; must be 0 (default 5s) or more", o.ConnectTimeout)
	}
	return nil
}

// DB is the PostgreSQL store.
type DB struct {
	pool    *sql.DB
	cfg     *pgx.ConnConfig
	channel string
	log     *slog.Logger

	wake    chan struct{} // to claimers: jobs may be claimable
	pending chan struct{} // to the notifier: send one NOTIFY
	stop    context.CancelFunc
	wg      sync.WaitGroup
	closed  sync.Once
}

const (
	defaultMaxConns = 8
	defaultChannel  = "ratchet_wakeup"
)

// Open connects to the database at url (postgres://...), checks that it
// answers and starts listening for wake-ups. It does not migrate.
func Open(ctx context.Context, url string, opt Options) (*DB, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres url: %w", err)
	}
	if opt.ConnectTimeout == 0 {
		opt.ConnectTimeout = 5 * time.Second
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = opt.ConnectTimeout
	}
	if opt.MaxConns == 0 {
		opt.MaxConns = defaultMaxConns
	}
	if opt.Channel == "" {
		opt.Channel = defaultChannel
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	pool := stdlib.OpenDB(*cfg)
	pool.SetMaxOpenConns(opt.MaxConns)
	pool.SetMaxIdleConns(opt.MaxConns)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	pool.SetConnMaxLifetime(30 * time.Minute)
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to postgres: %w", translate(err))
	}
	lctx, stop := context.WithCancel(context.Background())
	db := &DB{pool: pool, cfg: cfg, channel: opt.Channel, log: opt.Logger,
		wake: make(chan struct{}, 1), pending: make(chan struct{}, 1), stop: stop}
	// The first LISTEN happens before Open returns, so a Notify from any node
	// after Open is never missed.
	conn, err := db.listen(ctx)
	if err != nil {
		stop()
		pool.Close()
		return nil, fmt.Errorf("listen for wake-ups: %w", err)
	}
	db.wg.Add(2)
	go db.listener(lctx, conn)
	go db.notifier(lctx)
	return db, nil
}

// Driver returns "postgres".
func (db *DB) Driver() string { return "postgres" }

// ConcurrentWriters is true: transactions run at once and take row locks.
func (db *DB) ConcurrentWriters() bool { return true }

// Close stops the listener and closes the pool.
func (db *DB) Close() error {
	var err error
	db.closed.Do(func() {
		db.stop()
		db.wg.Wait()
		err = db.pool.Close()
	})
	return err
}

// Ping checks the server answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.PingContext(ctx); err != nil {
		if !errors.Is(err, store.ErrUnavailable) {
			err = fmt.Errorf("%w: %v", store.ErrUnavailable, err)
		}
		return err
	}
	return nil
}

var (
	dialect     = &sqlstore.Dialect{Numbered: true, Locking: true, Arrays: true, Translate: translate, Now: sqlstore.PostgresNowSQL}
	readDialect = &sqlstore.Dialect{Numbered: true, Arrays: true, Translate: translate, Now: sqlstore.PostgresNowSQL} // a read-only snapshot may not lock rows
)

// Tx runs fn in a READ COMMITTED transaction; see the package doc for why
// that is enough.
//
// A transaction that PostgreSQL aborts as a deadlock victim or a
// serialization failure is run again (fn must be safe to repeat: the engine's
// closures reset their results at the start), up to four times; after that
// the error reads as store.ErrUnavailable, a 503 the client may retry.
func (db *DB) Tx(ctx context.Context, fn func(store.Queries) error) error {
	var err error
	for attempt := range 4 {
		if err = db.tx(ctx, fn); !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(1+attempt*attempt*5) * time.Millisecond):
		}
	}
	return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
}

func (db *DB) tx(ctx context.Context, fn func(store.Queries) error) error {
	tx, err := db.pool.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return translate(err)
	}
	if err := fn(&sqlstore.Queries{Tx: tx, D: dialect}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return commitErr(ctx, err)
	}
	return nil
}

// retryable reports a deadlock (40P01) or serialization failure (40001).
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// Read runs fn in a read-only snapshot.
func (db *DB) Read(ctx context.Context, fn func(store.Queries) error) error {
	tx, err := db.pool.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return translate(err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	return fn(&sqlstore.Queries{Tx: tx, D: readDialect})
}

// --- migrations ---

// migrateLock is the advisory lock that serialises Migrate across nodes. It
// is keyed by the schema so that databases holding several schemas (tests)
// migrate them independently.
const migrateLock = `hashtextextended('ratchet_migrate:' || current_schema(), 0)`

// Migrate applies pending migrations, each in its own transaction, holding an
// advisory lock so that nodes starting together apply each migration once.
func (db *DB) Migrate(ctx context.Context) (applied []string, err error) {
	files, err := Migrations()
	if err != nil {
		return nil, err
	}
	conn, err := db.pool.Conn(ctx)
	if err != nil {
		return nil, translate(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(`+migrateLock+`)`); err != nil {
		return nil, fmt.Errorf("take the migration lock: %w", translate(err))
	}
	defer unlockMigrations(conn)
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", translate(err))
	}
	done, err := appliedVersions(ctx, conn)
	if err != nil {
		return nil, err
	}
	for _, m := range files {
		if done[m.Version] {
			continue
		}
		if err := applyMigration(ctx, conn, m); err != nil {
			return applied, err
		}
		applied = append(applied, fmt.Sprintf("%04d_%s", m.Version, m.Name))
	}
	return applied, nil
}

// unlockMigrations releases the migration lock that Migrate took on conn.
// It uses a fresh context: the caller's may be done, and the lock must not
// outlive this connection's use. When the unlock fails, the connection is
// discarded: the session ends with it, which releases the lock.
func unlockMigrations(conn *sql.Conn) {
	uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, uerr := conn.ExecContext(uctx, `SELECT pg_advisory_unlock(`+migrateLock+`)`); uerr != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}

// applyMigration runs one migration and records it in schema_migrations,
// in one transaction, so a migration is applied whole or not at all.
func applyMigration(ctx context.Context, conn *sql.Conn, m store.MigrationFile) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return translate(err)
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, translate(err))
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
		_ = tx.Rollback()
		return translate(err)
	}
	if err := tx.Commit(); err != nil {
		return translate(err)
	}
	return nil
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func appliedVersions(ctx context.Context, q queryer) (map[int]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT version FROM schema_migrations`)
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
	var exists bool
	if err := db.pool.QueryRowContext(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return nil, translate(err)
	}
	done := map[int]bool{}
	if exists {
		if done, err = appliedVersions(ctx, db.pool); err != nil {
			return nil, err
		}
	}
	out := make([]store.Migration, len(files))
	for i, f := range files {
		out[i] = store.Migration{Version: f.Version, Name: f.Name, Applied: done[f.Version]}
	}
	return out, nil
}

// --- wake-ups ---

// Notify asks every node (this one included) to look for claimable jobs.
// It never blocks: this node's claimers are woken at once, and one
// background NOTIFY carries the news to the others, so a burst of calls
// costs one round trip. While the server is down the notice is dropped;
// claimers fall back on their own timers.
func (db *DB) Notify(context.Context) error {
	signal(db.wake)
	signal(db.pending)
	return nil
}

// Wakeups delivers notices from every node.
func (db *DB) Wakeups() <-chan struct{} { return db.wake }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (db *DB) notifier(ctx context.Context) {
	defer db.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-db.pending:
		}
		nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := db.pool.ExecContext(nctx, `SELECT pg_notify($1, '')`, db.channel)
		cancel()
		if err != nil && ctx.Err() == nil {
			db.log.Debug("postgres notify failed", "err", err)
		}
	}
}

// listen opens a dedicated connection and subscribes it to the channel.
func (db *DB) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, db.cfg.Copy())
	if err != nil {
		return nil, translate(err)
	}
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{db.channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, translate(err)
	}
	return conn, nil
}

// listener feeds notifications to Wakeups. When the connection drops it
// wakes the claimers (notices may have been missed) and reconnects with
// exponential backoff from 100ms up to 5s.
func (db *DB) listener(ctx context.Context, conn *pgx.Conn) {
	defer db.wg.Done()
	const minBackoff, maxBackoff = 100 * time.Millisecond, 5 * time.Second
	backoff := minBackoff
	for {
		for conn != nil {
			_, err := conn.WaitForNotification(ctx)
			if err != nil {
				conn.Close(context.Background())
				conn = nil
				if ctx.Err() != nil {
					return
				}
				db.log.Warn("postgres wake-up listener lost its connection; reconnecting", "err", err)
				signal(db.wake)
				break
			}
			backoff = minBackoff
			signal(db.wake)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
		c, err := db.listen(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			db.log.Debug("postgres wake-up listener reconnect failed", "err", err, "retryIn", backoff)
			continue
		}
		db.log.Info("postgres wake-up listener reconnected")
		conn = c
		signal(db.wake) // notices sent while we were away are lost
	}
}

// --- errors ---

// translate maps driver errors to the store's sentinels.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrStorageFull) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "23505": // unique_violation
			return fmt.Errorf("%w: %v", store.ErrConflict, err)
		case pe.Code == "53100", // disk_full
			pe.Code == "53200": // out_of_memory
			return fmt.Errorf("%w: %v", store.ErrStorageFull, err)
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			pe.Code == "53300", // too_many_connections
			pe.Code == "57P01", // admin_shutdown
			pe.Code == "57P02", // crash_shutdown
			pe.Code == "57P03": // cannot_connect_now (starting up, shutting down)
			return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
		}
		return err
	}
	if unreachable(err) {
		return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
	}
	return err
}

// unreachable reports errors that mean the server could not be reached or
// the connection broke, as opposed to a statement failing.
func unreachable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return pgconn.SafeToRetry(err)
}

var _ store.Store = (*DB)(nil)

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
