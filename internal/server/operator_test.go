package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
)

// operatorSetup starts a server with an endpoint "payments", a tool
// pay@1 on it, and owner, producer and worker clients.
func operatorSetup(t *testing.T, args ...string) (srv *proctest.Server, owner, producer, worker *client.Client) {
	t.Helper()
	srv = proctest.Start(t, "", nil, append([]string{"--bootstrap-key", ownerKey}, args...)...)
	k := newContract(t, srv.URL)
	c := ctx(t)
	owner = k.client(srv.URL, ownerKey)
	if _, err := owner.CreateEndpoint(c, "payments", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, MaxConcurrent: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.PublishTool(c, client.ToolSpec{Name: "pay", Version: "1", Endpoint: "payments"}); err != nil {
		t.Fatal(err)
	}
	pk, err := owner.CreateKey(c, "producer", "producer", nil)
	if err != nil {
		t.Fatal(err)
	}
	wk, err := owner.CreateKey(c, "worker", "worker", []string{"pay@1"})
	if err != nil {
		t.Fatal(err)
	}
	return srv, owner, k.client(srv.URL, pk.Secret), k.client(srv.URL, wk.Secret)
}

// TestRunNowAndBulkIDs: a job due in an hour is not claimable; run-now makes
// it claimable at once with its attempt count unchanged; a running or
// finished job is a 409 naming its state; a producer key is refused; a bulk
// run_now by ids acts on the listed jobs and reports the ones it could not.
func TestRunNowAndBulkIDs(t *testing.T) {
	_, owner, producer, worker := operatorSetup(t)
	c := ctx(t)
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	enqueue := func() *client.Job {
		t.Helper()
		j, _, err := producer.Enqueue(c, client.EnqueueRequest{Tool: "pay@1", Payload: json.RawMessage(`{}`), RunAt: later})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	j := enqueue()
	if got, err := worker.Claim(c, client.ClaimRequest{WorkerID: "w"}); err != nil || len(got) != 0 {
		t.Fatalf("a job due in an hour was claimed: %v %+v", err, got)
	}
	_, err := producer.RunNow(c, j.ID)
	apiErr(t, err, http.StatusForbidden)
	ran, err := owner.RunNow(c, j.ID)
	if err != nil || ran.State != "scheduled" || ran.Attempt != 0 || ran.DueAt >= j.DueAt {
		t.Fatalf("run-now: %v %+v (was due %s)", err, ran, j.DueAt)
	}
	got, err := worker.Claim(c, client.ClaimRequest{WorkerID: "w"})
	if err != nil || len(got) != 1 || got[0].ID != j.ID || got[0].Attempt != 1 {
		t.Fatalf("claim after run-now: %v %+v", err, got)
	}
	_, err = owner.RunNow(c, j.ID)
	if ae := apiErr(t, err, http.StatusConflict); !strings.Contains(ae.Message, "running") {
		t.Errorf("run-now of a running job: %s", ae.Message)
	}
	if _, err := worker.ReportOne(c, client.Report{JobID: j.ID, LeaseToken: got[0].LeaseToken, Success: true}); err != nil {
		t.Fatal(err)
	}
	_, err = owner.RunNow(c, j.ID)
	if ae := apiErr(t, err, http.StatusConflict); !strings.Contains(ae.Message, "succeeded") {
		t.Errorf("run-now of a finished job: %s", ae.Message)
	}

	a, b := enqueue(), enqueue()
	_, err = producer.BulkIDs(c, "run_now", []int64{a.ID, b.ID})
	apiErr(t, err, http.StatusForbidden)
	res, err := owner.BulkIDs(c, "run_now", []int64{a.ID, b.ID, j.ID, 999999})
	if err != nil || res.Count != 2 || len(res.Failed) != 2 || res.Failed[0].ID != j.ID || !strings.Contains(res.Failed[0].Error, "succeeded") || res.Failed[1].ID != 999999 {
		t.Fatalf("bulk run_now: %v %+v", err, res)
	}
	got, err = worker.Claim(c, client.ClaimRequest{WorkerID: "w", Max: 10})
	if err != nil || len(got) != 2 {
		t.Fatalf("claim after bulk run_now: %v %+v", err, got)
	}
	// ids and a cancel: a producer may cancel by ids.
	d := enqueue()
	res, err = producer.BulkIDs(c, "cancel", []int64{d.ID})
	if err != nil || res.Count != 1 || res.Jobs[0] != d.ID {
		t.Fatalf("bulk cancel by ids: %v %+v", err, res)
	}
	if cur, _ := producer.GetJob(c, d.ID); cur.State != "cancelled" {
		t.Fatalf("job %d after a bulk cancel by ids: %s", d.ID, cur.State)
	}
}
