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
// the error (field.Missing when nothing).
func flowKeyAt(payload json.RawMessage, tokens []string) (key string, shown string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", "invalid JSON", false
	}
	for _, tok := range tokens {
		switch x := v.(type) {
		case map[string]any:
			m, found := x[tok]
			if !found {
				return "", field.Missing, false
			}
			v = m
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || tok != strconv.Itoa(i) {
				return "", field.Missing, false
			}
			v = x[i]
		default:
			return "", field.Missing, false
		}
	}
	switch x := v.(type) {
	case string:
		return x, "", true
	case json.Number:
		if n := x.String(); strings.Trim(strings.TrimPrefix(n, "-"), "0123456789") == "" {
			return n, "", true
		}
	}
	b, _ := json.Marshal(v)
	return "", backoff.ShowJSON(b), false
}
