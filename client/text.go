package client

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getratchet/ratchet/field"
)

// encoding/json writes invalid UTF-8 in a string as U+FFFD without a word,
// so "acct\xff" and "acct\xfe" would reach the server as one flow key and
// one idempotency key. The server refuses such keys as it receives them;
// a request of this client cannot say what it was given once encoded, so
// it is checked before: a string that is not valid UTF-8 is refused, with
// the field named, unless it is free text (tagged text:"free" in package
// wire), which the server cleans anyway.

// textAllowed says what a request's strings must be.
const textAllowed = "must be valid UTF-8 text (encoded, invalid bytes would become U+FFFD)"

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// checkRequestText returns a field error for each string of the request
// in that is not valid UTF-8, or nil.
func checkRequestText(in any) error {
	var errs field.Errors
	walkText(reflect.ValueOf(in), "", &errs)
	return errs.Err()
}

func walkText(v reflect.Value, name string, errs *field.Errors) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkText(v.Elem(), name, errs)
		}
	case reflect.String:
		if s := v.String(); !utf8.ValidString(s) {
			errs.Add(name, strconv.QuoteToASCII(s), textAllowed)
		}
	case reflect.Slice, reflect.Array:
		if v.Type() == rawMessageType {
			return // the payload: encoding/json refuses it whole if it is not JSON
		}
		for i := range v.Len() {
			walkText(v.Index(i), name+"["+strconv.Itoa(i)+"]", errs)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := iter.Key().String()
			if !utf8.ValidString(k) {
				k = strconv.QuoteToASCII(k)
				errs.Add(joinName(name, k), k, textAllowed)
			}
			walkText(iter.Value(), joinName(name, k), errs)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			jsonName, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || jsonName == "-" || f.Tag.Get("text") == "free" {
				continue
			}
			child := name
			if !f.Anonymous || jsonName != "" {
				if jsonName == "" {
					jsonName = f.Name
				}
				child = joinName(name, jsonName)
			}
			walkText(v.Field(i), child, errs)
		}
	}
}

func joinName(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}
