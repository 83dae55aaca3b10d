package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
)

// keyFixtures are the API on SQLite and, when reachable, PostgreSQL.
func keyFixtures(t *testing.T) map[string]*fixture {
	out := map[string]*fixture{"sqlite": newFixture(t)}
	if !pgtest.Available() {
		t.Log("PostgreSQL not reachable: SQLite only (./scripts/test runs both)")
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pg, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	out["postgres"] = newFixtureOn(t, pg)
	return out
}

// refusedField is the rejected field of a 400 answer that names name, or
// nil.
func refusedField(t *testing.T, status int, body, name string) map[string]string {
	t.Helper()
	var e struct {
		Error struct {
			Fields []map[string]string `json:"fields"`
		} `json:"error"`
	}
	if status != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil {
		return nil
	}
	for _, f := range e.Error.Fields {
		if f["field"] == name {
			return f
		}
	}
	return nil
}

// TestKeysMustBeTheTextTheySpell: a flow key or an idempotency key that is
// not valid UTF-8 text — invalid bytes, or the \u escape of a lone
// surrogate — is refused with a 400 naming the field, the key as sent and
// what is allowed, wherever it arrives (a job, a batch item, a schedule,
// the payload member a tool's flowKeyFrom points at, the Idempotency-Key
// header), the same on both drivers. Before, encoding/json read each as
// U+FFFD: "acct\xff" and "acct\xfe" were one tenant sharing one limit and
// "idem\xff" and "idem\xfe" returned the same job.
func TestKeysMustBeTheTextTheySpell(t *testing.T) {
	cases := []struct {
		name, path, body, header string
		field, value             string
	}{
		{"flowKey bytes", "/v1/jobs", `{"tool":"charge@1","payload":{},"flowKey":"acct` + "\xff" + `"}`, "", "flowKey", `"acct\xff"`},
		{"flowKey other bytes", "/v1/jobs", `{"tool":"charge@1","payload":{},"flowKey":"acct` + "\xfe" + `"}`, "", "flowKey", `"acct\xfe"`},
		{"flowKey lone low surrogate", "/v1/jobs", `{"tool":"charge@1","payload":{},"flowKey":"acct\udcff"}`, "", "flowKey", `"acct\udcff"`},
		{"flowKey NUL", "/v1/jobs", `{"tool":"charge@1","payload":{},"flowKey":"acct\u0000"}`, "", "flowKey", `"acct\x00"`},
		{"idempotencyKey bytes", "/v1/jobs", `{"tool":"charge@1","payload":{},"idempotencyKey":"idem` + "\xff" + `"}`, "", "idempotencyKey", `"idem\xff"`},
		{"idempotencyKey lone high surrogate", "/v1/jobs", `{"tool":"charge@1","payload":{},"idempotencyKey":"idem\ud800x"}`, "", "idempotencyKey", `"idem\ud800x"`},
		{"Idempotency-Key header", "/v1/jobs", `{"tool":"charge@1","payload":{}}`, "idem\xff", "Idempotency-Key", `"idem\xff"`},
		{"batch flowKey", "/v1/jobs/batch", `{"jobs":[{"tool":"charge@1","payload":{}},{"tool":"charge@1","payload":{},"flowKey":"acct` + "\xff" + `"}]}`, "", "jobs[1].flowKey", `"acct\xff"`},
		{"batch idempotencyKey", "/v1/jobs/batch", `{"jobs":[{"tool":"charge@1","payload":{},"idempotencyKey":"\udcff"}]}`, "", "jobs[0].idempotencyKey", `"\udcff"`},
		{"flowKeyFrom", "/v1/jobs", `{"tool":"acct@1","payload":{"acct":"a\udcff"}}`, "", "payload.acct", `"a\udcff"`},
		{"schedule flowKey", "/v1/schedules", `{"name":"s","cron":"*/5 * * * *","tool":"charge@1","payload":{},"flowKey":"acct` + "\xff" + `"}`, "", "flowKey", `"acct\xff"`},
		{"tool name bytes", "/v1/tools", `{"name":"t` + "\xff" + `","version":"1","endpoint":"stripe"}`, "", "name", `"t\xff"`},
		{"tool flowKeyFrom surrogate", "/v1/tools", `{"name":"t","version":"1","endpoint":"stripe","flowKeyFrom":"/acct\udcff"}`, "", "flowKeyFrom", `"/acct\udcff"`},
		{"schedule flowKey surrogate", "/v1/schedules", `{"name":"s","cron":"*/5 * * * *","tool":"charge@1","payload":{},"flowKey":"\udfff"}`, "", "flowKey", `"\udfff"`},
	}
	for driver, f := range keyFixtures(t) {
		if status, body := f.call(t, "POST", "/v1/tools", `{"name":"acct","version":"1","endpoint":"stripe","flowKeyFrom":"/acct"}`); status != 201 {
			t.Fatalf("%s: publish: %d %s", driver, status, body)
		}
		for _, c := range cases {
			req, _ := http.NewRequest("POST", f.srv.URL+c.path, strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			if c.header != "" {
				req.Header.Set("Idempotency-Key", c.header)
			}
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			_, _ = io.Copy(&b, resp.Body)
			resp.Body.Close()
			got := refusedField(t, resp.StatusCode, b.String(), c.field)
			if got == nil || got["value"] != c.value || !strings.Contains(got["allowed"], "UTF-8 text") {
				t.Errorf("%s: %s: %d %.400s\nwant a 400 naming %s with value %s and what is allowed", driver, c.name, resp.StatusCode, b.String(), c.field, c.value)
			}
		}
		// A surrogate pair is a character like any other.
		status, body := f.call(t, "POST", "/v1/jobs", `{"tool":"acct@1","payload":{"acct":"a\ud83e\udd80"},"idempotencyKey":"crab\ud83e\udd80"}`)
		if status != 201 || !strings.Contains(body, `"flowKey":"a🦀"`) || !strings.Contains(body, `"idempotencyKey":"crab🦀"`) {
			t.Errorf("%s: a surrogate pair: %d %.400s", driver, status, body)
		}
	}
}
