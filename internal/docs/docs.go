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
	Intro string // the first paragraph, for the index, as Markdown
	// IntroHTML is Intro rendered (links and code spans), without the
	// paragraph around it.
	IntroHTML template.HTML
}

// Order is the reading order of the pages in the index. A page missing here
// is listed after them.
var Order = []string{"workers", "policies", "flow-control", "schedules", "failures", "errors", "outages", "state-machine", "calculator", "operations", "deploy", "traces", "dashboard", "performance"}

// Pages are served in the web package's shell with its strict CSP (no
// inline script or style): goldmark escapes raw HTML in the Markdown and the
// table extension is told to emit align attributes, so nothing here needs
// more.
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
	pages    []Page
	html     map[string]template.HTML // slug → rendered body
	api      template.HTML
	sections []section // every page's sections, in the index's order, for the search
}

// load renders every page of docs/ (in Order, then the rest by name) and
// the API page from the OpenAPI document.
func load(openapi []byte) (*site, error) {
	s := &site{html: map[string]template.HTML{}}
	names, err := fs.Glob(mddocs.FS, "*.md")
	if err != nil {
		return nil, err
	}
	bySlug := map[string]Page{}
	secs := map[string][]section{}
	for _, name := range names {
		p, body, ps, err := loadPage(name)
		if err != nil {
			return nil, err
		}
		s.html[p.Slug] = body
		bySlug[p.Slug] = p
		secs[p.Slug] = ps
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
	for _, p := range s.pages {
		s.sections = append(s.sections, secs[p.Slug]...)
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

// loadPage renders the page name of docs/: its body, and its title and
// intro for the index.
func loadPage(name string) (Page, template.HTML, []section, error) {
	src, err := fs.ReadFile(mddocs.FS, name)
	if err != nil {
		return Page{}, "", nil, err
	}
	// The expected output in the pages holds the tests' placeholders
	// (<TIME>); readers get real-looking examples instead.
	src = mddocs.Readable(src)
	body, err := Render(src)
	if err != nil {
		return Page{}, "", nil, fmt.Errorf("render %s: %w", name, err)
	}
	p := Page{Slug: strings.TrimSuffix(name, ".md")}
	p.Title, p.Intro = titleAndIntro(string(src))
	intro, err := Render([]byte(p.Intro))
	if err != nil {
		return Page{}, "", nil, fmt.Errorf("render the intro of %s: %w", name, err)
	}
	intro = strings.TrimSpace(intro)
	intro = strings.TrimSuffix(strings.TrimPrefix(intro, "<p>"), "</p>")
	p.IntroHTML = template.HTML(intro) // goldmark output, as for the page bodies
	// goldmark escapes raw HTML: the source is ours and embedded. The
	// page gets its "on this page" box; the search gets its sections.
	secs := sectionsOf(p.Slug, p.Title, src)
	return p, template.HTML(withTOC(body, secs)), secs, nil
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

// Handler serves GET /docs (the index), /docs/{page}, /docs/api and
// /docs/search. openapi is the server's OpenAPI document as served at
// /openapi.json.
func Handler(openapi []byte) http.Handler {
	get := sync.OnceValues(func() (*site, error) { return load(openapi) })
	mux := http.NewServeMux()
	mux.HandleFunc("GET /docs", func(w http.ResponseWriter, r *http.Request) {
		s, err := get()
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		var b bytes.Buffer
		_ = indexTmpl.Execute(&b, s.pages)
		writePage(w, r, "Documentation", template.HTML(b.String()))
	})
	mux.Handle("GET /docs/{$}", http.RedirectHandler("/docs", http.StatusMovedPermanently))
	mux.HandleFunc("GET /docs/search", searchHandler(get))
	mux.HandleFunc("GET /docs/api", func(w http.ResponseWriter, r *http.Request) {
		s, err := get()
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		writePage(w, r, "API reference", s.api)
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
			web.NotFound(w, r)
			return
		}
		title := slug
		for _, p := range s.pages {
			if p.Slug == slug {
				title = p.Title
			}
		}
		writePage(w, r, title, body)
	})
	return mux
}

var indexTmpl = template.Must(template.New("index").Parse(`<h1>Documentation</h1>
<p class="lede">Ratchet's guides, rendered from the Markdown files of the repository's <code>docs</code> directory, and the HTTP API reference.</p>
{{template "form" ""}}
<ul class="docs-index">
{{range .}}<li><h2><a href="/docs/{{.Slug}}">{{.Title}}</a></h2><p>{{.IntroHTML}}</p></li>
{{end}}<li><h2><a href="/docs/api">API reference</a></h2><p>Every route of the HTTP API with its keys, parameters, bodies and responses, from the server's OpenAPI document (<a href="/openapi.json">/openapi.json</a>).</p></li>
</ul>
`))

func init() { template.Must(indexTmpl.New("form").Parse(searchForm)) }

// tableScroll puts every table in a box that scrolls sideways by itself, so
// a wide table never widens the page on a phone. The box can take focus, so
// a keyboard can scroll it too; so can a code block, which scrolls sideways
// when its lines are longer than the page is wide (axe-core's
// scrollable-region-focusable). Each box is a region named by its number
// on the page, as landmarks of one role need names of their own
// (landmark-unique).
func tableScroll(body string) string {
	var b strings.Builder
	n := 0
	for {
		i := strings.Index(body, "<table>")
		if i < 0 {
			break
		}
		n++
		b.WriteString(body[:i])
		fmt.Fprintf(&b, `<div class="table-scroll" tabindex="0" role="region" aria-label="Table %d (scrolls sideways)"><table>`, n)
		body = body[i+len("<table>"):]
	}
	b.WriteString(body)
	return strings.NewReplacer("</table>", "</table></div>", "<pre>", `<pre tabindex="0">`).Replace(b.String())
}

// writePage serves a page of the documentation in the shared shell.
func writePage(w http.ResponseWriter, r *http.Request, title string, body template.HTML) {
	// goldmark escapes raw HTML in the Markdown, so "<table>" only ever
	// appears as a tag the renderer wrote.
	wrapped := tableScroll(string(body))
	web.WritePage(w, r, title, template.HTML("\n<div class=\"page docs-page\">\n<article class=\"docs\">\n"+wrapped+"</article>\n</div>\n"))
}
