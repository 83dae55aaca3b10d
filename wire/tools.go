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
	Delivery      *DeliveryTarget `json:"delivery,omitempty" doc:"an HTTP target Ratchet calls itself for each job of the tool; absent for a tool run by workers"`
	FlowKeyFrom   string          `json:"flowKeyFrom,omitempty" maxLength:"200" doc:"a JSON Pointer (RFC 6901) into the payload, e.g. /customer/id: the string or integer there becomes the flow key of a job enqueued without one (an explicit flowKey wins); a job whose payload has none there is refused"`
}

// DeliveryTarget is the HTTP target of a tool that Ratchet delivers itself
// (docs/delivery.md). URL may hold {name} placeholders in its path and
// query, filled from the payload's top-level members. Secret or
// GenerateSecret makes every request carry a Standard Webhooks signature.
type DeliveryTarget struct {
	Method         string            `json:"method,omitempty" enum:",POST,PUT,PATCH,DELETE" doc:"default POST"`
	URL            string            `json:"url" maxLength:"2048" doc:"absolute http or https URL; {name} placeholders in the path and query only"`
	Headers        map[string]string `json:"headers,omitempty" doc:"static request headers; at most 20"`
	Secret         string            `json:"secret,omitempty" doc:"a Standard Webhooks signing secret, whsec_ and the base64 of 24–64 key bytes"`
	GenerateSecret bool              `json:"generateSecret,omitempty" doc:"true: Ratchet makes a secret and shows it once in the publish answer"`
}

// Delivery is a tool's HTTP target as shown. The signing secret is shown
// once, in the answer to the publish that set it, and never again.
type Delivery struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Signed  bool              `json:"signed" doc:"requests carry webhook-id, webhook-timestamp and webhook-signature"`
	Secret  string            `json:"secret,omitempty" doc:"the signing secret: in the publish answer only"`
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
	Delivery      *Delivery       `json:"delivery,omitempty" doc:"the HTTP target Ratchet delivers to; absent for a tool run by workers"`
	FlowKeyFrom   string          `json:"flowKeyFrom" doc:"the JSON Pointer into the payload that gives a job its flow key when the enqueue names none; empty for none"`
	CreatedAt     string          `json:"createdAt" format:"date-time"`
}

// ToolList is GET /v1/tools.
type ToolList struct {
	Tools []Tool `json:"tools"`
}
