package cli_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

// enqueueLoad enqueues jobs of tool from n goroutines until stop is closed
// and records the id of every enqueue the server acknowledged, with when.
type enqueueLoad struct {
	mu    sync.Mutex
	acked []int64
	at    []time.Time
	fails atomic.Int64
	wg    sync.WaitGroup
	stop  chan struct{}
}

func startLoad(t *testing.T, c *client.Client, tool string, n int) *enqueueLoad {
	l := &enqueueLoad{stop: make(chan struct{})}
	for g := range n {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				j, _, err := c.Enqueue(ctx, client.EnqueueRequest{Tool: tool, Payload: []byte(`{"n":` + strconv.Itoa(i) + `}`),
					IdempotencyKey: "g" + strconv.Itoa(g) + "-" + strconv.Itoa(i)})
				cancel()
				if err != nil {
					l.fails.Add(1)
					continue
				}
				l.mu.Lock()
				l.acked, l.at = append(l.acked, j.ID), append(l.at, time.Now())
				l.mu.Unlock()
			}
		}()
	}
	t.Cleanup(l.end)
	return l
}

func (l *enqueueLoad) end() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// snapshot returns the ids acknowledged so far.
func (l *enqueueLoad) snapshot() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int64{}, l.acked...)
}

// ackedBetween counts the enqueues acknowledged in (from, to).
func (l *enqueueLoad) ackedBetween(from, to time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, at := range l.at {
		if at.After(from) && at.Before(to) {
			n++
		}
	}
	return n
}

var backupJobsLine = regexp.MustCompile(`(?m)^jobs:\s+(\d+) \(newest id (\d+)\)$`)

