package web_test

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/simulate"
)

// waitRecovery waits until n recovery scenarios have ended on the page.
func waitRecovery(p *page, n int) {
	p.t.Helper()
	p.tab.WaitFor(fmt.Sprintf(`Number(document.documentElement.dataset.recCount || 0) >= %d`, n))
}

// recoveryFigures is the figures table as shown: per strategy, the text
// of each figure.
func recoveryFigures(p *page) map[string]map[string]string {
	p.t.Helper()
	return browsertest.Eval[map[string]map[string]string](p.tab, `Object.fromEntries(Array.from(document.querySelectorAll("#rec-table tbody tr"),
		tr => [tr.dataset.strategy, Object.fromEntries(Array.from(tr.querySelectorAll("td"), td => [td.dataset.figure, td.textContent]))]))`)
}

// wantFigures is how the page prints a strategy's figures.
func wantFigures(run simulate.RecoveryRun, capacity int) map[string]string {
	one := func(v float64) string {
		if v < 10 {
			return fmt.Sprintf("%.1f", v)
		}
		return fmt.Sprintf("%.0f", v)
	}
	return map[string]string{
		"refused":   one(run.RefusedPercent) + " %",
		"busiest":   fmt.Sprintf("%s · %s ×", groupInt(run.BusiestSecond), one(float64(run.BusiestSecond)/float64(capacity))),
		"drain":     fmt.Sprintf("%.1f s · %s ×", run.DrainS, one(run.DrainRatio)),
		"exhausted": groupInt(run.Exhausted),
	}
}

