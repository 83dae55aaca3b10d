package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/internal/store/sqlite"
	"github.com/getratchet/ratchet/wire"
)

// sortFixtures are the API on SQLite and, when reachable, PostgreSQL, each
// on a fake clock the test advances between failures.
func sortFixtures(t *testing.T) map[string]sortFixture {
	withClock := func(clk *clock.Fake) func(*engine.Config) { return func(c *engine.Config) { c.Clock = clk } }
	newClock := func() *clock.Fake { return clock.NewFake(time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)) }
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "api.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	out := map[string]sortFixture{"sqlite": {newFixtureOn(t, st, withClock(clk)), clk}}
	if pgtest.Available() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		pg, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		clk := newClock()
		out["postgres"] = sortFixture{newFixtureOn(t, pg, withClock(clk)), clk}
	} else {
		t.Log("PostgreSQL not reachable: SQLite only")
	}
	return out
}

type sortFixture struct {
	*fixture
	clk *clock.Fake
}

// TestJobListSort: GET /v1/jobs?sort= on both drivers. Six jobs end (one
// attempt and a 503: exhausted) in an order unlike their ids, two in the
// same millisecond; each order lists them right, and walking it with
// nextCursor (pages of 3, so a page ends inside the tie) visits each job
// once. The finished orders' cursor carries the finish time and the id;
// the id orders' stays a decimal id, so a cursor saved before sorting
// existed still works. Counts and bulk actions ignore the sort.
func TestJobListSort(t *testing.T) {
	for name, f := range sortFixtures(t) {
		t.Run(name, func(t *testing.T) {
			clk := f.clk
			var ids []int64
			for range 6 {
				status, body := f.call(t, "POST", "/v1/jobs", `{"tool":"charge@1","payload":{},"maxAttempts":1}`)
				var j wire.Job
				if status != 201 || json.Unmarshal([]byte(body), &j) != nil {
					t.Fatalf("enqueue: %d %s", status, body)
				}
				ids = append(ids, j.ID)
			}
			_, body := f.call(t, "POST", "/v1/claims", `{"workerId":"w","tools":["charge@1"],"max":10}`)
			var c wire.ClaimResult
			if err := json.Unmarshal([]byte(body), &c); err != nil || len(c.Jobs) != 7 { // the fixture's job too
				t.Fatalf("claim: %v %s", err, body)
			}
			token := map[int64]string{}
			for _, j := range c.Jobs {
				token[j.ID] = j.LeaseToken
			}
			// Fail in the order 3, 1, 5, 0, 4, 2; 5 and 0 in one millisecond.
			for _, i := range []int{3, 1, 5, 0, 4, 2} {
				if i != 0 {
					clk.Advance(time.Second)
				}
				rep := fmt.Sprintf(`{"leaseToken":%q,"httpStatus":503,"message":"boom %d"}`, token[ids[i]], i)
				if status, body := f.call(t, "POST", fmt.Sprintf("/v1/jobs/%d/report", ids[i]), rep); status != 200 {
					t.Fatalf("report: %d %s", status, body)
				}
			}
			of := func(is ...int) []int64 {
				var out []int64
				for _, i := range is {
					out = append(out, ids[i])
				}
				return out
			}
			walk := func(q url.Values) ([]int64, []string) {
				t.Helper()
				var got []int64
				var cursors []string
				for range 10 {
					status, body := f.call(t, "GET", "/v1/jobs?"+q.Encode(), "")
					var page wire.JobList
					if status != 200 || json.Unmarshal([]byte(body), &page) != nil {
						t.Fatalf("list %s: %d %s", q.Encode(), status, body)
					}
					for _, j := range page.Jobs {
						got = append(got, j.ID)
					}
					if page.NextCursor == nil {
						return got, cursors
					}
					cursors = append(cursors, *page.NextCursor)
					q.Set("cursor", *page.NextCursor)
				}
				t.Fatalf("list %s: more than 10 pages", q.Encode())
				return nil, nil
			}
			for _, c := range []struct {
				query  string
				want   []int64
				cursor string // the first nextCursor's form
			}{
				{"state=exhausted&sort=finished_desc", of(2, 4, 5, 0, 1, 3), fmt.Sprintf("finished_desc:%d:%d", clk.Now().Add(-2*time.Second).UnixMilli(), ids[5])},
				{"state=failed,exhausted&sort=finished_asc", of(3, 1, 0, 5, 4, 2), fmt.Sprintf("finished_asc:%d:%d", clk.Now().Add(-2*time.Second).UnixMilli(), ids[0])},
				{"state=exhausted&sort=id_asc", of(0, 1, 2, 3, 4, 5), fmt.Sprint(ids[2])},
				{"state=exhausted&sort=id_desc", of(5, 4, 3, 2, 1, 0), fmt.Sprint(ids[3])},
				{"state=exhausted", of(5, 4, 3, 2, 1, 0), fmt.Sprint(ids[3])},
				{"state=exhausted&sort=finished_desc&q=boom", of(2, 4, 5, 0, 1, 3), fmt.Sprintf("finished_desc:%d:%d", clk.Now().Add(-2*time.Second).UnixMilli(), ids[5])},
			} {
				q, _ := url.ParseQuery(c.query + "&limit=3")
				got, cursors := walk(q)
				if !slices.Equal(got, c.want) {
					t.Errorf("%s: %v, want %v", c.query, got, c.want)
				}
				if len(cursors) == 0 || cursors[0] != c.cursor {
					t.Errorf("%s: cursors %q, want the first %q", c.query, cursors, c.cursor)
				}
			}

			// A cursor saved before sorting existed (a decimal id) continues
			// the default order and id_asc alike.
			for q, want := range map[string][]int64{
				fmt.Sprintf("state=exhausted&cursor=%d", ids[3]):             of(2, 1, 0),
				fmt.Sprintf("state=exhausted&sort=id_asc&cursor=%d", ids[3]): of(4, 5),
			} {
				status, body := f.call(t, "GET", "/v1/jobs?"+q, "")
				var page wire.JobList
				if status != 200 || json.Unmarshal([]byte(body), &page) != nil {
					t.Fatalf("%s: %d %s", q, status, body)
				}
				var got []int64
				for _, j := range page.Jobs {
					got = append(got, j.ID)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: %v, want %v", q, got, want)
				}
			}

			// Counts and bulk actions select by the filter, whatever the sort.
			if status, body := f.call(t, "GET", "/v1/jobs/count?state=exhausted&sort=finished_desc", ""); status != 200 || !strings.Contains(body, `"count":6,`) {
				t.Errorf("count with a sort: %d %s", status, body)
			}
			status, body := f.call(t, "POST", "/v1/jobs/bulk", `{"action":"replay","filter":{"state":"exhausted","sort":"finished_asc","cursor":"finished_asc:1:1"},"expectedCount":6}`)
			var res wire.JobBulkResult
			if status != 200 || json.Unmarshal([]byte(body), &res) != nil || res.Count != 6 {
				t.Errorf("bulk with a sort: %d %s", status, body)
			}
		})
	}
}

