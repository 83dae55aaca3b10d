package sqlstore

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// maxBatchRows bounds the rows of one multi-row statement, so its
// placeholders stay well under SQLite's 32,766 and PostgreSQL's 65,535.
const maxBatchRows = 500

// valuesList renders rows of a VALUES list with ncols placeholders each. The
// first row casts every column to its type: PostgreSQL types VALUES columns
// like a UNION, so one typed row types them all (untyped parameters would be
// text), and SQLite keeps the bound value's own type either way.
func valuesList(rows int, types ...string) string {
	out := "(" + casts(types, "") + ")"
	if rows > 1 {
		out += strings.Repeat(", ("+placeholders(len(types))+")", rows-1)
	}
	return out
}

// casts renders a placeholder per type, each cast to the type with suffix
// ("[]" for arrays).
func casts(types []string, suffix string) string {
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = "CAST(? AS " + t + suffix + ")"
	}
	return strings.Join(parts, ", ")
}

// rowsFrom renders n rows as a relation named v with columns column1,
// column2, ... of the given SQL types (BIGINT, TEXT or DOUBLE PRECISION),
// for a FROM or JOIN, and returns its arguments. row(i, dst) appends row
// i's values to dst, one per type (so no row needs a slice of its own).
// With Arrays each column goes as one array, else each cell as one
// placeholder of a VALUES list.
func (q *Queries) rowsFrom(n int, types []string, row func(i int, dst []any) []any) (string, []any) {
	if !q.D.Arrays {
		args := make([]any, 0, n*len(types))
		for i := range n {
			args = row(i, args)
		}
		return "(VALUES " + valuesList(n, types...) + ") AS v", args
	}
	cols := make([]any, len(types))
	for c, t := range types {
		switch t {
		case "BIGINT":
			cols[c] = make([]int64, n)
		case "TEXT":
			cols[c] = make([]string, n)
		case "DOUBLE PRECISION":
			cols[c] = make([]float64, n)
		default:
			panic("rowsFrom: no array type for " + t)
		}
	}
	cells := make([]any, 0, len(types))
	for i := range n {
		cells = row(i, cells[:0])
		for c, v := range cells {
			switch col := cols[c].(type) {
			case []int64:
				col[i] = cellOf(v, reflect.Value.Int, reflect.Int64)
			case []string:
				col[i] = cellOf(v, reflect.Value.String, reflect.String)
			case []float64:
				col[i] = cellOf(v, reflect.Value.Float, reflect.Float64)
			}
		}
	}
	names := make([]string, len(types))
	for c := range types {
		names[c] = "column" + strconv.Itoa(c+1)
	}
	return "unnest(" + casts(types, "[]") + ") AS v(" + strings.Join(names, ", ") + ")", cols
}

// cellOf reads a cell of an array column: a value of the column's Go kind,
// named types included (a wire.JobState is a TEXT cell, as the drivers
// bind it in a VALUES list).
func cellOf[T any](v any, get func(reflect.Value) T, kind reflect.Kind) T {
	rv := reflect.ValueOf(v)
	if rv.Kind() != kind {
		panic(fmt.Sprintf("rowsFrom: a %T in a column of %s", v, kind))
	}
	return get(rv)
}

// inChunks calls fn with consecutive parts of n items: of at most
// maxBatchRows when each row takes placeholders, all at once when a batch
// goes as arrays.
func (q *Queries) inChunks(n int, fn func(lo, hi int) error) error {
	size := maxBatchRows
	if q.D.Arrays {
		size = max(n, 1)
	}
	for lo := 0; lo < n; lo += size {
		if err := fn(lo, min(n, lo+size)); err != nil {
			return err
		}
	}
	return nil
}
