package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/api"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/sqlite"
)

const key = "rk_api_test_owner_key_000000000"

type fixture struct {
	srv *httptest.Server
	api *api.API
}

// newFixture serves the API in-process on loopback over a real SQLite file,
// with an endpoint, a tool and a job to aim at.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "api.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	return newFixtureOn(t, st)
}

// newFixtureOn is newFixture on a given store (SQLite or PostgreSQL).
func newFixtureOn(t testing.TB, st store.Store, configure ...func(*engine.Config)) *fixture {
	t.Helper()
	ctx := context.Background()
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := engine.Config{Store: st}
	for _, c := range configure {
		c(&cfg)
	}
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Bootstrap(ctx, key); err != nil {
		t.Fatal(err)
	}
	a := api.New(e, slog.New(slog.DiscardHandler), nil, make(chan struct{}))
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := &fixture{srv: srv, api: a}
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/endpoints", `{"name":"stripe","preset":"CUSTOM","maxAttempts":6,"initialDelayMs":10000,"multiplier":2,"maxDelayMs":600000,"jitterPercent":20}`},
		{"POST", "/v1/tools", `{"name":"charge","version":"1","endpoint":"stripe","payloadSchema":{"type":"object"}}`},
		{"POST", "/v1/jobs", `{"tool":"charge@1","payload":{"a":1}}`},
		{"POST", "/v1/runs", `{"name":"r"}`},
	} {
		if status, body := f.call(t, r.method, r.path, r.body); status >= 300 {
			t.Fatalf("seed %s %s: %d %s", r.method, r.path, status, body)
		}
	}
	return f
}

func (f *fixture) call(t testing.TB, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func concrete(path string) string {
	r := strings.NewReplacer("{id}", "1", "{name}", "stripe", "{version}", "1")
	return r.Replace(path)
}

// TestOpenAPIMatchesRoutes checks the document against the mux both ways:
// every documented operation is served (never the router's 404 or 405) and
// every route is documented with its method.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	f := newFixture(t)
	doc := f.api.OpenAPI("test")
	paths := doc["paths"].(map[string]any)
	routes := f.api.Routes()
	seen := map[string]bool{}
	for _, r := range routes {
		item, ok := paths[r.Path].(map[string]any)
		if !ok || item[strings.ToLower(r.Method)] == nil {
			t.Errorf("route %s %s is not in the OpenAPI document", r.Method, r.Path)
		}
		seen[strings.ToLower(r.Method)+" "+r.Path] = true
		status, body := f.call(t, r.Method, concrete(r.Path), "{}")
		if status == http.StatusMethodNotAllowed || strings.Contains(body, "no such route") {
			t.Errorf("%s %s: the documented operation is not served: %d %s", r.Method, r.Path, status, body)
		}
		if status >= 500 {
			t.Errorf("%s %s with {}: %d %s", r.Method, r.Path, status, body)
		}
	}
	for p, item := range paths {
		for m := range item.(map[string]any) {
			if strings.HasPrefix(p, "/v1/") && !seen[m+" "+p] {
				t.Errorf("the document lists %s %s, which no route serves", m, p)
			}
		}
	}
	// The document is valid JSON with resolvable component references.
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, ref := range refRE(string(raw)) {
		if _, ok := schemas[ref]; !ok {
			t.Errorf("dangling $ref to %s", ref)
		}
	}
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi version %v", doc["openapi"])
	}
}

func refRE(s string) []string {
	var out []string
	for _, part := range strings.Split(s, `"$ref":"#/components/schemas/`)[1:] {
		out = append(out, part[:strings.Index(part, `"`)])
	}
	return out
}

