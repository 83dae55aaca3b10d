package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getratchet/ratchet/internal/api"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
)

// baseBodies are a valid body for every route that takes one. The hostile
// test replaces one string of a base body at a time; a route missing here
// fails the test, so a new route cannot escape it.
var baseBodies = map[string]string{
	"POST /v1/keys":                   `{"name":"k","scope":"worker","tools":["charge@1"]}`,
	"POST /v1/endpoints":              `{"name":"ep2","preset":"STANDARD"}`,
	"PUT /v1/endpoints/{name}/policy": `{"expectedVersion":1,"preset":"STANDARD","defaultTimeoutMs":30000,"maxConcurrent":10,"rateLimitPerMinute":null}`,
	"POST /v1/endpoints/{name}/pause": `{"reason":"provider incident"}`,
	"POST /v1/tools":                  `{"name":"t2","version":"1","endpoint":"stripe","description":"d","payloadSchema":{"type":"object"}}`,
	"POST /v1/runs":                   `{"name":"r"}`,
	"POST /v1/schedules":              `{"name":"s","cron":"*/5 * * * *","timeZone":"Europe/London","tool":"charge@1","payload":{"s":"x"},"flowKey":"acme","overlap":"skip","catchUp":"latest"}`,
	"POST /v1/jobs":                   `{"tool":"charge@1","payload":{"s":"x"},"idempotencyKey":"k1","runAt":"2026-01-01T00:00:00Z"}`,
	"POST /v1/jobs/batch":             `{"jobs":[{"tool":"charge@1","payload":{"s":"x"},"idempotencyKey":"k2","runAt":"2026-01-01T00:00:00Z"}]}`,
	"POST /v1/jobs/bulk":              `{"action":"cancel","filter":{"state":"failed","tool":"charge@1","endpoint":"stripe","runId":"1","createdAfter":"2026-01-01T00:00:00Z","createdBefore":"2030-01-01T00:00:00Z","cursor":"1","limit":"5"},"expectedCount":0}`,
	"POST /v1/failures/replay":        `{"endpoint":"stripe","state":"failed","classification":"server_error","group":"0123456789ab","since":"2026-01-01T00:00:00Z","until":"2030-01-01T00:00:00Z","expectedCount":0}`,
	"POST /v1/claims":                 `{"workerId":"w","tools":["charge@1"],"max":1}`,
	"POST /v1/jobs/{id}/heartbeat":    `{"leaseToken":"x"}`,
	"POST /v1/jobs/{id}/report":       `{"leaseToken":"x","success":false,"httpStatus":503,"headers":{"Retry-After":"1"},"errorKind":"","message":"m"}`,
	"POST /v1/reports":                `{"reports":[{"jobId":1,"leaseToken":"x","httpStatus":503,"headers":{"Retry-After":"1"},"message":"m"}]}`,
	"POST /v1/dev/clock":              `{"advanceMs":0,"now":"x"}`,
	"POST /api/simulate":              `{"to":20,"runs":1,"modes":["full"]}`,
	"POST /api/simulate/recovery":     `{"backlog":50,"capacityPerS":10,"strategies":["at-once","ramp"]}`,
}

// hostile are the strings sent through every string field.
var hostile = []string{
	"nul\x00inside",
	"\x00",
	"bad\xffutf8\xfe",
	"\u202eright-to-left",
	"'; DROP TABLE jobs; --",
	strings.Repeat("é", 2100),
	strings.Repeat("x", 5000),
	"emoji 🦀 and 𝄞",
	"",
}

// stringPaths lists the JSON paths of every string of t ("tools[0]",
// "headers.*", "jobs[0].idempotencyKey"), from the wire type itself.
func stringPaths(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	switch t.Kind() {
	case reflect.String:
		return []string{prefix}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 { // json.RawMessage: the payload
			return []string{prefix + ".*"}
		}
		return stringPaths(t.Elem(), prefix+"[0]")
	case reflect.Map:
		return []string{prefix + ".*"}
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if f.Anonymous && f.Tag.Get("json") == "" {
				out = append(out, stringPaths(f.Type, prefix)...)
				continue
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			out = append(out, stringPaths(f.Type, p)...)
		}
	}
	return out
}

var indexRE = regexp.MustCompile(`^(\w+)\[0\]$`)

