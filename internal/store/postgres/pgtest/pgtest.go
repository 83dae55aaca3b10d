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
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
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
	// EnvDataDir is the shared test server's data directory.
	EnvDataDir = "RATCHET_TEST_POSTGRES_DATADIR"
	// EnvPgCtl is a pg_ctl that fault tests use to run private clusters
	// (NewServer); they never restart the shared server under other tests.
	EnvPgCtl = "RATCHET_TEST_PG_CTL"
)

// Available reports whether PostgreSQL tests should run: a server is
// configured, or the run forbids skipping them (then URL fails the test).
func Available() bool { return os.Getenv(EnvURL) != "" || os.Getenv(EnvRequire) == "1" }

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
	execSQL(t, base, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize())
	t.Cleanup(func() {
		execSQL(t, base, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
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

func execSQL(t testing.TB, dsn, sql string) {
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

// Server is a private PostgreSQL cluster that one test owns and may stop
// and start (fault tests), leaving the shared test server alone.
type Server struct {
	Dir   string // temp dir holding data/, the socket and the log
	Port  int
	pgCtl string
}

// NewServer initialises and starts a private cluster with the pg_ctl that
// scripts/test exports (RATCHET_TEST_PG_CTL, which runs as the postgres user
// when needed), and removes it when the test ends. Without that variable the
// test is skipped: a server someone else provides cannot be restarted.
func NewServer(t testing.TB) *Server {
	t.Helper()
	ServerURL(t)
	pgCtl := os.Getenv(EnvPgCtl)
	if pgCtl == "" {
		t.Skip("restarting PostgreSQL needs " + EnvPgCtl + " (./scripts/test sets it for its own server)")
	}
	dir, err := os.MkdirTemp("", "ratchet-pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	// pg_ctl may run as another user (postgres) that must create data/ here.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	s := &Server{Dir: dir, Port: freePort(t), pgCtl: pgCtl}
	t.Cleanup(func() {
		_ = s.ctl("-m", "immediate", "-w", "stop")
		_ = os.RemoveAll(dir)
	})
	if err := s.ctl("init", "-o", "-A trust -U postgres -E UTF8 --no-sync"); err != nil {
		t.Fatalf("initdb: %v", err)
	}
	conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = '%s'\nfsync = off\n", s.Port, dir)
	f, err := os.OpenFile(filepath.Join(dir, "data", "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Start(t)
	return s
}

// URL is the cluster's postgres database.
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.Port)
}

// Stop shuts the server down (fast mode: sessions are cut, committed data is
// flushed).
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if err := s.ctl("-m", "fast", "-w", "-t", "60", "stop"); err != nil {
		t.Fatalf("stop postgres: %v", err)
	}
}

// Start starts the server and waits until it accepts connections.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if err := s.ctl("-l", filepath.Join(s.Dir, "server.log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
		t.Fatalf("start postgres: %v\n%s", err, log)
	}
}

func (s *Server) ctl(args ...string) error {
	cmd := exec.Command(s.pgCtl, append([]string{"-D", filepath.Join(s.Dir, "data")}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
