package web_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/internal/browsertest"
)

// axePath is axe-core's browser build, installed by
// `npm ci --prefix scripts/axe` (scripts/test does it before the browser
// tests; the version is pinned in scripts/axe/package.json).
var axePath = filepath.Join("..", "..", "scripts", "axe", "node_modules", "axe-core", "axe.min.js")

var axeSource = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(axePath)
	return string(b), err
})

// axeViolation is the part of an axe-core result the test reports.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// checkAxe runs axe-core over the page as it is in tab and fails the test
// for every serious or critical violation, naming the rule and the
// elements. axe is loaded into the page once per document (a dashboard
// view routed on the client keeps it). Without axe-core installed the
// check is skipped with a message, or fails under RATCHET_REQUIRE_BROWSER=1
// (scripts/test), which installs it.
//
// RATCHET_TEST_AXE=off leaves the check out: scripts/test sets it in its
// 00:30 run, as axe checks every page at both widths in the 23:30 run, and
// what it checks (names, roles, contrast, landmarks) is the same at any
// hour, and the run is short of CPU.
func checkAxe(t *testing.T, tab *browsertest.Tab, what string) {
	t.Helper()
	if os.Getenv("RATCHET_TEST_AXE") == "off" {
		return
	}
	src, err := axeSource()
	if err != nil {
		msg := fmt.Sprintf("axe-core not installed (%v): run npm ci --prefix scripts/axe", err)
		if errors.Is(err, fs.ErrNotExist) && os.Getenv("RATCHET_REQUIRE_BROWSER") != "1" {
			t.Log(msg)
			return
		}
		t.Fatal(msg)
	}
	if !browsertest.Eval[bool](tab, `typeof window.axe === "object"`) {
		browsertest.Eval[chromedp.Void](tab, src+"\n;undefined")
	}
	// Rules of every WCAG level and best practice, and the experimental
	// label-content-name-mismatch (a button whose accessible name does not
	// start with its visible text defeats speech control). Serious and
	// critical results fail, and so do the two docs rules the operators'
	// review named (landmark-unique, empty-table-header); other moderate
	// and minor ones are advice.
	// axe over the API reference (tens of thousands of pixels) took longer
	// than a step may on a loaded machine: it gets three.
	ctx, cancel := context.WithTimeout(tab.Ctx, 3*browsertest.StepTimeout)
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](`axe.run(document, {resultTypes: ["violations"], rules: {"label-content-name-mismatch": {enabled: true}}}).then(r => r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical" || v.id === "landmark-unique" || v.id === "empty-table-header")
		.map(v => ({id: v.id, impact: v.impact, help: v.help,
			nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ") + (n.failureSummary ? " (" + n.failureSummary.replace(/\s+/g, " ").slice(0, 160) + ")" : ""))})))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: axe: %v", what, err)
	}
	for _, v := range got {
		t.Errorf("%s: axe %s (%s): %s: %s", what, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "; "))
	}
}
