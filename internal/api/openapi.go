package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
)

// OpenAPI builds the OpenAPI 3.1 document from the route table and the Go
// types the handlers read and write, so the two cannot disagree.
func (a *API) OpenAPI(version string) map[string]any {
	paths := map[string]any{}
	for _, r := range a.routes {
		op := map[string]any{"summary": r.Summary, "operationId": operationID(r)}
		if len(r.Scopes) > 0 {
			op["security"] = []any{map[string]any{"bearer": []string{}}}
			op["description"] = "Key scopes: " + strings.Join(r.Scopes, ", ") + " (owner keys may do everything)."
		}
		var params []any
		for _, name := range pathParams.FindAllStringSubmatch(r.Path, -1) {
			typ := "string"
			if name[1] == "id" {
				typ = "integer"
			}
			params = append(params, map[string]any{"name": name[1], "in": "path", "required": true, "schema": map[string]any{"type": typ}})
		}
		for _, q := range r.Query {
			params = append(params, map[string]any{"name": q.Name, "in": "query", "required": false, "description": q.Description, "schema": map[string]any{"type": q.Type}})
		}
		if r.Path == "/v1/jobs" && r.Method == "POST" {
			params = append(params, map[string]any{"name": "Idempotency-Key", "in": "header", "required": false, "schema": map[string]any{"type": "string"},
				"description": "Same as the idempotencyKey field; a repeated key returns the existing job."})
		}
		if params != nil {
			op["parameters"] = params
		}
		if r.Request != "" {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": ref(r.Request)}}}
		}
		resp := map[string]any{"description": http.StatusText(r.Status)}
		if r.Response != "" {
			resp["content"] = map[string]any{"application/json": map[string]any{"schema": ref(r.Response)}}
		}
		responses := map[string]any{strconv.Itoa(r.Status): resp}
		errResp := func(desc string) map[string]any {
			return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": ref("Error")}}}
		}
		responses["400"] = errResp("Invalid request: every bad field is named with its value and what is allowed")
		if len(r.Scopes) > 0 {
			responses["401"] = errResp("Missing, unknown or revoked key")
			responses["403"] = errResp("The key's scope or allowlist does not allow this")
		}
		responses["404"] = errResp("Not found (also for ids of other projects)")
		responses["409"] = errResp("Conflict: stale expectedVersion, stale lease token, or a state that forbids the action")
		responses["503"] = errResp("The database is unavailable; retry")
		op["responses"] = responses
		item, _ := paths[r.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[r.Path] = item
		}
		item[strings.ToLower(r.Method)] = op
	}
	for _, p := range []struct{ path, summary string }{
		{"/healthz", "Liveness: the process serves HTTP"},
		{"/readyz", "Readiness: the store answers"},
		{"/metrics", "Prometheus metrics"},
		{"/openapi.json", "This document"},
	} {
		paths[p.path] = map[string]any{"get": map[string]any{"summary": p.summary, "operationId": strings.Trim(strings.ReplaceAll(p.path, ".", "_"), "/"),
			"responses": map[string]any{"200": map[string]any{"description": "OK"}}}}
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Ratchet API", "version": version,
			"description": "Ratchet is a durable retry scheduler. Producers enqueue jobs; workers claim due jobs, heartbeat and report; Ratchet decides when the next attempt runs."},
		"paths": paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "An API key: rk_..."}},
			"schemas":         schemas(),
		},
	}
}

var pathParams = regexp.MustCompile(`\{(\w+)\}`)

