package cli_test

import (
	"strings"
	"testing"
)

// TestServePublicURLRefused: a --public-url that is not an absolute http
// or https URL stops serve before it starts, naming the flag, the value
// and what is allowed (exit 2).
func TestServePublicURLRefused(t *testing.T) {
	for _, bad := range []string{"ftp://x.example", "console.example.com", "https://u:p@x.example", "https://x.example/?a=1"} {
		_, errOut, code := run(t, "", "serve", "--addr", "127.0.0.1:0", "--database", t.TempDir()+"/r.db", "--public-url", bad)
		if code != 2 || !strings.Contains(errOut, "public-url") || !strings.Contains(errOut, bad) || !strings.Contains(errOut, "absolute http or https URL") {
			t.Errorf("--public-url %s: exit %d, %s", bad, code, errOut)
		}
	}
}

// TestAlertsHelp: `ratchet alerts` lists its subcommands.
func TestAlertsHelp(t *testing.T) {
	out, errOut, _ := run(t, "", "alerts", "--help")
	for _, sub := range []string{"add", "sinks", "delete", "test", "settings", "list"} {
		if !strings.Contains(out+errOut, sub) {
			t.Errorf("ratchet alerts --help does not list %s:\n%s%s", sub, out, errOut)
		}
	}
}
