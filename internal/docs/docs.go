// Package docs serves Ratchet's documentation at /docs: the Markdown pages
// of the top-level docs directory rendered to HTML, and an API reference
// rendered from the server's OpenAPI document. Everything is rendered
// server-side from embedded files, so the pages work offline and need no
// script; they sit in the same shell (header, navigation, stylesheet) as the
// other embedded pages.
package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	mddocs "github.com/getratchet/ratchet/docs"
	"github.com/getratchet/ratchet/internal/web"
)

// Page is one Markdown page: its URL slug (the file name without .md) and
// the title taken from its first heading.
type Page struct {
	Slug  string
	Title string
	Intro string // the first paragraph, for the index
}

// Order is the reading order of the pages in the index. A page missing here
// is listed after them.
var Order = []string{"workers", "policies", "errors", "calculator", "operations"}

// contentSecurityPolicy is the policy of the other embedded pages: nothing
// but this server, no inline script or style. Goldmark escapes raw HTML in
// the Markdown and the table extension is told to emit align attributes,
// so nothing on these pages needs more.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM, extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute))),
	goldmark.WithParserOptions(parser.WithAutoHeadingID()),
)

// Render turns one page's Markdown into HTML. Links to sibling pages
// ("workers.md#leases") become links to their /docs URLs, so the same files
// read correctly in the repository and on the server.
func Render(src []byte) (string, error) {
	doc := md.Parser().Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*ast.Link); ok && entering {
			l.Destination = []byte(rewriteLink(string(l.Destination)))
		}
		return ast.WalkContinue, nil
	})
	var b bytes.Buffer
	if err := md.Renderer().Render(&b, src, doc); err != nil {
		return "", err
	}
	return b.String(), nil
}

func rewriteLink(dest string) string {
	if strings.Contains(dest, "://") || strings.HasPrefix(dest, "/") {
		return dest
	}
	file, frag, _ := strings.Cut(dest, "#")
	if name, ok := strings.CutSuffix(file, ".md"); ok && !strings.Contains(name, "/") {
		if frag != "" {
			return "/docs/" + name + "#" + frag
		}
		return "/docs/" + name
	}
	return dest
}

type site struct {
	pages []Page
	html  map[string]template.HTML // slug → rendered body
	api   template.HTML
}

func load(openapi []byte) (*site, error) {
	s := &site{html: map[string]template.HTML{}}
	names, err := fs.Glob(mddocs.FS, "*.md")
	if err != nil {
		return nil, err
	}
	bySlug := map[string]Page{}
	for _, name := range names {
		src, err := fs.ReadFile(mddocs.FS, name)
		if err != nil {
			return nil, err
		}
		body, err := Render(src)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", name, err)
		}
		p := Page{Slug: strings.TrimSuffix(name, ".md")}
		p.Title, p.Intro = titleAndIntro(string(src))
		s.html[p.Slug] = template.HTML(body) // goldmark escapes raw HTML: the source is ours and embedded
		bySlug[p.Slug] = p
	}
	for _, slug := range Order {
		if p, ok := bySlug[slug]; ok {
			s.pages = append(s.pages, p)
			delete(bySlug, slug)
		}
	}
	for _, name := range names {
		if p, ok := bySlug[strings.TrimSuffix(name, ".md")]; ok {
			s.pages = append(s.pages, p)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(openapi, &doc); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	api, err := renderAPI(doc)
	if err != nil {
		return nil, err
	}
	s.api = api
	return s, nil
}

func titleAndIntro(src string) (title, intro string) {
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		if t, ok := strings.CutPrefix(l, "# "); ok && title == "" {
			title = strings.TrimSpace(t)
			var para []string
			for _, m := range lines[i+1:] {
				m = strings.TrimSpace(m)
				if m == "" && len(para) > 0 {
					break
				}
				if m != "" {
					para = append(para, m)
				}
			}
			intro = strings.Join(para, " ")
			break
		}
	}
	return title, intro
}

