package house

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// codeSpan is a backticked span of Markdown; mdLink a link's target.
var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	mdLink   = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)\s]*)?\)`)
	// repoPath is a span that names a file or folder of the repository:
	// lowercase, slash-separated, with a slash or a file extension.
	repoPath = regexp.MustCompile(`^\.?[a-z][a-z0-9_.-]*(/[a-z0-9_.-]+)*/?$`)
	fileExt  = regexp.MustCompile(`\.(go|md|json|js|mjs|css|py|sql|sh|yml|yaml|toml)$`)
	testName = regexp.MustCompile(`^(Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*$`)
)

// namesIn returns the repository paths and the Go test names a Markdown
// file names in code spans and links.
func namesIn(src string) (paths, tests []string) {
	for _, m := range codeSpan.FindAllStringSubmatch(src, -1) {
		s := m[1]
		switch {
		case testName.MatchString(s):
			tests = append(tests, s)
		case repoPath.MatchString(s) && (strings.Contains(s, "/") || fileExt.MatchString(s)):
			paths = append(paths, s)
		}
	}
	for _, m := range mdLink.FindAllStringSubmatch(src, -1) {
		if !strings.Contains(m[1], "://") {
			paths = append(paths, m[1])
		}
	}
	return paths, tests
}

// definedTests returns the name of every Test, Fuzz and Benchmark function
// of the repository's Go test files.
func definedTests(t *testing.T, root string) map[string]bool {
	t.Helper()
	def := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range def.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestContributingNamesExist reads CONTRIBUTING.md and fails for every
// path it names (in a code span or a link) that does not exist and every
// Go test it names that no test file defines, so the walks cannot point at
// a file that moved or a test that was renamed.
func TestContributingNamesExist(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths, tests := namesIn(string(b))
	if len(paths) < 20 || len(tests) < 10 {
		t.Fatalf("found only %d paths and %d tests in CONTRIBUTING.md", len(paths), len(tests))
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Errorf("CONTRIBUTING.md names %s, which does not exist", p)
		}
	}
	defined := definedTests(t, root)
	for _, name := range tests {
		if !defined[name] {
			t.Errorf("CONTRIBUTING.md names %s, which no _test.go file defines", name)
		}
	}
}

// TestDocSizes keeps the documents a reader scans within a size that can
// be scanned: the operator's manual, the contributor's guide. Measurements
// belong in docs/performance.md, narrative in commit messages.
func TestDocSizes(t *testing.T) {
	limits := map[string]int{
		"docs/operations.md": 40000,
		"CONTRIBUTING.md":    12000,
	}
	for name, most := range limits {
		b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCount(b); n > most {
			t.Errorf("%s is %d characters, more than %d: move measurements to docs/performance.md or reference to a page of its own", name, n, most)
		}
	}
}
