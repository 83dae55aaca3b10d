// Package field is the one shape of a validation error in Ratchet: which
// field was rejected, the value given and what is allowed. The backoff
// arithmetic, the classification table, the engine, the HTTP API, the
// command line and the simulator all report bad input with it, and the API
// turns it into the "fields" of its error body.
//
// Validation collects every problem of one input into Errors so a person
// fixes all of them in one round:
//
//	var errs field.Errors
//	if n < 1 || n > 10 {
//		errs.Add("maxAttempts", strconv.Itoa(n), "an integer from 1 through 10")
//	}
//	return errs.Err()
//
// Callers find the list with errors.As (As does it in one call), never with
// a type assertion, so wrapped errors keep their fields.
//
// The package uses the standard library only: the public backoff package
// depends on it and promises no other dependency.
package field

import (
	"encoding/json"
	"errors"
	"strings"
)

// Error is one rejected value. Its message always names the field, the value
// and what is allowed, so a person can fix the input without reading source.
type Error struct {
	Field   string // JSON field or CLI flag name, e.g. "maxAttempts" or "--cap"
	Value   string // the value as given, e.g. "11", `"fast"`, or Missing
	Allowed string // what would have been accepted, e.g. "an integer from 1 through 10"
}

// Values of Error.Value that describe an absence or a misplaced field rather
// than a rejected value.
const (
	Missing  = "(missing)"
	Unknown  = "(unknown field)"
	Repeated = "(repeated field)"
)

// Error reads "FIELD: VALUE is not allowed; ALLOWED", or says the field is
// missing, unknown or repeated.
func (e *Error) Error() string {
	switch e.Value {
	case Missing:
		return e.Field + ": missing; " + e.Allowed
	case Unknown:
		return e.Field + ": unknown field; " + e.Allowed
	case Repeated:
		return e.Field + ": given more than once; " + e.Allowed
	}
	return e.Field + ": " + e.Value + " is not allowed; " + e.Allowed
}

// New is an Errors of one field, for the common single-problem return.
func New(name, value, allowed string) Errors {
	return Errors{{Field: name, Value: value, Allowed: allowed}}
}

// Errors is every problem found in one document or one set of inputs.
type Errors []*Error

// Error is the errors' messages, one a line.
func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Err returns nil for an empty list, so callers can write `return errs.Err()`
// without returning a non-nil interface holding an empty list.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Add appends one problem.
func (es *Errors) Add(name, value, allowed string) {
	*es = append(*es, &Error{Field: name, Value: value, Allowed: allowed})
}

// Merge appends the field problems of err (an Errors or an *Error, possibly
// wrapped) and reports whether err was such a problem. A nil err merges
// nothing and reports true; any other error is left to the caller.
func (es *Errors) Merge(err error) bool {
	if err == nil {
		return true
	}
	if more, ok := As(err); ok {
		*es = append(*es, more...)
		return true
	}
	return false
}

// Prefixed returns a copy of es with prefix before every field name, for
// errors of a nested document (prefix "jobs[3]." or "filter.").
func (es Errors) Prefixed(prefix string) Errors {
	out := make(Errors, len(es))
	for i, e := range es {
		c := *e
		c.Field = prefix + c.Field
		out[i] = &c
	}
	return out
}

// As finds the field problems in err's chain: an Errors, or a single *Error
// as a list of one.
func As(err error) (Errors, bool) {
	var es Errors
	if errors.As(err, &es) {
		return es, true
	}
	var e *Error
	if errors.As(err, &e) {
		return Errors{e}, true
	}
	return nil, false
}

// errorJSON is the wire form of an Error: its three parts and the message
// they make, so a client can show the message as is.
type errorJSON struct {
	Field   string `json:"field"`
	Value   string `json:"value"`
	Allowed string `json:"allowed"`
	Message string `json:"message"`
}

// MarshalJSON writes {"field", "value", "allowed", "message"}.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(errorJSON{e.Field, e.Value, e.Allowed, e.Error()})
}

// UnmarshalJSON reads what MarshalJSON writes; the message is derived, so
// it is not kept.
func (e *Error) UnmarshalJSON(data []byte) error {
	var v errorJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*e = Error{Field: v.Field, Value: v.Value, Allowed: v.Allowed}
	return nil
}
