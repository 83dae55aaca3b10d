package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
)

// A delivery's failure says what the provider answered: the start of the
// response body joins the attempt's message, so the job's last error (the
// console's banner and list), its failure group and search all read it.
// Before, every 400 of an endpoint read "HTTP 400 — client error, fail":
// one failure group, and searching for the body's words found no job.
func TestDeliveryExcerptInMessage(t *testing.T) { testDeliveryExcerptInMessage(t, newHarness(t)) }
func TestDeliveryExcerptInMessagePostgres(t *testing.T) {
	testDeliveryExcerptInMessage(t, newPGHarnessBare(t))
}

func testDeliveryExcerptInMessage(t *testing.T, h *harness) {
	h.endpoint("sms", seedEndpoint)
	h.tool(`{"name":"text","version":"1","endpoint":"sms","delivery":{"url":"https://sms.example/send"}}`)
	bodies := []string{
		"invalid_recipient: mailbox 1234 does not exist\n",
		"invalid_recipient: mailbox 98 does not exist",
		`{"error": {"code": "plan_exhausted", "message": "plan 7 has no credit left"}}`,
		"",
	}
	ids := map[int64]string{}
	for range bodies {
		out, err := h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: "text@1", Payload: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids[out.Job.ID] = ""
	}
	cs, err := h.e.ClaimDeliveries(h.ctx, "node", len(bodies), 0)
	if err != nil || len(cs) != len(bodies) {
		t.Fatalf("ClaimDeliveries = %d, %v", len(cs), err)
	}
	for i, c := range cs {
		r := engine.DeliveryResult{Report: classify.Report{HTTPStatus: 400}, Excerpt: bodies[i]}
		if _, err := h.e.ReportDelivery(h.ctx, c, r); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"HTTP 400 — client error, fail; the response: invalid_recipient: mailbox 1234 does not exist",
		"HTTP 400 — client error, fail; the response: invalid_recipient: mailbox 98 does not exist",
		"HTTP 400 — client error, fail; the response: error.code: plan_exhausted, error.message: plan 7 has no credit left",
		"HTTP 400 — client error, fail",
	}
	for i, c := range cs {
		j, as, _, err := h.e.Job(h.ctx, h.owner, c.Job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.LastError != want[i] || as[0].Message != want[i] {
			t.Errorf("job %d: last error %q, attempt message %q\nwant %q", j.ID, j.LastError, as[0].Message, want[i])
		}
		if as[0].ResponseExcerpt != strings.TrimSpace(bodies[i]) && as[0].ResponseExcerpt != bodies[i] {
			t.Errorf("job %d: excerpt %q, want the body as read", j.ID, as[0].ResponseExcerpt)
		}
	}
	g, err := h.e.FailureGroups(h.ctx, h.owner, "sms", 0, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	var fps []string
	for _, gr := range g.Groups {
		fps = append(fps, gr.Fingerprint)
	}
	if len(g.Groups) != 3 || g.Groups[0].Count != 2 || !strings.Contains(g.Groups[0].Fingerprint, "mailbox <n> does not exist") {
		t.Errorf("failure groups %q, want 3 with the two mailbox answers in one", fps)
	}
	for q, n := range map[string]int{"mailbox": 2, "plan_exhausted": 1, "does not exist": 2} {
		jobs, _, _, err := h.e.ListJobs(h.ctx, h.owner, store.JobFilter{Q: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != n {
			t.Errorf("search %q found %d jobs, want %d", q, len(jobs), n)
		}
	}
}
