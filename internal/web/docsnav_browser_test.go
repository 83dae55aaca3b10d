package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestDocsFindYourWay (defect 17, at 1280 px): a docs page lists its
// sections in an "on this page" box; the search box finds a term and its
// hits lead to the section; a query too long is refused with a message
// naming q; the API reference is grouped by resource (endpoints, tools,
// jobs, …, then the operational routes), not by path.
func TestDocsFindYourWay(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil)
	tab := b.NewTab(t)
	shots := browsertest.ScreenshotDir(t)
	setViewport(t, tab, 1280, 800)
	open := func(path string) {
		t.Helper()
		tab.Do("open "+path, chromedp.Navigate(srv.URL+path))
		tab.WaitFor(`document.readyState === "complete"`)
	}

	open("/docs/operations")
	toc := browsertest.Eval[[]string](tab, `Array.from(document.querySelectorAll('nav.toc[aria-label="On this page"] a'), a => a.getAttribute("href"))`)
	h2 := browsertest.Eval[[]string](tab, `Array.from(document.querySelectorAll("article.docs > h2"), h => "#" + h.id)`)
	if len(toc) < 3 || strings.Join(toc, " ") != strings.Join(h2, " ") {
		t.Errorf("on this page lists %q; the page's sections are %q", toc, h2)
	}
	tab.Screenshot(shots, "toc-1280")

	// Search from the box, as a person would: type and press Enter.
	tab.Do("search", chromedp.SendKeys(chromedp.ID("docs-q"), "Retry-After\n"))
	// (WaitReady follows the page the form loads; a poll is cut by it.)
	tab.Do("wait for the results", chromedp.WaitReady(chromedp.CSS("#search-count, #search-none")))
	hits := browsertest.Eval[[]string](tab, `Array.from(document.querySelectorAll(".search-hits li a"), a => a.getAttribute("href"))`)
	if len(hits) < 2 {
		t.Fatalf("searching Retry-After found %q: %s", hits, tab.Text("article.docs"))
	}
	if marks := browsertest.Eval[[]string](tab, `Array.from(document.querySelectorAll(".search-hits mark"), m => m.textContent.toLowerCase())`); len(marks) == 0 || marks[0] != "retry-after" {
		t.Errorf("the hits mark %q", marks)
	}
	tab.Screenshot(shots, "search-1280")
	first := browsertest.Eval[string](tab, `document.querySelector(".search-hits li a").getAttribute("href")`)
	tab.Do("follow the first hit", chromedp.Click(chromedp.CSS(".search-hits li a")), chromedp.WaitReady(chromedp.CSS("nav.toc")))
	if got := browsertest.Eval[string](tab, `location.pathname + location.hash`); got != first {
		t.Errorf("the first hit %s led to %s", first, got)
	}
	if !browsertest.Eval[bool](tab, `!location.hash || !!document.getElementById(decodeURIComponent(location.hash.slice(1)))`) {
		t.Errorf("the first hit led to %s, whose section is not on the page", browsertest.Eval[string](tab, `location.href`))
	}

	open("/docs/search?q=" + strings.Repeat("a", 201))
	if got := tab.Text("#search-error"); got != "q: 201 characters is too long; at most 200 are allowed" {
		t.Errorf("a long query says %q", got)
	}

	open("/docs/api")
	res := browsertest.Eval[[]string](tab, `Array.from(document.querySelectorAll("h2.api-resource"), h => h.textContent)`)
	if len(res) < 5 || strings.Join(res[:3], " ") != "Endpoints Tools Jobs" || res[len(res)-1] != "Operations" {
		t.Errorf("API resources in order %q; want Endpoints, Tools, Jobs first and Operations last", res)
	}
	if first := tab.Text(`.docs table tbody tr:not(:first-child) td:nth-child(2)`); !strings.HasPrefix(first, "/v1/endpoints") {
		t.Errorf("the first route listed is %s; want an endpoints route", first)
	}
	// Every route under a resource heading is that resource's.
	if bad := browsertest.Eval[[]string](tab, `Array.from(document.querySelectorAll("section.api-op")).filter(s => {
		let h = s.previousElementSibling; while (h && !h.matches("h2.api-resource")) h = h.previousElementSibling;
		const path = s.querySelector("h3 code").textContent.split(" ")[1], key = h.id.replace("resource-", "");
		return key === "operations" ? path.startsWith("/v1/") : !path.startsWith("/v1/" + key);
	}).map(s => s.querySelector("h3").textContent)`); len(bad) > 0 {
		t.Errorf("routes under another resource's heading: %q", bad)
	}
	tab.Screenshot(shots, "api-1280")
	setViewport(t, tab, 390, 844)
	open("/docs/search?q=circuit+open")
	tab.Screenshot(shots, "search-390")
	open("/docs/flow-control")
	tab.Screenshot(shots, "toc-390")
}
