// Package web serves Ratchet's embedded pages: the dashboard at / and the
// backoff calculator, with the simulator as it lands. Every asset is embedded
// in the binary; the pages need no network beyond the Ratchet server and load
// nothing from a CDN.
//
// Pages share one shell (assets/layout.html: header, navigation, footer) and
// one stylesheet (assets/ratchet.css). A new page adds its template
// assets/<name>.html defining "content", a page entry and, if people should
// find it from the header, a nav entry.
//
// Static assets are served under /assets/<version>/<file>, where version is a
// hash of every embedded asset. The pages link to the current version, so
// those URLs can be cached forever ("immutable"); a request for another
// version (a page loaded before an upgrade) still gets the current file, but
// with "no-cache". ES modules import each other by relative paths, which keep
// the version prefix, so no build step rewrites anything.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

//go:embed assets
var assetFS embed.FS

// contentTypes lists the asset kinds served as files. Anything else under
// assets/ (the page templates) is never served as a file.
var contentTypes = map[string]string{
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".json": "application/json",
}

// NavItem is one link of the page header.
type NavItem struct {
	Path  string
	Label string
}

// nav is the header navigation, in order. Only pages that exist are listed.
var nav = []NavItem{
	{Path: "/", Label: "Overview"},
	{Path: "/jobs", Label: "Jobs"},
	{Path: "/tools", Label: "Tools"},
	{Path: "/runs", Label: "Runs"},
	{Path: "/schedules", Label: "Schedules"},
	{Path: "/workers", Label: "Workers"},
	{Path: "/history", Label: "History"},
	{Path: "/calculator", Label: "Calculator"},
	{Path: "/simulator", Label: "Simulator"},
	{Path: "/docs", Label: "Docs"},
}

// page is one HTML page of the shell.
type page struct {
	Path     string
	Template string // file under assets/ defining "content"
	Title    string
	Script   string // ES module under assets/ to load, or ""
	Style    string // extra stylesheet under assets/, or ""
	// Routes are further path patterns answered with the same page: the
	// dashboard routes on the client (history API), so a reload or a shared
	// link of any of its views must get the shell too.
	Routes []string
}

// DashboardRoute is one view of the dashboard: the path pattern the server
// answers with the dashboard's shell and the view module that draws it,
// assets/view-<Name>.js. The list is written here once: LimitsJS hands it to
// the shell (limits.js, DASHBOARD_ROUTES), which routes on it and loads the
// view by name, and TestDashboardRoutesHaveViews fails when a route has no
// view module or a view module no route. In Path, {id} is a number and any
// other {name} one path segment, as the shell reads them.
type DashboardRoute struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// DashboardRoutes are the dashboard's views, in the order the shell tries
// them.
var DashboardRoutes = []DashboardRoute{
	{"overview", "/"},
	{"endpoint", "/endpoints/{name}"},
	{"jobs", "/jobs"},
	{"job", "/jobs/{id}"},
	{"tools", "/tools"},
	{"runs", "/runs"},
	{"run", "/runs/{id}"},
	{"schedules", "/schedules"},
	{"schedule", "/schedules/{name}"},
	{"workers", "/workers"},
	{"history", "/history"},
}

// dashboardPaths are the dashboard's paths but the root, which is its page.
func dashboardPaths() []string {
	var ps []string
	for _, r := range DashboardRoutes {
		if r.Path != "/" {
			ps = append(ps, r.Path)
		}
	}
	return ps
}

var pages = []page{
	{Path: "/", Template: "dashboard.html", Title: "Dashboard", Script: "dashboard.js", Style: "dashboard.css",
		Routes: dashboardPaths()},
	{Path: "/calculator", Template: "calculator.html", Title: "Backoff calculator", Script: "calculator.js"},
	{Path: "/simulator", Template: "simulator.html", Title: "Simulator: contention and recovery", Script: "simulator.js"},
}

// contentSecurityPolicy allows nothing but this server: no inline script, no
// third-party origin. The pages draw their charts with DOM calls, not inline
// style attributes, so style-src needs no 'unsafe-inline' either.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

type asset struct {
	body        []byte
	contentType string
	etag        string
}

type site struct {
	version string
	assets  map[string]asset // by file name, e.g. "ratchet.css"
	pages   map[string]*template.Template
	shell   *template.Template // the layout around pageData.Content, for WritePage
}

// pageData is what the templates see.
type pageData struct {
	Title  string
	Assets string // URL prefix of the versioned assets, e.g. /assets/3f2a.../
	Script string
	Style  string
	Nav    []navLink
	// Content is the body of a page rendered by another package (WritePage).
	Content template.HTML
}

type navLink struct {
	NavItem
	Current bool
}