// TestJobListSortErrors: a sort or cursor the list cannot use is a 400
// naming the field, the value and what is allowed.
func TestJobListSortErrors(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ query, want string }{
		{"sort=newest", `"field":"sort","value":"\"newest\"","allowed":"must be id_desc, id_asc, finished_desc or finished_asc"`},
		{"sort=finished_desc", `"field":"sort","value":"finished_desc","allowed":"needs a state filter of failed or exhausted or both`},
		{"sort=finished_asc&state=failed,scheduled", `"field":"sort","value":"finished_asc","allowed":"needs a state filter of failed or exhausted or both (the states an index orders by finish time); state is \"failed,scheduled\"; sort by id_desc or id_asc instead"`},
		{"sort=finished_desc&state=failed&cursor=12", `"field":"cursor","value":"\"12\"","allowed":"must be the nextCursor of the previous page: with sort finished_desc \"finished_desc:\u003cfinishedAt ms\u003e:\u003cjob id\u003e\"; a job id alone is a cursor of sort id_desc or id_asc: keep sort and cursor together"`},
		{"sort=finished_desc&state=failed&cursor=finished_asc:1:2", `"field":"cursor","value":"\"finished_asc:1:2\"","allowed":"must be the nextCursor of the previous page: with sort finished_desc \"finished_desc:\u003cfinishedAt ms\u003e:\u003cjob id\u003e\"; this cursor is of sort \"finished_asc\": keep sort and cursor together"`},
		{"sort=finished_desc&state=failed&cursor=finished_desc:x:2", `"field":"cursor","value":"\"finished_desc:x:2\""`},
		{"cursor=finished_desc:1:2", `"field":"cursor","value":"\"finished_desc:1:2\"","allowed":"must be the nextCursor of a page of sort id_desc, a job id; this cursor is of another sort (finished_desc): keep sort and cursor together"`},
		{"sort=id_asc&cursor=-3", `"field":"cursor","value":"\"-3\"","allowed":"must be the nextCursor of the previous page: with sort id_asc a job id from 1 through 4611686018427387904"`},
	} {
		for _, path := range []string{"/v1/jobs?", "/v1/stream?view=jobs&"} {
			if strings.HasPrefix(path, "/v1/stream") && strings.Contains(c.query, "cursor") {
				continue // a stream refuses any cursor
			}
			status, body := f.call(t, "GET", path+c.query, "")
			if status != 400 || !strings.Contains(body, c.want) {
				t.Errorf("%s%s: %d %.500s\nwant 400 with %s", path, c.query, status, body, c.want)
			}
		}
	}
}
