package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	mddocs "github.com/getratchet/ratchet/docs"
	"github.com/getratchet/ratchet/internal/docs"
)

// headingID is the id goldmark gives a heading; the docs are served with
// these ids, so a link's fragment must be one of them.
var headingID = regexp.MustCompile(`<h[1-6] id="([^"]+)"`)

// anchors renders each page of docs/ and returns its heading ids by page
// name ("operations").
func anchors(t *testing.T) map[string]map[string]bool {
	t.Helper()
	names, err := fs.Glob(mddocs.FS, "*.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for _, name := range names {
		src, err := fs.ReadFile(mddocs.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(name, ".md")] = idsOf(t, src)
	}
	return out
}

func idsOf(t *testing.T, src []byte) map[string]bool {
	t.Helper()
	html, err := docs.Render(src)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range headingID.FindAllStringSubmatch(html, -1) {
		ids[m[1]] = true
	}
	return ids
}

// pageLink matches a link to a docs page with a fragment, as Markdown
// ("operations.md#workers", "docs/operations.md#workers") and as the
// served address in Go strings and scripts ("/docs/operations#workers").
var pageLink = regexp.MustCompile(`(?:\b|/docs/)([a-z][a-z-]*)(\.md)?#([a-z0-9][a-z0-9-]*)`)

// TestDocLinksResolve checks every link to a section of a docs page, in the
// pages themselves, the Markdown files at the root and the code (Go,
// scripts, pages): the page exists and has a heading with that id. A
// section renamed or moved to another page fails here rather than leaving
// a link that lands at the top of a page.
func TestDocLinksResolve(t *testing.T) {
	pages := anchors(t)
	root := filepath.Join("..", "..")
	selfLink := regexp.MustCompile(`\]\(#([a-z0-9-]+)\)`)
	checked := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".md", ".go", ".js", ".ts", ".py", ".html":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for _, m := range pageLink.FindAllStringSubmatchIndex(string(b), -1) {
			s := string(b)
			name, frag := s[m[2]:m[3]], s[m[6]:m[7]]
			served := m[0] >= 0 && strings.HasPrefix(s[m[0]:], "/docs/")
			if m[4] < 0 && !served {
				continue // "word#x" without .md or /docs/ is not a link to a page
			}
			ids, ok := pages[name]
			if !ok {
				if name == "api" || strings.ToUpper(name) == name || !strings.HasPrefix(rel, "docs") && !served {
					continue // not a docs page (README.md#…, CHANGELOG.md#… and the like)
				}
				t.Errorf("%s: link to %s#%s, but docs/%s.md does not exist", rel, name, frag, name)
				continue
			}
			checked++
			if !ids[frag] {
				t.Errorf("%s: link to %s#%s, but docs/%s.md has no heading with that id", rel, name, frag, name)
			}
		}
		if filepath.Ext(p) == ".md" {
			own := idsOf(t, b)
			for _, m := range selfLink.FindAllStringSubmatch(string(b), -1) {
				checked++
				if !own[m[1]] {
					t.Errorf("%s: link to #%s, but the file has no heading with that id", rel, m[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d links; the walk missed the docs", checked)
	}
}
