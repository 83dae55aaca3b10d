package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/wire"
)

// A flow key (docs/flow-control.md) names the tenant, account or resource a
// job is made for. It is set at enqueue, or taken from the payload by the
// tool's flowKeyFrom, a JSON Pointer; an explicit key wins. It is text
// people and the limits to come compare exactly, so it follows the rule of
// the idempotency key: no control characters, no space at either end.

// FlowKeyAllowed says what ValidFlowKey accepts, for field errors.
const FlowKeyAllowed = "must be at most 128 bytes of UTF-8 text without control characters (U+0000–U+001F, U+007F–U+009F) and without a space at either end; empty for no key"

// ValidFlowKey reports whether s may be a job's flow key ("" is no key).
func ValidFlowKey(s string) bool {
	return len(s) <= wire.MaxFlowKeyLen && wire.HeaderValueOK(s)
}

// showFlowKey renders a refused key for an error: quoted, or its length
// when it is too long to repeat.
func showFlowKey(s string) string {
	if len(s) > wire.MaxFlowKeyLen {
		return "a key of " + strconv.Itoa(len(s)) + " bytes"
	}
	return strconv.QuoteToASCII(s)
}

// FlowKeyFromAllowed says what ParsePointer accepts as a tool's
// flowKeyFrom, for field errors.
const FlowKeyFromAllowed = `must be a JSON Pointer (RFC 6901) to a member of the payload, such as "/customer/id": "/" and then reference tokens separated by "/", "~0" for "~" and "~1" for "/" within a token; at most 200 bytes; absent or "" for none`

// ParsePointer splits a JSON Pointer (RFC 6901) into its reference
// tokens, unescaped ("~1" is "/", "~0" is "~"). The empty pointer, which
// RFC 6901 reads as the whole document, is refused: a flow key is a member
// of the payload, never the payload itself. So is a "~" not followed by 0
// or 1, invalid UTF-8, and a pointer over MaxFlowKeyFromLen bytes.
func ParsePointer(s string) ([]string, error) {
	switch {
	case s == "":
		return nil, errors.New("empty pointer")
	case len(s) > wire.MaxFlowKeyFromLen:
		return nil, errors.New("longer than " + strconv.Itoa(wire.MaxFlowKeyFromLen) + " bytes")
	case s[0] != '/':
		return nil, errors.New(`does not start with "/"`)
	case !validUTF8NoNUL(s):
		return nil, errors.New("not valid UTF-8 text without NUL")
	}
	tokens := strings.Split(s[1:], "/")
	for i, tok := range tokens {
		for j := 0; j < len(tok); j++ {
			if tok[j] == '~' && (j+1 == len(tok) || (tok[j+1] != '0' && tok[j+1] != '1')) {
				return nil, errors.New(`"~" must be followed by 0 or 1`)
			}
		}
		// ~1 first, then ~0: "~01" is "~1", never "/".
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// validUTF8NoNUL is the API's rule for identifiers: PostgreSQL stores
// neither NUL nor invalid UTF-8 in text.
func validUTF8NoNUL(s string) bool { return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) }

// flowKeyAt reads the flow key at the pointer tokens of payload: a string
// as it is, an integer as its decimal text. ok is false when the member is
// missing or holds another type; shown is then what was found there, for
// the error (field.Missing when nothing). A string that is not the text it
// spells (invalid UTF-8, a \u escape of a lone surrogate) is found but
// refused: key is "" and shown the string as sent, since encoding/json
// would read "acct\xff" and "acct\xfe" as one key.
func flowKeyAt(payload json.RawMessage, tokens []string) (key string, shown string, ok bool) {
	raw := json.RawMessage(bytes.TrimSpace(payload))
	if !json.Valid(raw) {
		return "", "invalid JSON", false
	}
	for _, tok := range tokens {
		next, found := memberAt(raw, tok)
		if !found {
			return "", field.Missing, false
		}
		raw = json.RawMessage(bytes.TrimSpace(next))
	}
	switch raw[0] {
	case '"':
		if _, shown, valid := ScanJSONString(raw); !valid {
			return "", shown, true
		}
		_ = json.Unmarshal(raw, &key)
		return key, "", true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if n := string(raw); strings.Trim(strings.TrimPrefix(n, "-"), "0123456789") == "" {
			return n, "", true
		}
	}
	return "", backoff.ShowJSON(raw), false
}

// memberAt is the member tok of the JSON object raw, or its element at the
// decimal index tok when raw is an array.
func memberAt(raw json.RawMessage, tok string) (json.RawMessage, bool) {
	switch raw[0] {
	case '{':
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil, false
		}
		v, found := m[tok]
		return v, found
	case '[':
		var a []json.RawMessage
		i, err := strconv.Atoi(tok)
		if json.Unmarshal(raw, &a) != nil || err != nil || i < 0 || i >= len(a) || tok != strconv.Itoa(i) {
			return nil, false
		}
		return a[i], true
	}
	return nil, false
}
