package engine_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/engine"
)

// TestPayloadSchemaNamesEachProperty: a payload that breaks its tool's
// schema is refused with one field error per failing property — its path
// under payload, its value and what the schema allows — and a missing
// required property is named as missing. (The error named only "payload"
// and the first problem.)
func TestPayloadSchemaNamesEachProperty(t *testing.T) {
	h := newHarness(t)
	h.endpoint("stripe", seedEndpoint)
	h.tool(`{"name":"charge","version":"1","endpoint":"stripe","payloadSchema":{"type":"object","required":["orderId","amount"],
		"properties":{"orderId":{"type":"integer"},"amount":{"type":"number","minimum":1},
		"items":{"type":"array","items":{"type":"object","required":["sku"],"properties":{"sku":{"type":"string","maxLength":4}}}}}}}`)
	_, err := h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: "charge@1",
		Payload: json.RawMessage(`{"orderId":"42","items":[{"sku":"ok"},{"sku":"too-long"},{}]}`)})
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Kind != engine.KindInvalid {
		t.Fatalf("enqueue = %v; want an invalid request", err)
	}
	got := map[string]string{}
	for _, f := range ee.Fields {
		got[f.Field] = f.Value + " | " + f.Allowed
	}
	for name, want := range map[string][]string{
		"payload.orderId":      {`"42" |`, "integer", "charge@1"},
		"payload.amount":       {"(missing) |", "required"},
		"payload.items[1].sku": {`"too-long" |`, "4"},
		"payload.items[2].sku": {"(missing) |", "required"},
	} {
		g, ok := got[name]
		if !ok {
			t.Errorf("no field error for %s; got %v", name, got)
			continue
		}
		for _, w := range want {
			if !strings.Contains(g, w) {
				t.Errorf("%s: %q lacks %q", name, g, w)
			}
		}
	}
	if len(got) != 4 {
		t.Errorf("%d field errors, want 4: %v", len(got), got)
	}
}
