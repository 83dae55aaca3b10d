package traceparent

import (
	"strconv"
	"strings"
	"testing"
)

const good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{good, true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff", true},
		{"", false},
		{good + " ", false},
		{" " + good[1:], false},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},          // another version
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},          // the invalid version
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},          // upper case
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},          // zero trace id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},          // zero span id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", false},          // bad flags
		{"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},          // bad separator
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", false},    // trailing fields
		{"00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01", false},          // misplaced dash
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-\x00\x01", false},    // control bytes
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7\xff\xfe\xfd", false}, // invalid UTF-8
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" + "\n", false},   // newline
	} {
		p, err := Parse(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("Parse(%q) = %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok && p.String() != tc.in {
			t.Errorf("Parse(%q).String() = %q", tc.in, p.String())
		}
	}
	p, _ := Parse(good)
	if !p.Sampled() || p.SpanID[7] != 0xb7 || p.TraceID[0] != 0x4b {
		t.Errorf("Parse(good) = %+v", p)
	}
}

func TestValidState(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"", true},
		{"rojo=00f067aa0ba902b7", true},
		{"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", true},
		{"rojo=00f067aa0ba902b7 , congo=t61rcWkgMzE", true},
		{"tenant@vendor=x", true},
		{"Rojo=1", false},        // upper-case key
		{"rojo", false},          // no value
		{"rojo=1,rojo=2", false}, // a key twice
		{"rojo=a,b", false},      // a member without "="
		{"rojo=a=b", false},      // "=" in a value
		{"rojo=\x01", false},     // control character
		{"rojo=x ", true},        // trailing space is around the member
		{",", false},             // no member
		{"a=" + strings.Repeat("x", 256), true},
		{"a=" + strings.Repeat("x", 257), false},
		{strings.Repeat("k=v,", 32) + "k2=v", false},
		{strings.Repeat("x", 513), false},
	} {
		if got := ValidState(tc.in); got != tc.ok {
			t.Errorf("ValidState(%q) = %v, want %v", tc.in, got, tc.ok)
		}
	}
	var many []string
	for i := range 33 {
		many = append(many, "k"+strconv.Itoa(i)+"=v")
	}
	if ValidState(strings.Join(many, ",")) {
		t.Error("33 members accepted")
	}
	if !ValidState(strings.Join(many[:32], ",")) {
		t.Error("32 members refused")
	}
}

// FuzzParse checks that whatever Parse accepts prints back as given, and
// is what a strict reading of the format allows.
func FuzzParse(f *testing.F) {
	f.Add(good)
	f.Add("00-00000000000000000000000000000000-00f067aa0ba902b7-01")
	f.Add("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		if p.String() != s {
			t.Fatalf("Parse(%q).String() = %q", s, p.String())
		}
		if len(s) != Len || !strings.HasPrefix(s, "00-") || strings.ToLower(s) != s || p.TraceID == [16]byte{} || p.SpanID == [8]byte{} {
			t.Fatalf("Parse(%q) accepted a value outside the format", s)
		}
	})
}

// FuzzValidState checks that ValidState never accepts what could not be
// sent as a header value.
func FuzzValidState(f *testing.F) {
	f.Add("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
	f.Add("a@b=c")
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidState(s) {
			return
		}
		if len(s) > MaxStateLen {
			t.Fatalf("ValidState accepted %d bytes", len(s))
		}
		for i := range len(s) {
			if c := s[i]; (c < 0x20 && c != '\t') || c > 0x7e {
				t.Fatalf("ValidState(%q) accepted byte %#x", s, c)
			}
		}
	})
}
