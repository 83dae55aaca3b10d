package engine

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// ScanJSONString reads the JSON string literal at the start of b (b[0] is
// its opening quote) as sent, before encoding/json turns invalid UTF-8 and
// the \u escape of a lone surrogate ("\udcff") into U+FFFD without a
// word. n is the literal's length in bytes, quotes included; shown is the
// literal as sent, each invalid byte as \xNN and escapes as given, for an
// error; ok reports whether it decodes to the text it spells.
func ScanJSONString(b []byte) (n int, shown string, ok bool) {
	i := 1 // the opening quote
	var out strings.Builder
	out.WriteByte('"')
	ok = true
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			out.WriteByte('"')
			return i + 1, out.String(), ok
		case c == '\\':
			n := escapeLen(b[i:])
			if loneSurrogate(b[i:]) {
				ok = false
			}
			out.Write(b[i : i+n])
			i += n
		case c < utf8.RuneSelf:
			out.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				ok = false
				out.WriteString(`\x` + strconv.FormatUint(uint64(c)>>4, 16) + strconv.FormatUint(uint64(c)&15, 16))
			} else {
				out.Write(b[i : i+size])
			}
			i += size
		}
	}
	return len(b), out.String(), ok
}

// escapeLen is the length of the escape at the start of b: 6 for \uXXXX
// (12 for a surrogate pair), else 2, cut to what b holds.
func escapeLen(b []byte) int {
	if len(b) < 2 || b[1] >= utf8.RuneSelf {
		return 1 // not an escape (the decoder refuses it): the byte after is read on its own
	}
	n := 2
	if hi, ok := hex4(b, 2); b[1] == 'u' && ok {
		n = 6
		if hi >= 0xD800 && hi < 0xDC00 && len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
			if lo, ok := hex4(b, 8); ok && lo >= 0xDC00 && lo < 0xE000 {
				n = 12
			}
		}
	}
	return min(n, len(b))
}

// loneSurrogate reports whether b starts with a \u escape of a surrogate
// that is not the first half of a pair.
func loneSurrogate(b []byte) bool {
	if len(b) < 2 || b[1] != 'u' {
		return false
	}
	v, ok := hex4(b, 2)
	if !ok || v < 0xD800 || v >= 0xE000 {
		return false
	}
	return escapeLen(b) != 12
}

// hex4 reads four hex digits of b at i.
func hex4(b []byte, i int) (rune, bool) {
	if len(b) < i+4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i:i+4]), 16, 16)
	return rune(v), err == nil
}
