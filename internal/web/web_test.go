package web_test

import (
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/web"
)

func get(t *testing.T, h http.Handler, path string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCalculatorPage(t *testing.T) {
	t.Parallel()
	h := web.Handler()
	r := get(t, h, "/calculator")
	page := body(t, r)
	if r.StatusCode != 200 {
		t.Fatalf("status %d", r.StatusCode)
	}
	for k, want := range map[string]string{
		"Content-Type":           "text/html; charset=utf-8",
		"Cache-Control":          "no-cache",
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "no-referrer",
	} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP = %q", csp)
	}
	prefix := "/assets/" + web.AssetVersion() + "/"
	for _, want := range []string{
		`<script type="module" src="` + prefix + `calculator.js">`,
		`<link rel="stylesheet" href="` + prefix + `ratchet.css">`,
		`<a href="/calculator" aria-current="page">Calculator</a>`,
		`<label for="base">`, `id="load-sample"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "style=") {
		t.Error("page has inline script or style, which the CSP forbids")
	}
}

func TestAssets(t *testing.T) {
	t.Parallel()
	h := web.Handler()
	v := web.AssetVersion()
	if len(v) != 12 {
		t.Fatalf("version %q", v)
	}
	for file, ct := range map[string]string{
		"ratchet.css":           "text/css; charset=utf-8",
		"calculator.js":         "text/javascript; charset=utf-8",
		"backoff.js":            "text/javascript; charset=utf-8",
		"logparse.js":           "text/javascript; charset=utf-8",
		"chart.js":              "text/javascript; charset=utf-8",
		"dashboard.js":          "text/javascript; charset=utf-8",
		"dashboard.css":         "text/css; charset=utf-8",
		"dashboard-api.js":      "text/javascript; charset=utf-8",
		"dashboard-timeline.js": "text/javascript; charset=utf-8",
		"dashboard-format.js":   "text/javascript; charset=utf-8",
		"dashboard-ops.js":      "text/javascript; charset=utf-8",
		"dashboard-observe.js":  "text/javascript; charset=utf-8",
		"favicon.svg":           "image/svg+xml",
	} {
		r := get(t, h, "/assets/"+v+"/"+file)
		b := body(t, r)
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != ct || len(b) == 0 {
			t.Errorf("%s: %d %q (%d bytes)", file, r.StatusCode, r.Header.Get("Content-Type"), len(b))
		}
		if got := r.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", file, got)
		}
		etag := r.Header.Get("ETag")
		if etag == "" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", file, r.Header)
		}
		if r := get(t, h, "/assets/"+v+"/"+file, "If-None-Match", etag); r.StatusCode != http.StatusNotModified {
			t.Errorf("%s: revalidation status %d", file, r.StatusCode)
		}
		// A page from an older build asks for its own version: it gets the
		// current file, but must not cache it for long.
		if r := get(t, h, "/assets/0123456789ab/"+file); r.StatusCode != 200 || r.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s: other version: %d %q", file, r.StatusCode, r.Header.Get("Cache-Control"))
		}
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	h := web.Handler()
	v := web.AssetVersion()
	for _, p := range []string{
		"/assets/" + v + "/nope.js",
		"/assets/" + v + "/calculator.html", // templates are not files
		"/assets/" + v + "/layout.html",
		"/assets/" + v + "/",
		"/assets/calculator.js",
		"/calculator/extra",
		"/nope",
	} {
		if r := get(t, h, p); r.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, r.StatusCode)
		}
	}
	// A page address gets the shell with a way back, not plain text.
	if page := body(t, get(t, h, "/nope")); !strings.Contains(page, `class="site-header"`) || !strings.Contains(page, "<h1>Page not found</h1>") {
		t.Errorf("/nope is not a page of the site:\n%s", page)
	}
	for _, p := range []string{"/jobs/1/extra", "/endpoints", "/runs/1/x", "/tools/x"} {
		if r := get(t, h, p); r.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, r.StatusCode)
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/calculator", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /calculator: %d", rec.Code)
	}
}

// Every path the dashboard routes on the client gets the same shell, with
// the header entry of its section marked current.
func TestDashboardShell(t *testing.T) {
	t.Parallel()
	h := web.Handler()
	prefix := "/assets/" + web.AssetVersion() + "/"
	for path, current := range map[string]string{
		"/":                 `<a href="/" aria-current="page">Overview</a>`,
		"/endpoints/stripe": `<a href="/" aria-current="page">Overview</a>`,
		"/jobs":             `<a href="/jobs" aria-current="page">Jobs</a>`,
		"/jobs/42":          `<a href="/jobs" aria-current="page">Jobs</a>`,
		"/tools":            `<a href="/tools" aria-current="page">Tools</a>`,
		"/runs":             `<a href="/runs" aria-current="page">Runs</a>`,
		"/runs/7":           `<a href="/runs" aria-current="page">Runs</a>`,
	} {
		r := get(t, h, path)
		page := body(t, r)
		if r.StatusCode != 200 || r.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s: %d, CSP %q", path, r.StatusCode, r.Header.Get("Content-Security-Policy"))
			continue
		}
		for _, want := range []string{
			`<script type="module" src="` + prefix + `dashboard.js">`,
			`<link rel="stylesheet" href="` + prefix + `dashboard.css">`,
			`id="signin-form"`, `id="view"`, current,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: page lacks %s", path, want)
			}
		}
		if strings.Count(page, `aria-current="page"`) != 1 {
			t.Errorf("%s: %d current nav entries", path, strings.Count(page, `aria-current="page"`))
		}
		if strings.Contains(page, "<script>") || strings.Contains(page, "style=") {
			t.Errorf("%s: inline script or style, which the CSP forbids", path)
		}
	}
	if page := body(t, get(t, h, "/calculator")); strings.Contains(page, "dashboard.css") {
		t.Error("the calculator loads the dashboard stylesheet")
	}
}

// WritePage puts another package's content in the same shell, with the same
// headers and the header entry of its section marked.
func TestWritePage(t *testing.T) {
	rec := httptest.NewRecorder()
	web.WritePage(rec, httptest.NewRequest("GET", "/docs/workers", nil), "Workers & leases", template.HTML(`<h1 id="w">Workers</h1>`))
	body := rec.Body.String()
	for _, want := range []string{`<title>Workers &amp; leases · Ratchet</title>`, `<h1 id="w">Workers</h1>`,
		`<a href="/docs" aria-current="page">Docs</a>`, `class="site-header"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Only the shell's nav.js (it keeps the phone header's current link in
	// view); no page script.
	if n := strings.Count(body, "<script"); n != 1 || !strings.Contains(body, `nav.js"></script>`) {
		t.Errorf("a content page loads %d scripts, want only the shell's nav.js", n)
	}
	if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("status %d, CSP %q", rec.Code, rec.Header().Get("Content-Security-Policy"))
	}
}
