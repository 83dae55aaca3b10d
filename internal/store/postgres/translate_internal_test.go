package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/getratchet/ratchet/internal/store"
)

// TestTranslate: PostgreSQL's SQLSTATEs map to the store's sentinels the
// way SQLite's codes do, so both drivers give the API the same answer; a
// full disk (53100) is ErrStorageFull, not a bare 500.
func TestTranslate(t *testing.T) {
	for code, want := range map[string]error{
		"53100": store.ErrStorageFull, // disk_full
		"53200": store.ErrStorageFull, // out_of_memory
		"23505": store.ErrConflict,
		"08006": store.ErrUnavailable,
		"57P01": store.ErrUnavailable,
		"22P02": nil, // invalid_text_representation: a statement's own error
	} {
		err := translate(fmt.Errorf("exec: %w", &pgconn.PgError{Code: code, Message: "m"}))
		for _, s := range []error{store.ErrStorageFull, store.ErrConflict, store.ErrUnavailable} {
			if got := errors.Is(err, s); got != (s == want) {
				t.Errorf("SQLSTATE %s: errors.Is(%v) = %v", code, s, got)
			}
		}
	}
}
