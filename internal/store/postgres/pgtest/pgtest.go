// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema on the server named by RATCHET_TEST_POSTGRES_URL, dropped when the
// test ends. Every test gets its own schema, so they run in parallel on one
// server.
//
// ./scripts/test starts a throwaway server and sets the variables; plain
// `go test` without them skips PostgreSQL tests, and with
// RATCHET_REQUIRE_POSTGRES=1 (as under CI) fails them instead.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables the helpers read.
const (
	// EnvURL names the server: postgres://user@host:port/db?sslmode=disable.
	EnvURL = "RATCHET_TEST_POSTGRES_URL"
	// EnvRequire set to 1 turns a missing server into a failure.
	EnvRequire = "RATCHET_REQUIRE_POSTGRES"
	// EnvDataDir and EnvPgCtl let fault tests restart the test server.
	EnvDataDir = "RATCHET_TEST_POSTGRES_DATADIR"
	EnvPgCtl   = "RATCHET_TEST_PG_CTL"
)

// ServerURL returns the test server's URL, or skips the test (fails it under
// RATCHET_REQUIRE_POSTGRES=1) when there is none.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		msg := "PostgreSQL tests need a server: run ./scripts/test (it starts a throwaway one), " +
			"or set " + EnvURL + "=postgres://user@127.0.0.1:5432/db?sslmode=disable"
		if os.Getenv(EnvRequire) == "1" {
			t.Fatal(msg + " (" + EnvRequire + "=1 forbids skipping)")
		}
		t.Skip(msg)
	}
	return u
}

var unsafe = regexp.MustCompile(`[^a-z0-9_]+`)

// URL creates a fresh, empty schema on the test server and returns a URL
// whose connections use it (search_path). The schema is dropped when the
// test ends.
func URL(t testing.TB) string {
	t.Helper()
	base := ServerURL(t)
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := unsafe.ReplaceAllString(strings.ToLower(t.Name()), "_")
	if len(name) > 40 {
		name = name[len(name)-40:]
	}
	schema := "t_" + strings.Trim(name, "_") + "_" + hex.EncodeToString(rnd[:])
	exec(t, base, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize())
	t.Cleanup(func() {
		exec(t, base, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func exec(t testing.TB, dsn, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to the test server (%s): %v", EnvURL, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// Server describes a test server that a test may stop and start.
type Server struct {
	DataDir string
	PgCtl   string
}

// Restartable returns the test server's data directory and pg_ctl, or skips
// the test when scripts/test did not provide them.
func Restartable(t testing.TB) Server {
	t.Helper()
	ServerURL(t)
	s := Server{DataDir: os.Getenv(EnvDataDir), PgCtl: os.Getenv(EnvPgCtl)}
	if s.DataDir == "" || s.PgCtl == "" {
		t.Skip("restarting PostgreSQL needs " + EnvDataDir + " and " + EnvPgCtl + " (./scripts/test sets them for its own server)")
	}
	return s
}
