package wire

import "unicode/utf8"

// HeaderValueAllowed says what HeaderValueOK accepts, for error messages.
const HeaderValueAllowed = "must be usable as an HTTP header value: no control characters (NUL, tab, CR, LF, DEL and the rest of U+0000–U+001F and U+007F–U+009F) and no space at either end"

// HeaderValueOK reports whether s can travel unchanged as an HTTP header
// field value (RFC 9110 §5.5): the idempotency key goes to the provider as
// the Idempotency-Key header, by Ratchet's delivery or by a worker, so a key
// that no HTTP client can send — or that a receiver would trim into
// another key — is refused where it enters. Text beyond ASCII is allowed
// (it travels as UTF-8 bytes); invalid UTF-8 is not.
func HeaderValueOK(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	if s != "" && (s[0] == ' ' || s[len(s)-1] == ' ') {
		return false
	}
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return false
		}
	}
	return true
}