func operationID(r Route) string {
	parts := []string{strings.ToLower(r.Method)}
	for _, seg := range strings.Split(strings.TrimPrefix(r.Path, "/v1/"), "/") {
		seg = strings.Trim(seg, "{}")
		if seg != "" {
			parts = append(parts, strings.ToUpper(seg[:1])+seg[1:])
		}
	}
	return strings.Join(parts, "")
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

// policyProps are the retry policy fields, flat, as the endpoint policy API
// and the policy document use them.
func policyProps() map[string]any {
	return map[string]any{
		"preset":         map[string]any{"type": "string", "enum": []string{"STANDARD", "AGGRESSIVE", "RELAXED", "CUSTOM"}},
		"maxAttempts":    map[string]any{"type": "integer", "minimum": 1, "maximum": 10},
		"initialDelayMs": map[string]any{"type": "integer", "minimum": 1000, "maximum": 1800000},
		"multiplier":     map[string]any{"type": "number", "minimum": 1, "maximum": 4},
		"maxDelayMs":     map[string]any{"type": "integer", "minimum": 1000, "maximum": 86400000, "description": "At least initialDelayMs."},
		"jitterPercent":  map[string]any{"type": "number", "minimum": 0, "maximum": 50},
	}
}

func endpointPolicyProps(update bool) map[string]any {
	p := policyProps()
	p["defaultTimeoutMs"] = map[string]any{"type": "integer", "minimum": 1000, "maximum": 43200000, "description": "The lease of a claim."}
	p["maxConcurrent"] = map[string]any{"type": "integer", "minimum": 1, "maximum": 100000}
	p["rateLimitPerMinute"] = map[string]any{"type": []string{"integer", "null"}, "minimum": 1, "maximum": 1000000}
	p["circuitFailureThreshold"] = map[string]any{"type": "integer", "minimum": 1, "maximum": 1000}
	p["circuitOpenMs"] = map[string]any{"type": "integer", "minimum": 1000, "maximum": 86400000}
	if update {
		p["expectedVersion"] = map[string]any{"type": "integer", "minimum": 1}
	} else {
		p["name"] = map[string]any{"type": "string", "pattern": "^[a-z0-9][a-z0-9._-]{0,63}$"}
	}
	return p
}

func schemas() map[string]any {
	out := map[string]any{}
	for name, v := range map[string]any{
		"Key": KeyView{}, "KeyCreate": keyCreate{}, "Endpoint": EndpointView{}, "Tool": ToolView{}, "Run": RunView{}, "RunCreate": runCreate{},
		"Job": JobView{}, "JobEnqueue": enqueueReq{}, "JobBatch": batchReq{}, "Hold": engine.Hold{}, "ClaimRequest": claimReq{},
		"ClaimedJob": engine.ClaimedJSON{}, "Heartbeat": heartbeatReq{}, "Report": ReportBody{}, "ReportBatch": reportBatchReq{},
		"Error": errorBody{}, "JobBulk": bulkReq{}, "ClockAdvance": clockAdvance{},
	} {
		out[name] = schemaOf(reflect.TypeOf(v))
	}
	obj := func(props map[string]any, required ...string) map[string]any {
		m := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			m["required"] = required
		}
		return m
	}
	list := func(key, item string) map[string]any {
		return obj(map[string]any{key: map[string]any{"type": "array", "items": ref(item)}})
	}
	out["KeyList"] = list("keys", "Key")
	out["EndpointList"] = list("endpoints", "Endpoint")
	out["ToolList"] = list("tools", "Tool")
	out["JobList"] = obj(map[string]any{"jobs": map[string]any{"type": "array", "items": ref("Job")}, "nextCursor": map[string]any{"type": []string{"string", "null"}}})
	out["ClaimResult"] = list("jobs", "ClaimedJob")
	out["Count"] = obj(map[string]any{"count": map[string]any{"type": "integer"}})
	out["EndpointCreate"] = obj(endpointPolicyProps(false), "name")
	out["EndpointPolicyUpdate"] = obj(endpointPolicyProps(true), "expectedVersion", "preset", "defaultTimeoutMs", "maxConcurrent", "rateLimitPerMinute")
	out["RetryPolicy"] = obj(policyProps(), "preset")
	out["ToolPublish"] = obj(map[string]any{
		"name": map[string]any{"type": "string"}, "version": map[string]any{"type": "string"}, "endpoint": map[string]any{"type": "string"},
		"description": map[string]any{"type": "string"}, "payloadSchema": map[string]any{"description": "A JSON Schema the payload must match at enqueue."},
		"timeoutMs":   map[string]any{"type": []string{"integer", "null"}, "minimum": 1000, "maximum": 43200000},
		"retryPreset": map[string]any{"type": "string", "enum": []string{"STANDARD", "AGGRESSIVE", "RELAXED", "CUSTOM"}},
		"retryPolicy": ref("RetryPolicy"),
	}, "name", "version", "endpoint")
	free := map[string]any{"type": "object"}
	out["Me"], out["JobBatchResult"], out["JobBulkResult"], out["HeartbeatResult"], out["ReportResult"], out["ReportBatchResult"], out["Overview"] = free, free, free, free, free, free, free
	return out
}

// schemaOf describes a Go type as JSON Schema from its json tags.
func schemaOf(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		s := schemaOf(t.Elem())
		if typ, ok := s["type"].(string); ok {
			s["type"] = []string{typ, "null"}
		}
		return s
	}
	switch {
	case t == reflect.TypeOf(json.RawMessage{}):
		return map[string]any{}
	case t == reflect.TypeOf(time.Time{}):
		return map[string]any{"type": "string", "format": "date-time"}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64, reflect.Int32:
		return map[string]any{"type": "integer"}
	case reflect.Float64, reflect.Float32:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && tag == "" {
				for k, v := range schemaOf(f.Type)["properties"].(map[string]any) {
					props[k] = v
				}
				continue
			}
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			props[name] = schemaOf(f.Type)
		}
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{}
}
