package api_test

import (
	"strings"
	"testing"
)

// TestBulkIDsAndRunNowErrors: bad bulk selections are a 400 naming the
// field; run-now of a job that is not scheduled is a 409 naming the state.
func TestBulkIDsAndRunNowErrors(t *testing.T) {
	f := newFixture(t)
	cases := []struct{ body, want string }{
		{`{"action":"run_now","ids":[1],"filter":{},"expectedCount":1}`, `"field":"ids"`},
		{`{"action":"run_now","ids":[],"expectedCount":0}`, `1 through 1000 job ids`},
		{`{"action":"run_now","ids":[1,1],"expectedCount":2}`, `"field":"ids[1]"`},
		{`{"action":"run_now","ids":[0],"expectedCount":1}`, `"field":"ids[0]"`},
		{`{"action":"run_now","ids":[1],"expectedCount":2}`, `must equal the number of ids (1)`},
		{`{"action":"run_now","ids":["x"],"expectedCount":1}`, `"field":"ids`},
		{`{"action":"later","ids":[1],"expectedCount":1}`, `cancel, replay or run_now`},
		{`{"action":"cancel","filter":{"state":"lost"},"expectedCount":1}`, `"field":"filter.state"`},
	}
	for _, c := range cases {
		status, body := f.call(t, "POST", "/v1/jobs/bulk", c.body)
		if status != 400 || !strings.Contains(body, c.want) {
			t.Errorf("bulk %s: %d %s (want 400 with %s)", c.body, status, body, c.want)
		}
	}
	if status, body := f.call(t, "POST", "/v1/jobs/bulk", `{"action":"run_now","ids":[1],"expectedCount":1}`); status != 200 || !strings.Contains(body, `"jobs":[1]`) {
		t.Errorf("bulk run_now by ids: %d %s", status, body)
	}
	if status, body := f.call(t, "POST", "/v1/jobs/1/run-now", ``); status != 200 || !strings.Contains(body, `"state":"scheduled"`) {
		t.Errorf("run-now: %d %s", status, body)
	}
	if status, body := f.call(t, "POST", "/v1/jobs/1/cancel", ``); status != 200 {
		t.Fatalf("cancel: %d %s", status, body)
	}
	if status, body := f.call(t, "POST", "/v1/jobs/1/run-now", ``); status != 409 || !strings.Contains(body, "cancelled") {
		t.Errorf("run-now of a cancelled job: %d %s", status, body)
	}
	if status, body := f.call(t, "POST", "/v1/jobs/77/run-now", ``); status != 404 {
		t.Errorf("run-now of a missing job: %d %s", status, body)
	}
}

// TestOperatorRouteErrors: bad input to the operator routes is a 400 naming
// the field; a missing endpoint is a 404.
func TestOperatorRouteErrors(t *testing.T) {
	f := newFixture(t)
	cases := []struct{ method, path, body, want string }{
		{"POST", "/v1/endpoints/stripe/pause", `{"reason":"` + strings.Repeat("x", 501) + `"}`, `"field":"reason"`},
		{"POST", "/v1/endpoints/stripe/pause", `{"reason":"line\nbreak"}`, `without control characters`},
		{"POST", "/v1/endpoints/stripe/pause", `{"why":"x"}`, `"field":"why"`},
		{"POST", "/v1/endpoints/stripe/resume", `{"reason":"x"}`, `this route takes no body`},
		{"GET", "/v1/endpoints/stripe/held?limit=0", ``, `"field":"limit"`},
		{"GET", "/v1/endpoints/stripe/held?cursor=abc", ``, `"field":"cursor"`},
		{"GET", "/v1/audit?limit=501", ``, `"field":"limit"`},
		{"GET", "/v1/audit?target=" + strings.Repeat("x", 301), ``, `"field":"target"`},
		{"GET", "/v1/audit?actor=x", ``, `"field":"actor"`},
	}
	for _, c := range cases {
		status, body := f.call(t, c.method, c.path, c.body)
		if status != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s %s %.60s: %d %.300s (want 400 with %s)", c.method, c.path, c.body, status, body, c.want)
		}
	}
	for _, p := range []string{"/v1/endpoints/nope/pause", "/v1/endpoints/nope/resume", "/v1/endpoints/nope/circuit/close", "/v1/endpoints/nope/circuit/open"} {
		body := ""
		if strings.HasSuffix(p, "/pause") {
			body = `{}`
		}
		if status, out := f.call(t, "POST", p, body); status != 404 {
			t.Errorf("POST %s: %d %s", p, status, out)
		}
	}
	if status, out := f.call(t, "GET", "/v1/endpoints/nope/held", ""); status != 404 {
		t.Errorf("held of a missing endpoint: %d %s", status, out)
	}
	if status, out := f.call(t, "POST", "/v1/endpoints/stripe/pause", `{}`); status != 200 || !strings.Contains(out, `"paused":{"at":`) || !strings.Contains(out, `"reason":""`) {
		t.Errorf("pause without a reason: %d %s", status, out)
	}
}
