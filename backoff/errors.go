package backoff

import "strings"

// FieldError is one rejected value: which field, what was given and what is
// allowed. Its message always names all three so a person can fix the input
// without reading the source.
type FieldError struct {
	Field   string // JSON field or CLI flag name, e.g. "maxAttempts" or "--cap"
	Value   string // the value as given, e.g. "11", `"fast"`, "missing"
	Allowed string // what would have been accepted, e.g. "an integer from 1 through 10"
}

func (e *FieldError) Error() string {
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

// Values of FieldError.Value that describe an absence or a misplaced field
// rather than a rejected value.
const (
	Missing  = "(missing)"
	Unknown  = "(unknown field)"
	Repeated = "(repeated field)"
)

// Errors is every problem found in one document or one set of inputs. Validation
// reports them together so a user fixes all of them in one round.
type Errors []*FieldError

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// err returns nil for an empty list so callers can write `return p, errs.err()`.
func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

func (es *Errors) add(field, value, allowed string) {
	*es = append(*es, &FieldError{Field: field, Value: value, Allowed: allowed})
}
