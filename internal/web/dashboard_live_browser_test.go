package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// liveEnv makes streams re-read every 100 ms and ping every second, so the
// pages hear of changes fast and notice a dead stream soon.
var liveEnv = []string{"RATCHET_STREAM_INTERVAL=100ms", "RATCHET_STREAM_PING=1s"}

func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestDashboardLive checks the pages that update themselves from
// GET /v1/stream: the job page while a worker claims, fails and finishes
// the job (in place, keeping focus and scroll), the jobs list's state tabs
// and first page, the "N new" button on a later page, and a live line that
// says when the stream is down and recovers when the server is back.
func TestDashboardLive(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	addr := freeLoopback(t)
	srv := proctest.Start(t, dir, liveEnv, "--dev-clock", "--addr", addr)
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	must(c.CreateEndpoint(ctx, "pay", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, EndpointSettings: client.EndpointSettings{CircuitFailureThreshold: 100, CircuitOpenMs: 60_000}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "charge", Version: "1", Endpoint: "pay"}))(t)
	wk := must(c.CreateKey(ctx, "worker", "worker", []string{"charge@1"}))(t)
	w := client.New(srv.URL, wk.Secret)
	claim := func() client.ClaimedJob {
		t.Helper()
		js := must(w.Claim(ctx, client.ClaimRequest{WorkerID: "worker-live", Tools: []string{"charge@1"}, Max: 1}))(t)
		if len(js) != 1 {
			t.Fatalf("claim: %d jobs", len(js))
		}
		return js[0]
	}
	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	a.signIn(ownerKey)

	t.Run("job page updates in place", func(t *testing.T) {
		a.t = t
		job := enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":1}`)})
		a.open(fmt.Sprintf("/jobs/%d", job.ID))
		a.waitView("job")
		a.tab.WaitFor(`document.getElementById("refresh").dataset.state === "live"`)
		if got := a.text(".job-head .status"); got != "scheduled" {
			t.Fatalf("state badge = %q", got)
		}
		// Focus the tool link with the keyboard's own means, scroll the
		// page a little, and mark the page so a reload would show.
		browsertest.Eval[chromedp.Void](a.tab, `(() => {
			const l = document.querySelector('[data-key="Tool"] a'); l.focus(); window.__focused = l; window.__marker = true;
			window.scrollTo(0, 120); window.__scroll = window.scrollY;
		})()`)
		stays := func(when string) {
			t.Helper()
			if !browsertest.Eval[bool](a.tab, `window.__marker === true && document.activeElement === window.__focused`) {
				t.Errorf("%s: focus moved to %s", when, browsertest.Eval[string](a.tab, `document.activeElement.tagName + " " + (document.activeElement.textContent || "").slice(0, 40)`))
			}
			if got := browsertest.Eval[float64](a.tab, `window.scrollY - window.__scroll`); got != 0 {
				t.Errorf("%s: the page scrolled by %v px", when, got)
			}
		}

		start := time.Now()
		j1 := claim()
		a.tab.WaitFor(`document.getElementById("job-body").dataset.state === "running"`)
		t.Logf("the claim showed on the page after %s", time.Since(start).Round(time.Millisecond))
		stays("after the claim")
		if got := a.texts("#attempts-table tbody tr"); len(got) != 1 || !strings.Contains(got[0], "running") {
			t.Errorf("attempt rows while running: %q", got)
		}
		a.shot("job-live-running")
		// A screenshot scrolls the page: scroll back for the next check.
		browsertest.Eval[chromedp.Void](a.tab, `window.scrollTo(0, 120); window.__scroll = window.scrollY`)

		must(w.ReportOne(ctx, client.Report{JobID: j1.ID, LeaseToken: j1.LeaseToken, HTTPStatus: 503, Message: "provider down"}))(t)
		a.tab.WaitFor(`document.getElementById("job-body").dataset.state === "scheduled" && document.getElementById("job-body").dataset.attempts === "1"`)
		stays("after a failed attempt")
		if !a.visible("#timeline") || !a.visible("#attempt-1 .arith") {
			t.Error("the timeline or the delay arithmetic did not appear with the first attempt")
		}

		if err := c.AdvanceClock(ctx, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		j2 := claim()
		must(w.ReportOne(ctx, client.Report{JobID: j2.ID, LeaseToken: j2.LeaseToken, Success: true, HTTPStatus: 200}))(t)
		a.tab.WaitFor(`document.getElementById("job-body").dataset.state === "succeeded" && document.getElementById("job-body").dataset.attempts === "2"`)
		stays("after the job succeeded")
		if got := a.text(".job-head .status"); got != "succeeded" {
			t.Errorf("state badge = %q", got)
		}
		if got := a.texts("#attempts-table tbody tr td:nth-child(5)"); strings.Join(got, ",") != "failed,succeeded" {
			t.Errorf("attempt outcomes = %q", got)
		}
		if a.visible("#job-cancel") {
			t.Error("a succeeded job still offers Cancel")
		}
		a.shot("job-live-succeeded-1280")
		setViewport(t, a.tab, 390, 844)
		noSideScroll(t, a.tab, "job page at 390 px")
		// The timeline is drawn at its own size on a phone (its frame
		// scrolls sideways), after a resize and on a fresh load alike.
		readable := func(when string) {
			t.Helper()
			// Drawn at its own size, and its frame marked as scrolling: both
			// follow the resize in observers' callbacks, so wait for them (a
			// check right after the first could run before the frame's
			// observer had marked it, as it did once at 00:30).
			a.tab.WaitFor(`(() => { const s = document.getElementById("timeline"); return s && s.viewBox.baseVal.width > 0 && Math.abs(s.getBoundingClientRect().width - s.viewBox.baseVal.width) < 1 && (s.getBoundingClientRect().width <= s.parentElement.clientWidth + 1 || s.parentElement.dataset.overflow === "true"); })()`)
			got := browsertest.Eval[[]float64](a.tab, `(() => { const s = document.getElementById("timeline"); const l = s.querySelector(".lane-label").getBoundingClientRect(); return [l.height, s.getBoundingClientRect().width, s.viewBox.baseVal.width]; })()`)
			if got[0] < 12 {
				t.Errorf("%s: the timeline's labels are %.1f px high (drawn %v wide for %v px)", when, got[0], got[2], got[1])
			}
			if browsertest.Eval[string](a.tab, `document.querySelector(".timeline-wrap").dataset.overflow`) != "true" {
				t.Errorf("%s: the timeline is wider than the phone but its frame does not say it scrolls", when)
			}
		}
		readable("after a resize to 390 px")
		a.shot("job-live-succeeded-390")
		a.open(fmt.Sprintf("/jobs/%d", job.ID))
		a.waitView("job")
		readable("loaded at 390 px")
		setViewport(t, a.tab, 1280, 900)
		a.tab.WaitFor(`document.querySelector(".timeline-wrap").dataset.overflow === "false"`)
	})

	t.Run("local time beside UTC", func(t *testing.T) {
		a.t = t
		// A person in India (UTC+05:30, so even the minutes differ).
		tab := b.NewIsolatedTab(t)
		if _, err := chromedp.Call(tab.Ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Kolkata"}); err != nil {
			t.Fatal(err)
		}
		d := &dash{t: t, tab: tab, base: srv.URL, dir: shots}
		d.signIn(ownerKey)
		job := enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":9}`)})
		ist := time.FixedZone("IST", 5*3600+1800)
		created, err := time.Parse(time.RFC3339Nano, job.CreatedAt)
		if err != nil {
			t.Fatal(err)
		}
		d.open(fmt.Sprintf("/jobs/%d", job.ID))
		d.waitView("job")
		// The local part carries the date when the local day is not the
		// UTC day (from 18:30 UTC on in Kolkata).
		localForm := "15:04:05"
		if created.In(ist).Day() != created.UTC().Day() {
			localForm = "2006-01-02 15:04:05"
		}
		want := created.UTC().Format("2006-01-02 15:04:05") + " UTC " + created.In(ist).Format(localForm) + " local"
		if got := d.text(`[data-key="Created"] time`); got != want {
			t.Errorf("created = %q, want %q", got, want)
		}
		if got := d.text(`[data-key="Due"]`); !strings.Contains(got, " UTC") || !strings.Contains(got, " local") {
			t.Errorf("due = %q", got)
		}
		d.tab.WaitFor(`document.getElementById("refresh").dataset.state === "live"`)
		if got := d.text("#refresh"); !regexp.MustCompile(`updated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \((\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d local\)`).MatchString(got) {
			t.Errorf("live line = %q", got)
		}
		d.shot("local-time-job")
		d.open("/jobs?endpoint=pay")
		d.waitView("jobs")
		// The list says how long ago; its tooltip has the UTC and local time.
		if got := browsertest.Eval[string](d.tab, `document.querySelector("#jobs-table tbody tr:first-child .created-col time").title`); !strings.Contains(got, " UTC (") || !strings.HasSuffix(got, " local)") {
			t.Errorf("jobs list created column tooltip = %q", got)
		}
		d.shot("local-time-jobs")
	})

	t.Run("jobs list tabs and first page update", func(t *testing.T) {
		a.t = t
		a.open("/jobs?endpoint=pay")
		a.waitView("jobs")
		a.tab.WaitFor(`document.querySelector('#state-tabs [data-state="succeeded"] .tab-count').textContent === "1"`)
		browsertest.Eval[chromedp.Void](a.tab, `(() => { const l = document.querySelector("#jobs-table tbody tr a"); l.focus(); window.__focused = l; })()`)
		before := a.texts("#jobs-table tbody tr")
		j := enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":2}`)})
		a.tab.WaitFor(fmt.Sprintf(`!!document.querySelector('#jobs-table tr[data-job="%d"]')`, j.ID))
		// (One job of the local-time subtest is scheduled too.)
		if got := a.text(`#state-tabs [data-state="scheduled"] .tab-count`); got != "2" {
			t.Errorf("scheduled tab count = %q", got)
		}
		if got := a.text(`#state-tabs [data-state="all"] .tab-count`); got != "3" {
			t.Errorf("all tab count = %q", got)
		}
		if got := a.texts("#jobs-table tbody tr"); len(got) != len(before)+1 {
			t.Errorf("rows: %d before, %d after one enqueue", len(before), len(got))
		}
		if got := a.text("#jobs-count"); got != "3 jobs match" {
			t.Errorf("count line = %q", got)
		}
		if !browsertest.Eval[bool](a.tab, `document.activeElement === window.__focused`) {
			t.Error("the list update took the focus away")
		}
		a.shot("jobs-live-tabs-1280")
		setViewport(t, a.tab, 390, 844)
		noSideScroll(t, a.tab, "jobs list at 390 px")
		a.shot("jobs-live-tabs-390")
		setViewport(t, a.tab, 1280, 900)

		// On a later page the list stays put and offers the new jobs.
		var batch []client.EnqueueRequest
		for i := range 60 {
			batch = append(batch, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(fmt.Sprintf(`{"amount":%d}`, 10+i))})
		}
		must(c.EnqueueBatch(ctx, batch))(t)
		a.tab.WaitFor(`document.querySelector('#state-tabs [data-state="scheduled"] .tab-count').textContent === "62"`)
		// The tabs change with the event; the first page is read again just
		// after it, and only then has a next page to go to.
		a.tab.WaitFor(`!document.getElementById("next-page").disabled`)
		a.click("#next-page")
		a.tab.WaitFor(`document.documentElement.dataset.ready === "true" && location.search.includes("cursor=")`)
		a.tab.WaitFor(`document.getElementById("refresh").dataset.state === "live"`)
		rows := a.texts("#jobs-table tbody tr")
		enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":3}`)})
		a.tab.WaitFor(`!!document.getElementById("show-new")`)
		if got := a.text("#show-new"); got != "1 new — show" {
			t.Errorf("new-jobs button = %q", got)
		}
		if got := a.texts("#jobs-table tbody tr"); strings.Join(got, "|") != strings.Join(rows, "|") {
			t.Error("page 2 changed under the reader")
		}
		a.shot("jobs-live-new-button")
		a.click("#show-new")
		a.tab.WaitFor(`document.documentElement.dataset.ready === "true" && !location.search.includes("cursor=")`)
	})

	t.Run("the live line says when the stream is down", func(t *testing.T) {
		a.t = t
		a.open("/")
		a.waitView("overview")
		a.tab.WaitFor(`document.getElementById("refresh").dataset.state === "live"`)
		if got := browsertest.Eval[string](a.tab, `getComputedStyle(document.querySelector("#refresh .live-dot")).backgroundColor`); got != "rgb(21, 128, 61)" {
			t.Errorf("live dot while live = %s", got)
		}
		srv.Stop(t)
		a.tab.WaitFor(`document.getElementById("refresh").dataset.state === "reconnecting"`)
		if got := a.text("#refresh"); !strings.HasPrefix(got, "Reconnecting") || !strings.Contains(got, "showing data from") || !strings.Contains(got, "next try in") {
			t.Errorf("live line while reconnecting = %q", got)
		}
		if got := browsertest.Eval[string](a.tab, `getComputedStyle(document.querySelector("#refresh .live-dot")).backgroundColor`); got == "rgb(21, 128, 61)" {
			t.Error("the live dot stays green while the stream is down")
		}
		a.shot("overview-reconnecting")
		a.tab.WaitFor(`document.getElementById("refresh").dataset.state === "down"`)
		if got := a.text("#refresh"); !strings.HasPrefix(got, "Disconnected") {
			t.Errorf("live line after three failures = %q", got)
		}
		a.shot("overview-disconnected")
		proctest.Start(t, dir, liveEnv, "--dev-clock", "--addr", addr)
		a.tab.WaitFor(`document.getElementById("refresh").dataset.state === "live"`)
	})
}
