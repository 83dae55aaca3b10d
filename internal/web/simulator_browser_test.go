package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/simulate"
)

// The reduced study sweep the browser runs: 10, 70, 130 and 190 clients, 10
// runs per point, the study's five modes. It keeps the race-built server's
// sweep to a few seconds and still shows every ordering at 190 clients.
const (
	reducedQuery  = "?step=60&runs=10"
	reducedConfig = `{"step":60,"runs":10}`
)

// openSimulator loads /simulator with query and waits until the sweep the
// page starts by itself has ended.
func openSimulator(p *page, query string) {
	p.t.Helper()
	p.tab.Do("open the simulator", chromedp.Navigate(p.base+"/simulator"+query))
	p.tab.WaitFor(`document.documentElement.dataset.ready === "true"`)
	waitSweep(p, 1)
}

// waitSweep waits until n sweeps have ended on the page.
func waitSweep(p *page, n int) {
	p.t.Helper()
	p.tab.WaitFor(fmt.Sprintf(`Number(document.documentElement.dataset.simCount || 0) >= %d`, n))
}

// chartSeries reads a chart as drawn: per mode, the value behind each dot.
func chartSeries(p *page, id string) map[string][]float64 {
	p.t.Helper()
	raw := browsertest.Eval[map[string][]string](p.tab, fmt.Sprintf(`Object.fromEntries(Array.from(document.querySelectorAll("#%s .sim-series"),
		g => [g.dataset.mode, Array.from(g.querySelectorAll("circle"), c => c.getAttribute("data-value"))]))`, id))
	out := map[string][]float64{}
	for mode, vs := range raw {
		for _, v := range vs {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				p.t.Fatalf("%s %s: data-value %q", id, mode, v)
			}
			out[mode] = append(out[mode], f)
		}
	}
	return out
}

