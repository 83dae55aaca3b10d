package web_test

import (
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
		"ratchet.css":   "text/css; charset=utf-8",
		"calculator.js": "text/javascript; charset=utf-8",
		"backoff.js":    "text/javascript; charset=utf-8",
		"logparse.js":   "text/javascript; charset=utf-8",
		"chart.js":      "text/javascript; charset=utf-8",
		"favicon.svg":   "image/svg+xml",
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
	if r := get(t, h, "/"); r.StatusCode != http.StatusFound || r.Header.Get("Location") != "/calculator" {
		t.Errorf("/: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	req := httptest.NewRequest(http.MethodPost, "/calculator", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /calculator: %d", rec.Code)
	}
}