// setPath sets the string at path in a decoded JSON document ("a.*" sets
// a member named "k" of object a; "a[0]" the first element).
func setPath(doc map[string]any, path, v string) {
	parts := strings.Split(path, ".")
	var cur any = doc
	for i, p := range parts {
		last := i == len(parts)-1
		obj, ok := cur.(map[string]any)
		if !ok {
			return
		}
		key, indexed := p, false
		if m := indexRE.FindStringSubmatch(p); m != nil {
			key, indexed = m[1], true
		}
		if p == "*" {
			obj["k"] = v
			return
		}
		if indexed {
			arr, _ := obj[key].([]any)
			if len(arr) == 0 {
				arr = []any{map[string]any{}}
				obj[key] = arr
			}
			if last {
				arr[0] = v
				return
			}
			cur = arr[0]
			continue
		}
		if last {
			obj[key] = v
			return
		}
		if _, ok := obj[key].(map[string]any); !ok {
			obj[key] = map[string]any{}
		}
		cur = obj[key]
	}
}

type hostileCase struct{ method, path, body string }

func hostileCases(t *testing.T, routes []api.Route) []hostileCase {
	var out []hostileCase
	paramRE := regexp.MustCompile(`\{(\w+)\}`)
	concreteParam := func(p string) string {
		return strings.NewReplacer("{id}", "1", "{name}", "stripe", "{version}", "1").Replace(p)
	}
	for _, r := range routes {
		key := r.Method + " " + r.Path
		base := ""
		if r.RequestType() != nil {
			var ok bool
			if base, ok = baseBodies[key]; !ok {
				t.Errorf("%s takes a body but has no base body in baseBodies: add one", key)
				continue
			}
			var probe map[string]any
			if err := json.Unmarshal([]byte(base), &probe); err != nil {
				t.Fatalf("base body of %s: %v", key, err)
			}
			for _, path := range stringPaths(r.RequestType(), "") {
				for _, h := range hostile {
					var doc map[string]any
					_ = json.Unmarshal([]byte(base), &doc)
					setPath(doc, path, h)
					b, _ := json.Marshal(doc)
					// encoding/json writes invalid UTF-8 as U+FFFD; put the
					// raw bytes back so the server sees them as a client
					// could send them.
					b = []byte(strings.ReplaceAll(string(b), `\ufffd`, "\xff"))
					out = append(out, hostileCase{r.Method, concreteParam(r.Path), string(b)})
				}
			}
		}
		for _, m := range paramRE.FindAllStringSubmatch(r.Path, -1) {
			for _, h := range hostile[:4] {
				p := strings.Replace(r.Path, m[0], url.PathEscape(h), 1)
				out = append(out, hostileCase{r.Method, concreteParam(p), base})
			}
		}
		if r.Method == "GET" && (r.Path == "/v1/jobs" || r.Path == "/v1/jobs/count") {
			for _, q := range []string{"state", "tool", "endpoint", "runId", "createdAfter", "createdBefore", "cursor", "limit"} {
				for _, h := range hostile[:4] {
					out = append(out, hostileCase{r.Method, r.Path + "?" + q + "=" + url.QueryEscape(h), ""})
				}
			}
		}
	}
	return out
}

// TestHostileTextEveryField sends hostile strings (NUL, invalid UTF-8,
// long non-ASCII text, ...) through every string field of every route's
// request, every path parameter and every query parameter, to SQLite and,
// when it is reachable, PostgreSQL. No answer may be a 5xx, every error is
// JSON, both drivers answer every request with the same status, and the
// server keeps serving. Before the boundary's text rule, a NUL in an
// identifier answered 500 on PostgreSQL (SQLSTATE 22021) while SQLite
// stored it.
func TestHostileTextEveryField(t *testing.T) {
	sq := newFixture(t)
	cases := hostileCases(t, sq.api.Routes())
	if len(cases) < 500 {
		t.Fatalf("only %d cases: the route table walk is broken", len(cases))
	}
	fixtures := map[string]*fixture{"sqlite": sq}
	if pgtest.Available() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		pg, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		fixtures["postgres"] = newFixtureOn(t, pg)
	} else {
		t.Log("PostgreSQL not reachable: SQLite only (./scripts/test runs both)")
	}
	names := make([]string, 0, len(fixtures))
	for n := range fixtures {
		names = append(names, n)
	}
	sort.Strings(names)
	mismatches := 0
	for _, c := range cases {
		statuses := map[string]int{}
		for _, n := range names {
			status, body := fixtures[n].rawCall(t, c.method, c.path, c.body)
			statuses[n] = status
			if status >= 500 {
				t.Errorf("%s: %s %s %.200q: %d %.300s", n, c.method, c.path, c.body, status, body)
			} else if status >= 400 && !json.Valid([]byte(body)) {
				t.Errorf("%s: %s %s: error body is not JSON: %.200s", n, c.method, c.path, body)
			}
		}
		if len(names) == 2 && statuses[names[0]] != statuses[names[1]] {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("%s %s %.200q: %s answered %d, %s %d", c.method, c.path, c.body, names[0], statuses[names[0]], names[1], statuses[names[1]])
			}
		}
	}
	if mismatches > 10 {
		t.Errorf("%d requests answered differently by the two drivers", mismatches)
	}
	for _, n := range names {
		if status, body := fixtures[n].call(t, "GET", "/v1/me", ""); status != 200 {
			t.Errorf("%s: the server stopped serving: %d %s", n, status, body)
		}
	}
	t.Logf("%d hostile requests to %s", len(cases), strings.Join(names, " and "))
}

