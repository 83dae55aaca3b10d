package docs

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// section is a part of a docs page under one heading (or before the first
// one), as plain text for the search.
type section struct {
	Slug, Page    string // the page's slug and title
	ID, Heading   string // the heading's id and text; "" before the first
	Text          string // the section's text, headings excluded
	level         int
	lowerHeading  string
	lowerText     string
	lowerPageName string
}

// sectionsOf splits a page's Markdown into its sections (by h2 and h3), as
// plain text: no Markdown syntax, code blocks kept. It parses with the
// same parser as Render, so the ids match the rendered headings.
func sectionsOf(slug, title string, src []byte) []section {
	doc := md.Parser().Parse(text.NewReader(src))
	cur := section{Slug: slug, Page: title}
	var out []section
	var b strings.Builder
	flush := func() {
		cur.Text = strings.Join(strings.Fields(b.String()), " ")
		if cur.Text != "" || cur.Heading != "" {
			out = append(out, cur)
		}
		b.Reset()
	}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok && (h.Level == 2 || h.Level == 3) {
			flush()
			id, _ := h.AttributeString("id")
			ids, _ := id.([]byte)
			cur = section{Slug: slug, Page: title, ID: string(ids), Heading: plainText(h, src), level: h.Level}
			continue
		}
		if h, ok := n.(*ast.Heading); ok && h.Level == 1 {
			continue
		}
		b.WriteString(plainText(n, src))
		b.WriteString(" ")
	}
	flush()
	for i := range out {
		out[i].lowerHeading = strings.ToLower(out[i].Heading)
		out[i].lowerText = strings.ToLower(out[i].Text)
		out[i].lowerPageName = strings.ToLower(out[i].Page)
	}
	return out
}

// plainText is the text of a node and its children.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch x := c.(type) {
		case *ast.Text:
			b.Write(x.Segment.Value(src))
			if x.SoftLineBreak() || x.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(x.Value)
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := c.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(src))
			}
			b.WriteByte(' ')
			return ast.WalkSkipChildren, nil
		case *ast.Paragraph, *ast.ListItem, *ast.TextBlock, *east.TableCell:
			b.WriteByte(' ')
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// MaxQuery bounds a docs search, in characters.
const MaxQuery = 200

// hit is one section that matched a search, with an excerpt around the
// first match: Before, Match and After.
type hit struct {
	Slug, Page, ID, Heading string
	Before, Match, After    string
}

// maxHits bounds the hits one search lists.
const maxHits = 50

// parseQuery checks a search's q and splits it into lowercase words. An
// error names the parameter, its value and what is allowed.
func parseQuery(q string) ([]string, error) {
	if !utf8.ValidString(q) {
		return nil, fmt.Errorf("q: %q is not valid UTF-8; a search is text", q)
	}
	if n := utf8.RuneCountInString(q); n > MaxQuery {
		return nil, fmt.Errorf("q: %d characters is too long; at most %d are allowed", n, MaxQuery)
	}
	return strings.Fields(strings.ToLower(q)), nil
}

