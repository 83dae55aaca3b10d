package field_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/getratchet/ratchet/field"
)

func TestMessages(t *testing.T) {
	for _, c := range []struct {
		e    field.Error
		want string
	}{
		{field.Error{Field: "maxAttempts", Value: "11", Allowed: "an integer from 1 through 10"}, "maxAttempts: 11 is not allowed; an integer from 1 through 10"},
		{field.Error{Field: "preset", Value: field.Missing, Allowed: "required"}, "preset: missing; required"},
		{field.Error{Field: "speed", Value: field.Unknown, Allowed: "fields are a, b"}, "speed: unknown field; fields are a, b"},
		{field.Error{Field: "a", Value: field.Repeated, Allowed: "once"}, "a: given more than once; once"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestErrAndAs(t *testing.T) {
	var es field.Errors
	if es.Err() != nil {
		t.Fatal("an empty list must be a nil error")
	}
	es.Add("a", "1", "x")
	es.Add("b", "2", "y")
	wrapped := fmt.Errorf("read config: %w", es.Err())
	got, ok := field.As(wrapped)
	if !ok || len(got) != 2 || got[1].Field != "b" {
		t.Fatalf("As(wrapped) = %v, %v", got, ok)
	}
	if got.Error() != "a: 1 is not allowed; x\nb: 2 is not allowed; y" {
		t.Errorf("joined message %q", got.Error())
	}
	one, ok := field.As(fmt.Errorf("ctx: %w", &field.Error{Field: "c", Value: "3", Allowed: "z"}))
	if !ok || len(one) != 1 || one[0].Field != "c" {
		t.Fatalf("As(single) = %v, %v", one, ok)
	}
	if _, ok := field.As(errors.New("plain")); ok {
		t.Error("a plain error has no fields")
	}
}

func TestMergeAndPrefixed(t *testing.T) {
	var es field.Errors
	if !es.Merge(nil) || len(es) != 0 {
		t.Fatal("nil merges nothing")
	}
	if !es.Merge(field.New("x", "1", "y").Prefixed("jobs[2].")) || es[0].Field != "jobs[2].x" {
		t.Fatalf("merged %v", es)
	}
	if es.Merge(errors.New("db down")) {
		t.Error("a plain error must be left to the caller")
	}
	orig := field.New("x", "1", "y")
	_ = orig.Prefixed("p.")
	if orig[0].Field != "x" {
		t.Error("Prefixed must not change the original")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	in := &field.Error{Field: "max", Value: "5000", Allowed: "an integer from 1 through 1000"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"field":"max","value":"5000","allowed":"an integer from 1 through 1000","message":"max: 5000 is not allowed; an integer from 1 through 1000"}`
	if string(b) != want {
		t.Fatalf("marshal = %s, want %s", b, want)
	}
	var out field.Error
	if err := json.Unmarshal(b, &out); err != nil || out != *in {
		t.Fatalf("round trip = %+v, %v", out, err)
	}
}
