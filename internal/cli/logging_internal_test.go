package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestLogFormat: json writes one JSON object a line, text key=value lines;
// anything else is refused naming --log-format, the value and both
// allowed values.
func TestLogFormat(t *testing.T) {
	for _, c := range []struct{ in, want string }{{"json", logJSON}, {"text", logText}, {" JSON ", logJSON}, {"Text", logText}} {
		if got, err := parseLogFormat(c.in); err != nil || got != c.want {
			t.Errorf("parseLogFormat(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for format, check := range map[string]func(string) bool{
		"json": func(l string) bool {
			var m map[string]any
			return json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "hello" && m["n"] == 1.0
		},
		"text": func(l string) bool {
			return strings.HasPrefix(l, "time=") && strings.HasSuffix(l, "level=INFO msg=hello n=1")
		},
	} {
		var buf bytes.Buffer
		f := newFlagSet("serve", "", &buf)
		level, fmtText := "info", format
		logFlags{level: &level, format: &fmtText}.logger(f, &buf).Info("hello", "n", 1)
		if err := f.done(); err != nil || !check(strings.TrimSpace(buf.String())) {
			t.Errorf("--log-format %s wrote %q (%v)", format, buf.String(), err)
		}
	}
	var buf bytes.Buffer
	f := newFlagSet("serve", "", &buf)
	level, format := "info", "yaml"
	logFlags{level: &level, format: &format}.logger(f, &buf)
	if err := f.done(); err == nil || err.Error() != `--log-format: "yaml" is not allowed; must be json or text` {
		t.Errorf("--log-format yaml: %v", err)
	}
}

// FuzzLogFormat: every input is text, json or an error that names both.
func FuzzLogFormat(f *testing.F) {
	for _, s := range []string{"json", "text", "JSON", " text\n", "yaml", "", "jsonl", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseLogFormat(s)
		if err != nil {
			if got != "" || !strings.Contains(err.Error(), "json") || !strings.Contains(err.Error(), "text") {
				t.Fatalf("parseLogFormat(%q) = %q, %v", s, got, err)
			}
			return
		}
		if got != logJSON && got != logText || !strings.EqualFold(strings.TrimSpace(s), got) {
			t.Fatalf("parseLogFormat(%q) = %q", s, got)
		}
	})
}
