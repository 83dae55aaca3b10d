package server

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/field"
)

func TestParseDatabase(t *testing.T) {
	for in, want := range map[string][2]string{
		"":                                 {DriverSQLite, "ratchet.db"},
		"data/ratchet.db":                  {DriverSQLite, "data/ratchet.db"},
		"sqlite:///var/lib/ratchet.db":     {DriverSQLite, "/var/lib/ratchet.db"},
		"sqlite://ratchet.db":              {DriverSQLite, "ratchet.db"},
		"postgres://u:p@127.0.0.1/ratchet": {DriverPostgres, "postgres://u:p@127.0.0.1/ratchet"},
		"postgresql://127.0.0.1/ratchet":   {DriverPostgres, "postgresql://127.0.0.1/ratchet"},
		"PostgreSQL://127.0.0.1/x":         {DriverPostgres, "PostgreSQL://127.0.0.1/x"},
		"C:\\ratchet\\ratchet.db":          {DriverSQLite, "C:\\ratchet\\ratchet.db"},
		"./with:colon.db":                  {DriverSQLite, "./with:colon.db"},
		"file:ratchet.db":                  {DriverSQLite, "ratchet.db"},
		"file:///var/lib/ratchet.db":       {DriverSQLite, "/var/lib/ratchet.db"},
	} {
		d, target, err := ParseDatabase(in)
		if err != nil || d != want[0] || target != want[1] {
			t.Errorf("ParseDatabase(%q) = %q, %q, %v; want %q, %q", in, d, target, err, want[0], want[1])
		}
	}
	// Another scheme is refused, naming the flag and the scheme, with the
	// password hidden. (mysql:// was taken for a SQLite file name.)
	for in, shown := range map[string]string{
		"mysql://root:hunter2@127.0.0.1/ratchet": `"mysql://root:xxxxx@127.0.0.1/ratchet"`,
		"redis://127.0.0.1:6379":                 `"redis://127.0.0.1:6379"`,
		"sqlite://":                              `"sqlite://"`,
		"file:":                                  `"file:"`,
		"file:r.db?mode=ro":                      `"file:r.db?mode=ro"`,
	} {
		_, _, err := ParseDatabase(in)
		fe, ok := field.As(err)
		if !ok || fe[0].Field != "--database" || fe[0].Value != shown || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseDatabase(%q) = %v; want a --database error showing %s", in, err, shown)
		}
	}
}

// FuzzParseDatabase: any input is either a driver and a target or a field
// error naming --database; a password never shows in the error.
func FuzzParseDatabase(f *testing.F) {
	for _, s := range []string{"", "x.db", "postgres://u:secret@h/d", "mysql://u:secret@h/d", "sqlite://", "a://b", "http://u:secret@[::1", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, target, err := ParseDatabase(s)
		if err != nil {
			fe, ok := field.As(err)
			if !ok || fe[0].Field != "--database" {
				t.Fatalf("ParseDatabase(%q): %v is not a --database field error", s, err)
			}
			if urlScheme.MatchString(s) && strings.Contains(s, ":secret@") && strings.Contains(err.Error(), "secret") {
				t.Fatalf("ParseDatabase(%q): the error shows the password: %v", s, err)
			}
			return
		}
		if (d != DriverSQLite && d != DriverPostgres) || target == "" {
			t.Fatalf("ParseDatabase(%q) = %q, %q", s, d, target)
		}
	})
}

// TestDescribeDatabase: the startup line and the backup command name a
// SQLite file by its absolute path and a PostgreSQL URL without its
// password, in the user part or a password= parameter.
func TestDescribeDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://ratchet:hunter2@db:5432/r?sslmode=disable": "postgres://ratchet:xxxxx@db:5432/r?sslmode=disable",
		"postgres://ratchet@db/r?password=hunter2&sslmode=off": "postgres://ratchet@db/r?password=xxxxx&sslmode=off",
		"postgresql://db/r":           "postgresql://db/r",
		"/var/lib/ratchet/ratchet.db": "/var/lib/ratchet/ratchet.db",
		"sqlite:///srv/r.db":          "/srv/r.db",
	} {
		if got := DescribeDatabase(in); got != want {
			t.Errorf("DescribeDatabase(%q) = %q, want %q", in, got, want)
		}
	}
	if got := DescribeDatabase("r.db"); !filepath.IsAbs(got) || filepath.Base(got) != "r.db" {
		t.Errorf("DescribeDatabase(r.db) = %q, want an absolute path", got)
	}
}

// FuzzDescribeDatabase: the password of a PostgreSQL URL, in its user part
// or a password= parameter, never shows.
func FuzzDescribeDatabase(f *testing.F) {
	for _, s := range []string{"postgres://u:secret@h/d", "postgres://h/d?password=secret", "postgresql://u:secret@h/d?password=secret&x=1", "x.db", "postgres://u:secret@[::1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := DescribeDatabase(s)
		d, _, err := ParseDatabase(s)
		u, uerr := url.Parse(s)
		if err != nil || d != DriverPostgres || uerr != nil {
			return
		}
		// Where "secret" stands in s only as the password, it must not show.
		n := 0
		if pw, _ := u.User.Password(); pw == "secret" {
			n++
		}
		for _, v := range u.Query()["password"] {
			if v == "secret" {
				n++
			}
		}
		if n > 0 && strings.Count(s, "secret") == n && strings.Contains(got, "secret") {
			t.Fatalf("DescribeDatabase(%q) = %q shows the password", s, got)
		}
	})
}
