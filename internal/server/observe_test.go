package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestWorkersAndHistoryHTTP: through the real binary and the SDK, workers
// that claim, heartbeat and report are listed with what they hold, and
// after the dev clock moves past the minute the history shows exactly the
// attempts made.
func TestWorkersAndHistoryHTTP(t *testing.T) {
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey, "--dev-clock")
	k := newContract(t, srv.URL)
	c := ctx(t)
	owner := k.client(srv.URL, ownerKey)
	if _, err := owner.CreateEndpoint(c, "stripe", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, EndpointSettings: client.EndpointSettings{DefaultTimeoutMs: 30000, MaxConcurrent: 10}}); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.PublishTool(c, client.ToolSpec{Name: "charge", Version: "1", Endpoint: "stripe"}); err != nil {
		t.Fatal(err)
	}
	wk, err := owner.CreateKey(c, "worker", "worker", []string{"charge@1"})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := owner.CreateKey(c, "producer", "producer", nil)
	if err != nil {
		t.Fatal(err)
	}
	worker, producer := k.client(srv.URL, wk.Secret), k.client(srv.URL, pk.Secret)
	for range 3 {
		if _, _, err := producer.Enqueue(c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := worker.Claim(c, client.ClaimRequest{WorkerID: "billing-a", Max: 2})
	if err != nil || len(a) != 2 {
		t.Fatalf("claim a: %v %d", err, len(a))
	}
	if _, err := worker.Heartbeat(c, a[0].ID, a[0].LeaseToken); err != nil {
		t.Fatal(err)
	}
	b, err := worker.Claim(c, client.ClaimRequest{WorkerID: "billing-b", Max: 1})
	if err != nil || len(b) != 1 {
		t.Fatalf("claim b: %v %d", err, len(b))
	}
	if _, err := worker.ReportOne(c, client.Report{JobID: b[0].ID, LeaseToken: b[0].LeaseToken, Success: true, HTTPStatus: 200}); err != nil {
		t.Fatal(err)
	}

	ws, err := owner.Workers(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.Workers) != 2 {
		t.Fatalf("workers: %+v", ws.Workers)
	}
	wb, wa := ws.Workers[0], ws.Workers[1]
	if wb.WorkerID != "billing-b" || wb.Holding != 0 || len(wb.Jobs) != 0 || wb.LastClaimAt == nil || wb.LastReportAt == nil || wb.LastHeartbeatAt != nil {
		t.Errorf("billing-b: %+v", wb)
	}
	if wa.WorkerID != "billing-a" || wa.Holding != 2 || len(wa.Jobs) != 2 || wa.Jobs[0] != max(a[0].ID, a[1].ID) || wa.LastHeartbeatAt == nil || wa.LastReportAt != nil {
		t.Errorf("billing-a: %+v", wa)
	}
	_, err = producer.Workers(c)
	apiErr(t, err, http.StatusForbidden)

	// Past the minute (and its grace), the server's background loop rolls
	// it up; poll for it.
	if err := owner.AdvanceClock(c, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	var claims, succeeded int64
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		h, err := producer.History(c, "stripe", 1)
		if err != nil {
			t.Fatal(err)
		}
		if h.MinuteMs != 60000 || len(h.Series) != 1 || h.Series[0].Endpoint != "stripe" {
			t.Fatalf("history: %+v", h)
		}
		claims, succeeded = 0, 0
		for _, p := range h.Series[0].Points {
			claims += p.Claims
			succeeded += p.Succeeded
		}
		if claims > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if claims != 3 || succeeded != 1 {
		t.Errorf("history counts claims %d succeeded %d, want 3 and 1", claims, succeeded)
	}
	_, err = producer.History(c, "", 49)
	if e := apiErr(t, err, http.StatusBadRequest); len(e.Fields) != 1 || e.Fields[0].Field != "hours" {
		t.Errorf("hours 49: %+v", e)
	}
	_, err = producer.History(c, "nope", 6)
	apiErr(t, err, http.StatusNotFound)
}
