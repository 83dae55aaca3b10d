package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/wire"
)

// TestAlertConfigRoutes: a webhook sink's secret is in the answer to its
// creation and never again; a sink URL on a refused address, an unknown
// kind, a bad name and thresholds out of bounds are 400s naming the field,
// the value and what is allowed, and store nothing; settings are read
// back; a test alert is queued for the sink and listed; every change is
// audited; a deleted sink is gone.
func TestAlertConfigRoutes(t *testing.T) {
	f := newFixture(t)
	status, body := f.call(t, "POST", "/v1/alerts/sinks", `{"name":"pager","kind":"webhook","url":"https://hooks.example.com/ratchet"}`)
	var k wire.AlertSink
	if err := json.Unmarshal([]byte(body), &k); status != 201 || err != nil || k.Secret == nil || !strings.HasPrefix(*k.Secret, "whsec_") {
		t.Fatalf("create: %d %s", status, body)
	}
	if status, body := f.call(t, "POST", "/v1/alerts/sinks", `{"name":"chat","kind":"slack","url":"https://hooks.example.com/services/T/B/x"}`); status != 201 || strings.Contains(body, "secret") {
		t.Fatalf("create slack: %d %s", status, body)
	}
	for _, c := range []struct{ method, path, body, want string }{
		{"POST", "/v1/alerts/sinks", `{"name":"local","kind":"webhook","url":"http://127.0.0.1:9/x"}`, `"field":"url","value":"\"http://127.0.0.1:9/x\"","allowed":"must reach an address deliveries may reach`},
		{"POST", "/v1/alerts/sinks", `{"name":"meta","kind":"teams","url":"http://169.254.169.254/"}`, `"field":"url"`},
		{"POST", "/v1/alerts/sinks", `{"name":"x","kind":"ftp","url":"ftp://example.com/"}`, `"field":"kind","value":"\"ftp\"","allowed":"must be webhook, slack or teams"`},
		{"POST", "/v1/alerts/sinks", `{"name":"Bad Name","kind":"slack","url":"https://example.com/"}`, `"field":"name"`},
		{"POST", "/v1/alerts/sinks", `{"name":"pager","kind":"slack","url":"https://user:pw@example.com/"}`, `"field":"url"`},
		{"PUT", "/v1/alerts/settings", `{"pausedAfterMs":1000,"failureRatePercent":101,"failureRateMin":0,"windowMs":59999,"maxPerWindow":0}`,
			`"field":"pausedAfterMs","value":"1000","allowed":"must be an integer from 60000 through 604800000"`},
		{"PUT", "/v1/alerts/settings", `{"pausedAfterMs":60000,"failureRatePercent":101,"failureRateMin":1,"windowMs":60000,"maxPerWindow":1}`,
			`"field":"failureRatePercent","value":"101","allowed":"must be an integer from 1 through 100"`},
		{"PUT", "/v1/alerts/settings", `{"pausedAfterMs":60000,"failureRatePercent":1,"failureRateMin":1,"windowMs":60000,"maxPerWindow":101}`,
			`"field":"maxPerWindow","value":"101","allowed":"must be an integer from 1 through 100"`},
	} {
		if status, body := f.call(t, c.method, c.path, c.body); status != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s (want 400 with %s)", c.path, c.body, status, body, c.want)
		}
	}
	_, body = f.call(t, "GET", "/v1/alerts/sinks", "")
	var l wire.AlertSinkList
	if err := json.Unmarshal([]byte(body), &l); err != nil || len(l.Sinks) != 2 || strings.Contains(body, "whsec_") || l.Settings.MaxPerWindow != wire.DefaultAlertMaxPerWindow {
		t.Fatalf("list after refusals: %s", body)
	}
	set := `{"pausedAfterMs":60000,"failureRatePercent":30,"failureRateMin":5,"windowMs":120000,"maxPerWindow":3}`
	if status, body := f.call(t, "PUT", "/v1/alerts/settings", set); status != 200 || !strings.Contains(body, `"maxPerWindow":3`) {
		t.Fatalf("settings: %d %s", status, body)
	}
	if _, body := f.call(t, "GET", "/v1/alerts/sinks", ""); !strings.Contains(body, `"windowMs":120000`) {
		t.Errorf("settings read back: %s", body)
	}
	if status, body := f.call(t, "POST", "/v1/alerts/sinks/pager/test", ""); status != 202 || !strings.Contains(body, `"sink":"pager"`) {
		t.Fatalf("test: %d %s", status, body)
	}
	if status, _ := f.call(t, "POST", "/v1/alerts/sinks/nope/test", ""); status != 404 {
		t.Errorf("test of a missing sink: %d", status)
	}
	if _, body := f.call(t, "GET", "/v1/alerts", ""); !strings.Contains(body, `"kind":"test"`) || !strings.Contains(body, `"state":"pending"`) {
		t.Errorf("alerts: %s", body)
	}
	if status, _ := f.call(t, "DELETE", "/v1/alerts/sinks/chat", ""); status != 204 {
		t.Fatalf("delete: %d", status)
	}
	_, body = f.call(t, "GET", "/v1/audit", "")
	for _, action := range []string{"alert.sink.create", "alert.settings", "alert.test", "alert.sink.delete"} {
		if !strings.Contains(body, `"action":"`+action+`"`) {
			t.Errorf("audit has no %s: %s", action, body)
		}
	}
	if strings.Contains(body, "services/T/B") {
		t.Errorf("the audit log shows a sink URL's path (its secret): %s", body)
	}
}
