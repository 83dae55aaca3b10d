package api_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/api"
	"github.com/getratchet/ratchet/internal/engine"
)

// seedEndpoint is a full CUSTOM endpoint policy document.
const seedEndpoint = `{"preset":"CUSTOM","maxAttempts":6,"initialDelayMs":10000,"multiplier":2,"maxDelayMs":600000,"jitterPercent":20,
	"defaultTimeoutMs":30000,"maxConcurrent":10,"rateLimitPerMinute":null}`

// FuzzDecodeToolSpec: a contract document is either accepted whole or
// rejected with errors that each name a field, a value and what is allowed.
func FuzzDecodeToolSpec(f *testing.F) {
	f.Add([]byte(`{"name":"charge","version":"1","endpoint":"stripe"}`))
	f.Add([]byte(`{"name":"t","version":"2","endpoint":"e","retryPreset":"CUSTOM","retryPolicy":{"maxAttempts":3,"initialDelayMs":2000,"multiplier":3,"maxDelayMs":50000,"jitterPercent":0}}`))
	f.Add([]byte(`{"name":"t","version":"v1.0","endpoint":"e","payloadSchema":{"type":"object","required":["a"]},"timeoutMs":5000,"retryPreset":"RELAXED"}`))
	f.Add([]byte(`{"name":"T","version":"","endpoint":1,"payloadSchema":{"type":12}}`))
	f.Add([]byte(`{"name":"t","version":"1","endpoint":"e","delivery":{"url":"https://example.com/{id}","headers":{"X-A":"1","x-a":"2","Host":"h"},"generateSecret":true}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := api.DecodeToolSpec(data)
		if err != nil {
			fs, ok := field.As(err)
			if !ok || len(fs) == 0 {
				t.Fatalf("error %v is not a list of field errors", err)
			}
			for _, fe := range fs {
				if fe.Field == "" || fe.Value == "" || fe.Allowed == "" {
					t.Fatalf("field error without field, value or allowed: %+v", fe)
				}
			}
			return
		}
		if _, _, err := engine.ParseToolRef(s.Name + "@" + s.Version); err != nil {
			t.Fatalf("accepted %q@%q which ParseToolRef refuses", s.Name, s.Version)
		}
		if s.RetryPreset == string(backoff.Custom) {
			b, _ := json.Marshal(s.RetryPolicy)
			if _, err := backoff.ParsePolicy(b); err != nil {
				t.Fatalf("accepted a CUSTOM policy that does not parse: %s", b)
			}
		}
	})
}

// FuzzDecodeEndpointPolicy: the flat endpoint policy document.
func FuzzDecodeEndpointPolicy(f *testing.F) {
	f.Add([]byte(seedEndpoint), true)
	f.Add([]byte(`{"preset":"AGGRESSIVE","defaultTimeoutMs":1000,"maxConcurrent":1,"rateLimitPerMinute":5}`), false)
	f.Add([]byte(`{"maxConcurrent":0,"rateLimitPerMinute":"x","circuitOpenMs":1e9}`), true)
	f.Fuzz(func(t *testing.T, data []byte, full bool) {
		fields, err := backoff.ReadObject(data, "body")
		if fields == nil || err != nil {
			return
		}
		p, err := api.DecodeEndpointPolicy(fields, full, nil)
		if err != nil {
			if fs, ok := field.As(err); !ok || len(fs) == 0 {
				t.Fatalf("error %v without fields", err)
			}
			return
		}
		if err := p.Policy.Validate(); err != nil {
			t.Fatalf("accepted an invalid policy: %v", err)
		}
		if p.MaxConcurrent < 1 || p.DefaultTimeoutMs < 1000 || p.CircuitFailureThreshold < 1 || p.CircuitOpenMs < 1000 ||
			p.RateLimitPerMinute != nil && *p.RateLimitPerMinute < 1 {
			t.Fatalf("accepted out-of-range settings: %+v", p)
		}
	})
}

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
		_, err := api.DecodeToolSpec([]byte(doc))
		fs, ok := field.As(err)
		if !ok || len(fs) == 0 || fs[0].Field != "payloadSchema" {
			t.Errorf("%s: want a payloadSchema error, got %v", schema, err)
			continue
		}
		msg := fs.Error()
		for _, leak := range []string{"root:", dir, wd} {
			if strings.Contains(msg, leak) && !strings.Contains(schema, leak) {
				t.Errorf("%s: the error shows %q: %s", schema, leak, msg)
			}
		}
	}
	// References inside the document still work.
	ok := `{"name":"t","version":"1","endpoint":"e","payloadSchema":{"$defs":{"id":{"type":"integer"}},"type":"object","properties":{"id":{"$ref":"#/$defs/id"}}}}`
	spec, err := api.DecodeToolSpec([]byte(ok))
	if err != nil || !json.Valid(spec.PayloadSchema) {
		t.Fatalf("a schema with an internal $ref: %v", err)
	}
	big := `{"name":"t","version":"1","endpoint":"e","payloadSchema":{"description":"` + strings.Repeat("x", engine.MaxSchemaBytes) + `"}}`
	if _, err := api.DecodeToolSpec([]byte(big)); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a schema over %d bytes: %v", engine.MaxSchemaBytes, err)
	}
}
