package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParsePointer(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string // nil: refused
	}{
		{"/customer/id", []string{"customer", "id"}},
		{"/", []string{""}},
		{"//", []string{"", ""}},
		{"/a~1b/~0c", []string{"a/b", "~c"}},
		{"/~01", []string{"~1"}}, // ~0 then 1, never "/"
		{"/ü/0", []string{"ü", "0"}},
		{"", nil},
		{"customer", nil},
		{"#/customer", nil},
		{"/a~", nil},
		{"/a~2", nil},
		{"/a\x00", nil},
		{"/a\xff", nil},
		{"/" + strings.Repeat("a", 200), nil},
	} {
		got, err := ParsePointer(c.in)
		if c.want == nil {
			if err == nil {
				t.Errorf("ParsePointer(%q) = %q, want an error", c.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParsePointer(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestFlowKeyAt(t *testing.T) {
	payload := json.RawMessage(`{"s":"acct","n":42,"neg":-7,"f":1.5,"e":1e3,"b":true,"z":null,"o":{"":"empty name"},"a":["x",["y"]]}`)
	for _, c := range []struct {
		ptr, key, shown string
		ok              bool
	}{
		{"/s", "acct", "", true},
		{"/n", "42", "", true},
		{"/neg", "-7", "", true},
		{"/o/", "empty name", "", true},
		{"/a/1/0", "y", "", true},
		{"/f", "", "1.5", false},
		{"/e", "", "1e3", false},
		{"/b", "", "true", false},
		{"/z", "", "null", false},
		{"/o", "", `{"":"empty name"}`, false},
		{"/missing", "", "(missing)", false},
		{"/a/01", "", "(missing)", false},
		{"/a/-", "", "(missing)", false},
		{"/a/2", "", "(missing)", false},
		{"/s/x", "", "(missing)", false},
	} {
		tokens, err := ParsePointer(c.ptr)
		if err != nil {
			t.Fatal(err)
		}
		key, shown, ok := flowKeyAt(payload, tokens)
		if key != c.key || shown != c.shown || ok != c.ok {
			t.Errorf("flowKeyAt %s = %q, %q, %v; want %q, %q, %v", c.ptr, key, shown, ok, c.key, c.shown, c.ok)
		}
	}
}

// FuzzParsePointer: a pointer that parses starts with "/", is valid text
// without NUL, and its tokens escape back to it exactly; reading any
// payload with it never panics, and a key it finds in valid JSON is valid
// UTF-8.
func FuzzParsePointer(f *testing.F) {
	for _, s := range []string{"/customer/id", "/", "/a~1b/~0c", "/~01", "", "x", "/a~", "/a~2", "/a/0/-", "/\xff"} {
		f.Add(s, `{"customer":{"id":"c1"},"a":[1,{"b":2}],"a/b":{"~c":"k"}}`)
	}
	f.Fuzz(func(t *testing.T, ptr, payload string) {
		tokens, err := ParsePointer(ptr)
		if err != nil {
			return
		}
		if ptr == "" || ptr[0] != '/' || !utf8.ValidString(ptr) || strings.ContainsRune(ptr, 0) {
			t.Fatalf("ParsePointer(%q) accepted it", ptr)
		}
		var b strings.Builder
		for _, tok := range tokens {
			b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1"))
		}
		if b.String() != ptr {
			t.Fatalf("ParsePointer(%q) = %q, which escapes back to %q", ptr, tokens, b.String())
		}
		if key, _, ok := flowKeyAt(json.RawMessage(payload), tokens); ok && !utf8.ValidString(key) && json.Valid([]byte(payload)) {
			t.Fatalf("flowKeyAt(%q, %q) = %q, not UTF-8", payload, ptr, key)
		}
	})
}
