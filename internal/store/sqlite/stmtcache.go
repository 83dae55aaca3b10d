package sqlite

import (
	"context"
	"database/sql/driver"
	"sync"

	sqlite "modernc.org/sqlite"
)

// The SQL of the store is a fixed set of strings, but modernc.org/sqlite
// compiles every ad-hoc query anew: on the claim and report path that
// parsing was a third of the CPU. cachingConnector keeps each connection's
// prepared statements by SQL text and reuses them; a statement whose rows
// are still open is not shared (a fresh one is prepared instead), so nested
// queries stay correct.
type cachingConnector struct {
	dsn string
	drv *sqlite.Driver
}

func (c *cachingConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &cachingConn{conn: conn, stmts: map[string]*cachedStmt{}}, nil
}

func (c *cachingConnector) Driver() driver.Driver { return c.drv }

// maxCachedStmts bounds the cache: statements with IN lists of varying
// length have many texts.
const maxCachedStmts = 256

type cachingConn struct {
	conn  driver.Conn // modernc's *conn; database/sql serialises calls on it
	mu    sync.Mutex  // guards stmts against a rows Close from another goroutine
	stmts map[string]*cachedStmt
}

type cachedStmt struct {
	s     driver.Stmt
	inUse bool // rows of this statement are open
}

type iface interface {
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

func (c *cachingConn) inner() iface { return c.conn.(iface) }

// take returns a cached statement for query, preparing it if needed, or nil
// when it is busy or the cache is full.
func (c *cachingConn) take(ctx context.Context, query string) (*cachedStmt, error) {
	c.mu.Lock()
	cs, ok := c.stmts[query]
	if ok {
		if cs.inUse {
			c.mu.Unlock()
			return nil, nil
		}
		cs.inUse = true
		c.mu.Unlock()
		return cs, nil
	}
	full := len(c.stmts) >= maxCachedStmts
	c.mu.Unlock()
	if full {
		return nil, nil
	}
	s, err := c.inner().PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	cs = &cachedStmt{s: s, inUse: true}
	c.mu.Lock()
	c.stmts[query] = cs
	c.mu.Unlock()
	return cs, nil
}

func (c *cachingConn) release(cs *cachedStmt) {
	c.mu.Lock()
	cs.inUse = false
	c.mu.Unlock()
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.inner().ExecContext(ctx, query, args)
	}
	defer c.release(cs)
	return cs.s.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.inner().QueryContext(ctx, query, args)
	}
	rows, err := cs.s.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		c.release(cs)
		return nil, err
	}
	return &cachedRows{Rows: rows, c: c, cs: cs}, nil
}

// cachedRows frees its statement for reuse when closed (modernc resets a
// prepared statement's handle instead of finalizing it).
type cachedRows struct {
	driver.Rows
	c    *cachingConn
	cs   *cachedStmt
	once sync.Once
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	r.once.Do(func() { r.c.release(r.cs) })
	return err
}

func (c *cachingConn) Prepare(query string) (driver.Stmt, error) {
	return c.inner().PrepareContext(context.Background(), query)
}

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.inner().PrepareContext(ctx, query)
}

func (c *cachingConn) Begin() (driver.Tx, error) { //nolint:staticcheck // required by driver.Conn
	return c.inner().BeginTx(context.Background(), driver.TxOptions{})
}

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.inner().BeginTx(ctx, opts)
}

func (c *cachingConn) Ping(ctx context.Context) error { return c.inner().Ping(ctx) }

func (c *cachingConn) ResetSession(ctx context.Context) error { return c.inner().ResetSession(ctx) }

func (c *cachingConn) IsValid() bool { return c.inner().IsValid() }

func (c *cachingConn) Close() error {
	c.mu.Lock()
	for q, cs := range c.stmts {
		_ = cs.s.Close()
		delete(c.stmts, q)
	}
	c.mu.Unlock()
	return c.conn.Close()
}