// rawCall sends a request whose path and body are sent byte for byte.
func (f *fixture) rawCall(t testing.TB, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestOddReportTextCostsNoReport: a report whose message is long non-ASCII
// text with a NUL is stored cleaned and cut on a character boundary, and
// the other reports of its batch stand. Before, the message was cut at a
// byte, PostgreSQL refused the invalid UTF-8 and the whole batch failed;
// the attempts later ended timed_out instead of their real outcomes.
func TestOddReportTextCostsNoReport(t *testing.T) {
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			var f *fixture
			if driver == "sqlite" {
				f = newFixture(t)
			} else {
				if !pgtest.Available() {
					t.Skip("PostgreSQL not reachable (./scripts/test runs it)")
				}
				pg, err := postgres.Open(context.Background(), pgtest.URL(t), postgres.Options{MaxConns: 4})
				if err != nil {
					t.Fatal(err)
				}
				f = newFixtureOn(t, pg)
			}
			if status, body := f.call(t, "POST", "/v1/jobs", `{"tool":"charge@1","payload":{"a":2}}`); status != 201 {
				t.Fatalf("enqueue: %d %s", status, body)
			}
			status, body := f.call(t, "POST", "/v1/claims", `{"workerId":"w","tools":["charge@1"],"max":2}`)
			var claimed struct {
				Jobs []struct {
					ID         int64  `json:"id"`
					LeaseToken string `json:"leaseToken"`
				} `json:"jobs"`
			}
			if status != 200 || json.Unmarshal([]byte(body), &claimed) != nil || len(claimed.Jobs) != 2 {
				t.Fatalf("claim: %d %s", status, body)
			}
			odd := "nul\u0000" + strings.Repeat("é", 1500)
			reports := []map[string]any{
				{"jobId": claimed.Jobs[0].ID, "leaseToken": claimed.Jobs[0].LeaseToken, "httpStatus": 400, "message": odd},
				{"jobId": claimed.Jobs[1].ID, "leaseToken": claimed.Jobs[1].LeaseToken, "success": true},
			}
			b, _ := json.Marshal(map[string]any{"reports": reports})
			status, body = f.call(t, "POST", "/v1/reports", string(b))
			if status != 200 || strings.Count(body, `"ok":true`) != 2 {
				t.Fatalf("report batch: %d %.300s", status, body)
			}
			status, body = f.call(t, "GET", fmt.Sprintf("/v1/jobs/%d", claimed.Jobs[0].ID), "")
			var job struct {
				State    string `json:"state"`
				Attempts []struct {
					Outcome, Message string
				} `json:"attempts"`
			}
			if status != 200 || json.Unmarshal([]byte(body), &job) != nil || len(job.Attempts) != 1 {
				t.Fatalf("job: %d %.300s", status, body)
			}
			msg := job.Attempts[0].Message
			if job.State != "failed" || job.Attempts[0].Outcome != "failed" || strings.ContainsRune(msg, 0) || !utf8.ValidString(msg) || len(msg) > 2000 || !strings.HasPrefix(msg, "nulé") {
				t.Errorf("stored: state %s, outcome %s, message of %d bytes %.40q", job.State, job.Attempts[0].Outcome, len(msg), msg)
			}
		})
	}
}
