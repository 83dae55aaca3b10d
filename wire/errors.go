package wire

import "github.com/getratchet/ratchet/field"

// ErrorBody is every error response: {"error": {...}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong. Code is one of invalid_request,
// unauthenticated, forbidden, not_found, conflict, unavailable,
// storage_full (503: the database cannot write, its disk is full),
// internal, client_closed. Fields lists every rejected field of an invalid request.
// Current is the endpoint as it is now, on a 409 for a stale
// expectedVersion.
type ErrorDetail struct {
	Code    string         `json:"code" enum:"invalid_request,unauthenticated,forbidden,not_found,method_not_allowed,request_timeout,request_too_large,conflict,unavailable,storage_full,internal,client_closed"`
	Message string         `json:"message"`
	Fields  []*field.Error `json:"fields,omitempty" doc:"the rejected fields, at most 20"`
	// FieldsOmitted counts the rejected fields left out of Fields.
	FieldsOmitted int       `json:"fieldsOmitted,omitzero"`
	Current       *Endpoint `json:"current,omitempty"`
}

// Error makes a detail an error, for the per-item errors of batch answers.
func (d *ErrorDetail) Error() string { return d.Code + ": " + d.Message }