func TestErrorsNameTheField(t *testing.T) {
	f := newFixture(t)
	cases := []struct{ method, path, body, want string }{
		{"POST", "/v1/jobs", `{"tool":"charge@1","maxAttempts":"3"}`, `"field":"maxAttempts"`},
		{"POST", "/v1/jobs", `{"tool":"charge@1","bogus":1}`, `"field":"bogus"`},
		{"POST", "/v1/jobs", `{"tool":`, `malformed JSON`},
		{"POST", "/v1/jobs", `[]`, `must be a JSON object`},
		{"POST", "/v1/endpoints", `{"name":"x","maxAttempts":3}`, `"field":"preset"`},
		{"POST", "/v1/endpoints", `{"name":"y","preset":"RELAXED","maxAttempts":3}`, `preset RELAXED forbids custom fields`},
		{"PUT", "/v1/endpoints/stripe/policy", `{"preset":"STANDARD"}`, `"field":"expectedVersion"`},
		{"POST", "/v1/claims", `{"workerId":"w","tools":["charge@1"],"max":5000}`, `"field":"max"`},
		{"GET", "/v1/jobs?state=lost", ``, `"field":"state"`},
		{"GET", "/v1/history?hours=0", ``, `"field":"hours"`},
		{"GET", "/v1/history?hours=49", ``, `"field":"hours"`},
		{"GET", "/v1/history?hours=six", ``, `"field":"hours"`},
		{"GET", "/v1/jobs?q=" + strings.Repeat("%C3%A9", 201), ``, `"field":"q"`},
		{"GET", "/v1/jobs/count?q=" + strings.Repeat("a", 201), ``, `at most 200 characters`},
		// Flow keys (docs/flow-control.md): the key, the tool's pointer,
		// the payload member the pointer finds nothing usable at, the
		// filter.
		{"POST", "/v1/jobs", `{"tool":"charge@1","flowKey":"a\u0001b"}`, `"field":"flowKey","value":"\"a\\x01b\""`},
		{"POST", "/v1/jobs", `{"tool":"charge@1","flowKey":"` + strings.Repeat("k", 129) + `"}`, `"field":"flowKey","value":"a key of 129 bytes","allowed":"must be at most 128 bytes`},
		{"POST", "/v1/jobs", `{"tool":"charge@1","flowKey":"a\u0000"}`, `"field":"flowKey"`},
		{"POST", "/v1/jobs/batch", `{"jobs":[{"tool":"charge@1"},{"tool":"charge@1"},{"tool":"charge@1"},{"tool":"charge@1","flowKey":" x"}]}`, `"field":"jobs[3].flowKey"`},
		{"POST", "/v1/tools", `{"name":"t","version":"1","endpoint":"stripe","flowKeyFrom":"customer/id"}`, `"field":"flowKeyFrom","value":"\"customer/id\"","allowed":"must be a JSON Pointer`},
		{"POST", "/v1/tools", `{"name":"t","version":"1","endpoint":"stripe","flowKeyFrom":7}`, `"field":"flowKeyFrom"`},
		{"POST", "/v1/jobs", `{"tool":"by-customer@1","payload":{"customer":{"id":true}}}`, `"field":"payload.customer.id","value":"true","allowed":"must be a string or an integer`},
		{"POST", "/v1/jobs/batch", `{"jobs":[{"tool":"by-customer@1","payload":{"customer":{"id":"c1"}}},{"tool":"by-customer@1"}]}`, `"field":"jobs[1].payload.customer.id","value":"(missing)"`},
		{"GET", "/v1/jobs?flowKey=%01", ``, `"field":"flowKey"`},
		// Schedules (docs/schedules.md): the expression, the bound on
		// frequency, the zone, the spread against the interval, text.
		{"POST", "/v1/schedules", `{"name":"s","cron":"99 * * * *","tool":"charge@1"}`, `"field":"cron","value":"\"99 * * * *\"","allowed":"minute field \"99\": \"99\" must be 0-59`},
		{"POST", "/v1/schedules", `{"name":"s","cron":"0 9 * * 8","tool":"charge@1"}`, `"field":"cron","value":"\"0 9 * * 8\"","allowed":"day-of-week field \"8\": \"8\" must be 0-7 (0 and 7 are Sunday) or SUN-SAT`},
		{"POST", "/v1/schedules", `{"name":"s","cron":"* * * * *","tool":"charge@1","payload":"` + strings.Repeat("{{tickAt}}", 26_000) + `"}`, `"field":"payload","value":"624002 bytes once each {{tickAt}} becomes a tick time","allowed":"must be at most 262144 bytes`},
		{"POST", "/v1/schedules", `{"name":"s","cron":"@every 2s","tool":"charge@1"}`, `"field":"cron","value":"\"@every 2s\"","allowed":"\"@every \u003cduration\u003e\" must be whole seconds from 10s`},
		{"POST", "/v1/schedules", `{"name":"s","cron":"@hourly","timeZone":"Moon/Base","tool":"charge@1"}`, `"field":"timeZone","value":"\"Moon/Base\"","allowed":"must be an IANA time zone name`},
		{"POST", "/v1/schedules", `{"name":"s","cron":"*/5 * * * *","spreadMs":300000,"tool":"charge@1"}`, `"field":"spreadMs","value":"300000","allowed":"must be shorter than the schedule's shortest interval, 300000 ms"`},
		{"POST", "/v1/schedules", `{"name":"s","cron":"@hourly","tool":"charge@1","flowKey":"a\u0000"}`, `"field":"flowKey"`},
		{"POST", "/v1/schedules", `{"name":"s","cron":"@hourly\u0000","tool":"charge@1"}`, `"field":"cron"`},
		{"GET", "/v1/schedules/none/preview?count=101", ``, `"field":"count"`},
		{"GET", "/v1/schedules?limit=501", ``, `"field":"limit","value":"\"501\"","allowed":"must be an integer from 1 through 500"`},
		{"GET", "/v1/schedules?cursor=%20x", ``, `"field":"cursor","value":"\" x\"","allowed":"must be the nextCursor of the previous page"`},
		{"GET", "/v1/schedules/none/ticks?cursor=x", ``, `"field":"cursor"`},
		{"GET", "/v1/jobs/count?flowKey=" + strings.Repeat("k", 129), ``, `"field":"flowKey"`},
		{"GET", "/v1/stream?view=jobs&flowKey=%20k", ``, `"field":"flowKey"`},
		// Budgets and quiet hours (docs/flow-control.md): the zone, the
		// window, the budgets' ranges, a text given as another type.
		{"POST", "/v1/endpoints", `{"name":"b","budgetTimeZone":"Mars/Olympus"}`, `"field":"budgetTimeZone","value":"\"Mars/Olympus\"","allowed":"must be an IANA time zone name`},
		{"POST", "/v1/endpoints", `{"name":"b","budgetTimeZone":"` + strings.Repeat("A", 65) + `"}`, `"field":"budgetTimeZone","value":"\"AAAA`},
		{"POST", "/v1/endpoints", `{"name":"b","budgetTimeZone":"Local"}`, `"field":"budgetTimeZone"`},
		{"POST", "/v1/endpoints", `{"name":"b","quietHours":"22:00-25:00"}`, `"field":"quietHours","value":"\"22:00-25:00\"","allowed":"must be \"HH:MM-HH:MM\" in 24-hour time`},
		{"POST", "/v1/endpoints", `{"name":"b","quietHours":"07:00-07:00"}`, `"field":"quietHours","value":"\"07:00-07:00\""`},
		{"POST", "/v1/endpoints", `{"name":"b","quietHours":2200}`, `"field":"quietHours","value":"2200","allowed":"must be a string`},
		{"POST", "/v1/endpoints", `{"name":"b","monthlyCallBudget":0}`, `"field":"monthlyCallBudget","value":"0","allowed":"must be null (no limit) or an integer from 1 through 100000000`},
		{"POST", "/v1/endpoints", `{"name":"b","keyDailyCallBudget":100000001}`, `"field":"keyDailyCallBudget"`},
		{"POST", "/v1/endpoints", `{"name":"b","keyMonthlyCallBudget":-1}`, `"field":"keyMonthlyCallBudget"`},
	}
	if status, body := f.call(t, "POST", "/v1/tools", `{"name":"by-customer","version":"1","endpoint":"stripe","flowKeyFrom":"/customer/id"}`); status != 201 {
		t.Fatalf("publish a tool with flowKeyFrom: %d %s", status, body)
	}
	for _, c := range cases {
		status, body := f.call(t, c.method, c.path, c.body)
		if status != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s %s %s: %d %s (want 400 with %s)", c.method, c.path, c.body, status, body, c.want)
		}
	}
}

