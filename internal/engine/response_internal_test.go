package engine

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzResponseText: any body gives one clean line, within its bound, and
// a JSON body's words are never lost to folding.
func FuzzResponseText(f *testing.F) {
	for _, s := range []string{"", "plain text\nsecond line", `{"error":{"code":"x","list":[1,true,null]}}`, `[`, `{"a":1}{"b":2}`, "\xff\x00{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got := responseText(body)
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r") || len(got) > maxResponseInMessage {
			t.Fatalf("responseText(%q) = %q: want one valid line of at most %d bytes", body, got, maxResponseInMessage)
		}
		if strings.TrimSpace(body) != "" && got == "" && strings.TrimSpace(CleanText(body)) != "" {
			t.Fatalf("responseText(%q) is empty", body)
		}
	})
}
