package server_test

import (
	"testing"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

// TestBudgetsThroughTheSDK: the Go SDK creates an endpoint with budgets,
// a zone and quiet hours; a claim past the day's budget is held by
// daily_budget; GET of the endpoint carries its use, the list carries
// null; an update that leaves the zone out keeps it and one that empties
// the quiet hours clears them; every answer matches /openapi.json.
func TestBudgetsThroughTheSDK(t *testing.T) {
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey)
	k := newContract(t, srv.URL)
	c := ctx(t)
	owner := k.client(srv.URL, ownerKey)
	two, many := int64(2), int64(1000)
	ep, err := owner.CreateEndpoint(c, "metered", client.EndpointPolicy{EndpointSettings: client.EndpointSettings{DefaultTimeoutMs: 30000, MaxConcurrent: 10,
		DailyCallBudget: &two, MonthlyCallBudget: &many, BudgetTimeZone: "America/New_York", QuietHours: "03:00-03:01",
		KeyLimits: client.KeyLimits{KeyDailyCallBudget: &many, KeyMonthlyCallBudget: &many}}})
	if err != nil || ep.BudgetTimeZone != "America/New_York" || ep.QuietHours != "03:00-03:01" || ep.KeyDailyCallBudget == nil {
		t.Fatalf("create: %+v, %v", ep, err)
	}
	if _, err := owner.PublishTool(c, client.ToolSpec{Name: "call", Version: "1", Endpoint: "metered"}); err != nil {
		t.Fatal(err)
	}
	var last int64
	for range 3 {
		j, _, err := owner.Enqueue(c, client.EnqueueRequest{Tool: "call@1"})
		if err != nil {
			t.Fatal(err)
		}
		last = j.ID
	}
	// Unless the test runs in the one quiet minute, two go and one waits.
	claimed, err := owner.Claim(c, client.ClaimRequest{WorkerID: "w", Tools: []string{"call@1"}, Max: 10})
	if err != nil {
		t.Fatal(err)
	}
	got, err := owner.GetEndpoint(c, "metered")
	if err != nil || got.Budget == nil || got.Budget.TimeZone != "America/New_York" || got.Budget.Daily == nil || got.Budget.Daily.Used != int64(len(claimed)) ||
		got.Budget.Monthly == nil || got.Budget.QuietHours == nil {
		t.Fatalf("get: %+v, %v", got, err)
	}
	if len(claimed) == 2 {
		if j, err := owner.GetJob(c, last); err != nil || j.HeldBy == nil || j.HeldBy.Gate != wire.GateDailyBudget {
			t.Errorf("the third job: %+v, %v", j, err)
		}
	}
	list, err := owner.ListEndpoints(c)
	if err != nil || len(list) != 1 || list[0].Budget != nil {
		t.Fatalf("list: %+v, %v", list, err)
	}
	policy := client.EndpointPolicy{Policy: got.Policy, EndpointSettings: got.EndpointSettings}
	policy.BudgetTimeZone, policy.QuietHours = "", ""
	up, err := owner.UpdateEndpointPolicy(c, "metered", got.Version, policy)
	if err != nil || up.BudgetTimeZone != "America/New_York" || up.QuietHours != "" {
		t.Fatalf("update: %+v, %v", up, err)
	}
	policy.QuietHours = "7pm-7am"
	_, err = owner.UpdateEndpointPolicy(c, "metered", up.Version, policy)
	if ae := apiErr(t, err, 400); len(ae.Fields) != 1 || ae.Fields[0].Field != "quietHours" || ae.Fields[0].Value != `"7pm-7am"` {
		t.Errorf("a bad window: %+v", ae)
	}
}
