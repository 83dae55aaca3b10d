package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/web"
)

// keyboard drives a dashboard tab with keys only and counts the Tabs.
type keyboard struct {
	*dash
	tabs  int
	steps []string
}

// focusVisible fails the test unless the focused element is a control
// inside the window with a visible focus indicator (an outline or a ring).
func (k *keyboard) focusVisible(after string) {
	k.t.Helper()
	got := browsertest.Eval[map[string]any](k.tab, `(() => {
		const e = document.activeElement;
		if (!e || e === document.body) return {ok: false, what: "the body"};
		const r = e.getBoundingClientRect(), s = getComputedStyle(e);
		const ring = (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) || (s.boxShadow && s.boxShadow !== "none");
		const inView = r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < window.innerHeight && r.right > 0 && r.left < window.innerWidth;
		return {ok: ring && inView, what: e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + " " + (e.innerText || e.value || "").trim().slice(0, 40) + (ring ? "" : " (no focus ring)") + (inView ? "" : " (out of view)")};
	})()`)
	if !got["ok"].(bool) {
		k.t.Errorf("after %s focus is on %s", after, got["what"])
	}
}

// tabTo presses Tab until the focused element matches css (none when it
// does already), at most limit times, checking focus is visible after
// each press.
func (k *keyboard) tabTo(css string, limit int) {
	k.t.Helper()
	if browsertest.Eval[bool](k.tab, fmt.Sprintf(`!!document.activeElement && document.activeElement.matches(%q)`, css)) {
		k.steps = append(k.steps, "0 Tab to "+css)
		return
	}
	for n := 1; n <= limit; n++ {
		k.tab.Do("press Tab", chromedp.KeyEvent(kb.Tab))
		k.tabs++
		k.focusVisible(fmt.Sprintf("Tab %d", k.tabs))
		if browsertest.Eval[bool](k.tab, fmt.Sprintf(`!!document.activeElement && document.activeElement.matches(%q)`, css)) {
			k.steps = append(k.steps, fmt.Sprintf("%d Tab to %s", n, css))
			return
		}
	}
	k.t.Fatalf("%d Tabs did not reach %s (steps so far: %s)", limit, css, strings.Join(k.steps, "; "))
}

// enter presses Enter on the focused element.
func (k *keyboard) enter() {
	k.t.Helper()
	k.tab.Do("press Enter", chromedp.KeyEvent(kb.Enter))
}

