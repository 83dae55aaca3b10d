package server_test

import (
	"encoding/json"
	"errors"
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
	if _, err := owner.CreateEndpoint(c, "payments", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, EndpointSettings: client.EndpointSettings{MaxConcurrent: 10}}); err != nil {
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
	later := proctest.Now().Add(time.Hour).UTC().Format(time.RFC3339)
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

// TestOperatorControls drives the operator controls through the SDK
// against the real server: pause holds a due job (no attempt spent, heldBy
// paused naming who, when and why, in the job, explain, overview and the
// held list), resume releases it; a circuit opened by hand holds, closed by
// hand releases; a producer key gets 403 on every owner action; every
// action is in GET /v1/audit with its actor and target.
func TestOperatorControls(t *testing.T) {
	srv, owner, producer, worker := operatorSetup(t)
	c := ctx(t)
	j, _, err := producer.Enqueue(c, client.EnqueueRequest{Tool: "pay@1", Payload: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	// Every owner action refuses a producer key.
	for name, call := range map[string]func() error{
		"pause":         func() error { _, err := producer.PauseEndpoint(c, "payments", "x"); return err },
		"resume":        func() error { _, err := producer.ResumeEndpoint(c, "payments"); return err },
		"circuit-close": func() error { _, err := producer.CloseCircuit(c, "payments"); return err },
		"circuit-open":  func() error { _, err := producer.OpenCircuit(c, "payments"); return err },
		"run-now":       func() error { _, err := producer.RunNow(c, j.ID); return err },
		"bulk run_now":  func() error { _, err := producer.BulkIDs(c, "run_now", []int64{j.ID}); return err },
		"audit":         func() error { _, err := producer.Audit(c, "", "", 0); return err },
	} {
		var ae *client.Error
		if err := call(); !errors.As(err, &ae) || ae.Status != http.StatusForbidden {
			t.Errorf("producer %s: %v, want 403", name, err)
		}
	}

	ep, err := owner.PauseEndpoint(c, "payments", "provider incident #12")
	if err != nil || ep.Paused == nil || ep.Paused.By != "bootstrap owner" || ep.Paused.Reason != "provider incident #12" {
		t.Fatalf("pause: %v %+v", err, ep)
	}
	if got, err := worker.Claim(c, client.ClaimRequest{WorkerID: "w", Max: 10}); err != nil || len(got) != 0 {
		t.Fatalf("claim from a paused endpoint: %v %+v", err, got)
	}
	if m := srv.Metrics(t); !strings.Contains(m, `ratchet_endpoint_paused{endpoint="payments",project="1"} 1`) {
		t.Errorf("metrics while paused lack ratchet_endpoint_paused 1:\n%s", m)
	}
	want := "endpoint payments was paused by bootstrap owner at " + ep.Paused.At + ": provider incident #12"
	got, err := producer.GetJob(c, j.ID)
	if err != nil || got.Attempt != 0 || len(got.Attempts) != 0 || got.HeldBy == nil || got.HeldBy.Gate != "paused" || got.HeldBy.Detail != want {
		t.Fatalf("job on a paused endpoint: %v %+v held %+v", err, got, got.HeldBy)
	}
	if h, _ := producer.ExplainJob(c, j.ID); h.Gate != "paused" || h.Detail != want {
		t.Fatalf("explain: %+v", h)
	}
	ov, err := producer.Overview(c)
	if err != nil || len(ov.Endpoints) != 1 || ov.Endpoints[0].HeldBy == nil || ov.Endpoints[0].HeldBy.Gate != "paused" || ov.Endpoints[0].Paused == nil {
		t.Fatalf("overview: %v %+v", err, ov)
	}
	held, err := producer.HeldJobs(c, "payments", "", 0)
	if err != nil || len(held.Jobs) != 1 || held.Jobs[0].ID != j.ID || held.Jobs[0].HeldBy.Gate != "paused" || held.NextCursor != nil {
		t.Fatalf("held: %v %+v", err, held)
	}
	if _, err := owner.ResumeEndpoint(c, "payments"); err != nil {
		t.Fatal(err)
	}
	claimed, err := worker.Claim(c, client.ClaimRequest{WorkerID: "w", Max: 10})
	if err != nil || len(claimed) != 1 || claimed[0].ID != j.ID || claimed[0].Attempt != 1 {
		t.Fatalf("claim after resume: %v %+v", err, claimed)
	}
	if _, err := worker.ReportOne(c, client.Report{JobID: j.ID, LeaseToken: claimed[0].LeaseToken, Success: true}); err != nil {
		t.Fatal(err)
	}

	j2, _, err := producer.Enqueue(c, client.EnqueueRequest{Tool: "pay@1", Payload: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	ep, err = owner.OpenCircuit(c, "payments")
	if err != nil || ep.Circuit.State != "open" || ep.Circuit.OpenedBy != "bootstrap owner" || ep.Circuit.HalfOpensAt == "" {
		t.Fatalf("open circuit: %v %+v", err, ep.Circuit)
	}
	if got, _ := worker.Claim(c, client.ClaimRequest{WorkerID: "w"}); len(got) != 0 {
		t.Fatalf("claimed through an open circuit: %+v", got)
	}
	held, err = producer.HeldJobs(c, "payments", "", 0)
	if err != nil || len(held.Jobs) != 1 || held.Jobs[0].ID != j2.ID || held.Jobs[0].HeldBy.Gate != "circuit" {
		t.Fatalf("held by the circuit: %v %+v", err, held)
	}
	if ep, err = owner.CloseCircuit(c, "payments"); err != nil || ep.Circuit.State != "closed" {
		t.Fatalf("close circuit: %v %+v", err, ep)
	}
	if got, _ := worker.Claim(c, client.ClaimRequest{WorkerID: "w"}); len(got) != 1 || got[0].ID != j2.ID {
		t.Fatalf("claim after close: %+v", got)
	}
	if held, _ := producer.HeldJobs(c, "payments", "", 0); len(held.Jobs) != 0 {
		t.Fatalf("held after close: %+v", held)
	}

	page, err := owner.Audit(c, "endpoint:payments", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range page.Entries {
		actions = append(actions, e.Action)
		if e.Actor != "bootstrap owner" || e.Target != "endpoint:payments" || e.KeyPrefix == "" || e.At == "" {
			t.Errorf("audit entry: %+v", e)
		}
	}
	if strings.Join(actions, " ") != "circuit.close circuit.open endpoint.resume endpoint.pause" {
		t.Errorf("audit of endpoint:payments: %v", actions)
	}
	all, err := owner.Audit(c, "", "", 2)
	if err != nil || len(all.Entries) != 2 || all.NextCursor == nil {
		t.Fatalf("audit page: %v %+v", err, all)
	}
	rest, err := owner.Audit(c, "", *all.NextCursor, 0)
	if err != nil || len(rest.Entries) == 0 || rest.Entries[0].ID >= all.Entries[1].ID {
		t.Fatalf("audit next page: %v %+v", err, rest)
	}
	// The keys created by operatorSetup were audited too.
	var keyCreates int
	for _, e := range rest.Entries {
		if e.Action == "key.create" {
			keyCreates++
		}
	}
	if keyCreates != 2 {
		t.Errorf("key.create entries: %d in %+v", keyCreates, rest.Entries)
	}
}
