package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/client"
	mddocs "github.com/getratchet/ratchet/docs"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

// viewports are the two sizes every page is checked at: a laptop and a
// phone held upright.
var viewports = []struct {
	name string
	w, h int64
}{{"1280", 1280, 900}, {"390", 390, 844}}

// layoutPage is one page the layout test visits: its path and the view the
// dashboard router reports when it has rendered ("" for server-rendered
// pages, which are ready on load; the calculator and simulator set
// data-ready themselves).
type layoutPage struct {
	path, view string
}

func setViewport(t *testing.T, tab *browsertest.Tab, w, h int64) {
	t.Helper()
	tab.Do(fmt.Sprintf("viewport %dx%d", w, h), chromedp.EmulateViewport(w, h))
}

// tablesFit fails on any table wider than its card (its .table-wrap
// scrolls sideways), and names each column's width.
func tablesFit(t *testing.T, tab *browsertest.Tab, what string) {
	t.Helper()
	if wide := browsertest.Eval[[]string](tab, `Array.from(document.querySelectorAll(".table-wrap")).filter(w => w.scrollWidth > w.clientWidth + 1).map(w => (w.querySelector("table") || w).id + " " + w.scrollWidth + ">" + w.clientWidth + " [" + Array.from(w.querySelectorAll("thead th"), th => (th.className || th.textContent) + "=" + Math.round(th.getBoundingClientRect().width)).join(" ") + "]")`); len(wide) > 0 {
		t.Errorf("%s: tables wider than their card: %s", what, strings.Join(wide, ", "))
	}
}

// shotName is a page's address as a screenshot's name.
func shotName(path string) string {
	name := strings.Trim(strings.NewReplacer("/", "-", "?", "-", "=", "", "&", "").Replace(path), "-")
	if name == "" {
		name = "overview"
	}
	return name
}

// noSideScroll fails when the page is wider than the window, and names the
// elements that stick out past its right edge.
func noSideScroll(t *testing.T, tab *browsertest.Tab, what string) {
	t.Helper()
	got := browsertest.Eval[[]int](tab, `[document.documentElement.scrollWidth, window.innerWidth]`)
	if got[0] > got[1] {
		wide := browsertest.Eval[[]string](tab, `Array.from(document.querySelectorAll("body *")).filter(e => {
			const r = e.getBoundingClientRect(); return r.right > window.innerWidth + 1 && r.width > 0 && !e.closest(".table-wrap, pre, .site-nav");
		}).slice(0, 6).map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : "") + " right=" + Math.round(e.getBoundingClientRect().right))`)
		t.Errorf("%s: page is %d px wide in a %d px window; sticking out: %s", what, got[0], got[1], strings.Join(wide, ", "))
	}
}

// docsStyled checks a /docs page looks like the rest of the site: text
// inset from the window's edge and not wider than a comfortable line, code
// blocks on a background, and no Markdown syntax left in the text.
func docsStyled(t *testing.T, tab *browsertest.Tab, path string) {
	t.Helper()
	got := browsertest.Eval[map[string]any](tab, `(() => {
		const a = document.querySelector("article.docs"), r = a.getBoundingClientRect();
		const pre = a.querySelector("pre");
		return {left: r.left, width: r.width, pre: pre ? getComputedStyle(pre).backgroundColor : "none",
			raw: /\]\(|`+"`"+`/.test(a.innerText)};
	})()`)
	if left := got["left"].(float64); left < 8 {
		t.Errorf("%s: the text starts %v px from the window's edge", path, left)
	}
	if w := got["width"].(float64); w > 900 {
		t.Errorf("%s: the text runs %v px wide", path, w)
	}
	if bg := got["pre"].(string); bg == "rgba(0, 0, 0, 0)" {
		t.Errorf("%s: code blocks have no background", path)
	}
	if path == "/docs" && got["raw"].(bool) {
		t.Errorf("%s: Markdown link syntax or backticks in the text", path)
	}
}

