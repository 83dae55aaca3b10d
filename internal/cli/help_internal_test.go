package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelpEverywhere walks the whole command tree: --help (and -h) after
// any command or subcommand — also one that first wants a NAME or ID, and
// after other arguments — prints that command's usage on standard output
// and exits 0. (A subcommand that takes an argument answered --help with
// "needs an endpoint NAME" and exit 2.)
func TestHelpEverywhere(t *testing.T) {
	run := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, args)
		return out.String(), errOut.String(), code
	}
	check := func(want string, args ...string) {
		t.Helper()
		out, errOut, code := run(args...)
		if code != ExitOK || !strings.Contains(out, want) || errOut != "" {
			t.Errorf("ratchet %s: exit %d, stdout %q, stderr %q; want exit 0 and the usage (%q) on stdout", strings.Join(args, " "), code, clip(out), errOut, want)
		}
	}
	for _, c := range commands() {
		check("Usage: ratchet "+c.name, c.name, "--help")
		if c.group == nil {
			continue
		}
		check(c.group.synopsis(c.group.subs[0].name), c.name, "-h")
		for _, s := range c.group.subs {
			check(s.summary, c.name, s.name, "--help")
			check(s.summary, c.name, s.name, "-h")
			check(s.summary, c.name, s.name, "some-arg", "--help")
		}
	}
	// --help after "--" is an argument, not a request for help.
	if _, _, code := run("jobs", "get", "--", "--help"); code == ExitOK {
		t.Error(`ratchet jobs get -- --help exited 0`)
	}
}

// TestVersion: ratchet --version and ratchet version print the version line.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), &Env{Stdout: &out, Stderr: &errOut}, args)
		if code != ExitOK || !strings.HasPrefix(out.String(), "ratchet "+Version+" (commit ") || !strings.Contains(out.String(), "go1.") {
			t.Errorf("ratchet %s: exit %d, %q %q", args[0], code, out.String(), errOut.String())
		}
	}
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// FuzzPublicURL: whatever --public-url holds, checkPublicURL accepts it
// (an absolute http or https URL, without a trailing slash) or fails the
// flag naming it; it never panics.
func FuzzPublicURL(f *testing.F) {
	for _, s := range []string{"https://ratchet.example.com/", "http://127.0.0.1:8080", "ftp://x", "x.example", "https://u:p@x", "https://x/?a=1", "https://x/#f", "", "https://x/a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var errOut bytes.Buffer
		fs := newFlagSet("serve", "serve", &errOut)
		got := checkPublicURL(fs, s)
		err := fs.done()
		if err != nil {
			if got != "" || !strings.Contains(err.Error(), "public-url") {
				t.Fatalf("%q: refused (%v) but returned %q", s, err, got)
			}
			return
		}
		if s != "" && (!strings.HasPrefix(got, "http://") && !strings.HasPrefix(got, "https://") || strings.HasSuffix(got, "/")) {
			t.Fatalf("%q accepted as %q", s, got)
		}
	})
}
