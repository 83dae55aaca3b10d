package engine_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// The flow key (docs/flow-control.md) on both drivers: set at enqueue,
// single and batch; taken from the payload by the tool's flowKeyFrom, an
// explicit key winning; kept by a replay, handed to the claiming worker,
// filtered on; refused with a field error naming the key or the payload
// member, with nothing stored.
func TestFlowKeys(t *testing.T)         { testFlowKeys(t, newHarness(t)) }
func TestFlowKeysPostgres(t *testing.T) { testFlowKeys(t, newPGHarnessBare(t)) }

func TestFlowKeyRefusals(t *testing.T)         { testFlowKeyRefusals(t, newHarness(t)) }
func TestFlowKeyRefusalsPostgres(t *testing.T) { testFlowKeyRefusals(t, newPGHarnessBare(t)) }

func flowFixture(h *harness) {
	h.endpoint("stripe", seedEndpoint)
	h.tool(`{"name":"charge","version":"1","endpoint":"stripe"}`)
	h.tool(`{"name":"refund","version":"1","endpoint":"stripe","flowKeyFrom":"/customer/id"}`)
	h.tool(`{"name":"odd","version":"1","endpoint":"stripe","flowKeyFrom":"/a~1b/~0c/1"}`)
}

func testFlowKeys(t *testing.T, h *harness) {
	flowFixture(h)
	one := func(r engine.EnqueueRequest) *store.Job {
		t.Helper()
		out, err := h.e.Enqueue(h.ctx, h.owner, r)
		if err != nil {
			t.Fatalf("enqueue %+v: %v", r, err)
		}
		return out.Job
	}
	keyed := one(engine.EnqueueRequest{Tool: "charge@1", FlowKey: "acct_42"})
	plain := one(engine.EnqueueRequest{Tool: "charge@1"})
	fromString := one(engine.EnqueueRequest{Tool: "refund@1", Payload: json.RawMessage(`{"customer":{"id":"cus_7"}}`)})
	fromInt := one(engine.EnqueueRequest{Tool: "refund@1", Payload: json.RawMessage(`{"customer":{"id":-1234567890123456789012}}`)})
	explicit := one(engine.EnqueueRequest{Tool: "refund@1", FlowKey: "acct_42", Payload: json.RawMessage(`{"customer":{"id":"cus_7"}}`)})
	escaped := one(engine.EnqueueRequest{Tool: "odd@1", Payload: json.RawMessage(`{"a/b":{"~c":["x","t ü"]}}`)})
	want := map[int64]string{keyed.ID: "acct_42", plain.ID: "", fromString.ID: "cus_7", fromInt.ID: "-1234567890123456789012",
		explicit.ID: "acct_42", escaped.ID: "t ü"}

	batch, err := h.e.EnqueueBatch(h.ctx, h.owner, []engine.EnqueueRequest{
		{Tool: "charge@1", FlowKey: "acct_1"},
		{Tool: "charge@1"},
		{Tool: "charge@1", FlowKey: "acct_2", IdempotencyKey: "order-1"}, // inserted on its own
		{Tool: "refund@1", Payload: json.RawMessage(`{"customer":{"id":7}}`)},
		{Tool: "charge@1", FlowKey: strings.Repeat("k", wire.MaxFlowKeyLen)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"acct_1", "", "acct_2", "7", strings.Repeat("k", wire.MaxFlowKeyLen)} {
		want[batch[i].Job.ID] = k
	}
	for id, k := range want {
		if j, _ := h.job(id); j.FlowKey != k {
			t.Errorf("job %d: flow key %q, want %q", id, j.FlowKey, k)
		}
	}

	// Filtered on, in lists and counts; another key's jobs and key-less
	// jobs are not in a key's list.
	jobs, _, _, err := h.e.ListJobs(h.ctx, h.owner, store.JobFilter{FlowKey: "acct_42"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	if w := []int64{explicit.ID, keyed.ID}; !slices.Equal(ids, w) {
		t.Errorf("jobs of acct_42 = %v, want %v", ids, w)
	}
	if n, _, err := h.e.CountJobs(h.ctx, h.owner, store.JobFilter{FlowKey: "cus_7"}); err != nil || n != 1 {
		t.Errorf("count of cus_7 = %d (%v), want 1", n, err)
	}

	// The claiming worker sees the key; a replay keeps it.
	claimed := h.claim([]string{"charge@1", "refund@1", "odd@1"}, 100)
	if len(claimed) == 0 || claimed[0].Job.ID != keyed.ID { // as many as maxConcurrent allows, oldest first
		t.Fatalf("claimed %d jobs, want the oldest, %d, first", len(claimed), keyed.ID)
	}
	for _, c := range claimed {
		if c.Job.FlowKey != want[c.Job.ID] {
			t.Errorf("claimed job %d: flow key %q, want %q", c.Job.ID, c.Job.FlowKey, want[c.Job.ID])
		}
		if c.Job.ID == keyed.ID {
			h.fail(c, 400, nil)
		}
	}
	re, err := h.e.Replay(h.ctx, h.owner, keyed.ID)
	if err != nil {
		t.Fatal(err)
	}
	if re.FlowKey != "acct_42" {
		t.Errorf("replay of a job of acct_42 has flow key %q", re.FlowKey)
	}
}

func testFlowKeyRefusals(t *testing.T, h *harness) {
	flowFixture(h)
	long := strings.Repeat("k", wire.MaxFlowKeyLen+1)
	cases := []struct {
		name  string
		reqs  []engine.EnqueueRequest
		field string
		value string
		says  string
	}{
		{"too long", []engine.EnqueueRequest{{Tool: "charge@1", FlowKey: long}}, "flowKey", "a key of 129 bytes", "at most 128 bytes"},
		{"control character", []engine.EnqueueRequest{{Tool: "charge@1", FlowKey: "a\x01b"}}, "flowKey", `"a\x01b"`, "control characters"},
		{"space at an end", []engine.EnqueueRequest{{Tool: "charge@1", FlowKey: " a"}}, "flowKey", `" a"`, "space at either end"},
		{"invalid UTF-8", []engine.EnqueueRequest{{Tool: "charge@1", FlowKey: "a\xffb"}}, "flowKey", `"a\xffb"`, "UTF-8"},
		{"in a batch", []engine.EnqueueRequest{{Tool: "charge@1"}, {Tool: "charge@1"}, {Tool: "charge@1"}, {Tool: "charge@1", FlowKey: "\x00"}},
			"jobs[3].flowKey", `"\x00"`, "control characters"},
		{"template: member missing", []engine.EnqueueRequest{{Tool: "refund@1", Payload: json.RawMessage(`{"customer":{}}`)}},
			"payload.customer.id", "(missing)", `a string or an integer, the job's flow key (flowKeyFrom "/customer/id" of refund@1)`},
		{"template: no object on the way", []engine.EnqueueRequest{{Tool: "refund@1", Payload: json.RawMessage(`{"customer":"c"}`)}},
			"payload.customer.id", "(missing)", "a string or an integer"},
		{"template: a number with a fraction", []engine.EnqueueRequest{{Tool: "refund@1", Payload: json.RawMessage(`{"customer":{"id":4.5}}`)}},
			"payload.customer.id", "4.5", "a string or an integer"},
		{"template: an object", []engine.EnqueueRequest{{Tool: "refund@1", Payload: json.RawMessage(`{"customer":{"id":{"n":1}}}`)}},
			"payload.customer.id", `{"n":1}`, "a string or an integer"},
		{"template: a bad key", []engine.EnqueueRequest{{Tool: "charge@1"}, {Tool: "refund@1", Payload: json.RawMessage(`{"customer":{"id":"a\tb"}}`)}},
			"jobs[1].payload.customer.id", `"a\tb"`, "control characters"},
		{"template: array index out of range", []engine.EnqueueRequest{{Tool: "odd@1", Payload: json.RawMessage(`{"a/b":{"~c":["x"]}}`)}},
			`payload["a/b"]["~c"][1]`, "(missing)", "a string or an integer"},
	}
	for _, c := range cases {
		_, err := h.e.EnqueueBatch(h.ctx, h.owner, c.reqs)
		if len(c.reqs) == 1 {
			_, err = h.e.Enqueue(h.ctx, h.owner, c.reqs[0])
		}
		var ee *engine.Error
		if !errors.As(err, &ee) || ee.Kind != engine.KindInvalid {
			t.Errorf("%s: enqueue = %v, want an invalid request", c.name, err)
			continue
		}
		if len(ee.Fields) != 1 || ee.Fields[0].Field != c.field || ee.Fields[0].Value != c.value || !strings.Contains(ee.Fields[0].Allowed, c.says) {
			t.Errorf("%s: fields %v, want one for %s = %s saying %q", c.name, ee.Fields, c.field, c.value, c.says)
		}
	}
	if n, _, err := h.e.CountJobs(h.ctx, h.owner, store.JobFilter{}); err != nil || n != 0 {
		t.Errorf("after refused enqueues: %d jobs (%v), want none stored", n, err)
	}
}
