package api_test

import (
	"encoding/json"
	"testing"

	"github.com/getratchet/ratchet/wire"
)

// TestEndpointBudgetView: GET of one endpoint with budgets and quiet hours
// carries their use (budget), the list and an endpoint without them
// carry null, and the settings read back as given; a refused update
// changes nothing.
func TestEndpointBudgetView(t *testing.T) {
	f := newFixture(t)
	if status, body := f.call(t, "POST", "/v1/endpoints", `{"name":"metered","preset":"STANDARD","dailyCallBudget":1000,"monthlyCallBudget":20000,"budgetTimeZone":"Europe/Paris","quietHours":"22:00-07:00"}`); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	status, body := f.call(t, "GET", "/v1/endpoints/metered", "")
	var ep wire.Endpoint
	if err := json.Unmarshal([]byte(body), &ep); status != 200 || err != nil {
		t.Fatalf("get: %d %s %v", status, body, err)
	}
	if ep.BudgetTimeZone != "Europe/Paris" || ep.QuietHours != "22:00-07:00" || ep.Budget == nil || ep.Budget.TimeZone != "Europe/Paris" ||
		ep.Budget.Daily == nil || ep.Budget.Daily.Budget != 1000 || ep.Budget.Monthly == nil || ep.Budget.QuietHours == nil {
		t.Fatalf("endpoint = %s", body)
	}
	_, body = f.call(t, "GET", "/v1/endpoints/stripe", "")
	if err := json.Unmarshal([]byte(body), &ep); err != nil || ep.Budget != nil || ep.BudgetTimeZone != "UTC" {
		t.Errorf("an endpoint without budgets: %s", body)
	}
	status, body = f.call(t, "PUT", "/v1/endpoints/metered/policy", `{"expectedVersion":1,"preset":"STANDARD","defaultTimeoutMs":30000,"maxConcurrent":10,"rateLimitPerMinute":null,"budgetTimeZone":"Europe/Pariss"}`)
	if status != 400 {
		t.Fatalf("an update with a bad zone: %d %s", status, body)
	}
	_, body = f.call(t, "GET", "/v1/endpoints/metered", "")
	if err := json.Unmarshal([]byte(body), &ep); err != nil || ep.BudgetTimeZone != "Europe/Paris" || ep.Version != 1 {
		t.Errorf("after a refused update: %s", body)
	}
}
