package api

import (
	"strconv"
	"testing"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// FuzzJobCursor: parseJobCursor never panics; it accepts a cursor or
// refuses it with one error naming the field cursor; what it accepts is a
// key a page could have ended on (an id of 1 or more, a finish time only
// for the finished orders), and formatting that key again reads back the
// same key in the same order. A key formatted for an order always parses
// in it.
func FuzzJobCursor(f *testing.F) {
	for _, seed := range []string{"", "1", "42", "007", "0", "-1", "+7", " 7", "4611686018427387904", "4611686018427387905",
		"finished_desc:1733472000000:42", "finished_asc:0:1", "finished_desc::1", "finished_desc:1:0", "finished_desc:1:2:3",
		"finished_asc:1733472000000:42", "id_desc:42", ":::", "finished_desc:-1:2", "finished_desc:1:\x00", "finished_desc:\xff:1"} {
		for i := range len(wire.JobSorts()) + 1 {
			f.Add(seed, uint8(i), int64(1), int64(0))
		}
	}
	f.Fuzz(func(t *testing.T, c string, which uint8, id, at int64) {
		sorts := append([]wire.JobSort{""}, wire.JobSorts()...)
		s := sorts[int(which)%len(sorts)]
		k, err := parseJobCursor(c, s)
		if err != nil {
			fes, ok := field.As(err)
			if !ok || len(fes) != 1 || fes[0].Field != "cursor" || fes[0].Allowed == "" {
				t.Fatalf("parseJobCursor(%q, %q) = %v; want one error naming cursor", c, s, err)
			}
		} else {
			if k.ID < 1 || k.ID > maxCursorInt || k.FinishedAt < 0 || k.FinishedAt > maxCursorInt || (!s.ByFinish() && k.FinishedAt != 0) {
				t.Fatalf("parseJobCursor(%q, %q) = %+v: not a key a page ends on", c, s, k)
			}
			again, err := parseJobCursor(formatJobCursor(k, s), s)
			if err != nil || again != k {
				t.Fatalf("cursor %q (%q) reads %+v, formatted %q reads %+v, %v", c, s, k, formatJobCursor(k, s), again, err)
			}
		}
		// Any key a list can end on formats to a cursor that reads back.
		if id < 1 || id > maxCursorInt || at < 0 || at > maxCursorInt {
			return
		}
		want := store.JobKey{ID: id}
		if s.ByFinish() {
			want.FinishedAt = at
		}
		if got, err := parseJobCursor(formatJobCursor(want, s), s); err != nil || got != want {
			t.Fatalf("key %+v in %q: cursor %q reads %+v, %v", want, s, formatJobCursor(want, s), got, err)
		}
	})
}

// TestJobCursorOldCursors: a decimal cursor, the only kind before lists
// could be sorted, still continues the id orders; a cursor of one order is
// refused with another, saying so.
func TestJobCursorOldCursors(t *testing.T) {
	for _, s := range []wire.JobSort{"", wire.SortIDDesc, wire.SortIDAsc} {
		if k, err := parseJobCursor("12345", s); err != nil || k != (store.JobKey{ID: 12345}) {
			t.Errorf("cursor 12345 with sort %q = %+v, %v", s, k, err)
		}
	}
	for _, c := range []struct {
		cursor string
		sort   wire.JobSort
	}{
		{"12345", wire.SortFinishedDesc},
		{"finished_desc:1:2", wire.SortIDDesc},
		{"finished_desc:1:2", wire.SortFinishedAsc},
		{"finished_asc:1:2", ""},
	} {
		_, err := parseJobCursor(c.cursor, c.sort)
		fes, ok := field.As(err)
		if !ok || len(fes) != 1 || fes[0].Value != strconv.Quote(c.cursor) {
			t.Errorf("cursor %q with sort %q: %v; want an error naming the cursor", c.cursor, c.sort, err)
		}
	}
}
