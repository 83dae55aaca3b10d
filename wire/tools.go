package wire

import (
	"encoding/json"

	"github.com/getratchet/ratchet/backoff"
)

// ToolPublish is POST /v1/tools: an immutable tool contract. RetryPolicy is
// given with RetryPreset CUSTOM only; without either, the endpoint's policy
// applies.
type ToolPublish struct {
	Name          string          `json:"name" pattern:"name"`
	Version       string          `json:"version" pattern:"version"`
	Endpoint      string          `json:"endpoint" pattern:"name"`
	Description   string          `json:"description,omitempty" maxLength:"4000" text:"free" doc:"free text, cleaned of control characters; at most 4000 characters"`
	PayloadSchema json.RawMessage `json:"payloadSchema,omitempty" doc:"a JSON Schema (draft 2020-12) every payload must match at enqueue"`
	TimeoutMs     *int64          `json:"timeoutMs,omitempty" bound:"timeoutMs" doc:"the lease of this tool's claims; null for the endpoint's"`
	RetryPreset   backoff.Preset  `json:"retryPreset,omitempty"`
	RetryPolicy   *backoff.Policy `json:"retryPolicy,omitempty"`
}

// Tool is a published tool contract.
type Tool struct {
	Name          string          `json:"name"`
	Version       string          `json:"version"`
	Endpoint      string          `json:"endpoint"`
	Description   string          `json:"description"`
	PayloadSchema json.RawMessage `json:"payloadSchema" doc:"the payload's JSON Schema, or null"`
	TimeoutMs     *int64          `json:"timeoutMs"`
	RetryPreset   *backoff.Preset `json:"retryPreset"`
	RetryPolicy   *backoff.Policy `json:"retryPolicy" doc:"the CUSTOM policy, or null"`
	CreatedAt     string          `json:"createdAt" format:"date-time"`
}

// ToolList is GET /v1/tools.
type ToolList struct {
	Tools []Tool `json:"tools"`
}
