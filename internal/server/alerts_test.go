package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/wire"
)

// TestAlertsFromTheBinary: `ratchet serve --public-url` sends an alert
// of a circuit opened by hand to a webhook sink on loopback (allowed by
// --delivery-allow), carrying the link to the endpoint's console page
// under the public URL; a test alert reaches a Slack sink; the Go client's
// alert methods list the sinks (no secret) and the deliveries.
func TestAlertsFromTheBinary(t *testing.T) {
	got := make(chan []byte, 10)
	sinkSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- b
		w.WriteHeader(200)
	}))
	defer sinkSrv.Close()
	_, owner, _, _ := operatorSetup(t, "--public-url", "https://console.example.com/", "--delivery-allow", "127.0.0.1/32")
	c := ctx(t)
	k, err := owner.CreateAlertSink(c, client.AlertSinkCreate{Name: "pager", Kind: wire.SinkWebhook, URL: sinkSrv.URL + "/hook"})
	if err != nil || k.Secret == nil {
		t.Fatalf("create: %v %+v", err, k)
	}
	start := time.Now()
	if _, err := owner.OpenCircuit(c, "payments"); err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Type string     `json:"type"`
		Data wire.Alert `json:"data"`
	}
	select {
	case b := <-got:
		t.Logf("circuit opened by hand: the alert reached the sink %v later", time.Since(start).Round(time.Millisecond))
		if err := json.Unmarshal(b, &msg); err != nil || msg.Type != "ratchet.alert.circuit_opened" || msg.Data.Link != "https://console.example.com/endpoints/payments" ||
			msg.Data.NextProbeAt == nil || !strings.Contains(msg.Data.Detail, "by hand") {
			t.Fatalf("alert: %s", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no alert reached the sink")
	}
	if _, err := owner.CreateAlertSink(c, client.AlertSinkCreate{Name: "chat", Kind: wire.SinkSlack, URL: sinkSrv.URL + "/slack"}); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.TestAlertSink(c, "chat"); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if !strings.Contains(string(b), `"blocks"`) || !strings.Contains(string(b), "Test alert") {
			t.Errorf("test alert: %s", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the test alert did not reach the sink")
	}
	l, err := owner.AlertSinks(c)
	if err != nil || len(l.Sinks) != 2 || l.Sinks[1].Secret != nil {
		t.Fatalf("sinks: %v %+v", err, l)
	}
	ds, err := owner.Alerts(c, 10)
	if err != nil || len(ds.Deliveries) != 2 {
		t.Fatalf("deliveries: %v %+v", err, ds)
	}
	if err := owner.DeleteAlertSink(c, "chat"); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.SetAlertSettings(c, client.AlertSettings{PausedAfterMs: 1}); err == nil || !strings.Contains(err.Error(), "pausedAfterMs") {
		t.Errorf("settings out of bounds: %v", err)
	}
}