// TestSimulatorRecoveryInBrowser selects the recovery scenario by keyboard
// and reads its figures and charts against simulate.SimulateRecovery,
// adds learned limits, shows a field error from the server beside its
// field, and opens a recovery link directly; with screenshots at 1280 and
// 390 pixels.
func TestSimulatorRecoveryInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil)
	dir := browsertest.ScreenshotDir(t)
	p := &page{t: t, tab: b.NewTab(t), base: srv.URL, dir: dir}
	p.tab.Do("desktop", chromedp.EmulateViewport(1280, 900))
	openSimulator(p, reducedQuery)

	p.tab.Do("select the recovery tab by keyboard", chromedp.Focus(chromedp.ID("tab-contention")), chromedp.KeyEvent(kb.ArrowRight))
	waitRecovery(p, 1)
	if got := browsertest.Eval[string](p.tab, `document.activeElement.id + " " + document.getElementById("tab-recovery").getAttribute("aria-selected") + " " + document.getElementById("panel-contention").hidden`); got != "tab-recovery true true" {
		t.Fatalf("after ArrowRight: focus, selected, contention hidden = %q", got)
	}
	if d := browsertest.Eval[string](p.tab, `document.documentElement.dataset.rec`); d != "done" {
		t.Fatalf("scenario ended %q: %s", d, p.text("#rec-errors"))
	}
	if q := browsertest.Eval[string](p.tab, `location.search`); q != "?scenario=recovery" {
		t.Errorf("URL query %q", q)
	}
	want, err := simulate.SimulateRecovery(simulate.DefaultRecovery())
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, p, want)
	// One chart per strategy, a bar per second, the capacity line, and the
	// ramp's allowed rate on the ramp's chart only.
	for _, run := range want.Runs {
		sel := fmt.Sprintf(`#rec-chart-%s`, run.Strategy)
		if n := browsertest.Eval[int](p.tab, `document.querySelectorAll("`+sel+` .rec-bars > g").length`); n != len(run.Served) {
			t.Errorf("%s: %d bars, want %d seconds", run.Strategy, n, len(run.Served))
		}
		if !p.visible(sel+" .rec-capacity") || p.visible(sel+" .rec-allowed") != (run.Strategy != simulate.AtOnce) {
			t.Errorf("%s: capacity line or allowed rate missing or extra", run.Strategy)
		}
	}
	if h := p.text("#rec-headline"); !strings.HasPrefix(h, "Released at once, 70 % of requests were refused and the busiest second brought 636 requests") {
		t.Errorf("headline %q", h)
	}
	if !strings.Contains(p.text("#rec-how-to-read"), "Released at once") {
		t.Error("no plain-words explanation of recovery")
	}
	if cmd := p.text("#rec-command"); cmd != "ratchet simulate --scenario recovery \\\n    --strategies at-once,ramp" {
		t.Errorf("command %q", cmd)
	}
	checkAxe(t, p.tab, "simulator, recovery at 1280")
	p.shot("recovery-1280")
	p.tab.Do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	p.tab.WaitFor(`document.querySelector("#rec-chart-ramp").viewBox.baseVal.width < 520`)
	wide := browsertest.Eval[[]string](p.tab, `Array.from(document.querySelectorAll("#panel-recovery *"))
		.filter(e => !e.closest(".table-wrap") && e.getBoundingClientRect().right > 391)
		.map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + " " + Math.round(e.getBoundingClientRect().right) + " px")`)
	if len(wide) > 0 {
		t.Errorf("wider than a 390 px screen: %q", wide)
	}
	checkAxe(t, p.tab, "simulator, recovery at 390")
	p.shot("recovery-390")
	p.tab.Do("desktop", chromedp.EmulateViewport(1280, 900))

	// Learned limits add a third chart and row.
	browsertest.Eval[chromedp.Void](p.tab, `document.getElementById("rec-learned").click()`)
	browsertest.Eval[chromedp.Void](p.tab, `document.getElementById("rec-run").click()`)
	waitRecovery(p, 2)
	r := simulate.DefaultRecovery()
	r.Strategies = simulate.AllStrategies
	want, _ = simulate.SimulateRecovery(r)
	checkFigures(t, p, want)
	if q := browsertest.Eval[string](p.tab, `location.search`); q != "?scenario=recovery&learned=1" {
		t.Errorf("URL query %q", q)
	}
	p.shot("recovery-learned-1280")

	// A value the server refuses: its error, in Go's words, beside the
	// field inside the ramp settings, which open.
	browsertest.Eval[chromedp.Void](p.tab, `document.querySelector("#rec-ramp-settings summary").click()`)
	p.typeInto("rec-ramp-decreaseFactor", "1")
	browsertest.Eval[chromedp.Void](p.tab, `document.getElementById("rec-run").click()`)
	waitRecovery(p, 3)
	r.Ramp.DecreaseFactor = 1
	fe, _ := field.As(r.Validate())
	if got := p.text("#rec-ramp-decreaseFactor-error"); len(fe) != 1 || !strings.Contains(fe[0].Error(), got) || !strings.Contains(got, "must be a factor greater than 0 and below 1") {
		t.Errorf("error beside the field %q; Go says %v", got, fe)
	}
	if got := browsertest.Eval[string](p.tab, `document.getElementById("rec-ramp-settings").open + " " + document.getElementById("rec-ramp-decreaseFactor").getAttribute("aria-invalid") + " " + document.activeElement.id`); got != "true true rec-errors" {
		t.Errorf("settings open, invalid, focus = %q", got)
	}
	if !browsertest.Eval[bool](p.tab, `document.getElementById("rec-figures").classList.contains("stale-result")`) {
		t.Error("the old figures are not marked as stale")
	}
	if items := p.listTexts("#rec-errors li"); len(items) != 1 || items[0] != "On a 429" {
		t.Errorf("error list %q", items)
	}
	p.shot("recovery-error-1280")

	// A recovery link opens on its tab and never runs the sweep.
	q := url.Values{"scenario": {"recovery"}, "backlog": {"800"}, "capacityPerS": {"40"}}
	p2 := &page{t: t, tab: b.NewTab(t), base: srv.URL, dir: dir}
	p2.tab.Do("open a recovery link", chromedp.Navigate(srv.URL+"/simulator?"+q.Encode()))
	p2.tab.WaitFor(`document.documentElement.dataset.ready === "true"`)
	waitRecovery(p2, 1)
	if got := browsertest.Eval[string](p2.tab, `String(document.documentElement.dataset.simCount) + " " + document.getElementById("panel-recovery").hidden`); got != "undefined false" {
		t.Errorf("sweeps run, recovery hidden = %q", got)
	}
	r = simulate.DefaultRecovery()
	r.Backlog, r.CapacityPerS = 800, 40
	want, _ = simulate.SimulateRecovery(r)
	checkFigures(t, p2, want)
	if _, err := chromedp.Call(p2.tab.Ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
	}); err != nil {
		t.Fatalf("dark scheme: %v", err)
	}
	p2.shot("recovery-link-dark")
}

// checkFigures compares the figures table with the simulated result.
func checkFigures(t *testing.T, p *page, want simulate.RecoveryResult) {
	t.Helper()
	got := recoveryFigures(p)
	if len(got) != len(want.Runs) {
		t.Errorf("table has %d rows, want %d", len(got), len(want.Runs))
	}
	for _, run := range want.Runs {
		w := wantFigures(run, want.Config.CapacityPerS)
		for k, v := range w {
			if got[string(run.Strategy)][k] != v {
				t.Errorf("%s %s: page shows %q, simulated %q", run.Strategy, k, got[string(run.Strategy)][k], v)
			}
		}
	}
}

// groupInt prints n with commas between thousands, as the page does.
func groupInt(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
