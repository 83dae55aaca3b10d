package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/engine"
)

// encoding/json turns invalid UTF-8 in a string, and a \u escape of a lone
// surrogate ("\udcff"), into U+FFFD without a word: "acct\xff" and
// "acct\xfe" would both arrive as "acct\uFFFD", one tenant, one
// idempotency key. checkText sees only the decoded text, so the rule for
// identifiers is also applied here, to the request's raw bytes, before
// that replacement: every string (member name or value) is read as sent,
// and one that does not decode to the text it spells is refused unless it
// lands in free text (tagged text:"free", which is cleaned anyway) or in
// raw JSON (a payload or schema: the job's own data).

// badString is a string of a request that does not decode to the text it
// spells: path names it as checkText does ("jobs[3].flowKey"), shown is
// the string as sent, bad bytes as \xNN.
type badString struct{ path, shown string }

// rawTextErrors adds an error for each string of the JSON document body
// that is not valid text and is read into a field of t that is neither
// free text nor raw JSON. body must already have decoded without error.
// A field already refused (a NUL, say) is not named twice, and a secret is
// never echoed.
func rawTextErrors(body []byte, t reflect.Type, errs *field.Errors) {
	if !mayHoldBadText(body) {
		return
	}
	named := map[string]bool{}
	for _, e := range *errs {
		named[e.Field] = true
	}
	for _, b := range badStrings(body, t) {
		if named[b.path] {
			continue
		}
		named[b.path] = true
		if strings.HasSuffix(strings.ToLower(b.path), "secret") {
			b.shown = "(hidden)"
		}
		errs.Add(b.path, b.shown, textAllowed)
	}
}

// mayHoldBadText reports whether body can hold a string that is not the
// text it spells: it has invalid UTF-8, or a \u escape (a lone surrogate
// is one). Most bodies have neither and skip the walk, so the claims and
// reports on the hot path pay one pass of utf8.Valid and one of
// bytes.Contains.
func mayHoldBadText(body []byte) bool {
	return !utf8.Valid(body) || bytes.Contains(body, []byte(`\u`))
}

// badStrings walks the raw JSON document doc alongside the Go type t it is
// decoded into (nil: check everything) and returns its bad strings.
func badStrings(doc []byte, t reflect.Type) []badString {
	s := rawScanner{b: doc}
	s.value("", t, 0)
	return s.bad
}

// maxRawDepth bounds the walk's nesting, as encoding/json bounds its own.
const maxRawDepth = 10000

// rawScanner reads a JSON document that has already been decoded once, so
// it assumes the grammar holds; on bytes that break it, it stops early
// rather than fail.
type rawScanner struct {
	b   []byte
	i   int
	bad []badString
}

func (s *rawScanner) ws() {
	for s.i < len(s.b) && strings.IndexByte(" \t\r\n", s.b[s.i]) >= 0 {
		s.i++
	}
}

// skipped reports whether a value of type t is not an identifier: raw
// JSON, whose text is the job's own.
func skipped(t reflect.Type) bool { return t == rawMessageType }

func (s *rawScanner) value(path string, t reflect.Type, depth int) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s.ws()
	if s.i >= len(s.b) || depth > maxRawDepth {
		s.i = len(s.b)
		return
	}
	switch s.b[s.i] {
	case '{':
		s.object(path, t, depth)
	case '[':
		s.array(path, t, depth)
	case '"':
		if _, shown, ok := s.str(); !ok && !skipped(t) {
			s.bad = append(s.bad, badString{path, shown})
		}
	default: // a number, true, false or null
		start := s.i
		for s.i < len(s.b) && strings.IndexByte(",:}] \t\r\n", s.b[s.i]) < 0 {
			s.i++
		}
		if s.i == start {
			s.i = len(s.b)
		}
	}
}

func (s *rawScanner) object(path string, t reflect.Type, depth int) {
	s.i++ // {
	for {
		s.ws()
		switch {
		case s.i >= len(s.b):
			return
		case s.b[s.i] == '}':
			s.i++
			return
		case s.b[s.i] == ',':
			s.i++
			continue
		case s.b[s.i] != '"':
			s.i = len(s.b)
			return
		}
		raw, shown, ok := s.str()
		var name string
		_ = json.Unmarshal(raw, &name)
		child, ct := memberOf(t, name)
		if !ok {
			child = shown
			if !skipped(t) {
				s.bad = append(s.bad, badString{prefixed(path, shown), shown})
			}
		}
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ':' {
			s.i++
		}
		s.value(prefixed(path, child), ct, depth+1)
	}
}

func (s *rawScanner) array(path string, t reflect.Type, depth int) {
	var et reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && !skipped(t) {
		et = t.Elem()
	} else if skipped(t) {
		et = t // inside raw JSON, everything is raw JSON
	}
	s.i++ // [
	for n := 0; ; n++ {
		s.ws()
		switch {
		case s.i >= len(s.b):
			return
		case s.b[s.i] == ']':
			s.i++
			return
		case s.b[s.i] == ',':
			s.i++
		}
		s.value(path+"["+strconv.Itoa(n)+"]", et, depth+1)
	}
}

// memberOf is the name and type a member called name of an object of type
// t is read into: a struct field by its JSON name (matched as
// encoding/json matches it), a map's element, or nil for untyped JSON. A
// member that lands in free text or raw JSON gets rawMessageType: none of
// its strings is checked.
func memberOf(t reflect.Type, name string) (string, reflect.Type) {
	switch {
	case t == nil:
		return name, nil
	case skipped(t):
		return name, t
	case t.Kind() == reflect.Map:
		return name, t.Elem()
	case t.Kind() != reflect.Struct:
		return name, nil
	}
	f, ok := jsonField(t, name)
	switch {
	case !ok:
		return name, nil
	case f.Tag.Get("text") == "free":
		return name, rawMessageType
	}
	return name, f.Type
}

// jsonField finds the field of struct t that member name decodes into,
// looking into embedded structs.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		jsonName, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && jsonName == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if g, ok := jsonField(ft, name); ok {
					return g, true
				}
			}
			continue
		}
		if !f.IsExported() || jsonName == "-" {
			continue
		}
		if jsonName == "" {
			jsonName = f.Name
		}
		if strings.EqualFold(jsonName, name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// str reads the string literal at s.i: its raw bytes (quotes included),
// how it was sent and whether it is valid text (engine.ScanJSONString).
func (s *rawScanner) str() (raw []byte, shown string, ok bool) {
	n, shown, ok := engine.ScanJSONString(s.b[s.i:])
	raw = s.b[s.i : s.i+n]
	s.i += n
	return raw, shown, ok
}
