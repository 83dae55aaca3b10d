package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/wire"
)

// failJobs enqueues one single-attempt job per message, claims it and
// reports a 503 with the message (a JSON string, escapes and all).
func (f *fixture) failJobs(t *testing.T, messages ...string) {
	t.Helper()
	for _, m := range messages {
		if status, body := f.call(t, "POST", "/v1/jobs", `{"tool":"charge@1","payload":{},"maxAttempts":1}`); status != 201 {
			t.Fatalf("enqueue: %d %s", status, body)
		}
		_, body := f.call(t, "POST", "/v1/claims", `{"workerId":"w","tools":["charge@1"],"max":1}`)
		var c wire.ClaimResult
		if err := json.Unmarshal([]byte(body), &c); err != nil || len(c.Jobs) != 1 {
			t.Fatalf("claim: %v %s", err, body)
		}
		rep := fmt.Sprintf(`{"leaseToken":%q,"httpStatus":503,"message":%s}`, c.Jobs[0].LeaseToken, m)
		if status, body := f.call(t, "POST", fmt.Sprintf("/v1/jobs/%d/report", c.Jobs[0].ID), rep); status != 200 {
			t.Fatalf("report: %d %s", status, body)
		}
	}
}

// failureFixtures are the API on SQLite and, when reachable, PostgreSQL.
func failureFixtures(t *testing.T) map[string]*fixture {
	out := map[string]*fixture{"sqlite": newFixture(t)}
	if pgtest.Available() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		pg, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		out["postgres"] = newFixtureOn(t, pg)
	} else {
		t.Log("PostgreSQL not reachable: SQLite only")
	}
	return out
}

// TestFailureRoutes: on both drivers, the same failures (one message with
// a NUL and an invalid byte, which PostgreSQL cannot store as sent) give
// the same groups; a preview changes nothing; a replay with the confirmed
// count replays the group and is in the audit log.
func TestFailureRoutes(t *testing.T) {
	groups := map[string]string{}
	for name, f := range failureFixtures(t) {
		if status, body := f.call(t, "POST", "/v1/jobs/1/cancel", ""); status != 200 { // the fixture's job, not one of these
			t.Fatalf("%s: cancel: %d %s", name, status, body)
		}
		f.failJobs(t, `"timeout after 3012ms on req 8f3a"`, `"timeout after 2990ms on req 77b1"`, `"bad \u0000 byte `+"\xff"+` 12"`)
		status, body := f.call(t, "GET", "/v1/endpoints/stripe/failures?buckets=4", "")
		var list wire.FailureGroupList
		if err := json.Unmarshal([]byte(body), &list); status != 200 || err != nil {
			t.Fatalf("%s: groups: %d %v %s", name, status, err, body)
		}
		if len(list.Groups) != 2 || list.Groups[0].Count != 2 || list.Groups[0].Fingerprint != "timeout after <n>ms on req <hex>" ||
			len(list.Groups[0].Sparkline) != 4 || list.Groups[0].Sparkline[3] != 2 || list.Capped || list.Scanned != 3 {
			t.Fatalf("%s: groups %s", name, body)
		}
		var shape []string
		for _, g := range list.Groups {
			shape = append(shape, fmt.Sprintf("%s %s %q %d", g.Group, g.Classification, g.Fingerprint, g.Count))
		}
		groups[name] = strings.Join(shape, "\n")

		group := list.Groups[0].Group
		preview := `{"endpoint":"stripe","group":"` + group + `","preview":true}`
		if status, body := f.call(t, "POST", "/v1/failures/replay", preview); status != 200 || !strings.Contains(body, `"count":2,`) || !strings.Contains(body, `"replayed":0,`) {
			t.Fatalf("%s: preview: %d %s", name, status, body)
		}
		if status, body := f.call(t, "POST", "/v1/failures/replay", `{"endpoint":"stripe","group":"`+group+`","expectedCount":3}`); status != 409 {
			t.Fatalf("%s: replay with a stale count: %d %s", name, status, body)
		}
		status, body = f.call(t, "POST", "/v1/failures/replay", `{"endpoint":"stripe","group":"`+group+`","since":"2020-01-01T00:00:00Z","expectedCount":2}`)
		var res wire.FailureReplayResult
		if err := json.Unmarshal([]byte(body), &res); status != 200 || err != nil || res.Replayed != 2 || len(res.Jobs) != 2 || res.Preview {
			t.Fatalf("%s: replay: %d %v %s", name, status, err, body)
		}
		if status, body := f.call(t, "GET", "/v1/audit?target=endpoint:stripe", ""); status != 200 || !strings.Contains(body, `"action":"failures.replay"`) {
			t.Errorf("%s: audit after replay: %d %s", name, status, body)
		}
		if status, body := f.call(t, "POST", "/v1/failures/replay", preview); status != 200 || !strings.Contains(body, `"count":0,"skipped":2`) {
			t.Errorf("%s: preview after replay: %d %s", name, status, body)
		}
	}
	if pg, ok := groups["postgres"]; ok && pg != groups["sqlite"] {
		t.Errorf("the drivers group differently:\nsqlite:\n%s\npostgres:\n%s", groups["sqlite"], pg)
	}
}