// TestPagesFitTheWindow opens each dashboard view and the sign-in screen
// at 1280×900 and at 390×844: none may scroll sideways, none may have ids
// twice, and axe-core (checkAxe) may find no serious or critical violation
// on any. One tab per width visits every page, so the accessibility check
// costs only axe's own run. TestStaticPagesFitTheWindow does the same for
// the pages that never read the clock.
func TestPagesFitTheWindow(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	freeKey := prepareDB(t, dir)
	srv := proctest.Start(t, dir, nil, "--dev-clock")
	fx := seedDashboard(t, srv.URL, freeKey)
	// More than 15 jobs, so the jobs list repeats its pager below the table.
	// They carry a long flow key, which the list, the job page and the key
	// filter must fit at 390 px; openai gets limits per key to show.
	c := client.New(srv.URL, ownerKey)
	const flowKey = "customer_8f2c1a0e-4b7d-4e55-9a3c-2f1d6b7e9a10"
	var keyed *client.Job
	for i := range 8 {
		keyed = enqueue(t, c, client.EnqueueRequest{Tool: "post@1", FlowKey: flowKey, Payload: json.RawMessage(fmt.Sprintf(`{"text":"more %d"}`, i))})
	}
	ep := must(c.GetEndpoint(context.Background(), "openai"))(t)
	five, sixty := int64(5), int64(60)
	must(c.UpdateEndpointPolicy(context.Background(), "openai", ep.Version, client.EndpointPolicy{Policy: ep.Policy, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: ep.DefaultTimeoutMs, MaxConcurrent: ep.MaxConcurrent, RateLimitPerMinute: ep.RateLimitPerMinute, KeyLimits: wire.KeyLimits{KeyMaxConcurrent: &five, KeyRateLimitPerMinute: &sixty, KeyOrdered: true, FairKeys: true}}}))(t)
	// Schedules, one paused (its badge must meet contrast) and one with a
	// tick fired by hand, so the list and a schedule's page have rows.
	must(c.CreateSchedule(context.Background(), client.ScheduleCreate{Name: "digest", Cron: "@every 1m", Tool: "post@1", Payload: json.RawMessage(`{"text":"digest {{tickAt}}"}`)}))(t)
	must(c.CreateSchedule(context.Background(), client.ScheduleCreate{Name: "nightly-report", Cron: "0 2 * * *", TimeZone: "America/New_York", Tool: "post@1", Paused: true}))(t)
	must(c.FireSchedule(context.Background(), "digest"))(t)
	must(c.CreateAlertSink(context.Background(), client.AlertSinkCreate{Name: "oncall", Kind: wire.SinkSlack, URL: "https://hooks.slack.com/services/T000/B000/XXXX"}))(t)
	pagesFit(t, b, srv.URL, true, []layoutPage{
		{"/", "overview"},
		{"/endpoints/openai", "endpoint"},
		{"/endpoints/stripe", "endpoint"},
		{"/jobs", "jobs"},
		{"/jobs?state=exhausted", "jobs"},
		{"/jobs?flowKey=" + flowKey, "jobs"},
		{fmt.Sprintf("/jobs/%d", fx.arithJob), "job"},
		{fmt.Sprintf("/jobs/%d", keyed.ID), "job"},
		{"/tools", "tools"},
		{"/runs", "runs"},
		{fmt.Sprintf("/runs/%d", fx.runID), "run"},
		{"/schedules", "schedules"},
		{"/schedules/digest", "schedule"},
		{"/workers", "workers"},
		{"/history", "history"},
		{"/alerts", "alerts"},
	})
	// The jobs list's every tab and the job pages again, each row filled
	// with the longest content it can show.
	longestRowsFit(t, b, srv.URL, []string{fmt.Sprintf("/jobs/%d", fx.arithJob), fmt.Sprintf("/jobs/%d", keyed.ID)})
}

// TestStaticPagesFitTheWindow is TestPagesFitTheWindow for the pages that
// never read the clock, the date or the zone: every docs page, the API
// reference, a search, the calculator, the simulator and the page for an
// unknown address. The server renders the docs with no clock (internal/docs
// reads none; TestClockFreePages checks it) and they load only the
// layout's nav.js, so the test is in clockFreeTests and runs at one of
// the two shifted hours.
func TestStaticPagesFitTheWindow(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil)
	pages := []layoutPage{{"/docs", ""}, {"/docs/api", ""}, {"/docs/search?q=circuit+open", ""}}
	names, _ := fs.Glob(mddocs.FS, "*.md")
	for _, n := range names {
		pages = append(pages, layoutPage{"/docs/" + strings.TrimSuffix(n, ".md"), ""})
	}
	pages = append(pages,
		layoutPage{"/calculator", "ready"},
		layoutPage{"/simulator" + reducedQuery, "ready"},
		layoutPage{"/nope", ""},
	)
	pagesFit(t, b, srv.URL, false, pages)
}

