package api_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/api"
)

// docPath is the checked-in OpenAPI document the TypeScript and Python SDKs
// are generated from.
var docPath = filepath.Join("..", "..", "openapi.json")

// document renders the document as it is checked in (api.CheckedInDocument).
func document(t *testing.T) []byte {
	t.Helper()
	b, err := api.CheckedInDocument()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenAPIDocumentCheckedIn fails when the route table or a wire type
// changed and openapi.json was not regenerated with scripts/generate.
func TestOpenAPIDocumentCheckedIn(t *testing.T) {
	want, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("read the checked-in document: %v; run scripts/generate (or go generate ./...) to write it", err)
	}
	if !bytes.Equal(document(t), want) {
		t.Fatalf("openapi.json is stale: it differs from the document the route table and the wire types generate; run\n\tscripts/generate\n(or go generate ./...), which also regenerates the SDKs' types, and commit the result")
	}
}

// openObjects are the only places a schema may accept any JSON: a job's
// payload and a tool's payload schema, which are the producer's documents.
var openObjects = []string{
	"ClaimedJob.payload", "Job.payload", "JobEnqueue.payload", "Tool.payloadSchema", "ToolPublish.payloadSchema",
	"Schedule.payload", "ScheduleCreate.payload", // the payload of every tick's job
}

// TestOpenAPISchemasAreClosed walks every schema of the document: every
// object lists its properties and refuses others (or is a map with a typed
// value), every success response but 204 has a schema, and an open schema
// appears only where openObjects allow.
func TestOpenAPISchemasAreClosed(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(document(t), &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var open []string
	var walk func(where string, s any)
	walk = func(where string, s any) {
		m, ok := s.(map[string]any)
		if !ok {
			return
		}
		if len(m) == 0 || (len(m) == 1 && m["description"] != nil) {
			open = append(open, where)
			return
		}
		if m["type"] == "object" {
			_, hasProps := m["properties"]
			ap, hasAP := m["additionalProperties"]
			switch {
			case hasProps && ap != false:
				t.Errorf("%s: an object with properties must set additionalProperties false", where)
			case !hasProps && !hasAP:
				t.Errorf("%s: an untyped object", where)
			}
		}
		for _, k := range []string{"properties"} {
			if props, ok := m[k].(map[string]any); ok {
				for name, p := range props {
					walk(strings.TrimSuffix(where, ".")+"."+name, p)
				}
			}
		}
		for _, k := range []string{"items", "additionalProperties"} {
			if sub, ok := m[k].(map[string]any); ok {
				walk(where+"[]", sub)
			}
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			if subs, ok := m[k].([]any); ok {
				for _, sub := range subs {
					walk(where, sub)
				}
			}
		}
	}
	for name, s := range schemas {
		walk(name, s)
	}
	sort.Strings(open)
	for _, w := range open {
		if !slices.Contains(openObjects, w) {
			t.Errorf("%s accepts any JSON; only a payload may", w)
		}
	}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			for status, resp := range op.(map[string]any)["responses"].(map[string]any) {
				r := resp.(map[string]any)
				if status != "204" && r["content"] == nil {
					t.Errorf("%s %s answers %s without a schema", method, path, status)
				}
			}
		}
	}
}

// TestOpenAPIDocumentHasNoNull: no keyword of the document is JSON null
// (only a value a schema allows may be: an enum member, a default) — a null
// description made independent validators reject the whole document. Query parameters that hold numbers are typed integer.
func TestOpenAPIDocumentHasNoNull(t *testing.T) {
	var doc any
	if err := json.Unmarshal(document(t), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case nil:
			t.Errorf("%s is null", path)
		case map[string]any:
			for k, x := range v {
				walk(path+"/"+k, x)
			}
		case []any:
			if strings.HasSuffix(path, "/enum") || strings.HasSuffix(path, "/examples") {
				return // values a schema allows, null among them
			}
			for i, x := range v {
				walk(path+"/"+strconv.Itoa(i), x)
			}
		}
	}
	walk("#", doc)
	paths := doc.(map[string]any)["paths"].(map[string]any)
	for _, c := range []struct{ path, param, typ string }{
		{"/v1/jobs", "limit", "integer"},
		{"/v1/jobs", "endpoint", "string"},
		{"/v1/history", "hours", "integer"},
		{"/v1/audit", "limit", "integer"},
		{"/v1/stream", "job", "integer"},
	} {
		var got any
		for _, p := range paths[c.path].(map[string]any)["get"].(map[string]any)["parameters"].([]any) {
			if p := p.(map[string]any); p["name"] == c.param {
				got = p["schema"].(map[string]any)["type"]
			}
		}
		if got != c.typ {
			t.Errorf("GET %s query %s is typed %v, want %s", c.path, c.param, got, c.typ)
		}
	}
	for _, p := range []string{"/healthz", "/readyz", "/openapi.json"} {
		schema := paths[p].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"]
		if schema == nil {
			t.Errorf("GET %s is not described as JSON", p)
		}
	}
}
