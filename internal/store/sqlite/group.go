package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/sqlstore"
)

// Group commit. SQLite has one writer, so write transactions run one after
// another, and with synchronous=FULL each commit waits for the WAL to reach
// the disk. Transactions that queue while the writer is busy are run
// together in one SQLite transaction, each inside a savepoint of its own,
// and committed with one sync: a caller's work is undone alone when its
// function fails, and no caller hears of success before the commit that
// holds its writes is durable. Run one at a time they were exactly this,
// but for a sync each.

// txRequest is one caller's transaction waiting for the writer.
type txRequest struct {
	ctx  context.Context
	fn   func(store.Queries) error
	done chan error
}

// call runs r's function on the writer's goroutine. A panic is not the
// writer's: it is recovered, the work undone like a failure's, and handed
// to the caller, whose Tx panics with it on its own goroutine.
func (r *txRequest) call(q *sqlstore.Queries) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicked{value: v}
		}
	}()
	return r.fn(q)
}

// panicked carries a transaction function's panic to its caller.
type panicked struct{ value any }

func (p *panicked) Error() string { return fmt.Sprintf("a transaction function panicked: %v", p.value) }

// maxGroup bounds the transactions one commit carries, so the first
// caller of a group never waits behind an unbounded queue.
const maxGroup = 64

// errClosed answers a transaction asked of a closed store.
var errClosed = errors.New("sqlite: the store is closed")

// commits is the writer: it takes the queued transactions in groups until
// the store closes, then runs what is still queued and returns.
func (db *DB) commits() {
	defer close(db.txDone)
	group := make([]*txRequest, 0, maxGroup)
	for {
		var first *txRequest
		select {
		case first = <-db.txq:
		case <-db.stop:
			db.drain()
			return
		}
		group = append(group[:0], first)
	more:
		for len(group) < maxGroup {
			select {
			case r := <-db.txq:
				group = append(group, r)
			default:
				break more
			}
		}
		db.runGroup(group)
	}
}

// drain answers every transaction queued when the store closed, each run
// on its own: they were accepted before the close.
func (db *DB) drain() {
	for {
		select {
		case r := <-db.txq:
			r.done <- db.runAlone(r)
		default:
			return
		}
	}
}

// runGroup runs group in one transaction, each function in a savepoint,
// and answers each caller once the commit is durable (or failed). A
// function that fails is rolled back to its savepoint and answered at
// once. If the transaction itself is lost (an error SQLite answers by
// rolling the whole transaction back, such as a full disk), the callers
// whose work it held are run again, each in a transaction of its own.
func (db *DB) runGroup(group []*txRequest) {
	if len(group) == 1 {
		group[0].done <- db.runAlone(group[0])
		return
	}
	if len(group) > int(db.largestGroup.Load()) {
		db.largestGroup.Store(int64(len(group)))
	}
	tx, err := db.writer.BeginTx(context.Background(), nil)
	if err != nil {
		for _, r := range group {
			r.done <- translate(err)
		}
		return
	}
	q := &sqlstore.Queries{Tx: tx, D: dialect, Detached: true}
	pending := make([]*txRequest, 0, len(group))
	for i, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.done <- err
			continue
		}
		ran, lost, err := runSaved(r, q)
		if lost {
			// The transaction is gone, and with it the work of every
			// function that ran in it: run each again on its own. A
			// function that failed is answered with its own error.
			_ = tx.Rollback()
			again := append(pending, group[i+1:]...)
			if ran && err != nil {
				r.done <- err
			} else {
				again = append(again, r)
			}
			for _, p := range again {
				p.done <- db.runAlone(p)
			}
			return
		}
		if err != nil {
			r.done <- err
			continue
		}
		pending = append(pending, r)
	}
	db.commitGroup(tx, pending)
}

// commitGroup commits tx and then answers the callers whose work it holds.
func (db *DB) commitGroup(tx *sql.Tx, pending []*txRequest) {
	err := tx.Commit()
	if err == nil {
		db.wrote()
	}
	for _, r := range pending {
		if err != nil {
			r.done <- commitErr(r.ctx, err)
		} else {
			r.done <- nil
		}
	}
}

// runSaved runs r's function in a savepoint of q's transaction, keeps its
// work if it succeeded and its caller still waits, and undoes it
// otherwise: a caller whose context ended before the commit is told so,
// and nothing of its work is kept, as when its transaction ran alone. ran
// says the function ran; err is its error (or the context's); lost says
// the transaction is gone (a savepoint could not be made, released or
// rolled back to).
func runSaved(r *txRequest, q *sqlstore.Queries) (ran, lost bool, err error) {
	if _, err := q.Tx.Exec(`SAVEPOINT ratchet_group`); err != nil {
		return false, true, nil
	}
	err = r.call(q)
	if err == nil {
		err = r.ctx.Err()
	}
	if err != nil {
		if _, rbErr := q.Tx.Exec(`ROLLBACK TO ratchet_group`); rbErr != nil {
			return true, true, err
		}
	}
	if _, relErr := q.Tx.Exec(`RELEASE ratchet_group`); relErr != nil {
		return true, true, err
	}
	return true, false, err
}

// runAlone runs r in a transaction of its own (BEGIN IMMEDIATE on the
// writer), as every transaction ran before groups.
func (db *DB) runAlone(r *txRequest) error {
	tx, err := db.writer.BeginTx(r.ctx, nil)
	if err != nil {
		return translate(err)
	}
	if err := r.call(&sqlstore.Queries{Tx: tx, D: dialect}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return commitErr(r.ctx, err)
	}
	db.wrote()
	return nil
}

// wrote tells the checkpointer a write committed.
func (db *DB) wrote() {
	select {
	case db.dirty <- struct{}{}:
	default:
	}
}