// pagesFit opens pages at each of the viewports, in one tab per width (a
// private window of its own, signed in first when signIn), and checks each
// fits the window, has no id twice and passes axe-core.
func pagesFit(t *testing.T, b *browsertest.Browser, base string, signIn bool, pages []layoutPage) {
	t.Helper()
	shots := browsertest.ScreenshotDir(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			// A private window of its own (no tab to hand the key over), so it starts signed out.
			tab := b.NewIsolatedTab(t)
			d := &dash{t: t, tab: tab, base: base, dir: shots}
			setViewport(t, tab, vp.w, vp.h)
			if signIn {
				// The sign-in screen first, then the pages with the key.
				d.open("/")
				d.waitView("signin")
				noSideScroll(t, tab, "sign in")
				checkAxe(t, tab, vp.name+" px sign in")
				d.shot(vp.name + "-signin")
				d.tab.Do("sign in", chromedp.SendKeys(chromedp.CSS("#api-key"), ownerKey), chromedp.Click(chromedp.CSS("#signin-button")))
				d.waitView("overview")
			}
			for i, p := range pages {
				d.open(p.path)
				switch p.view {
				case "":
				case "ready":
					tab.WaitFor(`document.documentElement.dataset.ready === "true"`)
				default:
					d.waitView(p.view)
				}
				if strings.HasPrefix(p.path, "/simulator") {
					waitSweep(&page{t: t, tab: tab, base: base}, 1)
				}
				noSideScroll(t, tab, p.path)
				if vp.w >= 1280 {
					// At a laptop's width every table fits its card: none
					// hides a column behind a sideways scroll.
					tablesFit(t, tab, p.path+" at "+vp.name+" px")
				}
				checkAxe(t, tab, vp.name+" px "+p.path)
				if dup := browsertest.Eval[[]string](tab, `(() => { const seen = new Set(), dup = []; for (const e of document.querySelectorAll("[id]")) { if (seen.has(e.id)) dup.push(e.id); seen.add(e.id); } return dup; })()`); len(dup) > 0 {
					t.Errorf("%s: duplicate ids %q", p.path, dup)
				}
				if strings.HasPrefix(p.path, "/docs") {
					docsStyled(t, tab, p.path)
				}
				d.shot(fmt.Sprintf("%s-%02d-%s", vp.name, i, shotName(p.path)))
			}
		})
	}
}

// TestHeaderOnPhone checks the header at 390 px: it is one row (it took
// 190 px in three wrapped rows), the current page's link is in view, and
// every navigation link can be reached: scrolled into view in the row (as
// a swipe or a Tab does), it is inside the window and clickable. On server
// pages (/docs, /calculator) and on the dashboard, whose router moves the
// current link.
func TestHeaderOnPhone(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, nil)
	tab := b.NewTab(t)
	shots := browsertest.ScreenshotDir(t)
	setViewport(t, tab, 390, 844)
	d := &dash{t: t, tab: tab, base: srv.URL, dir: shots}
	check := func(path, current string) {
		t.Helper()
		if hgt := browsertest.Eval[float64](tab, `document.querySelector(".site-header").getBoundingClientRect().height`); hgt > 56 {
			t.Errorf("%s at 390 px: the header is %.0f px high, want one row (≤ 56 px)", path, hgt)
		}
		inView := `(a => { const r = a.getBoundingClientRect(), n = a.closest(".site-nav").getBoundingClientRect();
			if (r.width === 0 || r.height === 0 || r.left < Math.max(0, n.left) || r.right > Math.min(window.innerWidth, n.right) || r.top < 0 || r.bottom > window.innerHeight) return false;
			const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
			return !!hit && a.contains(hit); })`
		if !browsertest.Eval[bool](tab, fmt.Sprintf(`%s(document.querySelector('.site-nav a[href=%q]'))`, inView, current)) {
			t.Errorf("%s at 390 px: the current page's link %s is out of view", path, current)
		}
		tab.Screenshot(shots, "header"+strings.ReplaceAll(path, "/", "-"))
		bad := browsertest.Eval[[]string](tab, `Array.from(document.querySelectorAll(".site-nav a")).filter(a => {
			const nav = a.closest(".site-nav");
			nav.scrollLeft = a.offsetLeft - nav.offsetLeft - 8;
			return !`+inView+`(a);
		}).map(a => a.textContent + " " + JSON.stringify(a.getBoundingClientRect()))`)
		if len(bad) > 0 {
			t.Errorf("%s at 390 px: navigation links out of reach: %s", path, strings.Join(bad, "; "))
		}
		if n := browsertest.Eval[int](tab, `document.querySelectorAll(".site-nav a").length`); n != 11 {
			t.Errorf("%s: %d navigation links, want 11 (Alerts is the eleventh)", path, n)
		}
	}
	for _, path := range []string{"/docs", "/calculator"} {
		tab.Do("open "+path, chromedp.Navigate(srv.URL+path))
		tab.WaitFor(`document.readyState === "complete"`)
		check(path, path)
	}
	// The dashboard: its router moves the current link as it goes, and the
	// link of a section far along the row comes into view.
	d.signIn(ownerKey)
	d.open("/history")
	d.waitView("history")
	check("/history", "/history")
	d.press(`.site-nav a[href="/"]`)
	d.waitView("overview")
	check("/", "/")
}

