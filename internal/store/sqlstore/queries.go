// Package sqlstore implements store.Queries over database/sql for both
// drivers. The SQL is written once with ? placeholders; a Dialect rewrites
// placeholders and adds row locks where PostgreSQL needs them.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/getratchet/ratchet/internal/store"
)

// Dialect is what differs between the drivers.
type Dialect struct {
	// Numbered rewrites ? placeholders as $1, $2, ... (PostgreSQL).
	Numbered bool
	// Locking adds FOR UPDATE (and SKIP LOCKED for claims). SQLite has one
	// writer and needs neither.
	Locking bool
	// Arrays passes a batch of rows as one array parameter per column,
	// read back with unnest (PostgreSQL), where the other drivers bind a
	// placeholder per cell of a VALUES list. One statement text for every
	// batch size is prepared once and planned once; 15,000 placeholders
	// were parsed, planned and encoded one by one for each report batch.
	Arrays bool
	// Translate maps driver errors to store sentinels.
	Translate func(error) error
	// Now is the statement that reads the database's clock in unix
	// milliseconds (Queries.Now).
	Now string
}

// PostgresNowSQL and SQLiteNowSQL read the database's clock for Queries.Now.
// PostgreSQL's clock_timestamp() is the time of the read itself: now() is
// the transaction's start, older than a row lock the transaction waited
// for. SQLite's 'now' is the machine's clock with millisecond resolution.
const (
	PostgresNowSQL = `SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`
	SQLiteNowSQL   = `SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`
)

// Queries runs store operations inside one transaction.
type Queries struct {
	// Tx is the transaction every query runs in.
	Tx *sql.Tx
	// D is the dialect of the driver that began Tx.
	D *Dialect
	// Detached runs every statement without its context's cancellation
	// (its values kept): a transaction shared by several callers (SQLite's
	// group commit) must not be interrupted by one of them going away.
	Detached bool
}

func (q *Queries) ctx(ctx context.Context) context.Context {
	if q.Detached {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

var rebindCache sync.Map // string → string

func (q *Queries) sql(s string) string {
	if !q.D.Numbered {
		return s
	}
	if v, ok := rebindCache.Load(s); ok {
		return v.(string)
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	rebindCache.Store(s, out)
	return out
}

func (q *Queries) exec(ctx context.Context, s string, args ...any) (sql.Result, error) {
	r, err := q.Tx.ExecContext(q.ctx(ctx), q.sql(s), args...)
	return r, q.D.Translate(err)
}

func (q *Queries) row(ctx context.Context, s string, args ...any) *sql.Row {
	return q.Tx.QueryRowContext(q.ctx(ctx), q.sql(s), args...)
}

func (q *Queries) query(ctx context.Context, s string, args ...any) (*sql.Rows, error) {
	r, err := q.Tx.QueryContext(q.ctx(ctx), q.sql(s), args...)
	return r, q.D.Translate(err)
}

func (q *Queries) insertID(ctx context.Context, s string, args ...any) (int64, error) {
	var id int64
	err := q.row(ctx, s+" RETURNING id", args...).Scan(&id)
	return id, q.D.Translate(err)
}

func (q *Queries) forUpdate() string {
	if q.D.Locking {
		return " FOR UPDATE"
	}
	return ""
}

func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return string(raw)
}

func nullInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// scanner is a row to scan: a *sql.Row or the current row of *sql.Rows.
type scanner = interface{ Scan(...any) error }

// each calls fn on every row of rows, the result of a query that failed
// with err or not, and closes rows. It returns the first error: the
// query's, fn's (as it is), or the one that ended the rows (translated).
func each(q *Queries, rows *sql.Rows, err error, fn func(scanner) error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return q.D.Translate(rows.Err())
}

// collect scans every row of rows with scan, in the order the query
// returns them, and closes rows; nil and the error when the query, a scan
// or the rows fail (see each). No rows is a nil slice.
func collect[T any](q *Queries, rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	var out []T
	err = each(q, rows, err, func(sc scanner) error {
		v, err := scan(sc)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// deref makes a scan function that returns a pointer, such as scanJob, one
// for collect.
func deref[T any](scan func(scanner) (*T, error)) func(scanner) (T, error) {
	return func(sc scanner) (T, error) {
		p, err := scan(sc)
		if err != nil {
			var zero T
			return zero, err
		}
		return *p, nil
	}
}

// scanInt64 scans a row of one integer column.
func scanInt64(sc scanner) (int64, error) {
	var n int64
	err := sc.Scan(&n)
	return n, err
}

func (q *Queries) expectOne(r sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := r.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// expectN is expectOne for a statement that should change n rows.
func (q *Queries) expectN(r sql.Result, err error, n int) error {
	if err != nil {
		return err
	}
	got, err := r.RowsAffected()
	if err != nil {
		return err
	}
	if got != int64(n) {
		return fmt.Errorf("%d of %d rows found: %w", got, n, store.ErrNotFound)
	}
	return nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// Now reads the database's clock with the dialect's statement.
func (q *Queries) Now(ctx context.Context) (int64, error) {
	var ms int64
	err := q.row(ctx, q.D.Now).Scan(&ms)
	return ms, q.D.Translate(err)
}

var _ store.Queries = (*Queries)(nil)