func sweepOf(t *testing.T, doc string) simulate.Result {
	t.Helper()
	cfg, err := simulate.ParseConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	r, err := simulate.Sweep(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSimulatorInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil)
	dir := browsertest.ScreenshotDir(t)
	newPage := func(t *testing.T) *page {
		return &page{t: t, tab: b.NewTab(t), base: srv.URL, dir: dir}
	}

	// A page opened on a sweep larger than a first look draws a quick
	// sweep of 10 runs per point, then the full one (defect 19: "Running…"
	// and empty charts for 2 s on load); a person's Run is run as asked.
	t.Run("first look", func(t *testing.T) {
		p := newPage(t)
		openSimulator(p, "?step=60&runs=40")
		if got := browsertest.Eval[string](p.tab, `document.documentElement.dataset.simDrawn || ""`); got != "10,40" {
			t.Errorf("runs per point of the results drawn = %q, want a first look of 10, then 40", got)
		}
		if st := p.text("#sim-status"); !strings.HasPrefix(st, "Simulated 4 points × 40 runs") {
			t.Errorf("status after the full sweep: %q", st)
		}
		p.shot("first-look-done-1280")
		// (After a screenshot a pointer click can land off target.)
		browsertest.Eval[chromedp.Void](p.tab, `document.getElementById("run").click()`)
		waitSweep(p, 2)
		if got := browsertest.Eval[string](p.tab, `document.documentElement.dataset.simDrawn || ""`); got != "10,40,40" {
			t.Errorf("after Run, runs per point drawn = %q, want 10,40,40", got)
		}
	})

	t.Run("reduced study sweep", func(t *testing.T) {
		p := newPage(t)
		openSimulator(p, reducedQuery)
		if sim := browsertest.Eval[string](p.tab, `document.documentElement.dataset.sim`); sim != "done" {
			t.Fatalf("sweep ended %q: %s", sim, p.text("#sim-errors"))
		}
		if cur := p.text(`.site-nav a[aria-current="page"]`); cur != "Simulator" {
			t.Errorf("current nav entry %q", cur)
		}
		want := sweepOf(t, reducedConfig)
		calls, times := chartSeries(p, "chart-calls"), chartSeries(p, "chart-time")
		for _, mode := range simulate.StudyModes {
			ser, _ := want.Mode(mode)
			var wc, wt []float64
			for _, pt := range ser.Points {
				wc, wt = append(wc, pt.Calls.Mean), append(wt, pt.TimeMs.Mean)
			}
			if !reflect.DeepEqual(calls[string(mode)], wc) || !reflect.DeepEqual(times[string(mode)], wt) {
				t.Errorf("%s: chart shows calls %v time %v, simulate.Sweep gives %v and %v", mode, calls[string(mode)], times[string(mode)], wc, wt)
			}
			for _, chart := range []string{"chart-calls", "chart-time"} {
				if !p.visible(fmt.Sprintf(`#%s path.sim-band[data-mode=%q]`, chart, mode)) {
					t.Errorf("%s has no spread band for %s", chart, mode)
				}
			}
		}
		if len(calls) != 5 || len(times) != 5 {
			t.Errorf("charts have %d and %d series, want the 5 study modes", len(calls), len(times))
		}
		// The study's verdict at the highest point, as the page draws it.
		last := len(want.Clients) - 1
		exp := calls["exponential"][last]
		for _, m := range []string{"full", "equal", "decorrelated"} {
			if !(exp > calls[m][last]) {
				t.Errorf("at %d clients exponential (no jitter) makes %.1f calls, %s %.1f: want the most of the backoff modes", want.Clients[last], exp, m, calls[m][last])
			}
		}
		for m, ts := range times {
			if m != "exponential" && !(times["exponential"][last] > ts[last]) {
				t.Errorf("at %d clients exponential takes %.0f ms, %s %.0f: want the longest", want.Clients[last], times["exponential"][last], m, ts[last])
			}
		}
		// No backoff does even more work than exponential but finishes first;
		// the page says so rather than hiding the mode.
		if !(calls["none"][last] > exp) || !strings.Contains(p.text("#how-to-read"), "No backoff does the most work of all but finishes first") {
			t.Errorf("no backoff: %.1f calls against exponential's %.1f, and the explanation must say it", calls["none"][last], exp)
		}
		if h := p.text("#sim-headline"); !strings.HasPrefix(h, "At 190 clients, exponential backoff without jitter made") {
			t.Errorf("headline %q", h)
		}

		// The table shows the same means, one column per mode.
		cols := p.listTexts("#sim-table thead th[data-mode]")
		if strings.Join(cols, "|") != "None|Exponential|Full|Equal|Decorrelated" {
			t.Errorf("table columns %q", cols)
		}
		rows := p.listTexts("#sim-table tbody tr th")
		if strings.Join(rows, ",") != "10,70,130,190" {
			t.Errorf("table rows %q", rows)
		}
		expCell := p.text(`#sim-table tbody tr[data-clients="190"] td[data-mode="exponential"]`)
		if wantCell := fmt.Sprintf("%s± ", thousands(exp)); !strings.HasPrefix(expCell, wantCell) {
			t.Errorf("table cell for exponential at 190 = %q, want it to start %q", expCell, wantCell)
		}
		if best := p.text(`#sim-table tbody tr[data-clients="190"] strong`); best != thousands(calls["full"][last]) && best != thousands(calls["equal"][last]) {
			t.Errorf("fewest calls marked at 190: %q", best)
		}
		p.shot("01-reduced-study-sweep")

		// The CSV is what `ratchet simulate --format csv` writes for the same
		// sweep, byte for byte; the JSON is the server's result.
		csvName, gotCSV := download(p, "download-csv")
		out, err := exec.Command(proctest.Binary(t), "simulate", "--sweep", "10:190:60", "--runs", "10", "--format", "csv").Output()
		if err != nil {
			t.Fatal(err)
		}
		if gotCSV != string(out) {
			t.Errorf("page CSV\n%s\nratchet simulate --format csv\n%s", gotCSV, out)
		}
		if csvName != "ratchet-simulation-10-190-seed1.csv" {
			t.Errorf("CSV file name %q", csvName)
		}
		_, gotJSON := download(p, "download-json")
		var res simulate.Result
		if err := json.Unmarshal([]byte(gotJSON), &res); err != nil || !reflect.DeepEqual(res, want) {
			t.Errorf("downloaded JSON differs from simulate.Sweep (%v)", err)
		}
		if cmd := p.text("#sim-command"); !strings.Contains(cmd, "--sweep 10:190:60") || !strings.Contains(cmd, "--runs 10") {
			t.Errorf("command %q", cmd)
		}

		p.click("time-log")
		if q := browsertest.Eval[string](p.tab, `location.search`); !strings.Contains(q, "timeLog=1") {
			t.Errorf("URL %q does not keep the log scale", q)
		}
		// Hovering the time chart reads out every mode at the nearest point.
		browsertest.Eval[chromedp.Void](p.tab, `(() => {
			const svg = document.getElementById("chart-time"), box = svg.getBoundingClientRect();
			svg.querySelector("rect[fill=transparent]").dispatchEvent(new PointerEvent("pointermove", {clientX: box.right - 30, clientY: box.top + 60, bubbles: true}));
		})()`)
		tip := p.listTexts("#chart-time .sim-tip text")
		if len(tip) != 11 || tip[0] != "190 clients" || tip[1] != "Exponential, no jitter" {
			t.Errorf("hover read-out %q", tip)
		}
		p.shot("02-log-time-hover")
	})

	t.Run("Ratchet modes, budget and Retry-After", func(t *testing.T) {
		p := newPage(t)
		openSimulator(p, "?step=60&runs=10&modes=exponential,full,policy,calc&preset=AGGRESSIVE&budget=500:5:1&show=failed")
		if sim := browsertest.Eval[string](p.tab, `document.documentElement.dataset.sim`); sim != "done" {
			t.Fatalf("sweep ended %q: %s", sim, p.text("#sim-errors"))
		}
		if !p.visible("#policy-fields") || !p.visible("#calc-fields") || !p.visible("#budget-fields") {
			t.Error("the policy, calculator and budget settings are hidden although in use")
		}
		aggressive, _ := backoff.PresetParams(backoff.Aggressive)
		cfg, _ := json.Marshal(map[string]any{"step": 60, "runs": 10, "modes": []string{"exponential", "full", "policy", "calc"}, "policy": aggressive,
			"calc": map[string]any{"baseMs": 5, "multiplier": 2, "capMs": 2000, "attempts": 15, "jitter": "full", "firstWait": "multiplied"}, "budget": map[string]any{}})
		want := sweepOf(t, string(cfg))
		calls := chartSeries(p, "chart-calls")
		for _, ser := range want.Series {
			var wc []float64
			for _, pt := range ser.Points {
				wc = append(wc, pt.Calls.Mean)
			}
			if !reflect.DeepEqual(calls[string(ser.Mode)], wc) {
				t.Errorf("%s: chart %v, simulate.Sweep %v", ser.Mode, calls[string(ser.Mode)], wc)
			}
		}
		if cols := p.listTexts("#sim-table thead th[data-mode]"); strings.Join(cols, "|") != "Exponential|Full|Policy|Calculator" {
			t.Errorf("columns %q", cols)
		}
		if cap := p.text("#table-caption"); !strings.HasPrefix(cap, "Clients per run that gave up") {
			t.Errorf("table shows %q, want failed clients", cap)
		}
		p.shot("03-ratchet-modes-budget")

		// Retry-After on, through the form, and run again.
		p.click("retryAfter-on")
		p.typeInto("retryAfter-ms", "250")
		p.click("run")
		waitSweep(p, 2)
		if q := browsertest.Eval[string](p.tab, `location.search`); !strings.Contains(q, "retryAfter=250%3A20%3A100") {
			t.Errorf("URL %q does not carry the Retry-After option", q)
		}
		p.choose("measure", "hinted")
		hinted := p.text(`#sim-table tbody tr[data-clients="190"] td[data-mode="exponential"]`)
		if hinted == "0.0" || hinted == "" {
			t.Errorf("no Retry-After answers at 190 clients: %q", hinted)
		}
	})

	t.Run("invalid settings", func(t *testing.T) {
		p := newPage(t)
		openSimulator(p, "?step=60&runs=0&seed=x")
		// The page checks the syntax; the server the ranges, with Go's words.
		if got := p.text("#seed-error"); got != `"x" is not allowed; must be an integer` {
			t.Errorf("seed error %q", got)
		}
		p.typeInto("seed", "1")
		p.click("run")
		waitSweep(p, 2)
		_, err := simulate.ParseConfig([]byte(`{"step":60,"runs":0}`))
		var fe field.Errors
		if !asErrors(err, &fe) {
			t.Fatalf("ParseConfig: %v", err)
		}
		if got := p.text("#runs-error"); got != besideField(fe[0].Error()) {
			t.Errorf("runs error %q, Go says %q", got, fe[0].Error())
		}
		if inv := browsertest.Eval[string](p.tab, `document.getElementById("runs").getAttribute("aria-invalid")`); inv != "true" {
			t.Error("runs not marked invalid")
		}
		if items := p.listTexts("#sim-errors li"); len(items) != 1 || items[0] != "Runs" {
			t.Errorf("error list %q", items)
		}
		p.shot("04-invalid")
		p.typeInto("runs", "10")
		p.click("run")
		waitSweep(p, 3)
		if p.visible("#sim-errors") || p.visible("#runs-error") {
			t.Error("errors still shown after a good sweep")
		}
	})

	t.Run("a failed sweep greys the old result and shows its error", func(t *testing.T) {
		p := newPage(t)
		p.tab.Do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
		openSimulator(p, reducedQuery)
		// The help states every limit the server applies.
		help := p.text("#sweep-help")
		for _, want := range []string{thousands(simulate.MaxClients) + " clients", thousands(simulate.MaxPoints) + " points",
			thousands(simulate.MaxRuns) + " runs per point", thousands(simulate.MaxClientRuns) + " client runs"} {
			if !strings.Contains(help, want) {
				t.Errorf("the help does not state %q: %q", want, help)
			}
		}
		// A sweep within the per-field limits but over the client-run
		// budget: the help says so before it runs, and the server refuses.
		p.typeInto("from", "10")
		p.typeInto("to", "1000")
		p.typeInto("step", "10")
		p.typeInto("runs", "100")
		if help := p.text("#sweep-help"); !strings.Contains(help, "25,250,000 client runs — over the limit") {
			t.Errorf("the help does not warn about this sweep: %q", help)
		}
		browsertest.Eval[chromedp.Void](p.tab, `window.scrollTo(0, 0)`)
		p.click("run")
		waitSweep(p, 2)
		if got := browsertest.Eval[string](p.tab, `document.documentElement.dataset.sim + " " + document.documentElement.dataset.simStale`); got != "error true" {
			t.Fatalf("after a refused sweep: %q", got)
		}
		if !strings.Contains(p.text("#runs-error"), "at most 20,000,000 are allowed") {
			t.Errorf("runs error = %q", p.text("#runs-error"))
		}
		if got := browsertest.Eval[string](p.tab, `document.activeElement.id`); got != "sim-errors" {
			t.Errorf("focus is on %q, not on the errors", got)
		}
		inView := browsertest.Eval[bool](p.tab, `(() => { const r = document.getElementById("sim-errors").getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`)
		if !inView {
			t.Error("the errors are out of view")
		}
		if got := browsertest.Eval[string](p.tab, `getComputedStyle(document.querySelector("#chart-calls")).opacity + " " + document.getElementById("download-csv").disabled`); got != "0.35 true" {
			t.Errorf("the old result is not greyed out (opacity, downloads disabled): %q", got)
		}
		if !p.visible("#sim-stale") || p.visible("#sim-headline") {
			t.Error("no note that the charts are from an earlier sweep, or the old headline still shows")
		}
		p.shot("07-failed-390")
		p.tab.Do("desktop", chromedp.EmulateViewport(1280, 900))
		p.shot("07-failed-1280")
		p.typeInto("to", "190")
		p.typeInto("step", "60")
		p.typeInto("runs", "10")
		// (After the viewport change a pointer click lands off target.)
		browsertest.Eval[chromedp.Void](p.tab, `document.getElementById("run").click()`)
		waitSweep(p, 3)
		if got := browsertest.Eval[string](p.tab, `document.documentElement.dataset.simStale + " " + getComputedStyle(document.querySelector("#chart-calls")).opacity`); got != "false 1" {
			t.Errorf("after a good sweep: %q", got)
		}
	})

	t.Run("lines are told apart", func(t *testing.T) {
		p := newPage(t)
		openSimulator(p, reducedQuery)
		// Every mode has its own colour and its own dash pattern, the legend
		// draws the line as the chart does, and patterned lines are drawn
		// after (over) solid ones.
		type line struct{ Mode, Stroke, Dash string }
		lines := browsertest.Eval[[]line](p.tab, `Array.from(document.querySelectorAll("#chart-calls .sim-series path"), pth => ({
			Mode: pth.parentNode.dataset.mode, Stroke: getComputedStyle(pth).stroke, Dash: getComputedStyle(pth).strokeDasharray}))`)
		if len(lines) != len(simulate.StudyModes) {
			t.Fatalf("%d lines", len(lines))
		}
		seen := map[string]string{}
		dashes := map[string]string{}
		patternedSeen := false
		for _, l := range lines {
			if other, dup := seen[l.Stroke]; dup {
				t.Errorf("%s and %s share the colour %s", other, l.Mode, l.Stroke)
			}
			seen[l.Stroke] = l.Mode
			dashes[l.Mode] = l.Dash
			if l.Dash != "none" {
				patternedSeen = true
			} else if patternedSeen {
				t.Errorf("solid line %s is drawn over a dashed one", l.Mode)
			}
			legend := browsertest.Eval[[]string](p.tab, fmt.Sprintf(`(() => { const l = document.querySelector('.sim-legend li[data-mode=%q] line'); const c = getComputedStyle(l); return [c.stroke, c.strokeDasharray]; })()`, l.Mode))
			if legend[0] != l.Stroke || legend[1] != l.Dash {
				t.Errorf("%s: legend key %v, line %s %s", l.Mode, legend, l.Stroke, l.Dash)
			}
		}
		if dashes["full"] == dashes["equal"] {
			t.Errorf("full and equal jitter, which overlap, share the dash pattern %q", dashes["full"])
		}
		// The three reds are gone: no two study colours are near each other.
		for _, bad := range []string{"rgb(185, 28, 28)"} {
			if m, ok := seen[bad]; ok {
				t.Errorf("%s is still drawn in the theme's error red", m)
			}
		}
		// One number format per axis.
		for _, chart := range []string{"chart-calls", "chart-time"} {
			labels := browsertest.Eval[[]string](p.tab, fmt.Sprintf(`Array.from(document.querySelectorAll("#%s .axis > text[text-anchor=end]"), t => t.textContent)`, chart))
			suffix := func(l string) string {
				l = strings.TrimLeft(l, "0123456789.,")
				return strings.TrimSpace(l)
			}
			var units []string
			for _, l := range labels[1:] { // the first tick is 0
				units = append(units, suffix(l))
			}
			for _, u := range units {
				if u != units[0] {
					t.Errorf("%s mixes formats on its y axis: %q", chart, labels)
					break
				}
			}
			if chart == "chart-calls" && strings.Contains(strings.Join(labels, " "), ",") && strings.Contains(strings.Join(labels, " "), "k") {
				t.Errorf("calls axis mixes 8,000 with 10k: %q", labels)
			}
		}
		p.shot("08-lines-1280")
		p.tab.Do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
		p.shot("08-lines-390")
	})

	t.Run("narrow and dark", func(t *testing.T) {
		p := newPage(t)
		p.tab.Do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
		openSimulator(p, reducedQuery)
		// The page's own content fits; the table scrolls inside its frame.
		// (The header navigation belongs to the shell.)
		wide := browsertest.Eval[[]string](p.tab, `Array.from(document.querySelectorAll("main *"))
			.filter(e => !e.closest(".table-wrap") && e.getBoundingClientRect().right > 391)
			.map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + " " + Math.round(e.getBoundingClientRect().right) + " px")`)
		if len(wide) > 0 {
			t.Errorf("wider than a 390 px screen: %q", wide)
		}
		p.shot("05-narrow")
		p.tab.Do("desktop", chromedp.EmulateViewport(1280, 900))
		if _, err := chromedp.Call(p.tab.Ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
		}); err != nil {
			t.Fatalf("dark scheme: %v", err)
		}
		openSimulator(p, reducedQuery+"&timeLog=1")
		p.shot("06-dark")
	})
}