var longInt = regexp.MustCompile(`(^|[^\d.eE])(\d{5,})`)

// besideField is a Go validation message ("baseMs: 1e13 is not allowed;
// ...") as the pages show it beside its field: without the "name: " prefix
// and with integers of five digits or more grouped by thousands.
func besideField(msg string) string {
	if _, rest, ok := strings.Cut(msg, ": "); ok {
		msg = rest
	}
	return longInt.ReplaceAllStringFunc(msg, func(m string) string {
		sub := longInt.FindStringSubmatch(m)
		n, _ := strconv.ParseInt(sub[2], 10, 64)
		return sub[1] + comma(n)
	})
}

// TestCalculatorHistogram checks the spread of one retry's waits: its x axis
// is labelled, and the bins span the waits that occur rather than 0 to the
// cap (equal jitter puts retry 1's waits in 0.5–1 s of a 30 s cap).
func TestCalculatorHistogram(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil)
	shots := browsertest.ScreenshotDir(t)
	tab := b.NewTab(t)
	for _, vp := range viewports {
		setViewport(t, tab, vp.w, vp.h)
		tab.Do("open", chromedp.Navigate(srv.URL+"/calculator?base=1000&multiplier=2&cap=30000&attempts=4&jitter=equal&first=base&seed=1"))
		tab.WaitFor(`document.documentElement.dataset.ready === "true"`)
		browsertest.Eval[chromedp.Void](tab, `(() => { const s = document.getElementById("hist-retry"); s.value = "1"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`)
		tab.WaitFor(`document.querySelectorAll("#calc-hist .bars rect").length > 0`)
		labels := browsertest.Eval[[]string](tab, `Array.from(document.querySelectorAll("#calc-hist .x-ticks text"), t => t.textContent)`)
		if len(labels) < 3 {
			t.Errorf("%s px: x axis labels %q", vp.name, labels)
		}
		if empty := browsertest.Eval[int](tab, `Array.from(document.querySelectorAll("#calc-hist .axis text")).filter(t => !t.textContent.trim()).length`); empty > 0 {
			t.Errorf("%s px: %d empty axis labels", vp.name, empty)
		}
		// The bars spread over most of the plot, not one corner of it.
		spread := browsertest.Eval[float64](tab, `(() => {
			const r = Array.from(document.querySelectorAll("#calc-hist .bars rect"), e => e.getBBox());
			const l = Math.min(...r.map(b => b.x)), rr = Math.max(...r.map(b => b.x + b.width));
			const grid = Array.from(document.querySelectorAll("#calc-hist .axis line.grid")).map(e => e.getBBox()).find(b => b.width > 0);
			return (rr - l) / grid.width;
		})()`)
		if spread < 0.6 {
			t.Errorf("%s px: the bars cover %.0f%% of the plot's width", vp.name, spread*100)
		}
		tab.Screenshot(shots, "histogram-"+vp.name)
	}
}
