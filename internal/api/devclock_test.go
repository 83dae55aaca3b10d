package api_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store/sqlite"
)

// TestAdvanceClockNamesTheValueGiven: POST /v1/dev/clock refuses an
// advanceMs outside 1 through 30 days with the value as given. Before, a
// value past what a time.Duration holds wrapped when converted and the
// error showed the wrapped value (0 for 18446744073709, where 2^64 ns
// wraps to nothing), and 0 was "must be 0 or more" in one place and
// refused in the other.
func TestAdvanceClockNamesTheValueGiven(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "api.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureOn(t, st, func(c *engine.Config) { c.Clock = clock.NewOffset(0) })
	for _, v := range []int64{0, -1, engine.MaxClockAdvanceMs + 1, 18446744073709, 9223372036854775, 9223372036854775807} {
		given := strconv.FormatInt(v, 10)
		status, body := f.call(t, "POST", "/v1/dev/clock", `{"advanceMs":`+given+`}`)
		want := `"field":"advanceMs","value":"` + given + `","allowed":"must be from 1 through 2592000000 milliseconds (30 days)"`
		if status != 400 || !strings.Contains(body, want) {
			t.Errorf("advanceMs %s: %d %s\nwant 400 with %s", given, status, body, want)
		}
	}
	if status, body := f.call(t, "POST", "/v1/dev/clock", `{"advanceMs":`+strconv.Itoa(engine.MaxClockAdvanceMs)+`}`); status != 200 {
		t.Errorf("advanceMs of 30 days: %d %s", status, body)
	}
}
