package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/proctest"
)

// TestOperatorCommands drives pause, held, resume, circuit-open,
// circuit-close, run-now and audit against the real binary, and checks
// what a person reads.
func TestOperatorCommands(t *testing.T) {
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
	must("endpoints", "create", "payments")
	must("tools", "publish", "--file", writeTool(t, `{"name":"pay","version":"1","endpoint":"payments"}`))
	id := regexp.MustCompile(`enqueued job (\d+)`).FindStringSubmatch(must("jobs", "enqueue", "--tool", "pay@1"))[1]
	later := regexp.MustCompile(`enqueued job (\d+)`).FindStringSubmatch(must("jobs", "enqueue", "--tool", "pay@1", "--run-at", "2030-01-02T03:04:05Z"))[1]

	out := must("endpoints", "pause", "payments", "--reason", "provider incident #12")
	contains(out, "paused:", "by bootstrap owner at ", ": provider incident #12")
	contains(must("endpoints", "get", "payments"), "provider incident #12")
	out = must("endpoints", "held", "payments")
	contains(out, "held by:  paused", "why:      endpoint payments was paused by bootstrap owner at ", id+"   scheduled")
	if strings.Contains(out, later+" ") {
		t.Errorf("held lists a job not due yet:\n%s", out)
	}
	contains(must("jobs", "explain", id), "held by:  paused")
	if out = must("endpoints", "resume", "payments"); strings.Contains(out, "paused:") {
		t.Errorf("a resumed endpoint still reads paused:\n%s", out)
	}
	contains(must("endpoints", "held", "payments"), "no job of endpoint payments is held by its gates now")

	contains(must("endpoints", "circuit-open", "payments"), "circuit:", "open", "circuit opened by:  bootstrap owner")
	contains(must("endpoints", "held", "payments"), "held by:  circuit")
	contains(must("endpoints", "circuit-close", "payments"), "closed (0 failures")

	contains(must("jobs", "run-now", later), "job "+later+" is due now")
	must("jobs", "cancel", later)
	_, errOut, code := remote("jobs", "run-now", later)
	if code != 1 || !strings.Contains(errOut, "HTTP 409") || !strings.Contains(errOut, "is cancelled") {
		t.Errorf("run-now of a cancelled job: exit %d, stderr %q", code, errOut)
	}

	out = must("audit", "--target", "endpoint:payments")
	contains(out, "ACTOR", "circuit.close", "circuit.open", "endpoint.resume", "endpoint.pause", "bootstrap owner")
	if i, j := strings.Index(out, "circuit.close"), strings.Index(out, "endpoint.pause"); i > j {
		t.Errorf("audit is not newest first:\n%s", out)
	}
	out = must("audit", "--limit", "2")
	contains(out, "job.cancel", "job.run_now", "more: --cursor ")
	contains(must("audit", "--json"), `"entries": [`, `"action": "job.cancel"`)

	_, errOut, code = run(t, "", "audit", "--key", "k", "--limit", "0")
	if code != 2 || !strings.Contains(errOut, `--limit: "0" is not allowed`) {
		t.Errorf("audit --limit 0: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = run(t, "", "endpoints", "pause", "--key", "k")
	if code != 2 || !strings.Contains(errOut, "needs an endpoint NAME") {
		t.Errorf("pause without a name: exit %d, stderr %q", code, errOut)
	}
}

func writeTool(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tool.json")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
