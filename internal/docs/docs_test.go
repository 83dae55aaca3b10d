package docs_test

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"

	mddocs "github.com/getratchet/ratchet/docs"
	"github.com/getratchet/ratchet/internal/docs"
	"github.com/getratchet/ratchet/internal/proctest"
)

func get(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestServedDocs fetches every page from a real `ratchet serve`: each is
// 200 in the shared shell with its headings and a strict CSP, and the API
// reference names every path of the OpenAPI document.
// relativeMD is a link to a .md file that is not a full URL.
var relativeMD = regexp.MustCompile(`href="[^":]*\.md(#[^"]*)?"`)

func TestServedDocs(t *testing.T) {
	srv := proctest.Start(t, "", nil, "--bootstrap-key", "rk_docs_render_key_0123456789")
	code, _, index := get(t, srv.URL+"/docs")
	if code != 200 || !strings.Contains(index, "<h1>Documentation</h1>") {
		t.Fatalf("/docs: %d\n%s", code, index)
	}
	// The index shows each page's first paragraph rendered, not as Markdown.
	if strings.Contains(index, "](") || strings.Contains(index, "`") {
		t.Errorf("/docs shows raw Markdown:\n%s", index)
	}
	names, _ := fs.Glob(mddocs.FS, "*.md")
	for _, n := range names {
		slug := strings.TrimSuffix(n, ".md")
		src, _ := fs.ReadFile(mddocs.FS, n)
		code, h, body := get(t, srv.URL+"/docs/"+slug)
		if code != 200 {
			t.Errorf("/docs/%s: %d", slug, code)
			continue
		}
		if !strings.Contains(index, `href="/docs/`+slug+`"`) {
			t.Errorf("/docs does not link %s", slug)
		}
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("/docs/%s: CSP %q", slug, csp)
		}
		// The shell's one script (nav.js, which keeps the current link of
		// the phone header in view) is a file; none is inline.
		if strings.Contains(body, "style=") || inlineScript.MatchString(body) {
			t.Errorf("/docs/%s has inline style or an inline script", slug)
		}
		for _, want := range []string{`class="site-header"`, `ratchet.css`, `<a href="/docs" aria-current="page">`, "</html>"} {
			if !strings.Contains(body, want) {
				t.Errorf("/docs/%s: no %q (the shared shell)", slug, want)
			}
		}
		for _, l := range strings.Split(string(src), "\n") {
			if h, ok := strings.CutPrefix(l, "## "); ok {
				html, _ := docs.Render([]byte("## " + h))
				if !strings.Contains(body, strings.TrimSpace(html)) {
					t.Errorf("/docs/%s: heading %q missing", slug, h)
				}
			}
		}
		// A sibling page's link is rewritten to its /docs URL; a link to a
		// file of the repository on GitHub (CHANGELOG.md) stays as it is.
		if m := relativeMD.FindString(body); m != "" {
			t.Errorf("/docs/%s links a .md file: %s", slug, m)
		}
	}

	_, _, raw := get(t, srv.URL+"/openapi.json")
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatal(err)
	}
	code, _, api := get(t, srv.URL+"/docs/api")
	if code != 200 || !strings.Contains(api, "<h1>API reference</h1>") || !strings.Contains(api, `<h2 id="schemas">`) {
		t.Fatalf("/docs/api: %d", code)
	}
	n := 0
	for p, ops := range doc.Paths {
		for m := range ops {
			want := "<code>" + strings.ToUpper(m) + " " + p + "</code>"
			if !strings.Contains(api, want) {
				t.Errorf("/docs/api lacks %s", want)
			}
			if strings.HasPrefix(p, "/v1/") {
				n++
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d /v1 operations in the OpenAPI document", n)
	}
	if code, _, _ := get(t, srv.URL+"/docs/nope"); code != 404 {
		t.Errorf("/docs/nope: %d", code)
	}
}

func TestRenderRewritesPageLinks(t *testing.T) {
	html, err := docs.Render([]byte("[a](workers.md#leases) [b](errors.md) [c](https://example.com/x.md) <script>alert(1)</script>"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`href="/docs/workers#leases"`, `href="/docs/errors"`, `href="https://example.com/x.md"`} {
		if !strings.Contains(html, want) {
			t.Errorf("no %s in %s", want, html)
		}
	}
	if strings.Contains(html, "<script>") {
		t.Errorf("raw HTML passed through: %s", html)
	}
}

// TestServedDocsShowNoPlaceholders: the pages' console blocks hold test
// placeholders (<TIME>, <KEY>, ...) where output differs from run to run;
// a reader of the served pages sees real-looking examples instead.
func TestServedDocsShowNoPlaceholders(t *testing.T) {
	srv := proctest.Start(t, "", nil, "--bootstrap-key", "rk_docs_render_key_0123456789")
	escaped := regexp.MustCompile(`&lt;[A-Z][A-Z_]*&gt;`)
	urls := []string{"/docs", "/docs/api"}
	names, _ := fs.Glob(mddocs.FS, "*.md")
	for _, n := range names {
		urls = append(urls, "/docs/"+strings.TrimSuffix(n, ".md"))
	}
	for _, u := range urls {
		code, _, body := get(t, srv.URL+u)
		if code != 200 {
			t.Errorf("%s: %d", u, code)
			continue
		}
		if found := escaped.FindAllString(body, -1); len(found) > 0 {
			t.Errorf("%s shows test placeholders: %v", u, found)
		}
	}
	// The examples are what shows instead, e.g. a time where <TIME> is.
	_, _, workers := get(t, srv.URL+"/docs/workers")
	if !strings.Contains(workers, "updated:         "+mddocs.Examples["TIME"]) {
		t.Errorf("/docs/workers does not show the example time %s after updated:", mddocs.Examples["TIME"])
	}
}

// inlineScript is a script tag without a src: the tags before its ">"
// name no source.
var inlineScript = regexp.MustCompile(`<script(\s+(type|nonce)="[^"]*")*\s*>`)
