package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/internal/store/sqlite"
)

// jsonLogLines parses every line of a server's output but the ones it
// prints on standard output ("Ratchet listening on ..."), each of which
// must be one JSON object with time, level and msg.
func jsonLogLines(t *testing.T, output string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(output), "\n") {
		if strings.HasPrefix(l, "Ratchet ") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a log line of --log-format json is not JSON: %q: %v", l, err)
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := m[k]; !ok {
				t.Errorf("log line %q has no %q", l, k)
			}
		}
		out = append(out, m)
	}
	return out
}

// withMsg returns the log records whose msg is msg.
func withMsg(recs []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// checkMigrationLines: one "applied migration" record per migration file,
// in order, each with its number and name.
func checkMigrationLines(t *testing.T, recs []map[string]any, files []store.MigrationFile) {
	t.Helper()
	got := withMsg(recs, "applied migration")
	if len(got) != len(files) {
		t.Fatalf("%d applied migration lines, want %d (one per migration): %v", len(got), len(files), got)
	}
	for i, f := range files {
		if got[i]["version"] != fmt.Sprintf("%04d", f.Version) || got[i]["name"] != f.Name {
			t.Errorf("migration line %d = %v, want version %04d name %s", i, got[i], f.Version, f.Name)
		}
	}
}

// TestStartupLinesJSONLogsAndPrivateFiles starts the real server on a new
// SQLite file with --log-format json under umask 000: every log line is
// JSON; each migration is logged once with its number and name; the startup
// line gives the version, the store, the absolute database path and the
// addresses; and the database, its -wal and its -shm are 0600 once the
// server has written. Started again, it applies nothing and says so.
//
// Not parallel: it changes the process's umask while it starts the child.
func TestStartupLinesJSONLogsAndPrivateFiles(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0)
	srv := proctest.Start(t, dir, nil, "--bootstrap-key", ownerKey, "--log-format", "json")
	syscall.Umask(old)

	c := client.New(srv.URL, ownerKey)
	if _, err := c.CreateEndpoint(ctx(t), "files", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Standard}}); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t) // the -wal and -shm stay until the last connection closes; check them before
	files, err := sqlite.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	recs := jsonLogLines(t, srv.Output.String())
	checkMigrationLines(t, recs, files)
	started := withMsg(recs, "ratchet started")
	want := map[string]any{"version": "dev", "store": "sqlite", "database": filepath.Join(dir, "ratchet.db"), "addr": srv.URL, "metrics": srv.MetricsURL + "/metrics"}
	if len(started) != 1 {
		t.Fatalf("%d ratchet started lines, want 1:\n%s", len(started), srv.Output.String())
	}
	for k, v := range want {
		if started[0][k] != v {
			t.Errorf("startup line %s = %v, want %v", k, started[0][k], v)
		}
	}

	again := proctest.Start(t, dir, nil, "--log-format", "json")
	if _, err := client.New(again.URL, ownerKey).CreateEndpoint(ctx(t), "again", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Standard}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ratchet.db", "ratchet.db-wal", "ratchet.db-shm"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want -rw------- (0600) whatever the umask", name, st.Mode().Perm())
		}
	}
	again.Stop(t)
	recs = jsonLogLines(t, again.Output.String())
	if n := len(withMsg(recs, "applied migration")); n != 0 || len(withMsg(recs, "schema up to date: no migration to apply")) != 1 {
		t.Errorf("a second start logged %d applied migrations, or did not say the schema is up to date:\n%s", n, again.Output.String())
	}
}

// TestStartupLinesPostgres: on PostgreSQL too each migration is logged,
// and the startup line names the database URL with its password hidden.
func TestStartupLinesPostgres(t *testing.T) {
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "hunter2") // the test server trusts loopback: unused, but it must not show
	srv := proctest.Start(t, "", nil, "--database", u.String(), "--bootstrap-key", ownerKey, "--log-format", "json")
	srv.Stop(t)
	files, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	out := srv.Output.String()
	recs := jsonLogLines(t, out)
	checkMigrationLines(t, recs, files)
	started := withMsg(recs, "ratchet started")
	if len(started) != 1 || started[0]["store"] != "postgres" || !strings.Contains(fmt.Sprint(started[0]["database"]), ":xxxxx@127.0.0.1") {
		t.Errorf("startup line: %v", started)
	}
	if strings.Contains(out, "hunter2") {
		t.Errorf("the server's output shows the database password:\n%s", out)
	}
}
