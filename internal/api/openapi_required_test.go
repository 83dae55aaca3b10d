package api_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestOpenAPIRequiredMembersAreDescribed: every schema of the document that
// lists required members describes each of them in its properties. The
// document's own route (GET /openapi.json) required openapi, info and paths
// but described none, and openapi-typescript turned it into
// Record<string, never>, an object that may hold nothing, in the
// TypeScript SDK's types.
func TestOpenAPIRequiredMembersAreDescribed(t *testing.T) {
	var doc any
	if err := json.Unmarshal(document(t), &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	// A conditional subschema (if, then, else) requires members of the
	// schema it is in: it is checked against that schema's properties.
	var walk func(where string, v any, outer map[string]any)
	walk = func(where string, v any, outer map[string]any) {
		switch v := v.(type) {
		case map[string]any:
			props, _ := v["properties"].(map[string]any)
			if req, ok := v["required"].([]any); ok {
				checked++
				for _, r := range req {
					if name, _ := r.(string); props[name] == nil && outer[name] == nil {
						t.Errorf("%s requires %v but its properties do not describe it", where, r)
					}
				}
			}
			for k, x := range v {
				var in map[string]any
				if k == "if" || k == "then" || k == "else" {
					in = props
				}
				walk(where+"/"+strings.ReplaceAll(k, "/", "~1"), x, in)
			}
		case []any:
			for i, x := range v {
				walk(where+"/"+strconv.Itoa(i), x, nil)
			}
		}
	}
	walk("#", doc, nil)
	if checked < 50 {
		t.Fatalf("only %d schemas with required members: the walk is broken", checked)
	}
}