// search finds the sections holding every word, in the order of the
// pages and their sections; a match in the heading or the page's title
// counts.
func search(secs []section, words []string) (hits []hit, more bool) {
	if len(words) == 0 {
		return nil, false
	}
	for _, s := range secs {
		all := true
		for _, w := range words {
			if !strings.Contains(s.lowerText, w) && !strings.Contains(s.lowerHeading, w) && !strings.Contains(s.lowerPageName, w) {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		if len(hits) == maxHits {
			return hits, true
		}
		h := hit{Slug: s.Slug, Page: s.Page, ID: s.ID, Heading: s.Heading}
		h.Before, h.Match, h.After = excerpt(s.Text, s.lowerText, words)
		hits = append(hits, h)
	}
	return hits, false
}

// excerpt is about 160 characters of text around the first word found in
// it (lower is text in lowercase, of the same length in bytes), split at
// the match; the text's start when no word is in it.
func excerpt(txt, lower string, words []string) (before, match, after string) {
	at, n := -1, 0
	for _, w := range words {
		if i := strings.Index(lower, w); i >= 0 && (at < 0 || i < at) && len(lower) == len(txt) {
			at, n = i, len(w)
		}
	}
	if at < 0 {
		return "", "", cut(txt, 0, 160)
	}
	from := max(0, at-70)
	for from > 0 && !utf8.RuneStart(txt[from]) {
		from--
	}
	before = txt[from:at]
	if from > 0 {
		before = "…" + before
	}
	return before, txt[at : at+n], cut(txt, at+n, 90)
}

// cut is up to n bytes of s from i, ended at a rune's start, with "…"
// when s goes on.
func cut(s string, i, n int) string {
	end := min(len(s), i+n)
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end--
	}
	if end < len(s) {
		return s[i:end] + "…"
	}
	return s[i:end]
}

// searchForm is the docs' search box: on the index, on every page's "on
// this page" box and on the results.
const searchForm = `<form class="docs-search" role="search" action="/docs/search" method="get"><label for="docs-q">Search the docs</label> <input id="docs-q" name="q" type="search" maxlength="200" value="{{.}}" spellcheck="false"> <button type="submit" class="button small">Search</button></form>`

var searchTmpl = template.Must(template.New("search").Parse(`<h1>Search the documentation</h1>
` + `{{template "form" .Q}}` + `
{{if .Error}}<p class="field-error" id="search-error" role="alert">{{.Error}}</p>
{{else if not .Words}}<p id="search-none">Type a word or two, such as <em>Retry-After</em> or <em>circuit</em>.</p>
{{else if not .Hits}}<p id="search-none">Nothing in the documentation has all of “{{.Q}}”.</p>
{{else}}<p id="search-count">{{len .Hits}}{{if .More}} or more{{end}} section{{if ne (len .Hits) 1}}s{{end}} with all of “{{.Q}}”{{if .More}}; the first {{len .Hits}} are listed{{end}}.</p>
<ol class="search-hits">
{{range .Hits}}<li><a href="/docs/{{.Slug}}{{if .ID}}#{{.ID}}{{end}}">{{.Page}}{{if .Heading}} › {{.Heading}}{{end}}</a><p>{{.Before}}<mark>{{.Match}}</mark>{{.After}}</p></li>
{{end}}</ol>{{end}}
`))

func init() { template.Must(searchTmpl.New("form").Parse(searchForm)) }

// renderSearch is the results page of q over the sections, and the
// status to answer with (400 for a query the search refuses).
func renderSearch(secs []section, q string) (template.HTML, int) {
	var data struct {
		Q, Error string
		Words    []string
		Hits     []hit
		More     bool
	}
	data.Q = q
	status := 200
	words, err := parseQuery(q)
	if err != nil {
		data.Error, data.Q, status = err.Error(), "", 400
	} else {
		data.Words = words
		data.Hits, data.More = search(secs, words)
	}
	var b bytes.Buffer
	if err := searchTmpl.Execute(&b, data); err != nil {
		return template.HTML(template.HTMLEscapeString(err.Error())), 500
	}
	return template.HTML(b.String()), status
}

var tocTmpl = template.Must(template.New("toc").Parse(`<nav class="toc" aria-label="On this page">
<p class="toc-title">On this page</p>
<ol>{{range .}}<li><a href="#{{.ID}}">{{.Heading}}</a></li>{{end}}</ol>
` + `{{template "form" ""}}` + `
</nav>
`))

func init() { template.Must(tocTmpl.New("form").Parse(searchForm)) }

// withTOC puts the "on this page" box (the page's h2 sections, and the
// search box) after the page's title and first paragraph.
func withTOC(body string, secs []section) string {
	var h2 []section
	for _, s := range secs {
		if s.level == 2 && s.ID != "" {
			h2 = append(h2, s)
		}
	}
	if len(h2) < 2 {
		return body
	}
	var b bytes.Buffer
	if err := tocTmpl.Execute(&b, h2); err != nil {
		return body
	}
	at := strings.Index(body, "</h1>")
	if at < 0 {
		return b.String() + body
	}
	at += len("</h1>")
	if p := strings.Index(body[at:], "</p>"); p >= 0 && !strings.Contains(body[at:at+p], "<h2") {
		at += p + len("</p>")
	}
	return body[:at] + "\n" + b.String() + body[at:]
}

// searchHandler serves GET /docs/search?q=…: the sections of every page
// holding all of q's words; 400 for a q it refuses.
func searchHandler(get func() (*site, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := get()
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		body, status := renderSearch(s.sections, r.URL.Query().Get("q"))
		if status != http.StatusOK {
			w.WriteHeader(status)
		}
		writePage(w, r, "Search the documentation", body)
	}
}
