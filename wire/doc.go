// Package wire is Ratchet's HTTP contract: one named request and one named
// response type per route, the enums of the job lifecycle, and the error
// body. The server (internal/api) decodes and encodes exactly these types,
// /openapi.json is generated from them, and the Go SDK (package client)
// exposes them; the TypeScript and Python SDKs are generated from that
// OpenAPI document. Nothing at the edge is typed twice.
//
// JSON is camelCase; times are RFC 3339 UTC strings with milliseconds;
// states and outcomes are lowercase words. Struct tags carry the schema that
// reflection cannot see: `required:"true"` for a field the server requires,
// `enum`, `minimum`, `maximum`, `pattern`, `maxLength` for its bounds, and
// `doc` for its description. Bounds of retry policies come from the backoff
// package's constants, so the document, the server and the pages share them.
//
// The package imports only the standard library, backoff and field.
package wire
