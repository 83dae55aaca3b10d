package api

import (
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// A jobs list's nextCursor is the key of the page's last job in the list's
// order (store.JobKey):
//
//   - for id_desc and id_asc, the job's id in decimal, as before lists
//     could be sorted, so a cursor saved then still works (a decimal
//     cursor continues either id order: it carries no direction);
//   - for finished_desc and finished_asc, "<sort>:<finishedAt>:<id>", the
//     finish time in unix milliseconds and the id, so that jobs that
//     finished in the same millisecond are split by id and a page never
//     skips or repeats one. The sort's name in the cursor lets a cursor
//     of one order be refused with the other, not misread.

// idSorts are the orders whose cursor is a job id.
var idSorts = wire.Where(wire.JobSorts(), func(s wire.JobSort) bool { return !s.ByFinish() })

// maxCursorInt bounds every number of a cursor (ids and times alike).
const maxCursorInt = 1 << 62

// formatJobCursor is the nextCursor of key k in order s; "" for the zero
// key (no next page).
func formatJobCursor(k store.JobKey, s wire.JobSort) string {
	if k == (store.JobKey{}) {
		return ""
	}
	if s.ByFinish() {
		return string(s) + ":" + strconv.FormatInt(k.FinishedAt, 10) + ":" + strconv.FormatInt(k.ID, 10)
	}
	return strconv.FormatInt(k.ID, 10)
}

// parseJobCursor reads a nextCursor of order s (s "" is wire.SortIDDesc).
// The error names the field, the value and the form the order takes.
func parseJobCursor(c string, s wire.JobSort) (store.JobKey, error) {
	if s == "" {
		s = wire.SortIDDesc
	}
	num := func(t string, lo int64) (int64, bool) {
		// Digits only: no sign, no spaces, no "0x"; ParseInt alone would
		// take "+7".
		if t == "" || strings.Trim(t, "0123456789") != "" {
			return 0, false
		}
		v, err := strconv.ParseInt(t, 10, 64)
		return v, err == nil && v >= lo && v <= maxCursorInt
	}
	bad := func(allowed string) (store.JobKey, error) {
		return store.JobKey{}, field.New("cursor", strconv.QuoteToASCII(cutChars(c, 80)), allowed)
	}
	if !s.ByFinish() {
		id, ok := num(c, 1)
		if !ok {
			if strings.Contains(c, ":") {
				return bad("must be the nextCursor of a page of sort " + string(s) + ", a job id; this cursor is of another sort (" + strings.SplitN(c, ":", 2)[0] + "): keep sort and cursor together")
			}
			return bad("must be the nextCursor of the previous page: with sort " + string(s) + " a job id from 1 through " + strconv.FormatInt(maxCursorInt, 10))
		}
		return store.JobKey{ID: id}, nil
	}
	form := "must be the nextCursor of the previous page: with sort " + string(s) + " \"" + string(s) + ":<finishedAt ms>:<job id>\""
	parts := strings.Split(c, ":")
	if len(parts) != 3 {
		if _, ok := num(c, 1); ok {
			return bad(form + "; a job id alone is a cursor of sort " + wire.JoinOr(idSorts) + ": keep sort and cursor together")
		}
		return bad(form)
	}
	if parts[0] != string(s) {
		return bad(form + "; this cursor is of sort " + strconv.QuoteToASCII(cutChars(parts[0], 20)) + ": keep sort and cursor together")
	}
	at, ok1 := num(parts[1], 0)
	id, ok2 := num(parts[2], 1)
	if !ok1 || !ok2 {
		return bad(form)
	}
	return store.JobKey{ID: id, FinishedAt: at}, nil
}
