package classify

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxFingerprintLen is the most characters (runes) a fingerprint keeps.
const MaxFingerprintLen = 160

// fingerprintScan is how much of a message Fingerprint reads: what varies
// from one failure to the next sits anywhere, but a message longer than
// this is grouped by its start.
const fingerprintScan = 4096

var (
	uuidRE = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	// timeRE matches RFC 3339 / ISO 8601 date-times and bare dates and
	// clock times, whose every digit varies.
	timeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`)
	// quotedRE matches a double- or single-quoted or back-quoted value on
	// one line: a key, a path, a name the provider echoes back.
	quotedRE = regexp.MustCompile("\"[^\"\\n]*\"|'[^'\\n]*'|`[^`\\n]*`")
)

// Fingerprint normalises a failure message so that failures of one cause
// read alike: "timeout after 3012ms on req 8f3a" and "timeout after 2990ms
// on req 77b1" both become "timeout after <n>ms on req <hex>". In order:
//
//   - invalid UTF-8 becomes U+FFFD and control characters become spaces
//     (PostgreSQL stores neither NUL nor invalid UTF-8, so the fingerprint
//     is the same text on both drivers);
//   - UUIDs become <uuid>, date-times and clock times <time>, and quoted
//     values "…" (in their own quotes);
//   - every word with a digit: all digits is <n>, all hex digits (or 0x
//     and hex digits) <hex>,
//     digits then letters (a unit, "3012ms") is <n> and the letters, any
//     other (an id such as "req_8f3aZ") <id>;
//   - runs of white space become one space, the ends are trimmed, and at
//     most MaxFingerprintLen characters are kept.
//
// It is pure and idempotent: the fingerprint of a fingerprint is itself, and
// it never holds an ASCII digit.
func Fingerprint(msg string) string {
	if len(msg) > fingerprintScan {
		msg = msg[:fingerprintScan]
	}
	msg = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(msg, "\uFFFD"))
	// Each pattern runs only when the message holds a character it needs:
	// most messages have no UUID and no quotes, and a failure view
	// fingerprints thousands of them per read.
	if strings.Count(msg, "-") >= 4 {
		msg = uuidRE.ReplaceAllString(msg, "<uuid>")
	}
	if strings.Contains(msg, ":") || strings.Contains(msg, "-") {
		msg = timeRE.ReplaceAllString(msg, "<time>")
	}
	if strings.ContainsAny(msg, "\"'`") {
		msg = quotedRE.ReplaceAllStringFunc(msg, func(q string) string { return q[:1] + "…" + q[:1] })
	}
	msg = normaliseWords(msg)
	msg = strings.Join(strings.Fields(msg), " ")
	if utf8.RuneCountInString(msg) > MaxFingerprintLen {
		msg = strings.TrimSpace(string([]rune(msg)[:MaxFingerprintLen]))
	}
	return msg
}

// normaliseWords replaces each word (a run of letters, digits and
// underscores) that holds a digit, as Fingerprint says.
func normaliseWords(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	word := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	for len(s) > 0 {
		i := strings.IndexFunc(s, word)
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		j := strings.IndexFunc(s, func(r rune) bool { return !word(r) })
		if j < 0 {
			j = len(s)
		}
		b.WriteString(wordShape(s[:j]))
		s = s[j:]
	}
	return b.String()
}

// wordShape is the fingerprint of one word.
func wordShape(w string) string {
	if strings.IndexFunc(w, unicode.IsDigit) < 0 {
		return w
	}
	digits := strings.TrimLeftFunc(w, unicode.IsDigit)
	switch {
	case digits == "":
		return "<n>"
	case strings.Trim(w, "0123456789abcdefABCDEF") == "",
		len(w) > 2 && (w[:2] == "0x" || w[:2] == "0X") && strings.Trim(w[2:], "0123456789abcdefABCDEF") == "":
		return "<hex>"
	case len(digits) < len(w) && strings.IndexFunc(digits, func(r rune) bool { return !unicode.IsLetter(r) }) < 0:
		return "<n>" + digits
	}
	return "<id>"
}

// GroupID names a group of failures: the classification and the
// fingerprint of the message, hashed to 12 hex digits (SHA-256), so that a
// group can be named in a URL or a filter.
func GroupID(classification, fingerprint string) string {
	h := sha256.Sum256([]byte(classification + "\x00" + fingerprint))
	return hex.EncodeToString(h[:6])
}

// ValidGroupID says whether s has the form of a GroupID.
func ValidGroupID(s string) bool {
	if len(s) != 12 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}
