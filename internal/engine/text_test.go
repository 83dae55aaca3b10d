package engine

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCleanText: whatever a worker sends as free text, what is stored is
// valid UTF-8 without NUL, at most the limit in bytes, and a prefix of the
// cleaned text.
func FuzzCleanText(f *testing.F) {
	for _, s := range []string{"", "ok", "nul\x00", "bad\xff\xfe", strings.Repeat("é", 1500), "tab\tnew\nline\r", "\x7f\x1b[31m"} {
		f.Add(s, 2000)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = max(0, n%4096)
		c := CleanText(s)
		cut := truncate(c, n)
		if !utf8.ValidString(c) || strings.ContainsRune(c, 0) {
			t.Fatalf("CleanText(%q) = %q", s, c)
		}
		if !utf8.ValidString(cut) || len(cut) > n || !strings.HasPrefix(c, cut) {
			t.Fatalf("truncate(%q, %d) = %q", c, n, cut)
		}
		if utf8.ValidString(s) && strings.IndexFunc(s, dropped) < 0 && c != s {
			t.Fatalf("clean text %q was changed to %q", s, c)
		}
	})
}
