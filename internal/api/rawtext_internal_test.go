package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/getratchet/ratchet/wire"
)

// FuzzBadStrings: the raw walk of a request never panics or hangs, shows
// every refused string as valid text, finds a bad string in every valid
// JSON document with invalid UTF-8 (which can only be in a string) and
// none in a valid one without \u escapes.
func FuzzBadStrings(f *testing.F) {
	for _, s := range []string{
		`{"flowKey":"acct` + "\xff" + `"}`,
		`{"jobs":[{"idempotencyKey":"\udcff"},{"flowKey":"\ud83e\udd80"}]}`,
		`{"payload":{"a":"\ud800"},"message":"` + "\xfe" + `"}`,
		`["\ud800\ud800", "\u00e9", 1, true, null, {"\udfff": 2}]`,
		`{"a":"\`, `"`, `[`, `{"a"`, `}`,
	} {
		f.Add([]byte(s))
	}
	types := []reflect.Type{nil, reflect.TypeFor[wire.JobBatch](), reflect.TypeFor[wire.ReportBatch]()}
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, typ := range types {
			bad := badStrings(doc, typ)
			if len(bad) > 0 && !mayHoldBadText(doc) {
				t.Fatalf("%q: the fast path would skip %v", doc, bad)
			}
			for _, b := range bad {
				if !utf8.ValidString(b.shown) || !utf8.ValidString(b.path) {
					t.Fatalf("shown %q at %q is not valid text", b.shown, b.path)
				}
			}
			if typ != nil || !json.Valid(doc) {
				continue
			}
			switch {
			case !utf8.Valid(doc) && len(bad) == 0:
				t.Fatalf("%q: invalid UTF-8 not found", doc)
			case utf8.Valid(doc) && !bytes.Contains(doc, []byte(`\u`)) && len(bad) > 0:
				t.Fatalf("%q: found %v in valid text", doc, bad)
			}
		}
	})
}

// TestBadStringsFollowTheType: strings in free text and in raw JSON are
// not refused; every identifier is, named by its path.
func TestBadStringsFollowTheType(t *testing.T) {
	doc := `{"reports":[{"jobId":1,"leaseToken":"t\udcff","message":"m` + "\xff" + `","headers":{"X` + "\xff" + `":"v\ud800"}}]}`
	got := badStrings([]byte(doc), reflect.TypeFor[wire.ReportBatch]())
	if len(got) != 1 || got[0].path != "reports[0].leaseToken" || got[0].shown != `"t\udcff"` {
		t.Errorf("got %+v, want only reports[0].leaseToken", got)
	}
	doc = `{"tool":"t@1","payload":{"a":"\udcff"},"flowKey":"k` + "\xff" + `"}`
	got = badStrings([]byte(doc), reflect.TypeFor[wire.JobEnqueue]())
	if len(got) != 1 || got[0].path != "flowKey" || got[0].shown != `"k\xff"` {
		t.Errorf("got %+v, want only flowKey", got)
	}
}
