package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestFailuresCommands: failures list prints the groups with a sparkline;
// failures replay without --expect counts and says how to replay; with a
// stale --expect it changes nothing (exit 1); with the count it replays;
// bad flags are usage errors naming the flag.
func TestFailuresCommands(t *testing.T) {
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
	must("endpoints", "create", "payments")
	must("tools", "publish", "--file", writeTool(t, `{"name":"pay","version":"1","endpoint":"payments"}`))
	c, ctx := client.New(srv.URL, ownerKey), context.Background()
	one := int64(1)
	for i := range 3 {
		if _, _, err := c.Enqueue(ctx, client.EnqueueRequest{Tool: "pay@1", Payload: json.RawMessage(`{}`), MaxAttempts: &one}); err != nil {
			t.Fatal(err)
		}
		got, err := c.Claim(ctx, client.ClaimRequest{WorkerID: "w", Tools: []string{"pay@1"}, Max: 1})
		if err != nil || len(got) != 1 {
			t.Fatalf("claim: %v %+v", err, got)
		}
		if _, err := c.ReportOne(ctx, client.Report{JobID: got[0].ID, LeaseToken: got[0].LeaseToken, HTTPStatus: 502, Message: fmt.Sprintf("gateway timeout after %ds", 30+i)}); err != nil {
			t.Fatal(err)
		}
	}
	out := must("failures", "list", "payments", "--buckets", "6")
	m := regexp.MustCompile(`(?m)^([0-9a-f]{12})\s+3\s+0\s+server_error\s.*\|\s{5}█\|\s+gateway timeout after <n>s$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("failures list:\n%s", out)
	}
	group := m[1]
	out = must("failures", "replay", "--endpoint", "payments", "--group", group)
	if !strings.Contains(out, "3 failed jobs would be replayed (0 already replayed, skipped); nothing was changed") ||
		!strings.Contains(out, "ratchet failures replay --endpoint payments --group "+group+" --expect 3") {
		t.Errorf("replay preview:\n%s", out)
	}
	if _, errOut, code := remote("failures", "replay", "--endpoint", "payments", "--group", group, "--expect", "2"); code != 1 || !strings.Contains(errOut, "now holds 3 jobs, not 2") {
		t.Errorf("replay with a stale count: exit %d\n%s", code, errOut)
	}
	if out = must("failures", "replay", "--endpoint", "payments", "--group", group, "--expect", "3"); !strings.Contains(out, "replayed 3 of 3 failed jobs") {
		t.Errorf("replay:\n%s", out)
	}
	if out = must("audit", "--target", "endpoint:payments"); !strings.Contains(out, "failures.replay") {
		t.Errorf("audit after the replay:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"failures", "list", "payments", "--since", "yesterday"}, `--since: "yesterday" is not allowed; must be an RFC 3339 time`},
		{[]string{"failures", "list", "payments", "--buckets", "0"}, `--buckets: "0" is not allowed; must be an integer from 1 through 96`},
		{[]string{"failures", "replay", "--expect", "x"}, `--expect`},
		{[]string{"failures", "replay", "--state", "running"}, `state = "running": must be failed or exhausted, or empty for both`},
		{[]string{"failures", "list"}, `needs an ENDPOINT name`},
	} {
		if _, errOut, code := remote(c.args...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("ratchet %s: exit %d, %s (want %s)", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
}
