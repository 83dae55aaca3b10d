package server_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // PRAGMA integrity_check of the file the server wrote

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
)

// smallDisk mounts a tmpfs of size bytes and returns its path, unmounted
// when the test ends. It needs root: it skips without it, unless
// RATCHET_REQUIRE_DISKFULL=1 (set by scripts/test, which CI runs as root).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	skip := func(why string) {
		if os.Getenv("RATCHET_REQUIRE_DISKFULL") == "1" {
			t.Fatalf("%s; RATCHET_REQUIRE_DISKFULL=1 forbids skipping", why)
		}
		t.Skip(why + " (the full-disk test mounts a small tmpfs; run as root)")
	}
	if os.Geteuid() != 0 {
		skip("not root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		skip("mount a tmpfs: " + err.Error() + ": " + strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestFullDisk runs the real server with its SQLite database on a 3 MiB
// filesystem and enqueues until it is full: the refused enqueue is a 503
// storage_full with Retry-After (it was a 500 internal), every job
// acknowledged before is still readable, reads go on while the disk is
// full, and once space is freed the same server accepts writes again,
// without a restart; the file passes PRAGMA integrity_check after.
func TestFullDisk(t *testing.T) {
	disk := smallDisk(t, "3m")
	// A filler file holds most of the space, so the disk fills quickly,
	// and removing it frees space.
	filler := filepath.Join(disk, "filler")
	if err := os.WriteFile(filler, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := proctest.Start(t, disk, nil, "--bootstrap-key", ownerKey)
	c := ctx(t)
	owner := client.New(srv.URL, ownerKey)
	if _, err := owner.CreateEndpoint(c, "stripe", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Standard}, EndpointSettings: client.EndpointSettings{MaxConcurrent: 10}}); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.PublishTool(c, client.ToolSpec{Name: "charge", Version: "1", Endpoint: "stripe"}); err != nil {
		t.Fatal(err)
	}
	payload := json.RawMessage(`{"blob":"` + strings.Repeat("x", 60_000) + `"}`)
	var acked []int64
	var full *client.Error
	for i := 0; i < 200 && full == nil; i++ {
		j, _, err := owner.Enqueue(c, client.EnqueueRequest{Tool: "charge@1", Payload: payload})
		var ce *client.Error
		switch {
		case err == nil:
			acked = append(acked, j.ID)
		case errors.As(err, &ce):
			full = ce
		default:
			t.Fatalf("enqueue %d: %v", i, err)
		}
	}
	if full == nil {
		t.Fatalf("enqueued %d jobs of 60 kB on a 3 MiB disk without filling it", len(acked))
	}
	if full.Status != 503 || full.Code != "storage_full" || full.RetryAfter != 30*time.Second || !strings.Contains(full.Message, "free disk space") {
		t.Fatalf("the enqueue that found the disk full got %d %s (Retry-After %v): %s; want 503 storage_full, Retry-After 30 s", full.Status, full.Code, full.RetryAfter, full.Message)
	}
	if len(acked) == 0 {
		t.Fatal("the disk was full before the first job: the test proves nothing")
	}
	t.Logf("%d jobs acknowledged before the disk filled", len(acked))
	// Reads go on, and nothing acknowledged is lost.
	for _, id := range acked {
		if _, err := owner.GetJob(c, id); err != nil {
			t.Fatalf("job %d, acknowledged before the disk filled: %v", id, err)
		}
	}
	// Space comes back: the same server writes again.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	j, _, err := owner.Enqueue(c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"after":"space was freed"}`)})
	if err != nil {
		t.Fatalf("enqueue after space was freed: %v", err)
	}
	acked = append(acked, j.ID)
	srv.Stop(t)
	db, err := sql.Open("sqlite", filepath.Join(disk, "ratchet.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM jobs`).Scan(&n); err != nil || n != len(acked) {
		t.Fatalf("%d jobs in the file, %v; want the %d acknowledged", n, err, len(acked))
	}
}
