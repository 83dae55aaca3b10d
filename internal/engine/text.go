package engine

import (
	"strings"
	"unicode/utf8"
)

// CleanText is the boundary's rule for free text (report messages, provider
// headers, tool descriptions): NUL and the other control characters but tab
// and newline are dropped and invalid UTF-8 becomes U+FFFD, so the text is
// stored the same by SQLite and PostgreSQL (which refuses NUL and invalid
// UTF-8) and one worker's odd error text never costs a report.
func CleanText(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, dropped) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if dropped(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

func dropped(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f }

// truncate cuts clean text to at most n bytes on a character boundary, so
// what is stored is still valid UTF-8.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