// FuzzRoutes posts arbitrary bodies to every route: never a 5xx, never a
// panic (a panic would surface as a 500 from the recovery handler).
func FuzzRoutes(f *testing.F) {
	fx := newFixture(f)
	routes := fx.api.Routes()
	// Seeds name their route, so adding a route leaves them aimed right.
	f.Add("GET /v1/me", []byte(`{}`), "1", "")
	f.Add("POST /api/simulate/recovery", []byte(`{"backlog":30,"capacityPerS":2,"ramp":{"limitPerS":9},"strategies":["learned"]}`), "", "")
	f.Add("POST /v1/schedules", []byte(`{"name":"s","cron":"*/5 * * * *","timeZone":"America/New_York","tool":"charge@1","payload":{"at":"{{tickAt}}"},"spreadMs":60000,"overlap":"cancel_previous","catchUp":"all","catchUpLimit":3}`), "1", "")
	f.Add("GET /v1/schedules/{name}/preview", []byte(``), "s", "count=5")
	f.Add("GET /v1/schedules", []byte(``), "s", "cursor=a-sync&limit=2")
	f.Add("GET /v1/schedules/{name}/ticks", []byte(``), "s", "cursor=1796205600000&limit=50")
	f.Add("POST /v1/schedules/{name}/fire", []byte(``), "s", "")
	f.Add("POST /v1/jobs", []byte(`{"tool":"charge@1","payload":{"a":1},"maxAttempts":3,"runAt":"2026-12-02T09:00:00Z"}`), "1", "")
	f.Add("POST /v1/jobs/batch", []byte(`{"jobs":[{"tool":"charge@1"},{"tool":"nope@1"}]}`), "1", "")
	f.Add("POST /v1/jobs", []byte(`{"tool":"charge@1","flowKey":"acct_42","payload":{"customer":{"id":7}}}`), "1", "")
	f.Add("POST /v1/tools", []byte(`{"name":"t","version":"3","endpoint":"stripe","flowKeyFrom":"/customer/id~1x~0"}`), "x", "")
	f.Add("GET /v1/jobs", []byte(``), "1", "flowKey=acct_42&state=scheduled")
	f.Add("POST /v1/claims", []byte(`{"workerId":"w","tools":["charge@1"],"max":10}`), "1", "")
	f.Add("POST /v1/reports", []byte(`{"reports":[{"jobId":1,"leaseToken":"x","httpStatus":503,"headers":{"Retry-After":"120"}}]}`), "1", "")
	f.Add("PUT /v1/endpoints/{name}/policy", []byte(`{"expectedVersion":1,"preset":"CUSTOM","maxAttempts":6,"initialDelayMs":10000,"multiplier":2,"maxDelayMs":600000,"jitterPercent":20,"defaultTimeoutMs":30000,"maxConcurrent":10,"rateLimitPerMinute":null}`), "stripe", "")
	f.Add("POST /v1/tools", []byte(`{"name":"t","version":"2","endpoint":"stripe","retryPreset":"CUSTOM","retryPolicy":{"maxAttempts":2}}`), "x", "")
	f.Add("POST /v1/endpoints/{name}/pause", []byte(`{"reason":"provider incident #12"}`), "stripe", "")
	f.Add("POST /v1/endpoints", []byte(`{"name":"quiet","dailyCallBudget":1000,"monthlyCallBudget":20000,"budgetTimeZone":"Europe/Paris","quietHours":"22:00-07:00","keyDailyCallBudget":5,"keyMonthlyCallBudget":50}`), "x", "")
	f.Add("POST /v1/jobs/bulk", []byte(`{"action":"run_now","ids":[1,2],"expectedCount":2}`), "1", "")
	f.Add("GET /v1/audit", []byte(``), "1", "")
	f.Add("POST /v1/jobs/{id}/report", []byte("{\"leaseToken\":\"x\",\"message\":\"\\u0000\xff\"}"), "1\x00", "")
	f.Add("GET /v1/jobs", []byte(``), "1", "state=failed&endpoint=stripe&q=card_declined&limit=50&cursor=10")
	f.Add("GET /v1/jobs", []byte(``), "1", "createdAfter=2026-12-02T09:00:00Z&createdBefore=2026-12-03T00:00:00.000Z&state=scheduled,running")
	f.Add("GET /v1/jobs/count", []byte(``), "1", "q=%00%ff&tool=charge@1&runId=1")
	f.Add("GET /v1/stream", []byte(``), "1", "view=jobs&state=failed&q=x")
	f.Add("GET /v1/stream", []byte(``), "1", "job=1&view=overview")
	f.Add("GET /v1/history", []byte(``), "1", "hours=48&endpoint=stripe&hours=1")
	f.Add("GET /v1/endpoints/{name}/held", []byte(``), "stripe", "cursor=-1&limit=1001")
	f.Add("GET /v1/endpoints/{name}/events", []byte(``), "stripe", "since=2026-12-02T09:00:00Z&cursor=5&limit=2")
	f.Add("POST /v1/alerts/sinks", []byte(`{"name":"pager","kind":"webhook","url":"http://10.0.0.1/hook"}`), "", "")
	f.Add("PUT /v1/alerts/settings", []byte(`{"pausedAfterMs":1,"failureRatePercent":101,"failureRateMin":0,"windowMs":0,"maxPerWindow":1000}`), "", "")
	f.Add("POST /v1/alerts/sinks/{name}/test", []byte(``), "pager", "")
	f.Add("GET /v1/alerts", []byte(``), "", "limit=0")
	f.Add("GET /v1/audit", []byte(``), "1", "target=endpoint:stripe&limit=0&extra=1")
	f.Add("GET /v1/endpoints/{name}/failures", []byte(``), "stripe", "since=2026-12-02T09:00:00Z&until=2026-12-03T00:00:00.000Z&buckets=96")
	f.Add("POST /v1/failures/replay", []byte(`{"endpoint":"stripe","state":"exhausted","classification":"server_error","group":"00aaa941f925","since":"2026-01-01T00:00:00Z","preview":true}`), "1", "")
	f.Add("POST /v1/failures/replay", []byte(`{"group":"00aaa941f925","expectedCount":0}`), "1", "")
	f.Fuzz(func(t *testing.T, which string, body []byte, param, query string) {
		r := routes[len(which)%len(routes)]
		for _, rr := range routes {
			if rr.Method+" "+rr.Path == which {
				r = rr
				break
			}
		}
		if r.Path == "/v1/dev/clock" {
			return
		}
		path := strings.NewReplacer("{id}", param, "{name}", param, "{version}", param).Replace(r.Path)
		if strings.ContainsFunc(query, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return // no valid request line carries it: net/http answers 400 before any handler
		}
		if query != "" {
			path += "?" + query
		}
		req, err := http.NewRequest(r.Method, fx.srv.URL+path, bytes.NewReader(body))
		if err != nil {
			return // not a valid URL at all: nothing reaches the server
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := fx.srv.Client().Do(req)
		if err != nil {
			return
		}
		if resp.StatusCode == http.StatusOK && r.Path == "/v1/stream" {
			resp.Body.Close() // a stream that opened runs until closed
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s %q: %d %s", r.Method, path, body, resp.StatusCode, b)
		}
		if resp.StatusCode >= 400 && !json.Valid(b) {
			t.Fatalf("%s %s: error body is not JSON: %s", r.Method, path, b)
		}
	})
}

// TestClientGoneIsNoServerError sends requests whose client has already
// gone (a worker stopping mid long poll): the store work is cancelled and
// rolled back, and the answer is 499, not a 500 that would page someone.
func TestClientGoneIsNoServerError(t *testing.T) {
	f := newFixture(t)
	mux := http.NewServeMux()
	f.api.Register(mux)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/claims", `{"workerId":"w","tools":["charge@1"],"max":5,"waitMs":1000}`},
		{"POST", "/v1/jobs", `{"tool":"charge@1","payload":{"a":2}}`},
	} {
		req := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body)).WithContext(ctx)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != 499 {
			t.Errorf("%s %s with the client gone: %d %s, want 499", r.method, r.path, rec.Code, rec.Body)
		}
	}
	// Nothing was enqueued or claimed by them.
	if status, body := f.call(t, "GET", "/v1/jobs/count?state=scheduled", ""); status != 200 || !strings.Contains(body, `"count":1`) {
		t.Errorf("scheduled jobs after the cancelled requests: %d %s, want the one seeded", status, body)
	}
}
