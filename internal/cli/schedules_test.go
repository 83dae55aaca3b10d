package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/proctest"
)

// TestScheduleCommands walks ratchet schedules create, list, preview, get,
// pause, resume and delete against a real server.
func TestScheduleCommands(t *testing.T) {
	t.Parallel()
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey)
	remote := func(args ...string) (string, string, int) {
		t.Helper()
		return run(t, "", append(args, "--server", srv.URL, "--key", ownerKey)...)
	}
	must := func(args ...string) string {
		t.Helper()
		out, errOut, code := remote(args...)
		if code != 0 {
			t.Fatalf("ratchet %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	contains := func(text string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("output lacks %q:\n%s", w, text)
			}
		}
	}
	must("endpoints", "create", "partners")
	doc := filepath.Join(t.TempDir(), "tool.json")
	if err := os.WriteFile(doc, []byte(`{"name": "sync", "version": "1", "endpoint": "partners"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	must("tools", "publish", "--file", doc)
	out := must("schedules", "create", "nightly", "--cron", "30 2 * * *", "--zone", "America/New_York", "--tool", "sync@1",
		"--payload", `{"at":"{{tickAt}}"}`, "--overlap", "cancel_previous", "--spread", "10m")
	contains(out, "schedule:   nightly", "cron:       30 2 * * * (America/New_York)", "overlap:    cancel_previous", "spread:     600000 ms")
	contains(must("schedules", "list"), "nightly  30 2 * * *  America/New_York  sync@1  active")
	out = must("schedules", "preview", "nightly", "--count", "3")
	if n := strings.Count(out, "\n"); n != 4 || !strings.Contains(out, "TICK") {
		t.Errorf("preview --count 3 printed %d lines:\n%s", n, out)
	}
	contains(must("schedules", "pause", "nightly"), "state:      paused", "next tick:  -")
	contains(must("schedules", "resume", "nightly"), "state:      active")
	contains(must("schedules", "get", "nightly", "--json"), `"name": "nightly"`, `"lastTicks": []`)
	_, errOut, code := remote("schedules", "create", "bad", "--cron", "@every 1s", "--tool", "sync@1")
	if code != 1 || !strings.Contains(errOut, "HTTP 400") || !strings.Contains(errOut, "cron") {
		t.Errorf("@every 1s: exit %d, stderr %q", code, errOut)
	}
	contains(must("schedules", "fire", "nightly"), "fired schedule nightly at ", ": job ")
	contains(must("schedules", "get", "nightly"), "last 24 h:  1 ticks: 1 made a job, 0 skipped, 0 replaced, 0 failed; 0 missed")
	contains(must("schedules", "ticks", "nightly", "--limit", "1"), "TICK", "enqueued", "next page: --cursor ")
	if _, errOut, code := remote("schedules", "ticks", "nightly", "--limit", "501"); code != 2 || !strings.Contains(errOut, `--limit "501" is not allowed`) {
		t.Errorf("ticks --limit 501: exit %d, stderr %q", code, errOut)
	}
	contains(must("schedules", "delete", "nightly"), "deleted schedule nightly")
	if _, _, code := remote("schedules", "get", "nightly"); code != 1 {
		t.Errorf("get after delete: exit %d, want 1", code)
	}
}