// TestFailureRouteErrors: bad input is a 400 naming the field, the value
// and what is allowed, and stores nothing; a missing endpoint is a 404.
func TestFailureRouteErrors(t *testing.T) {
	f := newFixture(t)
	cases := []struct{ method, path, body, want string }{
		{"GET", "/v1/endpoints/stripe/failures?since=yesterday", ``, `"field":"since","value":"\"yesterday\"","allowed":"must be an RFC 3339 time`},
		{"GET", "/v1/endpoints/stripe/failures?until=2026-13-01T00:00:00Z", ``, `"field":"until"`},
		{"GET", "/v1/endpoints/stripe/failures?since=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z", ``, `"field":"since","value":"\"2026-12-02T00:00:00Z\"","allowed":"must be before until"`},
		{"GET", "/v1/endpoints/stripe/failures?buckets=97", ``, `"field":"buckets","value":"\"97\"","allowed":"must be an integer from 1 through 96"`},
		{"GET", "/v1/endpoints/stripe/failures?limit=1", ``, `"field":"limit"`},
		{"POST", "/v1/failures/replay", `{"state":"scheduled","preview":true}`, `"field":"state","value":"\"scheduled\"","allowed":"must be failed or exhausted, or empty for both"`},
		{"POST", "/v1/failures/replay", `{"group":"XYZ","preview":true}`, `"field":"group"`},
		{"POST", "/v1/failures/replay", `{"classification":"Server Error","preview":true}`, `"field":"classification"`},
		{"POST", "/v1/failures/replay", `{"since":"2026-12-02","preview":true}`, `"field":"since"`},
		{"POST", "/v1/failures/replay", `{"endpoint":"stripe"}`, `"field":"expectedCount","value":"(missing)"`},
		{"POST", "/v1/failures/replay", `{"expectedCount":-1}`, `"field":"expectedCount","value":"-1"`},
		{"POST", "/v1/failures/replay", `{"preview":true,"extra":1}`, `"field":"extra"`},
	}
	for _, c := range cases {
		status, body := f.call(t, c.method, c.path, c.body)
		if status != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s %s %s: %d %.400s (want 400 with %s)", c.method, c.path, c.body, status, body, c.want)
		}
	}
	if status, body := f.call(t, "GET", "/v1/audit", ""); status != 200 || strings.Contains(body, "failures.replay") {
		t.Errorf("a refused replay wrote to the audit log: %s", body)
	}
	if status, body := f.call(t, "GET", "/v1/endpoints/nope/failures", ""); status != 404 {
		t.Errorf("failures of a missing endpoint: %d %s", status, body)
	}
	if status, body := f.call(t, "POST", "/v1/failures/replay", `{"endpoint":"nope","preview":true}`); status != 404 {
		t.Errorf("replay on a missing endpoint: %d %s", status, body)
	}
}
