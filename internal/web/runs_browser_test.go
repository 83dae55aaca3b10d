package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestRunsListed (defect 11, at 1280 px): the Runs page lists the
// project's runs from GET /v1/runs, newest first with their states; it
// guessed them from the newest 500 jobs and said there were none for runs
// without recent steps. Older runs come a page at a time.
func TestRunsListed(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, nil)
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	var ids []int64
	for _, name := range []string{"nightly-billing", "", "weekly-report"} {
		ids = append(ids, must(c.StartRun(ctx, name))(t).ID)
	}
	must(c.FinishRun(ctx, ids[0]))(t)
	page := must(c.ListRuns(ctx, "", 2))(t)
	if len(page.Runs) != 2 || page.Runs[0].ID != ids[2] || page.NextCursor == nil {
		t.Fatalf("GET /v1/runs?limit=2: %+v", page)
	}
	if rest := must(c.ListRuns(ctx, *page.NextCursor, 2))(t); len(rest.Runs) != 1 || rest.Runs[0].ID != ids[0] || rest.Runs[0].State != "finished" || rest.NextCursor != nil {
		t.Errorf("the second page: %+v", rest)
	}
	if _, err := c.ListRuns(ctx, "x", 0); err == nil || !strings.Contains(err.Error(), "cursor") {
		t.Errorf("a bad cursor: %v", err)
	}

	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	setViewport(t, a.tab, 1280, 800)
	a.signIn(ownerKey)
	a.open("/runs")
	a.waitView("runs")
	got := a.texts("#recent-runs li")
	want := []string{fmt.Sprintf("Run #%d · weekly-report open", ids[2]), fmt.Sprintf("Run #%d open", ids[1]), fmt.Sprintf("Run #%d · nightly-billing finished", ids[0])}
	if len(got) != 3 {
		t.Fatalf("the Runs page lists %q; want the three runs", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("run %d reads %q, want it to start %q", i, got[i], want[i])
		}
	}
	a.shot("runs-1280")
}