// Handler serves the pages and their assets. The server mounts it for every
// path outside /v1 and the operational endpoints. Paths it does not know get
// 404.
func Handler() http.Handler {
	s, err := load()
	if err != nil {
		// The assets are compiled in; a failure here is a broken build that
		// every test of this package reports.
		panic("web: " + err.Error())
	}
	mux := http.NewServeMux()
	for _, p := range pages {
		pattern := p.Path
		if pattern == "/" {
			pattern = "/{$}" // exactly the root, not every path
		}
		mux.Handle("GET "+pattern, s.pageHandler(p))
		for _, r := range p.Routes {
			mux.Handle("GET "+r, s.pageHandler(p))
		}
	}
	mux.HandleFunc("GET /assets/{version}/{file}", s.serveAsset)
	// Any other page address gets a 404 in the shell, with the navigation,
	// rather than Go's plain-text "404 page not found".
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/assets/") {
			http.NotFound(w, r)
			return
		}
		s.renderStatus(w, r, s.shell, pageData{Title: "Page not found", Content: notFoundContent}, http.StatusNotFound)
	})
	return mux
}

const notFoundContent = template.HTML(`<div class="page"><section class="intro"><h1>Page not found</h1>
<p class="lede">There is no page at this address. The <a href="/">overview</a> lists every endpoint; the <a href="/docs">documentation</a> lists every guide.</p></section></div>`)

// AssetVersion is the version segment of the asset URLs of this build.
func AssetVersion() string {
	s, err := load()
	if err != nil {
		return ""
	}
	return s.version
}

// load reads and hashes the embedded assets once per process.
var load = sync.OnceValues(func() (*site, error) {
	s := &site{assets: map[string]asset{}, pages: map[string]*template.Template{}}
	entries, err := fs.ReadDir(assetFS, "assets")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	all := sha256.New()
	for _, name := range names {
		body, err := assetFS.ReadFile("assets/" + name)
		if err != nil {
			return nil, err
		}
		all.Write([]byte(name))
		all.Write(body)
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			continue
		}
		sum := sha256.Sum256(body)
		s.assets[name] = asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	s.version = hex.EncodeToString(all.Sum(nil)[:6])
	for _, p := range pages {
		t, err := template.ParseFS(assetFS, "assets/layout.html", "assets/"+p.Template)
		if err != nil {
			return nil, err
		}
		s.pages[p.Path] = t
	}
	shell, err := template.ParseFS(assetFS, "assets/layout.html")
	if err != nil {
		return nil, err
	}
	if s.shell, err = shell.New("content").Parse(`{{.Content}}`); err != nil {
		return nil, err
	}
	return s, nil
})

func (s *site) pageHandler(p page) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.render(w, r, s.pages[p.Path], pageData{Title: p.Title, Script: p.Script, Style: p.Style})
	})
}

// render writes one page of the shell with the security headers every page
// carries.
func (s *site) render(w http.ResponseWriter, r *http.Request, t *template.Template, d pageData) {
	s.renderStatus(w, r, t, d, http.StatusOK)
}

// renderStatus is render with another status code, for the 404 page.
func (s *site) renderStatus(w http.ResponseWriter, r *http.Request, t *template.Template, d pageData, status int) {
	section := NavSection(r.URL.Path)
	d.Nav = make([]navLink, len(nav))
	for i, n := range nav {
		d.Nav[i] = navLink{NavItem: n, Current: n.Path == section}
	}
	d.Assets = "/assets/" + s.version + "/"
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", d); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// The page names the current asset version, so it must be revalidated.
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// WritePage serves content (already safe HTML, no script or inline style)
// inside the shared shell, for pages other packages render, such as /docs.
func WritePage(w http.ResponseWriter, r *http.Request, title string, content template.HTML) {
	s, err := load()
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	s.render(w, r, s.shell, pageData{Title: title, Content: content})
}

// NotFound answers 404 with a page in the shell that links back to the
// overview and the documentation, for handlers of other packages (/docs).
func NotFound(w http.ResponseWriter, r *http.Request) {
	s, err := load()
	if err != nil {
		http.NotFound(w, r)
		return
	}
	s.renderStatus(w, r, s.shell, pageData{Title: "Page not found", Content: notFoundContent}, http.StatusNotFound)
}

// NavSection is the header entry a path belongs to: its first segment, with
// an endpoint's policy editor under the overview that lists the endpoints.
// dashboard.js applies the same rule when it routes on the client.
func NavSection(p string) string {
	first, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if first == "endpoints" {
		return "/"
	}
	return "/" + first
}

func (s *site) serveAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := s.assets[r.PathValue("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", a.etag)
	if r.PathValue("version") == s.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	// ServeContent answers If-None-Match with 304 and serves ranges.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
