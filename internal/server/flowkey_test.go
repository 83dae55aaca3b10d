package server_test

import (
	"encoding/json"
	"testing"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestFlowKeysThroughTheSDK: the Go SDK sets a flow key at enqueue (single
// and batch), a tool's flowKeyFrom fills it from the payload, the job,
// the tool and the claimed job show it, and the list and count filters
// select by it; every answer matches /openapi.json.
func TestFlowKeysThroughTheSDK(t *testing.T) {
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey)
	k := newContract(t, srv.URL)
	c := ctx(t)
	owner := k.client(srv.URL, ownerKey)
	if _, err := owner.CreateEndpoint(c, "mailer", client.EndpointPolicy{EndpointSettings: client.EndpointSettings{DefaultTimeoutMs: 30000, MaxConcurrent: 10}}); err != nil {
		t.Fatal(err)
	}
	tool, err := owner.PublishTool(c, client.ToolSpec{Name: "invoice", Version: "1", Endpoint: "mailer", FlowKeyFrom: "/customer/id"})
	if err != nil || tool.FlowKeyFrom != "/customer/id" {
		t.Fatalf("publish: %+v, %v", tool, err)
	}
	keyed, _, err := owner.Enqueue(c, client.EnqueueRequest{Tool: "invoice@1", Payload: json.RawMessage(`{"customer":{"id":"c1"}}`), FlowKey: "acct_42"})
	if err != nil || keyed.FlowKey != "acct_42" {
		t.Fatalf("enqueue with a key: %+v, %v", keyed, err)
	}
	items, err := owner.EnqueueBatch(c, []client.EnqueueRequest{
		{Tool: "invoice@1", Payload: json.RawMessage(`{"customer":{"id":7}}`)},
		{Tool: "invoice@1", Payload: json.RawMessage(`{"customer":{"id":"c1"}}`), FlowKey: "acct_42"},
	})
	if err != nil || len(items) != 2 {
		t.Fatalf("batch: %+v, %v", items, err)
	}
	if j, err := owner.GetJob(c, items[0].ID); err != nil || j.FlowKey != "7" {
		t.Fatalf("job from flowKeyFrom: %+v, %v", j, err)
	}
	page, err := owner.ListJobs(c, client.JobFilter{FlowKey: "acct_42"})
	if err != nil || len(page.Jobs) != 2 || page.Jobs[0].ID != items[1].ID || page.Jobs[1].ID != keyed.ID {
		t.Fatalf("list of acct_42: %+v, %v", page, err)
	}
	claimed, err := owner.Claim(c, client.ClaimRequest{WorkerID: "w", Tools: []string{"invoice@1"}, Max: 10})
	if err != nil || len(claimed) != 3 {
		t.Fatalf("claim: %+v, %v", claimed, err)
	}
	for _, j := range claimed {
		if want := map[int64]string{keyed.ID: "acct_42", items[0].ID: "7", items[1].ID: "acct_42"}[j.ID]; j.FlowKey != want {
			t.Errorf("claimed job %d: flow key %q, want %q", j.ID, j.FlowKey, want)
		}
	}
	_, _, err = owner.Enqueue(c, client.EnqueueRequest{Tool: "invoice@1", Payload: json.RawMessage(`{"customer":{"id":"c1"}}`), FlowKey: "a\nb"})
	if ae := apiErr(t, err, 400); len(ae.Fields) != 1 || ae.Fields[0].Field != "flowKey" {
		t.Errorf("bad key: %+v", ae)
	}
}
