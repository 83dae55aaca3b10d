package api_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store/sqlite"
	"github.com/getratchet/ratchet/wire"
)

// TestSearchCountWindow: a text search counts within the newest
// SearchWindow jobs of the other filters (here 2) and says it was capped;
// a bulk action on the search acts on exactly the jobs it counted; counts
// without a text search are exact and not capped.
func TestSearchCountWindow(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "api.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureOn(t, st, func(c *engine.Config) { c.SearchWindow = 2 })
	var ids []int64
	for _, payload := range []string{`{"note":"needle"}`, `{"note":"hay"}`, `{"note":"needle"}`, `{"note":"a needle"}`} {
		status, body := f.call(t, "POST", "/v1/jobs", `{"tool":"charge@1","payload":`+payload+`}`)
		if status != 201 {
			t.Fatalf("enqueue: %d %s", status, body)
		}
		var j wire.Job
		if err := json.Unmarshal([]byte(body), &j); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	count := func(q string) wire.JobCount {
		t.Helper()
		status, body := f.call(t, "GET", "/v1/jobs/count?"+q, "")
		var c wire.JobCount
		if status != 200 || json.Unmarshal([]byte(body), &c) != nil {
			t.Fatalf("count %s: %d %s", q, status, body)
		}
		return c
	}
	for q, want := range map[string]wire.JobCount{
		"q=needle":           {Count: 2, Capped: true}, // the newest two jobs both match; the oldest needle is outside
		"q=nowhere":          {Count: 0, Capped: true},
		"":                   {Count: 5, Capped: false}, // the fixture's job and these four
		"state=scheduled":    {Count: 5, Capped: false},
		"q=" + fmtID(ids[0]): {Count: 1, Capped: false}, // a job id is no text search
		"q=needle&tool=nope": {Count: 0, Capped: false}, // fewer jobs than the window: all searched
	} {
		if got := count(q); got != want {
			t.Errorf("count %q = %+v, want %+v", q, got, want)
		}
	}

	status, body := f.call(t, "POST", "/v1/jobs/bulk", `{"action":"cancel","filter":{"q":"needle"},"expectedCount":2}`)
	var res wire.JobBulkResult
	if status != 200 || json.Unmarshal([]byte(body), &res) != nil {
		t.Fatalf("bulk: %d %s", status, body)
	}
	if res.Count != 2 || len(res.Jobs) != 2 || res.Jobs[0] != ids[3] || res.Jobs[1] != ids[2] {
		t.Fatalf("bulk cancelled %+v, want jobs %d and %d", res.Jobs, ids[3], ids[2])
	}
	status, body = f.call(t, "GET", "/v1/jobs/"+fmtID(ids[0]), "")
	var j wire.Job
	if status != 200 || json.Unmarshal([]byte(body), &j) != nil || j.State != wire.JobScheduled {
		t.Fatalf("the oldest needle, outside the window, was touched: %d %s", status, body)
	}
}

func fmtID(id int64) string { return strconv.FormatInt(id, 10) }
