package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/engine"
)

// TestBootstrapKeyMinimumDocumented: the README, every page of docs/ and
// `ratchet serve --help` give the shortest bootstrap key as
// engine.MinBootstrapKeyLen and as no other number. The pages once said 16
// in one place and 24 in another.
func TestBootstrapKeyMinimumDocumented(t *testing.T) {
	root := filepath.Join("..", "..")
	texts := map[string]string{}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/: %v", err)
	}
	for _, p := range append(pages, filepath.Join(root, "README.md")) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[filepath.Base(p)] = string(b)
	}
	out, _, code := run(t, "", "serve", "--help")
	if code != 0 {
		t.Fatalf("ratchet serve --help: exit %d", code)
	}
	texts["ratchet serve --help"] = out

	want := strconv.Itoa(engine.MinBootstrapKeyLen)
	number := regexp.MustCompile(`(\d+) characters|(?:at least|minimum(?: of)?) (\d+)`)
	mentions := map[string]int{}
	for name, text := range texts {
		for _, unit := range units(text) {
			if !strings.Contains(strings.ToLower(unit), "bootstrap") {
				continue
			}
			for _, m := range number.FindAllStringSubmatch(unit, -1) {
				n := m[1] + m[2]
				if n != want {
					t.Errorf("%s gives the bootstrap key minimum as %s, the code as %s (engine.MinBootstrapKeyLen):\n%s", name, n, want, unit)
				}
				mentions[name]++
			}
		}
	}
	// The places that must state it, so the check above cannot pass by
	// finding nothing.
	for _, name := range []string{"operations.md", "ratchet serve --help"} {
		if mentions[name] == 0 {
			t.Errorf("%s does not give the bootstrap key minimum (%s characters)", name, want)
		}
	}
}

// units splits Markdown or help text into the pieces a sentence about the
// bootstrap key lives in: paragraphs, and within them each table row and
// each flag of a help text (a line starting with "|" or "-") on its own.
func units(text string) []string {
	var out []string
	for _, para := range strings.Split(text, "\n\n") {
		var cur []string
		for _, l := range strings.Split(para, "\n") {
			if t := strings.TrimSpace(l); (strings.HasPrefix(t, "|") || strings.HasPrefix(t, "-")) && len(cur) > 0 {
				out = append(out, strings.Join(cur, "\n"))
				cur = nil
			}
			cur = append(cur, l)
		}
		out = append(out, strings.Join(cur, "\n"))
	}
	return out
}
