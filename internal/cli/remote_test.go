package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
)

const ownerKey = "rk_cli_test_owner_key_0123456789"

// TestClientCommands drives the client commands in-process against the real
// ratchet binary on a loopback port, and checks what a person reads.
func TestClientCommands(t *testing.T) {
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey)
	remote := func(t *testing.T, args ...string) (string, string, int) {
		t.Helper()
		return run(t, "", append(args, "--server", srv.URL, "--key", ownerKey)...)
	}
	must := func(t *testing.T, args ...string) string {
		t.Helper()
		out, errOut, code := remote(t, args...)
		if code != 0 {
			t.Fatalf("ratchet %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	contains := func(t *testing.T, text string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("output lacks %q:\n%s", w, text)
			}
		}
	}

	out := must(t, "endpoints", "create", "stripe", "--max-concurrent", "5", "--rate-limit", "600")
	contains(t, out, "name:            stripe", "version:         1", "max concurrent:  5", "rate limit:      600 per minute")
	if strings.Contains(out, "daily budget") {
		t.Errorf("an endpoint without a daily budget prints its line:\n%s", out)
	}
	// A setting without a line of its own prints under its flag's words
	// once it is set.
	contains(t, must(t, "endpoints", "create", "mtr", "--daily-budget", "1000"), "daily budget:    1000")
	// Text settings: a zone and a window, read back; out of bounds, refused
	// naming the flag, the value and what is allowed; "" clears quiet hours.
	contains(t, must(t, "endpoints", "create", "night", "--budget-zone", "Europe/Paris", "--quiet-hours", "22:00-07:00"),
		"budget zone:     Europe/Paris", "quiet hours:     22:00-07:00")
	if _, errOut, code := remote(t, "endpoints", "set-policy", "night", "--quiet-hours", "22:00-24:00"); code == 0 || !strings.Contains(errOut, `--quiet-hours`) || !strings.Contains(errOut, `"22:00-24:00"`) || !strings.Contains(errOut, "HH:MM-HH:MM") {
		t.Errorf("a bad window: exit %d, %s", code, errOut)
	}
	if out := must(t, "endpoints", "set-policy", "night", "--expected-version", "1", "--quiet-hours", ""); strings.Contains(out, "quiet hours") || !strings.Contains(out, "budget zone:     Europe/Paris") {
		t.Errorf("quiet hours cleared:\n%s", out)
	}
	out = must(t, "endpoints", "list")
	contains(t, out, "NAME    VERSION  POLICY    TIMEOUT  MAX CONCURRENT  RATE/MIN  CIRCUIT", "stripe  1        STANDARD  30000ms  5               600       closed")

	doc := filepath.Join(t.TempDir(), "tool.json")
	if err := os.WriteFile(doc, []byte(`{"name": "charge", "version": "1", "endpoint": "stripe", "description": "charge a card", "retryPreset": "AGGRESSIVE"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out = must(t, "tools", "publish", "--file", doc)
	contains(t, out, "tool:            charge@1", "retry:           AGGRESSIVE")
	contains(t, must(t, "tools", "list"), "charge@1  stripe    AGGRESSIVE")
	contains(t, must(t, "tools", "get", "charge@1"), "description:     charge a card")

	out = must(t, "jobs", "enqueue", "--tool", "charge@1", "--payload", `{"order": 42}`, "--idempotency-key", "order-42")
	m := regexp.MustCompile(`^enqueued job (\d+) \(charge@1, scheduled, due \S+, up to \d+ attempts\)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("enqueue printed %q", out)
	}
	first := m[1]
	out = must(t, "jobs", "enqueue", "--tool", "charge@1", "--idempotency-key", "order-42")
	contains(t, out, "job "+first+` already has idempotency key "order-42"`)
	out = must(t, "jobs", "enqueue", "--tool", "charge@1", "--run-at", "2030-01-02T03:04:05Z", "--max-attempts", "2")
	later := regexp.MustCompile(`enqueued job (\d+) .*up to 2 attempts`).FindStringSubmatch(out)
	if later == nil {
		t.Fatalf("enqueue printed %q", out)
	}

	out = must(t, "jobs", "list")
	contains(t, out, "ID  STATE      TOOL      ATTEMPT/MAX  DUE                       HELD BY", later[1]+"   scheduled  charge@1  0/2          2030-01-02T03:04:05.000Z")
	contains(t, out, "due_time until 2030-01-02T03:04:05.000Z  -") // held by, and no last error
	out = must(t, "jobs", "list", "--state", "scheduled", "--limit", "1")
	contains(t, out, "more: --cursor ")
	out = must(t, "jobs", "list", "--q", "order-42")
	contains(t, out, "LAST ERROR", first+"   scheduled  charge@1")
	out = must(t, "jobs", "counts")
	contains(t, out, "scheduled  2", "running    0", "total      2")
	out = must(t, "jobs", "counts", "--tool", "charge@1", "--json")
	contains(t, out, `"scheduled": 2`, `"total": 2`)
	out = must(t, "jobs", "get", first)
	contains(t, out, "job:              "+first, "state:            scheduled", "idempotency key:  order-42", "attempts:         none yet")
	// An attempt the provider answered 503 with Retry-After: 120 shows the
	// hint beside the delay it set a floor for (it was left out).
	c := client.New(srv.URL, ownerKey)
	js, err := c.Claim(t.Context(), client.ClaimRequest{WorkerID: "w", Tools: []string{"charge@1"}, Max: 1})
	if err != nil || len(js) != 1 || strconv.FormatInt(js[0].ID, 10) != first {
		t.Fatalf("claim: %+v, %v", js, err)
	}
	if _, err := c.ReportOne(t.Context(), client.Report{JobID: js[0].ID, LeaseToken: js[0].LeaseToken, HTTPStatus: 503, Headers: map[string]string{"Retry-After": "120"}}); err != nil {
		t.Fatal(err)
	}
	out = must(t, "jobs", "get", first)
	if !regexp.MustCompile(`(?m)^#\s+WORKER\s+OUTCOME\s+CLASSIFICATION\s+HTTP\s+RETRY-AFTER\s+DELAY\s+NEXT DUE$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^1\s+w\s+failed\s+retry_after\s+503\s+120000ms\s+120000ms `).MatchString(out) {
		t.Errorf("jobs get after a 503 with Retry-After: 120 lacks the hint:\n%s", out)
	}
	out = must(t, "jobs", "explain", later[1])
	contains(t, out, "held by:  due_time", "until:    2030-01-02T03:04:05")
	contains(t, must(t, "jobs", "cancel", later[1]), "job "+later[1]+" is cancelled")
	out = must(t, "jobs", "replay", later[1])
	if !regexp.MustCompile(`^replayed job ` + later[1] + ` as job \d+ \(scheduled, due \S+\)\n$`).MatchString(out) {
		t.Errorf("replay printed %q", out)
	}
	out = must(t, "jobs", "get", first, "--json")
	contains(t, out, `"id": `+first, `"idempotencyKey": "order-42"`, `"payload": {`)

	// Policy updates carry the version read; a stale one is the server's 409.
	out = must(t, "endpoints", "set-policy", "stripe", "--expected-version", "1", "--preset", "RELAXED")
	contains(t, out, "version:         2", "policy:          RELAXED", "max concurrent:  5", "rate limit:      600 per minute")
	out, errOut, code := remote(t, "endpoints", "set-policy", "stripe", "--expected-version", "1", "--max-concurrent", "3")
	if code != 1 || out != "" || !strings.Contains(errOut, `endpoint "stripe" is at version 2, not 1: someone else saved first`) || !strings.Contains(errOut, "HTTP 409") {
		t.Errorf("stale version: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	contains(t, must(t, "endpoints", "get", "stripe"), "max concurrent:  5")
	_, errOut, code = remote(t, "endpoints", "set-policy", "stripe", "--expected-version", "2", "--preset", "CUSTOM", "--max-attempts", "3")
	if code != 1 || !strings.Contains(errOut, "ratchet: invalid request (HTTP 400, invalid_request)\nratchet:   initialDelayMs") {
		t.Errorf("field error: exit %d, stderr %q", code, errOut)
	}

	out = must(t, "runs", "start", "--name", "nightly")
	contains(t, out, "name:     nightly", "state:    open")
	must(t, "runs", "start", "--name", "hourly")
	out = must(t, "runs", "list", "--limit", "1")
	contains(t, out, "ID  NAME    STATE  CREATED", "hourly", "more: --cursor ")
	if strings.Contains(out, "nightly") {
		t.Errorf("runs list --limit 1 printed the older run too:\n%s", out)
	}
	next := regexp.MustCompile(`more: --cursor (\S+)`).FindStringSubmatch(out)
	contains(t, must(t, "runs", "list", "--cursor", next[1]), "nightly")
	if _, errOut, code := remote(t, "runs", "list", "--limit", "0"); code != 2 || !strings.Contains(errOut, "limit") {
		t.Errorf("runs list --limit 0: exit %d, stderr %q", code, errOut)
	}

	out = must(t, "keys", "create", "--scope", "worker", "--name", "billing", "--tool", "charge@1")
	km := regexp.MustCompile(`created worker key (\d+) for charge@1\. It is shown once; keep it:\n\n    (rk_\S+)\n`).FindStringSubmatch(out)
	if km == nil {
		t.Fatalf("keys create printed %q", out)
	}
	contains(t, must(t, "keys", "list"), "billing", "worker", "charge@1")
	// The worker key may not enqueue: the server's 403 reaches the person.
	_, errOut, code = run(t, "", "jobs", "enqueue", "--tool", "charge@1", "--server", srv.URL, "--key", km[2])
	if code != 1 || !strings.Contains(errOut, "HTTP 403") {
		t.Errorf("worker key enqueue: exit %d, stderr %q", code, errOut)
	}
	contains(t, must(t, "keys", "revoke", km[1]), "revoked key "+km[1])
	_, errOut, code = run(t, "", "jobs", "list", "--server", srv.URL, "--key", km[2])
	if code != 1 || !strings.Contains(errOut, "HTTP 401") {
		t.Errorf("revoked key: exit %d, stderr %q", code, errOut)
	}

	// Flow keys: given with --flow-key or taken from the payload by the
	// tool's flowKeyFrom, shown by jobs get and tools get, listed by key;
	// a key the server refuses is its 400 naming the field.
	refund := filepath.Join(t.TempDir(), "refund.json")
	if err := os.WriteFile(refund, []byte(`{"name": "refund", "version": "1", "endpoint": "stripe", "flowKeyFrom": "/customer/id"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	contains(t, must(t, "tools", "publish", "--file", refund), "flow key from:   /customer/id")
	enqueued := regexp.MustCompile(`enqueued job (\d+) `)
	keyed := enqueued.FindStringSubmatch(must(t, "jobs", "enqueue", "--tool", "charge@1", "--flow-key", "acct_42"))
	fromPayload := enqueued.FindStringSubmatch(must(t, "jobs", "enqueue", "--tool", "refund@1", "--payload", `{"customer": {"id": 7}}`))
	if keyed == nil || fromPayload == nil {
		t.Fatalf("enqueue with flow keys printed no job ids: %v %v", keyed, fromPayload)
	}
	contains(t, must(t, "jobs", "get", keyed[1]), "flow key:         acct_42")
	contains(t, must(t, "jobs", "get", first), "flow key:         -")
	out = must(t, "jobs", "list", "--flow-key", "7")
	contains(t, out, fromPayload[1]+"   scheduled  refund@1")
	if strings.Count(out, "\n") != 2 {
		t.Errorf("jobs list --flow-key 7 lists more than job %s:\n%s", fromPayload[1], out)
	}
	_, errOut, code = remote(t, "jobs", "enqueue", "--tool", "charge@1", "--flow-key", " acct")
	if code != 1 || !strings.Contains(errOut, "HTTP 400") || !strings.Contains(errOut, "flowKey") {
		t.Errorf("bad flow key: exit %d, stderr %q", code, errOut)
	}

	// --sort orders the list, and the next page's hint carries it with the
	// cursor; an order the server does not know is its 400 naming sort.
	out = must(t, "jobs", "list", "--sort", "id_asc", "--limit", "1")
	if !strings.HasPrefix(strings.SplitN(out, "\n", 2)[1], first+" ") || !strings.Contains(out, "\nmore: --sort id_asc --cursor "+first+"\n") {
		t.Errorf("jobs list --sort id_asc --limit 1 does not start at job %s or hint the next page:\n%s", first, out)
	}
	_, errOut, code = remote(t, "jobs", "list", "--sort", "newest")
	if code != 1 || !strings.Contains(errOut, "HTTP 400") || !strings.Contains(errOut, "sort") || !strings.Contains(errOut, "finished_desc") {
		t.Errorf("bad sort: exit %d, stderr %q", code, errOut)
	}
}

// TestClientUsageErrors needs no server: bad input exits 2 and names the flag.
func TestClientUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"jobs"}, "jobs needs a subcommand"},
		{[]string{"jobs", "frobnicate"}, `jobs subcommand "frobnicate" is not known`},
		{[]string{"jobs", "get", "abc", "--key", "k"}, `ID "abc" is not allowed`},
		{[]string{"jobs", "enqueue", "--key", "k"}, "--tool"},
		{[]string{"jobs", "enqueue", "--key", "k", "--tool", "a@1", "--payload", "{nope"}, "--payload"},
		{[]string{"jobs", "enqueue", "--key", "k", "--tool", "a@1", "--run-at", "tomorrow"}, `--run-at: "tomorrow" is not allowed`},
		{[]string{"endpoints", "set-policy", "stripe", "--key", "k"}, "--expected-version"},
		{[]string{"keys", "create", "--key", "k", "--scope", "admin"}, `--scope: "admin" is not allowed`},
		{[]string{"tools", "list", "--server", "ftp://x", "--key", "k"}, "--server"},
		{[]string{"tools", "list"}, "--key"},
		{[]string{"endpoints", "create", "x", "--key", "k", "--max-concurrent", "0"}, `--max-concurrent: "0" is not allowed; must be an integer from 1 through 100000`},
		{[]string{"bench", "--batch", "0"}, `--batch: "0" is not allowed`},
		{[]string{"bench", "--mode", "outage", "--variant", "storm"}, `--variant: "storm" is not allowed; must be retry-after, 503, refused, slow, flap, noheaders or all`},
		{[]string{"bench", "--mode", "outage", "--nodes", "3"}, `--nodes: "3" is not allowed; more than 1 needs --database postgres://`},
		{[]string{"bench", "--mode", "outage", "--outage-retry-after", "1500ms"}, `--outage-retry-after: "1500ms" is not allowed; must be whole seconds`},
	}
	for _, c := range cases {
		_, errOut, code := run(t, "", c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("ratchet %s: exit %d, stderr %q, want exit 2 and %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
}

// TestBenchCommand runs the bench at a tiny size: the figures are printed
// and positive. Speed is never asserted.
func TestBenchCommand(t *testing.T) {
	out, errOut, code := run(t, "", "bench", "--jobs", "120", "--batch", "25", "--claimers", "2", "--lag-jobs", "10", "--synchronous", "normal")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, re := range []string{`settings: +driver sqlite, synchronous NORMAL, GOMAXPROCS \d+`, `sizes: +N 120 jobs, B 25 jobs per claim and per report, C 2 claimers`,
		`enqueue: +120 jobs in \S+ = [1-9]\d* jobs/s`, `burn-down: +120 jobs in \S+ = [1-9]\d* jobs/s`, `lag: +10 jobs  p50 [\d.]+ ms  p99 [\d.]+ ms  max [\d.]+ ms`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", re, out)
		}
	}
}