// thousands prints a mean of calls as the page does: one decimal below
// 100, else a whole number with thousands separators.
func thousands(v float64) string {
	// Intl.NumberFormat rounds halves away from zero, as math.Round does.
	if v < 100 {
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', 1, 64)
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func asErrors(err error, out *field.Errors) bool {
	es, ok := field.As(err)
	*out = es
	return ok && len(es) > 0
}

// download clicks a download link and returns the file name the browser was
// given and the file's content, as saved by Chromium.
func download(p *page, id string) (name, body string) {
	p.t.Helper()
	dir := p.t.TempDir()
	ctx, cancel := context.WithCancel(p.tab.Ctx)
	defer cancel()
	begun := make(chan *browser.EventDownloadWillBegin, 1)
	done := make(chan *browser.EventDownloadProgress, 1)
	err := chromedp.ListenBrowser(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *browser.EventDownloadWillBegin:
			select {
			case begun <- ev:
			default:
			}
		case *browser.EventDownloadProgress:
			if ev.State != browser.DownloadProgressStateInProgress {
				select {
				case done <- ev:
				default:
				}
			}
		}
	})
	if err != nil {
		p.t.Fatal(err)
	}
	on := true
	if _, err := chromedp.CallBrowser(p.tab.Ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &on,
		// The test's own browser context: the browser is shared.
		BrowserContextID: chromedp.FromContext(p.tab.Ctx).BrowserContextID,
	}); err != nil {
		p.t.Fatal(err)
	}
	p.click(id)
	timeout := time.After(browsertest.StepTimeout)
	var start *browser.EventDownloadWillBegin
	select {
	case start = <-begun:
	case <-timeout:
		p.t.Fatalf("clicking #%s started no download", id)
	}
	select {
	case ev := <-done:
		if ev.State != browser.DownloadProgressStateCompleted {
			p.t.Fatalf("download of #%s: %s", id, ev.State)
		}
	case <-timeout:
		p.t.Fatalf("download of #%s did not complete", id)
	}
	b, err := os.ReadFile(filepath.Join(dir, start.GUID))
	if err != nil {
		p.t.Fatal(err)
	}
	return start.SuggestedFilename, string(b)
}
