package wire

import (
	"strings"
	"testing"
)

// TestParseWindow: the quiet window's text, what it accepts and refuses.
func TestParseWindow(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Window
		ok   bool
	}{
		{"22:00-07:00", Window{22 * 60, 7 * 60}, true},
		{"00:00-23:59", Window{0, 23*60 + 59}, true},
		{"09:30-17:45", Window{9*60 + 30, 17*60 + 45}, true},
		{"07:00-07:00", Window{}, false}, // no time at all, or all day
		{"24:00-07:00", Window{}, false},
		{"22:60-07:00", Window{}, false},
		{"2200-0700", Window{}, false},
		{"22:00 - 07:00", Window{}, false},
		{"22:00-7:00", Window{}, false},
		{"+2:00-07:00", Window{}, false},
		{"", Window{}, false},
		{"22:00_07:00", Window{}, false},
	} {
		got, ok := ParseWindow(c.in)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("ParseWindow(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestCheckText: the text settings' checks name what is allowed, and the
// zone refuses what would differ between nodes.
func TestCheckText(t *testing.T) {
	fields := map[string]SettingField{}
	for _, f := range SettingFields() {
		fields[f.JSON] = f
	}
	zone, window := fields["budgetTimeZone"], fields["quietHours"]
	for _, c := range []struct {
		f    SettingField
		v    string
		ok   bool
		says string
	}{
		{zone, "Europe/Paris", true, "IANA"},
		{zone, "UTC", true, "IANA"},
		{zone, "Mars/Olympus", false, "IANA"},
		{zone, "Local", false, "IANA"},
		{zone, "/etc/localtime", false, "IANA"},
		{zone, "", false, "IANA"},
		{zone, strings.Repeat("A", 65), false, "at most 64 bytes"},
		{window, "", true, "HH:MM-HH:MM"},
		{window, "22:00-07:00", true, "HH:MM-HH:MM"},
		{window, "22:00-07:0x", false, "HH:MM-HH:MM"},
		{window, "22:00-07:00:00", false, "at most 11 bytes"},
	} {
		ok, allowed := c.f.CheckText(c.v)
		if ok != c.ok || !strings.Contains(allowed, c.says) {
			t.Errorf("%s %q: ok %v (%s); want %v, saying %q", c.f.JSON, c.v, ok, allowed, c.ok, c.says)
		}
	}
}

// FuzzParseWindow: the parser never panics, what it accepts reads back as
// itself, and its minutes are within a day and differ.
func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"22:00-07:00", "00:00-23:59", "07:00-07:00", "24:00-00:00", "", "-", "12:3a-01:00", "99:99-99:99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, ok := ParseWindow(s)
		if !ok {
			return
		}
		if w.String() != s {
			t.Errorf("ParseWindow(%q) reads back as %q", s, w.String())
		}
		if w.Start < 0 || w.Start >= 1440 || w.End < 0 || w.End >= 1440 || w.Start == w.End {
			t.Errorf("ParseWindow(%q) = %+v", s, w)
		}
	})
}
