package api

// Helpers the areas share: pages, limits and empty lists.

import (
	"strconv"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/wire"
)

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// pageParams reads the cursor and limit of a paged list.
func pageParams(cursor, limit string) (afterID int64, n int, err error) {
	var errs field.Errors
	if cursor != "" {
		v, perr := strconv.ParseInt(cursor, 10, 64)
		if perr != nil || v < 1 || v > 1<<62 {
			errs.Add("cursor", strconv.Quote(cursor), "must be the nextCursor of the previous page")
		}
		afterID = v
	}
	n = limitParam(&errs, limit, wire.DefaultListLimit, wire.MaxListLimit)
	return afterID, n, errs.Err()
}

// limitParam reads a limit query parameter of 1 through most; def when
// it is absent.
func limitParam(errs *field.Errors, limit string, def, most int) int {
	if limit == "" {
		return def
	}
	v, err := strconv.Atoi(limit)
	if err != nil || v < 1 || v > most {
		errs.Add("limit", strconv.Quote(limit), "must be an integer from 1 through "+strconv.Itoa(most))
	}
	return v
}

func orEmptyMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}
