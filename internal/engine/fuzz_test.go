package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
)

// FuzzParseToolSpec: a contract document is either accepted whole or
// rejected with errors that each name a field, a value and what is allowed.
func FuzzParseToolSpec(f *testing.F) {
	f.Add([]byte(`{"name":"charge","version":"1","endpoint":"stripe"}`))
	f.Add([]byte(`{"name":"t","version":"2","endpoint":"e","retryPreset":"CUSTOM","retryPolicy":{"maxAttempts":3,"initialDelayMs":2000,"multiplier":3,"maxDelayMs":50000,"jitterPercent":0}}`))
	f.Add([]byte(`{"name":"t","version":"v1.0","endpoint":"e","payloadSchema":{"type":"object","required":["a"]},"timeoutMs":5000,"retryPreset":"RELAXED"}`))
	f.Add([]byte(`{"name":"T","version":"","endpoint":1,"payloadSchema":{"type":12}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := engine.ParseToolSpec(data)
		if err != nil {
			var ee *engine.Error
			if !errors.As(err, &ee) || ee.Kind != engine.KindInvalid || len(ee.Fields) == 0 {
				t.Fatalf("error %v is not an invalid-request error with fields", err)
			}
			for _, fe := range ee.Fields {
				if fe.Field == "" || fe.Value == "" || fe.Allowed == "" {
					t.Fatalf("field error without field, value or allowed: %+v", fe)
				}
			}
			return
		}
		if _, _, err := engine.ParseToolRef(s.Name + "@" + s.Version); err != nil {
			t.Fatalf("accepted %q@%q which ParseToolRef refuses", s.Name, s.Version)
		}
		if s.RetryPreset == string(backoff.Custom) {
			if _, err := backoff.ParsePolicy(s.RetryPolicy); err != nil {
				t.Fatalf("accepted a CUSTOM policy that does not parse: %s", s.RetryPolicy)
			}
		}
	})
}

// FuzzParseEndpointPolicy: the flat endpoint policy document.
func FuzzParseEndpointPolicy(f *testing.F) {
	f.Add([]byte(seedEndpoint), true)
	f.Add([]byte(`{"preset":"AGGRESSIVE","defaultTimeoutMs":1000,"maxConcurrent":1,"rateLimitPerMinute":5}`), false)
	f.Add([]byte(`{"maxConcurrent":0,"rateLimitPerMinute":"x","circuitOpenMs":1e9}`), true)
	f.Fuzz(func(t *testing.T, data []byte, full bool) {
		fields, err := backoff.ReadObject(data, "body")
		if fields == nil || err != nil {
			return
		}
		p, err := engine.ParseEndpointPolicy(fields, full, nil)
		if err != nil {
			var ee *engine.Error
			if !errors.As(err, &ee) || len(ee.Fields) == 0 {
				t.Fatalf("error %v without fields", err)
			}
			return
		}
		if err := p.Policy.Validate(); err != nil {
			t.Fatalf("accepted an invalid policy: %v", err)
		}
		if p.MaxConcurrent < 1 || p.DefaultTimeoutMs < 1000 || p.CircuitFailureThreshold < 1 || p.CircuitOpenMs < 1000 ||
			p.RateLimitPerMinute != nil && *p.RateLimitPerMinute < 1 {
			t.Fatalf("accepted out-of-range settings: %+v", p)
		}
	})
}

func TestRetentionPrunesFinishedJobs(t *testing.T) {
	h := newHarness(t)
	h.endpoint("api", `{}`)
	h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
	old := h.enqueue("call@1", nil)
	h.succeed(h.claimOne("call@1"))
	h.clk.Advance(8 * 24 * time.Hour)
	keep := h.enqueue("call@1", nil) // scheduled: never pruned
	recent := h.enqueue("call@1", ptr(int64(1)))
	if _, err := h.e.Cancel(h.ctx, h.owner, recent.ID); err != nil {
		t.Fatal(err)
	}
	n, err := h.e.Prune(h.ctx)
	if err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want 1", n, err)
	}
	if _, _, _, err := h.e.Job(h.ctx, h.owner, old.ID); err == nil {
		t.Error("the week-old finished job is still there")
	}
	for _, id := range []int64{keep.ID, recent.ID} {
		if _, _, _, err := h.e.Job(h.ctx, h.owner, id); err != nil {
			t.Errorf("job %d was pruned: %v", id, err)
		}
	}
	var none []store.Attempt
	err = h.st.Read(h.ctx, func(q store.Queries) (err error) {
		none, err = q.AttemptList(h.ctx, old.ID)
		return err
	})
	if err != nil || len(none) != 0 {
		t.Errorf("attempts of the pruned job remain: %d (%v)", len(none), err)
	}
}
