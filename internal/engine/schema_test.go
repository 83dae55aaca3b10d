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
