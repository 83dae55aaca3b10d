package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
)

// TestFailuresThroughClient: through the Go client against a built
// server (every answer checked against openapi.json): three jobs of one
// cause and one of another fail; Failures groups them; a preview counts
// the group; a replay with a stale count is a 409; the confirmed replay
// makes new jobs and an audit entry; a bad filter is a 400 naming it.
func TestFailuresThroughClient(t *testing.T) {
	_, owner, producer, worker := operatorSetup(t)
	c := ctx(t)
	one := int64(1)
	fail := func(msg string) {
		t.Helper()
		if _, _, err := producer.Enqueue(c, client.EnqueueRequest{Tool: "pay@1", Payload: json.RawMessage(`{}`), MaxAttempts: &one}); err != nil {
			t.Fatal(err)
		}
		got, err := worker.Claim(c, client.ClaimRequest{WorkerID: "w", Tools: []string{"pay@1"}, Max: 1})
		if err != nil || len(got) != 1 {
			t.Fatalf("claim: %v %+v", err, got)
		}
		if _, err := worker.ReportOne(c, client.Report{JobID: got[0].ID, LeaseToken: got[0].LeaseToken, HTTPStatus: 503, Message: msg}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		fail(fmt.Sprintf("upstream reset after %dms (conn 0x%x)", 100+i, 0xbeef+i))
	}
	fail(`card "4242" declined`)
	list, err := producer.Failures(c, "payments", time.Time{}, time.Time{}, 12)
	if err != nil || len(list.Groups) != 2 || list.Groups[0].Count != 3 || list.Groups[0].Fingerprint != "upstream reset after <n>ms (conn <hex>)" || len(list.Groups[0].Sparkline) != 12 {
		t.Fatalf("failures: %v %+v", err, list)
	}
	f := client.FailureFilter{Endpoint: "payments", Group: list.Groups[0].Group}
	pre, err := producer.PreviewReplayFailures(c, f)
	if err != nil || pre.Count != 3 || !pre.Preview {
		t.Fatalf("preview: %v %+v", err, pre)
	}
	_, err = producer.ReplayFailures(c, f, 2)
	apiErr(t, err, http.StatusConflict)
	res, err := producer.ReplayFailures(c, f, 3)
	if err != nil || res.Replayed != 3 || len(res.Jobs) != 3 {
		t.Fatalf("replay: %v %+v", err, res)
	}
	page, err := owner.Audit(c, "endpoint:payments", "", 10)
	if err != nil || len(page.Entries) == 0 || page.Entries[0].Action != "failures.replay" || !strings.Contains(page.Entries[0].Detail, "replayed 3 of 3") {
		t.Fatalf("audit: %v %+v", err, page)
	}
	_, err = producer.PreviewReplayFailures(c, client.FailureFilter{State: "running"})
	if e := apiErr(t, err, http.StatusBadRequest); len(e.Fields) != 1 || e.Fields[0].Field != "state" {
		t.Errorf("bad state: %+v", e)
	}
}
