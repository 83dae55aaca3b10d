package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/wire"
)

// TestJobCountsAndSearch: GET /v1/jobs/counts answers every state with a
// total, per endpoint and per tool; the overview's counts agree; q finds a
// job by text in its payload and by id.
func TestJobCountsAndSearch(t *testing.T) {
	f := newFixture(t) // stripe, charge@1 and one scheduled job
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/endpoints", `{"name":"openai","preset":"STANDARD"}`},
		{"POST", "/v1/tools", `{"name":"chat","version":"1","endpoint":"openai"}`},
		{"POST", "/v1/jobs/batch", `{"jobs":[{"tool":"chat@1","payload":{"prompt":"Find The Needle"}},{"tool":"chat@1"},{"tool":"charge@1"}]}`},
	} {
		if status, body := f.call(t, r.method, r.path, r.body); status >= 300 {
			t.Fatalf("%s %s: %d %s", r.method, r.path, status, body)
		}
	}
	counts := func(query string) wire.JobCounts {
		t.Helper()
		status, body := f.call(t, "GET", "/v1/jobs/counts"+query, "")
		var c wire.JobCounts
		if status != 200 || json.Unmarshal([]byte(body), &c) != nil {
			t.Fatalf("counts%s: %d %s", query, status, body)
		}
		if !strings.Contains(body, `"cancelled":0`) {
			t.Errorf("counts%s: every state is present, even at 0: %s", query, body)
		}
		return c
	}
	for _, tc := range []struct {
		query     string
		scheduled int64
	}{{"", 4}, {"?endpoint=openai", 2}, {"?endpoint=stripe", 2}, {"?tool=chat", 2}, {"?tool=charge@1", 2}, {"?endpoint=nope", 0}, {"?tool=chat&endpoint=stripe", 0}} {
		if c := counts(tc.query); c.Counts.Scheduled != tc.scheduled || c.Total != tc.scheduled {
			t.Errorf("counts%s = %+v, want %d scheduled of %d", tc.query, c, tc.scheduled, tc.scheduled)
		}
	}
	status, body := f.call(t, "GET", "/v1/overview", "")
	var ov wire.Overview
	if status != 200 || json.Unmarshal([]byte(body), &ov) != nil {
		t.Fatalf("overview: %d %s", status, body)
	}
	for _, ep := range ov.Endpoints {
		if ep.Scheduled != 2 || ep.Due != 2 || ep.Running != 0 {
			t.Errorf("overview of %s: scheduled %d, due %d, running %d; want 2, 2, 0", ep.Name, ep.Scheduled, ep.Due, ep.Running)
		}
	}

	list := func(query string) wire.JobList {
		t.Helper()
		status, body := f.call(t, "GET", "/v1/jobs"+query, "")
		var l wire.JobList
		if status != 200 || json.Unmarshal([]byte(body), &l) != nil {
			t.Fatalf("jobs%s: %d %s", query, status, body)
		}
		return l
	}
	found := list("?q=the+needle")
	if len(found.Jobs) != 1 || found.Jobs[0].Tool != "chat" {
		t.Fatalf("q=the needle: %+v", found.Jobs)
	}
	j := found.Jobs[0]
	if j.HeldBy == nil || j.HeldBy.Gate != wire.GateNone || j.LastClassification != "" || j.LastError != "" {
		t.Errorf("listed job: heldBy %+v, lastClassification %q, lastError %q", j.HeldBy, j.LastClassification, j.LastError)
	}
	if byID := list("?q=" + jsonNumber(j.ID)); len(byID.Jobs) != 1 || byID.Jobs[0].ID != j.ID {
		t.Errorf("q=%d: %+v", j.ID, byID.Jobs)
	}
	if status, body := f.call(t, "GET", "/v1/jobs/count?q=openai", ""); status != 200 || !strings.Contains(body, `"count":2`) {
		t.Errorf("count q=openai: %d %s", status, body)
	}
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
