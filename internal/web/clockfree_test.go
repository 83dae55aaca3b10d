package web_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// clockFreeTests are the browser tests whose pages never read the wall
// clock, the date or the time zone: scripts/test runs them in the 23:30
// UTC run only and skips them in the 00:30 one (their outcome cannot
// depend on the hour, and the two runs are bound by CPU). The pattern is
// the one scripts/test passes to -skip; TestClockFreePages below keeps it
// true.
const clockFreeTests = "^(TestCalculatorInBrowser|TestCalculatorHistogram|TestSimulatorInBrowser|TestStaticPagesFitTheWindow)$"

// clockReads are the ways a script reads the clock of the day or the
// machine's zone. performance.now is allowed: it measures an elapsed time,
// which an hour shift does not change, and so is a number's
// toLocaleString (a Date made from a given time is checked where it is made).
var clockReads = regexp.MustCompile(`Date\.now\(|new Date\(\s*\)|\.get(FullYear|Month|Date|Day|Hours|Minutes|Seconds|Milliseconds)\(|(^|[^.\w])Date\(\s*\)|getTimezoneOffset|resolvedOptions|toLocale(Date|Time)String|Intl\.DateTimeFormat`)

var jsImport = regexp.MustCompile(`(?m)^import .* from "\./([a-z0-9-]+\.js)";`)

// goClockReads are the ways Go code reads the clock.
var goClockReads = regexp.MustCompile(`time\.(Now|Since|Until)\(|clock\.`)

// TestClockFreePages reads the scripts of the calculator and the simulator
// and every module they import, the layout's nav.js (the only script of the
// docs pages and the unknown-address page), and the Go that renders the
// docs (internal/docs), and fails on any read of the clock: a page that
// starts reading it must leave clockFreeTests (and so run at both shifted
// hours again).
func TestClockFreePages(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	var walk func(file string)
	walk = func(file string) {
		if seen[file] {
			return
		}
		seen[file] = true
		src, err := os.ReadFile(filepath.Join("assets", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, loc := range clockReads.FindAllIndex(src, -1) {
			t.Errorf("%s reads the clock at byte %d (%q): its page's tests must run at both shifted hours; take them out of clockFreeTests and scripts/test's -skip", file, loc[0], src[loc[0]:loc[1]])
		}
		for _, m := range jsImport.FindAllSubmatch(src, -1) {
			walk(string(m[1]))
		}
	}
	walk("calculator.js")
	walk("simulator.js")
	walk("nav.js") // the layout loads it on every page
	if len(seen) < 7 {
		t.Errorf("read %d scripts, want the two pages' and their imports: %v", len(seen), seen)
	}
	gofiles, err := filepath.Glob("../docs/*.go")
	if err != nil || len(gofiles) < 2 {
		t.Fatalf("internal/docs: %d Go files (%v)", len(gofiles), err)
	}
	for _, f := range gofiles {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, loc := range goClockReads.FindAllIndex(src, -1) {
			t.Errorf("%s reads the clock at byte %d (%q): the docs pages' tests must run at both shifted hours; take TestStaticPagesFitTheWindow out of clockFreeTests and scripts/test's -skip", f, loc[0], src[loc[0]:loc[1]])
		}
	}
}

// TestClockFreeListMatchesScript keeps scripts/test's -skip and the list
// above the same.
func TestClockFreeListMatchesScript(t *testing.T) {
	t.Parallel()
	script, err := os.ReadFile("../../scripts/test")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`-skip '` + regexp.QuoteMeta(clockFreeTests) + `'`).Match(script) {
		t.Errorf("scripts/test does not skip exactly %s in its 00:30 run", clockFreeTests)
	}
}