// TestBackupUnderLoad: `ratchet backup`, run as its own process while a real
// server takes enqueues from four goroutines, writes a copy that passes the
// integrity check and is 0600; a server started on the copy holds every job
// whose enqueue was acknowledged before the backup began.
func TestBackupUnderLoad(t *testing.T) {
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey)
	c := client.New(srv.URL, ownerKey)
	ctx := context.Background()
	if _, err := c.CreateEndpoint(ctx, "load", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Standard}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PublishTool(ctx, client.ToolSpec{Name: "work", Version: "1", Endpoint: "load"}); err != nil {
		t.Fatal(err)
	}
	load := startLoad(t, c, "work@1", 4)
	for deadline := time.Now().Add(30 * time.Second); len(load.snapshot()) < 200; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d enqueues acknowledged in 30 s (%d failed)", len(load.snapshot()), load.fails.Load())
		}
	}

	before := load.snapshot()
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	start := time.Now()
	out, err := exec.Command(proctest.Binary(t), "backup", "--database", filepath.Join(srv.Dir, "ratchet.db"), "--to", copyPath).CombinedOutput()
	end := time.Now()
	during := load.ackedBetween(start, end)
	load.end()
	if err != nil {
		t.Fatalf("ratchet backup: %v\n%s", err, out)
	}
	t.Logf("%d enqueues acknowledged before the backup, %d while it ran (%v):\n%s", len(before), during, end.Sub(start), out)
	if during == 0 {
		t.Errorf("no enqueue was acknowledged while the backup ran: it did not run under load")
	}
	m := backupJobsLine.FindStringSubmatch(string(out))
	if m == nil || !strings.Contains(string(out), "integrity ok") || !strings.Contains(string(out), "endpoints:  1\ntools:      1\n") {
		t.Fatalf("ratchet backup printed:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n < len(before) {
		t.Errorf("the copy holds %d jobs, fewer than the %d acknowledged before it began", n, len(before))
	}
	if st, err := os.Stat(copyPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the copy: %v, %v; want mode 0600", st, err)
	}

	restored := proctest.Start(t, "", nil, "--database", copyPath)
	rc := client.New(restored.URL, ownerKey)
	missing := 0
	for _, id := range before {
		if _, err := rc.GetJob(ctx, id); err != nil {
			missing++
			if missing < 5 {
				t.Errorf("job %d, acknowledged before the backup: %v", id, err)
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d jobs acknowledged before the backup are not in the copy", missing, len(before))
	}
	newest, _ := strconv.ParseInt(m[2], 10, 64)
	if _, err := rc.GetJob(ctx, newest); err != nil {
		t.Errorf("the newest job the backup named, %d: %v", newest, err)
	}
	var ae *client.Error
	if _, err := rc.GetJob(ctx, newest+1); !errors.As(err, &ae) || ae.Status != 404 {
		t.Errorf("job %d, after the newest the backup named: %v; want 404", newest+1, err)
	}
}

// TestBackupRefusals: an existing file is never overwritten, a PostgreSQL
// URL is answered with the pg_dump command (its password hidden), a
// missing database or --to is named.
func TestBackupRefusals(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.db")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "r.db")
	if _, errOut, code := run(t, "", "migrate", "up", "--database", db); code != 0 {
		t.Fatal(errOut)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--database", db, "--to", existing}, 1, "existing.db (--to) already exists; a backup never overwrites a file"},
		{[]string{"--database", db}, 2, `--to: "" is not allowed; required`},
		{[]string{"--database", filepath.Join(dir, "nope.db"), "--to", filepath.Join(dir, "x.db")}, 1, "no SQLite database at " + filepath.Join(dir, "nope.db")},
		{[]string{"--database", "postgres://ratchet:hunter2@db:5432/ratchet", "--to", "r.dump"}, 2, "pg_dump --format=custom --file r.dump 'postgres://ratchet:xxxxx@db:5432/ratchet'"},
	} {
		out, errOut, code := run(t, "", append([]string{"backup"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "hunter2") {
			t.Errorf("backup %v: exit %d, want %d and %q:\n%s%s", c.args, code, c.code, c.want, out, errOut)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("the existing file was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.db")); err == nil {
		t.Errorf("a failed backup left its file behind")
	}
}

// TestKeysRecover: `ratchet keys recover` on the database of a running
// server mints an owner key that server accepts at once; a server started
// on the database later accepts it as owner too, and the audit log names
// the recovery.
func TestKeysRecover(t *testing.T) {
	dir := t.TempDir()
	srv := proctest.Start(t, dir, nil, "--bootstrap-key", ownerKey)
	db := filepath.Join(dir, "ratchet.db")
	out, errOut, code := run(t, "", "keys", "recover", "--database", db)
	m := regexp.MustCompile(`(?s)^created owner key (\d+) "recovered owner" in project 1 \(audited as key.recover\)\. It is shown once; keep it:\n\n    (rk_[0-9a-f]{64})\n$`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("keys recover: exit %d\n%s%s", code, out, errOut)
	}
	key := m[2]
	if _, err := client.New(srv.URL, key).CreateKey(context.Background(), "made by the recovered key", wire.ScopeProducer, nil); err != nil {
		t.Errorf("the running server refused the recovered key an owner's action: %v", err)
	}
	srv.Stop(t)

	again := proctest.Start(t, dir, nil)
	c := client.New(again.URL, key)
	keys, err := c.ListKeys(context.Background())
	if err != nil {
		t.Fatalf("a server started on the database refused the recovered key as owner: %v", err)
	}
	if len(keys) != 3 || keys[1].ID != mustInt(t, m[1]) || keys[1].Scope != wire.ScopeOwner {
		t.Errorf("keys: %+v", keys)
	}
	page, err := c.Audit(context.Background(), "key:"+m[1], "", 0)
	if err != nil || len(page.Entries) != 1 {
		t.Fatalf("audit of key:%s: %+v %v", m[1], page, err)
	}
	e := page.Entries[0]
	if e.Action != "key.recover" || e.Actor != "offline recovery" || !strings.Contains(e.Detail, "recovered access on the database, without a key, by ") ||
		!strings.Contains(e.Detail, `created owner key "recovered owner"`) {
		t.Errorf("audit entry: %+v", e)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--database", filepath.Join(dir, "nope.db")}, "there is no database there"},
		{[]string{"--database", db, "--project", "7"}, "project 7 not found"},
		{[]string{"--database", db, "--project", "x"}, `--project: "x" is not allowed`},
	} {
		if _, errOut, code := run(t, "", append([]string{"keys", "recover"}, c.args...)...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("keys recover %v: exit %d, want an error with %q:\n%s", c.args, code, c.want, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nope.db")); err == nil {
		t.Errorf("keys recover created a database at a mistyped path")
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCACertFlag: --ca-cert (RATCHET_CA_CERT) must name a readable PEM
// file of certificates; otherwise the error names the flag and the file
// before any request is sent.
func TestCACertFlag(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		notPEM:              "it holds no PEM certificate",
		notPEM + ".missing": "no such file",
	} {
		_, errOut, code := run(t, "", "jobs", "list", "--key", ownerKey, "--server", "https://127.0.0.1:1", "--ca-cert", file)
		if code != 2 || !strings.Contains(errOut, "--ca-cert: "+strconv.Quote(file)+" is not allowed; must be a readable PEM file of CA certificates") || !strings.Contains(errOut, want) {
			t.Errorf("--ca-cert %s: exit %d\n%s", file, code, errOut)
		}
	}
}

// TestKeysRecoverChangesNothingItRefuses: `ratchet keys recover` on a path
// that holds no SQLite database — an empty file, a text file, a directory,
// nothing — refuses, names the file and why, and leaves it as it was: no
// bytes written, no -wal, -shm or -journal file beside it. Before, the
// driver took the empty file for a new database and turned it into one
// (4,096 bytes, in WAL mode) while the command refused.
func TestKeysRecoverChangesNothingItRefuses(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	text := filepath.Join(dir, "notes.db")
	sub := filepath.Join(dir, "sub.db")
	missing := filepath.Join(dir, "missing.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(text, []byte("not a database, but long enough to hold a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for path, why := range map[string]string{
		empty:   "is an empty file, not an SQLite database",
		text:    `is not an SQLite database (it does not start with "SQLite format 3")`,
		sub:     "is a directory, not an SQLite database",
		missing: "there is no database there",
	} {
		// Every command that reads a database it must not create refuses
		// alike: recovering a key, reading the migrations' status, and
		// backing up.
		for _, args := range [][]string{{"keys", "recover"}, {"migrate", "status"}, {"backup", "--to", filepath.Join(dir, "copy.db")}} {
			name := strings.Join(args[:2], " ")
			before, _ := os.ReadFile(path)
			_, errOut, code := run(t, "", append(args, "--database", path)...)
			want, also := why, "nothing was changed"
			if args[0] == "backup" && path == missing {
				want, also = "no SQLite database at", "" // backup's own word for a missing file
			}
			if code == 0 || !strings.Contains(errOut, path) || !strings.Contains(errOut, want) || !strings.Contains(errOut, also) {
				t.Errorf("%s --database %s: exit %d, want an error naming the file and %q:\n%s", name, path, code, want, errOut)
			}
			after, err := os.ReadFile(path)
			if string(after) != string(before) || (path == missing) != errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: %s changed: %d bytes before, %d after (%v)", name, path, len(before), len(after), err)
			}
			for _, suffix := range []string{"-wal", "-shm", "-journal"} {
				if _, err := os.Stat(path + suffix); err == nil {
					t.Errorf("%s left %s%s behind", name, path, suffix)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "copy.db")); err == nil {
				t.Errorf("%s --database %s wrote a copy", name, path)
			}
		}
	}
}
