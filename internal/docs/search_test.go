package docs

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSearchDocs(t *testing.T) {
	s, err := load([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	words, err := parseQuery("  Retry-After  ")
	if err != nil || len(words) != 1 || words[0] != "retry-after" {
		t.Fatalf("parseQuery = %q, %v", words, err)
	}
	hits, _ := search(s.sections, words)
	if len(hits) == 0 {
		t.Fatal("no section of the docs mentions Retry-After")
	}
	for _, h := range hits {
		if !strings.EqualFold(h.Match, "retry-after") && !strings.Contains(strings.ToLower(h.Heading+h.Page), "retry-after") {
			t.Errorf("hit %s#%s matched %q", h.Slug, h.ID, h.Match)
		}
		if strings.Contains(h.Before+h.Match+h.After, "](") {
			t.Errorf("hit %s#%s shows Markdown: %q", h.Slug, h.ID, h.Before+h.Match+h.After)
		}
	}
	if hits, _ := search(s.sections, []string{"retry-after", "zzzqqq"}); len(hits) != 0 {
		t.Errorf("a word no page has still found %d sections", len(hits))
	}
	_, err = parseQuery(strings.Repeat("a", MaxQuery+1))
	if err == nil || err.Error() != "q: 201 characters is too long; at most 200 are allowed" {
		t.Errorf("a long query: %v", err)
	}
	if _, status := renderSearch(s.sections, strings.Repeat("é", MaxQuery+1)); status != 400 {
		t.Errorf("a long query answered %d", status)
	}
}

// FuzzSearchQuery: any query is refused with a message naming q, or
// searched; the excerpts are valid text and hold what matched.
func FuzzSearchQuery(f *testing.F) {
	s, err := load([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{}}`))
	if err != nil {
		f.Fatal(err)
	}
	for _, q := range []string{"Retry-After", "circuit open", "", "é", "\xff", strings.Repeat("x ", 120), "İ"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		words, err := parseQuery(q)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "q: ") {
				t.Fatalf("error %q does not name q", err)
			}
			return
		}
		hits, _ := search(s.sections, words)
		for _, h := range hits {
			if ex := h.Before + h.Match + h.After; !utf8.ValidString(ex) {
				t.Fatalf("excerpt %q is not valid UTF-8", ex)
			}
		}
		_, _ = renderSearch(s.sections, q)
	})
}
