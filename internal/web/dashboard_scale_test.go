package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/server"
	"github.com/getratchet/ratchet/wire"
)

const scaleJobs = 100_000

// seedScale writes scaleJobs jobs over three endpoints straight through the
// engine into the database file, before the server opens it: the fast way
// to a realistic size (the API would take 100 batch requests).
func seedScale(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	st, err := server.OpenStore(ctx, filepath.Join(dir, "ratchet.db"), "NORMAL", true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng := must(engine.New(engine.Config{Store: st}))(t)
	if _, _, err := eng.Bootstrap(ctx, ownerKey); err != nil {
		t.Fatal(err)
	}
	p := must(eng.Authenticate(ctx, ownerKey))(t)
	for i := range 3 {
		pol := engine.DefaultEndpointPolicy()
		name := fmt.Sprintf("provider-%d", i)
		must(eng.CreateEndpoint(ctx, p, name, pol))(t)
		must(eng.PublishTool(ctx, p, engine.ToolSpec{Name: fmt.Sprintf("tool%d", i), Version: "1", Endpoint: name}))(t)
	}
	start := time.Now()
	batch := make([]engine.EnqueueRequest, 0, 1000)
	for n := range scaleJobs {
		batch = append(batch, engine.EnqueueRequest{Tool: fmt.Sprintf("tool%d@1", n%3), Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))})
		if len(batch) == cap(batch) {
			must(eng.EnqueueBatch(ctx, p, batch))(t)
			batch = batch[:0]
		}
	}
	t.Logf("seeded %d jobs through the engine in %v", scaleJobs, time.Since(start).Round(time.Millisecond))
}

// TestDashboardScale checks that the jobs page and the overview load with
// 100,000 jobs in the database: the page shows one page of jobs and the
// counts, and pages with the cursor. It asserts on content, never on time;
// the timings are logged for people reading the test output.
func TestDashboardScale(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("seeds 100,000 jobs")
	}
	b := browsertest.New(t)
	dir := t.TempDir()
	seedScale(t, dir)
	srv := proctest.Start(t, dir, nil)
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)

	// The API calls the pages make, timed from Go.
	timed := func(what string, f func() error) {
		t.Helper()
		var best, worst time.Duration
		for i := range 5 {
			s := time.Now()
			if err := f(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			d := time.Since(s)
			if i == 0 || d < best {
				best = d
			}
			worst = max(worst, d)
		}
		t.Logf("%-40s best %v, worst %v of 5", what, best.Round(time.Microsecond), worst.Round(time.Microsecond))
	}
	timed("GET /v1/overview", func() error {
		var out json.RawMessage
		return getJSON(ctx, srv.URL+"/v1/overview", &out)
	})
	timed("GET /v1/jobs?limit=50", func() error { _, err := c.ListJobs(ctx, client.JobFilter{Limit: 50}); return err })
	timed("GET /v1/jobs?limit=50 deep cursor", func() error {
		_, err := c.ListJobs(ctx, client.JobFilter{Limit: 50, Cursor: "1000"})
		return err
	})
	timed("GET /v1/jobs/count", func() error { _, err := c.CountJobs(ctx, client.JobFilter{}); return err })
	timed("GET /v1/jobs/count?tool=tool1@1&state=..", func() error {
		_, err := c.CountJobs(ctx, client.JobFilter{Tool: "tool1@1", States: []wire.JobState{wire.JobScheduled}})
		return err
	})

	d := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	s := time.Now()
	d.signIn(ownerKey)
	t.Logf("sign in to a rendered overview: %v", time.Since(s).Round(time.Millisecond))
	for i := range 3 {
		sel := fmt.Sprintf(`[data-endpoint="provider-%d"] .scheduled`, i)
		want := 33_333
		if i == 0 {
			want = 33_334
		}
		if got := d.text(sel); got != comma(int64(want)) {
			t.Errorf("%s = %q, want %s", sel, got, comma(int64(want)))
		}
	}
	d.shot("01-overview-100k")

	s = time.Now()
	d.click(`.site-nav a[href="/jobs"]`)
	d.waitView("jobs")
	t.Logf("jobs page, first page with count: %v", time.Since(s).Round(time.Millisecond))
	if got := d.text("#jobs-count"); got != "100,000 jobs match" {
		t.Errorf("count = %q", got)
	}
	ids := d.texts("#jobs-table tbody tr td.job-id > a")
	if len(ids) != 50 || ids[0] != "#100000" || ids[49] != "#99951" {
		t.Errorf("first page: %d rows, %q … %q", len(ids), first(ids), last(ids))
	}
	if got := d.text("#page-info"); got != "Page 1 · jobs 1–50 of 100,000" {
		t.Errorf("page info = %q", got)
	}
	d.shot("02-jobs-100k")
	s = time.Now()
	d.click("#next-page")
	d.tab.WaitFor(`document.documentElement.dataset.ready === "true" && location.search.includes("cursor=")`)
	t.Logf("next page: %v", time.Since(s).Round(time.Millisecond))
	ids = d.texts("#jobs-table tbody tr td.job-id > a")
	if len(ids) != 50 || ids[0] != "#99950" {
		t.Errorf("second page starts at %q", first(ids))
	}
	if got := d.text("#page-info"); got != "Page 2 · jobs 51–100 of 100,000" {
		t.Errorf("page info = %q", got)
	}
	d.click("#prev-page")
	d.tab.WaitFor(`document.documentElement.dataset.ready === "true" && !location.search.includes("cursor=")`)
	if ids = d.texts("#jobs-table tbody tr td.job-id > a"); first(ids) != "#100000" {
		t.Errorf("back on page 1 at %q", first(ids))
	}
	// A filtered view counts its selection; bulk actions refuse more than
	// 1,000 jobs before asking to confirm.
	d.choose("flt-tool", "tool1@1")
	d.pickStates("scheduled")
	s = time.Now()
	d.click("#apply-filters")
	d.tab.WaitFor(`document.documentElement.dataset.ready === "true" && location.search.includes("tool=")`)
	t.Logf("filtered jobs page: %v", time.Since(s).Round(time.Millisecond))
	if got := d.text("#jobs-count"); got != "33,333 jobs match" {
		t.Errorf("filtered count = %q", got)
	}
	d.click("#bulk-cancel")
	d.tab.WaitFor(`document.getElementById("bulk-result").textContent !== ""`)
	if got := d.text("#bulk-result"); !strings.Contains(got, "holds 33,333 jobs; a bulk action takes at most 1,000") {
		t.Errorf("bulk on 33,333 jobs: %q", got)
	}
	d.shot("03-jobs-filtered-100k")
}

// getJSON calls a route the Go client has no method for.
func getJSON(ctx context.Context, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+ownerKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("%s: status %d", url, res.StatusCode)
	}
	return json.NewDecoder(res.Body).Decode(out)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}
