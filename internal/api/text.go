package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/engine"
)

// One rule for text at the boundary, the same whatever the database:
// PostgreSQL refuses NUL characters and invalid UTF-8 in text where SQLite
// stores them, so the API decides before either sees them.
//
//   - Identifiers and names (idempotency keys, worker ids, lease tokens,
//     names, path segments, query parameters) must be valid UTF-8 without
//     NUL; otherwise the request is refused with a 400 naming the field.
//   - Free text (a report's message and the provider's headers, a tool's
//     description), tagged text:"free" in package wire, is cleaned instead:
//     NUL and other control characters but tab and newline are dropped and
//     invalid bytes become U+FFFD, so one worker's odd error text never
//     costs a report.
//   - Raw JSON (payloads, schemas) must be valid UTF-8.

const textAllowed = "must be valid UTF-8 text without NUL characters"

// badText reports whether s breaks the rule for identifiers.
func badText(s string) bool { return strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) }

// showText renders a refused value for an error: quoted, with NUL and
// invalid bytes escaped, so the error body is valid text.
func showText(s string) string { return strconv.QuoteToASCII(s) }

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// checkText walks a decoded request: it cleans free text in place and
// collects the identifiers that break the rule.
func checkText(v reflect.Value, name string, free bool, errs *field.Errors) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			checkText(v.Elem(), name, free, errs)
		}
	case reflect.String:
		switch s := v.String(); {
		case free:
			v.SetString(engine.CleanText(s))
		case badText(s):
			errs.Add(name, showText(s), textAllowed)
		}
	case reflect.Slice:
		if v.Type() == rawMessageType {
			if !utf8.Valid(v.Bytes()) {
				errs.Add(name, "JSON with invalid UTF-8", "must be valid UTF-8 JSON")
			}
			return
		}
		for i := range v.Len() {
			checkText(v.Index(i), name+"["+strconv.Itoa(i)+"]", free, errs)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String || v.Type().Elem().Kind() != reflect.String {
			return
		}
		clean := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			k, val := iter.Key().String(), iter.Value().String()
			if free {
				clean.SetMapIndex(reflect.ValueOf(engine.CleanText(k)).Convert(v.Type().Key()), reflect.ValueOf(engine.CleanText(val)).Convert(v.Type().Elem()))
				continue
			}
			if badText(k) || badText(val) {
				errs.Add(name+"."+showText(k), showText(val), textAllowed)
			}
		}
		if free && v.CanSet() {
			v.Set(clean)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			jsonName, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if jsonName == "-" {
				continue
			}
			child := name
			if !f.Anonymous {
				if jsonName == "" {
					jsonName = f.Name
				}
				child = prefixed(name, jsonName)
			}
			checkText(v.Field(i), child, f.Tag.Get("text") == "free", errs)
		}
	}
}

func prefixed(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// checkPathText applies the identifier rule to a request's path values.
func checkPathText(r *http.Request, template string) error {
	var errs field.Errors
	for _, m := range pathParams.FindAllStringSubmatch(template, -1) {
		if v := r.PathValue(m[1]); badText(v) {
			errs.Add(m[1], showText(v), textAllowed)
		}
	}
	return errs.Err()
}
