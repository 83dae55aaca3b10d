package engine

import (
	"strconv"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/traceparent"
)

// CheckTrace checks a W3C trace context, naming its two parts parentField
// and stateField in the errors: a traceparent Ratchet can hand on
// unchanged, and a tracestate only beside one.
func CheckTrace(parent, state, parentField, stateField string) field.Errors {
	var errs field.Errors
	if parent != "" {
		if _, err := traceparent.Parse(parent); err != nil {
			errs.Add(parentField, ShowHeaderValue(parent), traceparent.Allowed)
		}
	}
	if !traceparent.ValidState(state) || (state != "" && parent == "") {
		errs.Add(stateField, ShowHeaderValue(state), traceparent.StateAllowed)
	}
	return errs
}

// ShowHeaderValue renders a refused header-like value for an error:
// quoted in ASCII, or only its length when it is too long to echo.
func ShowHeaderValue(s string) string {
	if len(s) > traceparent.MaxStateLen {
		return "a value of " + strconv.Itoa(len(s)) + " bytes"
	}
	return strconv.QuoteToASCII(s)
}
