package server

import (
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/field"
)

// Database drivers ParseDatabase tells apart.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// databaseAllowed says what --database (RATCHET_DATABASE_URL) takes.
const databaseAllowed = "must be a SQLite file path, sqlite://PATH, file:PATH, or a postgres:// or postgresql:// URL (the --database flag or RATCHET_DATABASE_URL)"

var urlScheme = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)

// ParseDatabase reads a database setting: a postgres:// or postgresql://
// URL, sqlite://PATH, file:PATH (SQLite's own URI form), or a plain SQLite
// file path ("" is ratchet.db). A URL
// of any other scheme (mysql://, redis://...) is refused rather than taken
// for a file name; the error names --database and the value with any
// password hidden.
func ParseDatabase(s string) (driver, target string, err error) {
	if rest, ok := strings.CutPrefix(s, "file:"); ok && !strings.HasPrefix(rest, "//") {
		// file:PATH was opened as the file "file:PATH".
		if rest == "" || strings.ContainsAny(rest, "?#\x00") {
			return "", "", field.New("--database", strconv.QuoteToASCII(s), "file:PATH needs a file path without ?, # or NUL (Ratchet sets the SQLite options itself)")
		}
		return DriverSQLite, rest, nil
	}
	m := urlScheme.FindStringSubmatch(s)
	if m == nil {
		if s == "" {
			s = "ratchet.db"
		}
		if strings.ContainsRune(s, 0) {
			return "", "", field.New("--database", strconv.QuoteToASCII(s), "a file path without NUL characters")
		}
		return DriverSQLite, s, nil
	}
	switch strings.ToLower(m[1]) {
	case "postgres", "postgresql":
		return DriverPostgres, s, nil
	case "sqlite", "sqlite3", "file":
		path := s[len(m[0]):]
		if path == "" || strings.ContainsRune(path, 0) {
			return "", "", field.New("--database", strconv.QuoteToASCII(redact(s)), "sqlite://PATH needs a file path")
		}
		return DriverSQLite, path, nil
	}
	return "", "", field.New("--database", strconv.QuoteToASCII(redact(s)), databaseAllowed+"; scheme "+m[1]+" is not supported")
}

// DescribeDatabase is how logs and messages name a database setting: a
// SQLite file by its absolute path, a PostgreSQL URL with its password
// (in the user part or a password= parameter) hidden.
func DescribeDatabase(s string) string {
	driver, target, err := ParseDatabase(s)
	if err != nil || driver == DriverPostgres {
		return redact(s)
	}
	if abs, err := filepath.Abs(target); err == nil {
		return abs
	}
	return target
}

// redact hides the password of a URL, for errors and logs.
func redact(s string) string {
	u, err := url.Parse(s)
	if err == nil && u.RawQuery != "" {
		if q := u.Query(); q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
			s = u.String()
		}
	}
	if err != nil || u.User == nil {
		if i := strings.Index(s, "@"); i >= 0 {
			if j := strings.Index(s, "://"); j >= 0 && j < i {
				return s[:j+3] + "xxxxx" + s[i:]
			}
		}
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
