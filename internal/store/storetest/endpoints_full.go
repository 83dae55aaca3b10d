package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// endpointStoreSets are the fields of store.Endpoint the store sets itself
// rather than storing what it is given: left out of the "none may be
// zero" check before the insert. Every other field must round-trip.
var endpointStoreSets = []string{"ID"}

// testEndpointAllFields stores an endpoint with every field set (checked
// by reflection: a field added to store.Endpoint or wire.EndpointSettings
// is zero here until this case sets it, and the case fails until it does),
// and reads it back whole by every read path, as River's driver tests'
// "all args" cases do: a column the insert, an update or the scan forgets
// comes back zero and fails the comparison. The settings are filled from
// wire.SettingFields, so a new setting is covered without an edit here.
func testEndpointAllFields(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "all")
	want := &store.Endpoint{ProjectID: p.ID, Name: "all-fields", Policy: json.RawMessage(`{"preset":"RELAXED"}`), Version: 7, CreatedAt: 1001, UpdatedAt: 1002,
		CircuitState: wire.CircuitHalfOpen, CircuitFailures: 3, CircuitOpenedAt: 1003, CircuitProbeJob: 42, CircuitOpenedBy: "ops",
		PausedAt: 1004, PausedBy: "owner", PausedReason: "provider maintenance", CircuitProbeAt: 1005,
		Recovery: store.Recovery{Rate: 1006, Ceiling: 1007, StartedAt: 1008, AdjustedAt: 1009, BadAt: 1010},
		Learned:  store.LearnedLimit{Limit: 1011, WindowMs: 1012, At: 1013, ResetAt: 1014, Source: "ietf"}}
	fillSettings(&want.EndpointSettings, 1)
	if zero := zeroFields(reflect.ValueOf(*want), ""); len(zero) > 0 {
		t.Fatalf("the all-fields endpoint leaves %s zero: set every field with a distinct value (or list it in endpointStoreSets)", strings.Join(zero, ", "))
	}
	tx(t, s, func(q store.Queries) error {
		if err := q.EndpointCreate(ctx, want); err != nil {
			return err
		}
		// The circuit, learned and pause columns are written by their own
		// updates.
		if err := q.EndpointUpdateCircuit(ctx, want); err != nil {
			return err
		}
		if err := q.EndpointUpdateLearned(ctx, want); err != nil {
			return err
		}
		return q.EndpointUpdatePause(ctx, want)
	})
	readBack := func(what string) {
		t.Helper()
		read(t, s, func(q store.Queries) error {
			got, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ID, Name: want.Name})
			if err != nil {
				return err
			}
			sameEndpoint(t, what+": EndpointGetInProject", got, want)
			if got, err = q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: want.ID}); err != nil {
				return err
			}
			sameEndpoint(t, what+": EndpointGetAnyProject", got, want)
			for _, projectID := range []int64{p.ID, 0} {
				list, err := q.EndpointList(ctx, projectID)
				if err != nil {
					return err
				}
				found := false
				for i := range list {
					if list[i].ID == want.ID {
						found = true
						sameEndpoint(t, fmt.Sprintf("%s: EndpointList(%d)", what, projectID), &list[i], want)
					}
				}
				if !found {
					t.Errorf("%s: EndpointList(%d) lacks endpoint %d", what, projectID, want.ID)
				}
			}
			return nil
		})
	}
	readBack("after the insert")
	// An update writes every setting: each changes to another value.
	fillSettings(&want.EndpointSettings, 2)
	want.UpdatedAt = 2000
	tx(t, s, func(q store.Queries) error {
		return q.EndpointUpdatePolicy(ctx, &store.EndpointUpdatePolicyParams{Endpoint: want, ExpectedVersion: 7})
	})
	if want.Version != 8 {
		t.Fatalf("EndpointUpdatePolicy set version %d, want 8", want.Version)
	}
	readBack("after EndpointUpdatePolicy")
	// And back to no limits and false flags: NULL and 0 read back as nil
	// and false.
	fillSettings(&want.EndpointSettings, 0)
	tx(t, s, func(q store.Queries) error {
		return q.EndpointUpdatePolicy(ctx, &store.EndpointUpdatePolicyParams{Endpoint: want, ExpectedVersion: 8})
	})
	readBack("after clearing the limits")
}

// fillSettings sets every setting from its range: integers to their
// minimum plus the field's position plus n (distinct across fields and
// across n), limits the same (nil when n is 0), flags to n%2 == 1, texts
// to their name and n ("" when n is 0).
func fillSettings(s *wire.EndpointSettings, n int64) {
	for i, f := range wire.SettingFields() {
		v := f.Value(s)
		x := int64(f.Range.Min) + int64(i) + n
		switch f.Kind {
		case wire.SettingInt:
			v.SetInt(x)
		case wire.SettingLimit:
			if n == 0 {
				v.Set(reflect.Zero(v.Type()))
			} else {
				v.Set(reflect.ValueOf(&x))
			}
		case wire.SettingBool:
			v.SetBool(n%2 == 1)
		case wire.SettingText:
			// The store keeps any text (the API checks it): distinct per
			// field and per n, empty when n is 0.
			if n != 0 {
				v.SetString(fmt.Sprintf("%s-%d", f.JSON, n))
			} else {
				v.SetString("")
			}
		}
	}
}

// zeroFields names the zero fields of struct v, embedded structs' fields
// included, except endpointStoreSets.
func zeroFields(v reflect.Value, prefix string) []string {
	var out []string
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Anonymous {
			out = append(out, zeroFields(v.Field(i), prefix+f.Name+".")...)
			continue
		}
		if v.Field(i).IsZero() && !(prefix == "" && contains(endpointStoreSets, f.Name)) {
			out = append(out, prefix+f.Name)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sameEndpoint compares two endpoints whole, naming the fields that differ.
func sameEndpoint(t *testing.T, what string, got, want *store.Endpoint) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	var diffs []string
	diff(reflect.ValueOf(*got), reflect.ValueOf(*want), "", &diffs)
	t.Errorf("%s: read back differs in %s", what, strings.Join(diffs, "; "))
}

func diff(got, want reflect.Value, prefix string, out *[]string) {
	for i := range got.NumField() {
		f := got.Type().Field(i)
		if f.Anonymous {
			diff(got.Field(i), want.Field(i), prefix+f.Name+".", out)
			continue
		}
		g, w := got.Field(i), want.Field(i)
		if !reflect.DeepEqual(g.Interface(), w.Interface()) {
			*out = append(*out, fmt.Sprintf("%s%s = %v, want %v", prefix, f.Name, show(g), show(w)))
		}
	}
}

// show prints a pointer's target rather than its address.
func show(v reflect.Value) any {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "nil"
		}
		return v.Elem().Interface()
	}
	if b, ok := v.Interface().(json.RawMessage); ok {
		return string(b)
	}
	return v.Interface()
}
