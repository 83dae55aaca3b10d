package engine_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/engine"
)

// TestPayloadSchemaStaysInsideTheDocument: a payload schema can never make
// the server read a file or call an address, and no error shows a server
// path. Before, {"$ref": "/etc/passwd"} answered with the file's first byte
// and a $ref to a local JSON file was accepted.
func TestPayloadSchemaStaysInsideTheDocument(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "local.json")
	if err := os.WriteFile(local, []byte(`{"type":"object"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	for _, schema := range []string{
		`{"$ref": "/etc/passwd"}`,
		`{"$ref": "file://` + local + `"}`,
		`{"$ref": "` + local + `"}`,
		`{"$ref": "local.json"}`,
		`{"$ref": "http://127.0.0.1:1/x.json"}`,
		`{"$schema": "file:///etc/passwd", "type": "object"}`,
		`{"properties": {"a": {"$ref": "other.json#/x"}}}`,
	} {
		doc := `{"name":"t","version":"1","endpoint":"e","payloadSchema":` + schema + `}`
		_, err := engine.ParseToolSpec([]byte(doc))
		var ee *engine.Error
		if !errors.As(err, &ee) || ee.Kind != engine.KindInvalid || len(ee.Fields) == 0 || ee.Fields[0].Field != "payloadSchema" {
			t.Errorf("%s: want a payloadSchema error, got %v", schema, err)
			continue
		}
		msg := ee.Error()
		for _, leak := range []string{"root:", dir, wd} {
			if strings.Contains(msg, leak) && !strings.Contains(schema, leak) {
				t.Errorf("%s: the error shows %q: %s", schema, leak, msg)
			}
		}
	}
	// References inside the document still work.
	ok := `{"name":"t","version":"1","endpoint":"e","payloadSchema":{"$defs":{"id":{"type":"integer"}},"type":"object","properties":{"id":{"$ref":"#/$defs/id"}}}}`
	spec, err := engine.ParseToolSpec([]byte(ok))
	if err != nil || !json.Valid(spec.PayloadSchema) {
		t.Fatalf("a schema with an internal $ref: %v", err)
	}
	big := `{"name":"t","version":"1","endpoint":"e","payloadSchema":{"description":"` + strings.Repeat("x", engine.MaxSchemaBytes) + `"}}`
	if _, err := engine.ParseToolSpec([]byte(big)); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a schema over %d bytes: %v", engine.MaxSchemaBytes, err)
	}
}

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