// TestKeyboardTask: from the overview, with the keyboard only, find a
// failed job of an endpoint, read why it failed, replay it, then pause and
// resume the endpoint: at most 10 Tabs in all, with focus visible after
// every key (at 1280×800).
func TestKeyboardTask(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, liveEnv, "--dev-clock")
	failed, _ := seedJobs(t, srv.URL, 3)
	// A second endpoint, healthy, so the task has to pick the right one.
	c := client.New(srv.URL, ownerKey)
	must(c.CreateEndpoint(context.Background(), "zeta", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}}))(t)
	must(c.PublishTool(context.Background(), client.ToolSpec{Name: "ping", Version: "1", Endpoint: "zeta"}))(t)
	enqueue(t, c, client.EnqueueRequest{Tool: "ping@1", Payload: json.RawMessage(`{}`)})

	k := &keyboard{dash: &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}}
	setViewport(t, k.tab, 1280, 800)
	k.signIn(ownerKey)
	k.open("/")
	k.waitView("overview")
	// Where a navigation leaves focus: on the view's heading.
	browsertest.Eval[chromedp.Void](k.tab, `(() => { const h = document.querySelector("#view h1"); h.tabIndex = -1; h.focus(); })()`)

	k.tabTo(`article[data-endpoint="acts"] a.failed-jobs`, 10)
	k.enter()
	k.waitView("jobs")
	k.focusVisible("opening the failed jobs")
	k.tabTo(fmt.Sprintf(`#jobs-table a[href="/jobs/%d"]`, failed.ID), 10)
	k.enter()
	k.waitView("job")
	k.focusVisible("opening the job")
	if why := k.text("#job-last-error"); !strings.Contains(why, "card declined") {
		t.Errorf("the job page's last error says %q", why)
	}
	k.shot("job-1280")
	k.tabTo("#job-replay", 10)
	k.enter()
	k.tab.WaitFor(fmt.Sprintf(`document.documentElement.dataset.view === "job" && document.documentElement.dataset.ready === "true" && location.pathname !== "/jobs/%d"`, failed.ID))
	k.focusVisible("replaying")
	k.tabTo(`a[href="/endpoints/acts"]`, 10)
	k.enter()
	k.waitView("endpoint")
	k.focusVisible("opening the endpoint")
	k.tabTo("#ops-pause", 10)
	k.enter()
	k.tab.WaitFor(`document.getElementById("pause-dialog") && document.getElementById("pause-dialog").open`)
	k.focusVisible("opening the pause dialog")
	k.tab.Do("type a reason", chromedp.KeyEvent("card processor incident"))
	k.enter()
	k.tab.WaitFor(`!!document.getElementById("ops-resume")`)
	must(c.GetEndpoint(context.Background(), "acts"))(t)
	k.focusVisible("pausing")
	k.shot("paused-1280")
	if !browsertest.Eval[bool](k.tab, `document.activeElement === document.getElementById("ops-resume")`) {
		k.tabTo("#ops-resume", 10)
	}
	k.enter()
	k.tab.WaitFor(`!!document.getElementById("ops-pause")`)
	k.focusVisible("resuming")
	ep := must(c.GetEndpoint(context.Background(), "acts"))(t)
	if ep.Paused != nil {
		t.Errorf("acts is still paused: %+v", ep.Paused)
	}
	t.Logf("the task took %d Tabs: %s", k.tabs, strings.Join(k.steps, "; "))
	if k.tabs > 10 {
		t.Errorf("the task took %d Tabs, want at most 10: %s", k.tabs, strings.Join(k.steps, "; "))
	}
}

// TestFocusOnHeadingInEveryView: after a navigation inside the dashboard
// focus lands on the new view's heading, in every view of the route list
// (web.DashboardRoutes), so a view added later cannot skip the rule.
func TestFocusOnHeadingInEveryView(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, liveEnv, "--dev-clock")
	failed, _ := seedJobs(t, srv.URL, 1)
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	run := must(c.StartRun(ctx, "nightly-billing"))(t)
	must(c.CreateSchedule(ctx, client.ScheduleCreate{Name: "digest", Cron: "@every 1m", Tool: "charge@1", Payload: json.RawMessage(`{"amount":1}`)}))(t)
	args := map[string]string{"endpoint": "acts", "job": fmt.Sprint(failed.ID), "run": fmt.Sprint(run.ID), "schedule": "digest"}

	d := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	setViewport(t, d.tab, 1280, 800)
	d.signIn(ownerKey)
	d.open("/tools")
	d.waitView("tools")
	// Every view, the overview last (the page opened elsewhere).
	routes := append(append([]web.DashboardRoute{}, web.DashboardRoutes[1:]...), web.DashboardRoutes[0])
	for _, r := range routes {
		path := r.Path
		if i := strings.Index(path, "{"); i >= 0 {
			arg, ok := args[r.Name]
			if !ok {
				t.Fatalf("no argument for the route %s (%s): add one to this test", r.Name, r.Path)
			}
			path = path[:i] + arg
		}
		// A click on a link, as a person navigates: the shell routes it.
		browsertest.Eval[chromedp.Void](d.tab, fmt.Sprintf(`(() => { const a = document.createElement("a"); a.href = %q; a.textContent = "go"; document.getElementById("view").append(a); a.click(); })()`, path))
		d.waitView(r.Name)
		d.tab.WaitFor(`location.pathname === ` + fmt.Sprintf("%q", path))
		got := browsertest.Eval[string](d.tab, `(() => { const e = document.activeElement; return !e ? "nothing" : e.matches("#view h1") ? "heading" : e.tagName.toLowerCase() + (e.id ? "#" + e.id : ""); })()`)
		if got != "heading" {
			t.Errorf("after navigating to %s (%s) focus is on %s, not the view's heading", r.Name, path, got)
		}
	}
}
