// Package traceparent parses the two headers of W3C Trace Context
// (https://www.w3.org/TR/trace-context/): traceparent, which names a trace
// and the span a job was enqueued from, and tracestate, the vendors' list
// that travels with it. A job keeps both as given and hands them on to its
// workers and deliveries, so the parser is strict: what it accepts any
// tracing library downstream accepts too. Standard library only, no I/O.
package traceparent

import (
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
)

// Allowed says what Parse accepts, for field errors.
const Allowed = `must be a W3C traceparent: "00-", 32 lowercase hex digits (the trace id, not all zero), "-", ` +
	`16 lowercase hex digits (the parent span id, not all zero), "-" and 2 lowercase hex digits (the flags), ` +
	`e.g. "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"; absent for none`

// StateAllowed says what ValidState accepts, for field errors.
const StateAllowed = `must be a W3C tracestate: at most 512 bytes, up to 32 comma-separated "key=value" members ` +
	`(keys of lowercase letters, digits and _-*/ with an optional "@vendor"; values of printable ASCII without "," or "="), ` +
	`and only with a traceparent; absent for none`

// Len is the length of a version 00 traceparent.
const Len = 55

// MaxStateLen bounds a tracestate (the W3C's limit for propagation).
const MaxStateLen = 512

// Parent is a parsed traceparent.
type Parent struct {
	TraceID [16]byte
	SpanID  [8]byte
	Flags   byte
}

// Sampled reports whether the sampled flag is set.
func (p Parent) Sampled() bool { return p.Flags&1 == 1 }

// String is the traceparent header value of p (version 00).
func (p Parent) String() string {
	var b [Len]byte
	copy(b[:], "00-")
	hex.Encode(b[3:35], p.TraceID[:])
	b[35] = '-'
	hex.Encode(b[36:52], p.SpanID[:])
	b[52] = '-'
	hex.Encode(b[53:], []byte{p.Flags})
	return string(b[:])
}

var (
	errLen     = errors.New("not 55 characters")
	errVersion = errors.New("the version is not 00")
	errFormat  = errors.New("not four dash-separated lowercase hex fields")
	errZero    = errors.New("an all-zero trace id or span id")
)

// Parse reads a version 00 traceparent, refusing any other version, upper
// case hex, an all-zero trace or span id and anything around the value.
func Parse(s string) (Parent, error) {
	var p Parent
	switch {
	case len(s) != Len:
		return p, errLen
	case s[:3] != "00-":
		if lowerHex(s[:2]) && s[2] == '-' {
			return p, errVersion
		}
		return p, errFormat
	case s[35] != '-' || s[52] != '-' || !lowerHex(s[3:35]) || !lowerHex(s[36:52]) || !lowerHex(s[53:]):
		return p, errFormat
	}
	hex.Decode(p.TraceID[:], []byte(s[3:35]))
	hex.Decode(p.SpanID[:], []byte(s[36:52]))
	var f [1]byte
	hex.Decode(f[:], []byte(s[53:]))
	p.Flags = f[0]
	if p.TraceID == [16]byte{} || p.SpanID == [8]byte{} {
		return p, errZero
	}
	return p, nil
}

func lowerHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// member is one list-member of a tracestate (W3C Trace Context §3.3.1).
var member = regexp.MustCompile(`^(?:[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$`)

// ValidState reports whether s is a tracestate Ratchet keeps: "" (none),
// or at most MaxStateLen bytes of at most 32 valid members, each key once,
// with spaces or tabs only around the commas.
func ValidState(s string) bool {
	if len(s) > MaxStateLen {
		return false
	}
	if s == "" {
		return true
	}
	seen := map[string]bool{}
	for m := range strings.SplitSeq(s, ",") {
		m = strings.Trim(m, " \t")
		if m == "" { // empty members may be dropped, but we keep the value as given
			continue
		}
		if !member.MatchString(m) {
			return false
		}
		key, _, _ := strings.Cut(m, "=")
		if seen[key] {
			return false
		}
		seen[key] = true
	}
	return len(seen) > 0 && len(seen) <= 32
}