// Handler serves GET /docs (the index), /docs/{page} and /docs/api.
// openapi is the server's OpenAPI document as served at /openapi.json.
func Handler(openapi []byte) http.Handler {
	var once sync.Once
	var s *site
	var loadErr error
	mux := http.NewServeMux()
	get := func() (*site, error) {
		once.Do(func() { s, loadErr = load(openapi) })
		return s, loadErr
	}
	mux.HandleFunc("GET /docs", func(w http.ResponseWriter, r *http.Request) {
		s, err := get()
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		var b bytes.Buffer
		_ = indexTmpl.Execute(&b, s.pages)
		writePage(w, "Documentation", template.HTML(b.String()))
	})
	mux.Handle("GET /docs/{$}", http.RedirectHandler("/docs", http.StatusMovedPermanently))
	mux.HandleFunc("GET /docs/api", func(w http.ResponseWriter, r *http.Request) {
		s, err := get()
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		writePage(w, "API reference", s.api)
	})
	mux.HandleFunc("GET /docs/{page}", func(w http.ResponseWriter, r *http.Request) {
		s, err := get()
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		slug := strings.TrimSuffix(r.PathValue("page"), ".md")
		body, ok := s.html[slug]
		if !ok {
			http.NotFound(w, r)
			return
		}
		title := slug
		for _, p := range s.pages {
			if p.Slug == slug {
				title = p.Title
			}
		}
		writePage(w, title, body)
	})
	return mux
}

var indexTmpl = template.Must(template.New("index").Parse(`<h1>Documentation</h1>
<p>Ratchet's guides, rendered from the Markdown files of the repository's <code>docs</code> directory, and the HTTP API reference.</p>
<ul class="docs-index">
{{range .}}<li><a href="/docs/{{.Slug}}">{{.Title}}</a><br>{{.Intro}}</li>
{{end}}<li><a href="/docs/api">API reference</a><br>Every route of the HTTP API with its keys, parameters, bodies and responses, from the server's OpenAPI document (<a href="/openapi.json">/openapi.json</a>).</li>
</ul>
`))

func writePage(w http.ResponseWriter, title string, body template.HTML) {
	html, err := inShell(title, body)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(html)
}

// shell is the shared page shell split around its <main> content.
type shell struct{ head, before, after string }

// loadShell takes the shell from the web package by rendering one of its
// pages in-process and cutting out that page's title, script and content.
// The web package keeps its templates unexported, and a copy of the layout
// here would drift from it; a test checks the cut still finds its marks.
var loadShell = sync.OnceValues(func() (shell, error) {
	rec := httptest.NewRecorder()
	web.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/calculator", nil))
	page := rec.Body.String()
	if rec.Code != http.StatusOK {
		return shell{}, fmt.Errorf("shell page: status %d", rec.Code)
	}
	const mainOpen, mainClose = `<main id="main" tabindex="-1">`, `</main>`
	i, j := strings.Index(page, mainOpen), strings.LastIndex(page, mainClose)
	t1, t2 := strings.Index(page, "<title>"), strings.Index(page, "</title>")
	if i < 0 || j < i || t1 < 0 || t2 < t1 {
		return shell{}, fmt.Errorf("shell page: <title> or <main> not found")
	}
	head := page[:t1]
	before := page[t2+len("</title>") : i+len(mainOpen)]
	// Drop the calculator's script: these pages run none.
	for {
		s := strings.Index(before, "<script")
		if s < 0 {
			break
		}
		e := strings.Index(before[s:], "</script>")
		if e < 0 {
			break
		}
		before = before[:s] + before[s+e+len("</script>"):]
	}
	before = strings.ReplaceAll(before, ` aria-current="page"`, "")
	before = strings.Replace(before, `<a href="/docs">`, `<a href="/docs" aria-current="page">`, 1)
	return shell{head: head, before: before, after: page[j:]}, nil
})

func inShell(title string, body template.HTML) ([]byte, error) {
	sh, err := loadShell()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(sh.head)
	b.WriteString("<title>" + template.HTMLEscapeString(title) + " · Ratchet</title>")
	b.WriteString(sh.before)
	b.WriteString("\n<article class=\"docs\">\n")
	b.WriteString(string(body))
	b.WriteString("</article>\n")
	b.WriteString(sh.after)
	return b.Bytes(), nil
}
