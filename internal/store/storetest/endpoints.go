package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func testEndpoints(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	other := newProject(t, s, "b")
	stripe := &store.Endpoint{ProjectID: p.ID, Name: "stripe", Policy: json.RawMessage(`{"preset":"AGGRESSIVE"}`), EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 15_000, MaxConcurrent: 4, RateLimitPerMinute: ptr(120), CircuitFailureThreshold: 3, CircuitOpenMs: 30_000}, Version: 1, CreatedAt: 1000, UpdatedAt: 1001}
	tx(t, s, func(q store.Queries) error { return q.EndpointCreate(ctx, stripe) })
	if stripe.ID == 0 || stripe.CircuitState != wire.CircuitClosed {
		t.Fatalf("created endpoint id %d circuit %q: want an id and closed", stripe.ID, stripe.CircuitState)
	}
	openai := newEndpoint(t, s, p.ID, "openai") // nil rate limit
	otherStripe := newEndpoint(t, s, other.ID, "stripe")
	txErr(t, s, "EndpointCreate with a used name", store.ErrConflict, func(q store.Queries) error {
		return q.EndpointCreate(ctx, &store.Endpoint{ProjectID: p.ID, Name: "stripe", Policy: json.RawMessage(`{}`), Version: 1})
	})
	check := func(what string, got *store.Endpoint, want *store.Endpoint) {
		t.Helper()
		if got.ID != want.ID || got.ProjectID != want.ProjectID || got.Name != want.Name || string(got.Policy) != string(want.Policy) ||
			got.DefaultTimeoutMs != want.DefaultTimeoutMs || got.MaxConcurrent != want.MaxConcurrent || !eqPtr(got.RateLimitPerMinute, want.RateLimitPerMinute) ||
			got.CircuitFailureThreshold != want.CircuitFailureThreshold || got.CircuitOpenMs != want.CircuitOpenMs || got.Version != want.Version ||
			got.CreatedAt != want.CreatedAt || got.UpdatedAt != want.UpdatedAt || got.CircuitState != want.CircuitState ||
			got.CircuitFailures != want.CircuitFailures || got.CircuitOpenedAt != want.CircuitOpenedAt || got.CircuitProbeJob != want.CircuitProbeJob {
			t.Errorf("%s = %s, want %s", what, fmtEndpoint(got), fmtEndpoint(want))
		}
	}
	read(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ID, Name: "stripe"})
		if err != nil {
			return err
		}
		check("EndpointGetInProject", got, stripe)
		got, err = q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: openai.ID})
		if err != nil {
			return err
		}
		check("EndpointGetAnyProject (nil rate limit)", got, openai)
		_, err = q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ID, Name: "missing"})
		wantErr(t, "EndpointGetInProject missing", err, store.ErrNotFound)
		_, err = q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: otherStripe.ID + 100})
		wantErr(t, "EndpointGetAnyProject missing", err, store.ErrNotFound)
		// The name is the project's: each project finds its own endpoint;
		// by id, any project's is found.
		got, err = q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: other.ID, Name: "stripe"})
		if err != nil {
			return err
		}
		check("EndpointGetInProject of the other project", got, otherStripe)
		_, err = q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: other.ID, Name: "openai"})
		wantErr(t, "EndpointGetInProject of another project's name", err, store.ErrNotFound)
		got, err = q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: otherStripe.ID})
		if err != nil {
			return err
		}
		check("EndpointGetAnyProject of the other project's endpoint", got, otherStripe)
		list, err := q.EndpointList(ctx, p.ID)
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0].Name != "openai" || list[1].Name != "stripe" {
			t.Errorf("EndpointList = %v, want openai, stripe", names(list))
		}
		all, err := q.EndpointList(ctx, 0)
		if err != nil {
			return err
		}
		if len(all) != 3 {
			t.Errorf("EndpointList(0) = %d endpoints, want every project's 3", len(all))
		}
		return nil
	})
	// Lock inside a write transaction reads the same row.
	tx(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: stripe.ID, Lock: true})
		if err != nil {
			return err
		}
		check("EndpointGetAnyProject with Lock", got, stripe)
		return nil
	})
}

func fmtEndpoint(e *store.Endpoint) string {
	rate := "nil"
	if e.RateLimitPerMinute != nil {
		rate = fmt.Sprint(*e.RateLimitPerMinute)
	}
	return fmt.Sprintf("{id %d project %d %q policy %s timeout %d max %d rate %s circuit %d/%d v%d at %d/%d state %s failures %d opened %d probe %d}",
		e.ID, e.ProjectID, e.Name, e.Policy, e.DefaultTimeoutMs, e.MaxConcurrent, rate, e.CircuitFailureThreshold, e.CircuitOpenMs, e.Version,
		e.CreatedAt, e.UpdatedAt, e.CircuitState, e.CircuitFailures, e.CircuitOpenedAt, e.CircuitProbeJob)
}

func testEndpointUpdatePolicy(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	ep := newEndpoint(t, s, p.ID, "stripe")
	upd := *ep
	upd.Policy = json.RawMessage(`{"preset":"CUSTOM","maxAttempts":3}`)
	upd.DefaultTimeoutMs, upd.MaxConcurrent, upd.RateLimitPerMinute = 5000, 2, ptr(60)
	upd.CircuitFailureThreshold, upd.CircuitOpenMs, upd.UpdatedAt = 9, 1234, 7000
	tx(t, s, func(q store.Queries) error {
		return q.EndpointUpdatePolicy(ctx, &store.EndpointUpdatePolicyParams{Endpoint: &upd, ExpectedVersion: 1})
	})
	if upd.Version != 2 {
		t.Fatalf("version after update = %d, want 2", upd.Version)
	}
	// A stale version is a conflict and changes nothing; the transaction
	// stays usable so the caller can read the current row.
	stale := upd
	stale.Policy, stale.MaxConcurrent, stale.RateLimitPerMinute, stale.UpdatedAt = json.RawMessage(`{"preset":"NONE"}`), 99, nil, 9000
	tx(t, s, func(q store.Queries) error {
		wantErr(t, "EndpointUpdatePolicy with a stale version", q.EndpointUpdatePolicy(ctx, &store.EndpointUpdatePolicyParams{Endpoint: &stale, ExpectedVersion: 1}), store.ErrConflict)
		cur, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: ep.ID, Lock: true})
		if err != nil {
			return fmt.Errorf("read after conflict: %w", err)
		}
		if cur.Version != 2 {
			t.Errorf("version after stale update = %d, want 2", cur.Version)
		}
		return nil
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: ep.ID})
		if err != nil {
			return err
		}
		if got.Version != 2 || string(got.Policy) != string(upd.Policy) || got.DefaultTimeoutMs != 5000 || got.MaxConcurrent != 2 ||
			!eqPtr(got.RateLimitPerMinute, ptr(60)) || got.CircuitFailureThreshold != 9 || got.CircuitOpenMs != 1234 || got.UpdatedAt != 7000 || got.CreatedAt != 1000 {
			t.Errorf("after update and stale update: %s", fmtEndpoint(got))
		}
		return nil
	})
	// Back to unlimited: a nil rate limit is written as NULL.
	upd.RateLimitPerMinute = nil
	tx(t, s, func(q store.Queries) error {
		return q.EndpointUpdatePolicy(ctx, &store.EndpointUpdatePolicyParams{Endpoint: &upd, ExpectedVersion: 2})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ID, Name: "stripe"})
		if err != nil {
			return err
		}
		if got.RateLimitPerMinute != nil || got.Version != 3 {
			t.Errorf("after clearing the rate limit: %s", fmtEndpoint(got))
		}
		return nil
	})
	txErr(t, s, "EndpointUpdatePolicy of a missing endpoint", store.ErrConflict, func(q store.Queries) error {
		missing := upd
		missing.ID += 100
		return q.EndpointUpdatePolicy(ctx, &store.EndpointUpdatePolicyParams{Endpoint: &missing, ExpectedVersion: 3})
	})
}

func testEndpointCircuit(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	ep := newEndpoint(t, s, p.ID, "stripe")
	ep.CircuitState, ep.CircuitFailures, ep.CircuitOpenedAt, ep.CircuitProbeJob = wire.CircuitHalfOpen, 4, 8000, 77
	ep.CircuitOpenedBy = "ops-key"
	ep.MaxConcurrent = 999 // not a circuit field: must not be written
	ep.PausedAt = 5        // nor a pause field
	tx(t, s, func(q store.Queries) error { return q.EndpointUpdateCircuit(ctx, ep) })
	read(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: ep.ID})
		if err != nil {
			return err
		}
		if got.CircuitState != wire.CircuitHalfOpen || got.CircuitFailures != 4 || got.CircuitOpenedAt != 8000 || got.CircuitProbeJob != 77 ||
			got.CircuitOpenedBy != "ops-key" || got.MaxConcurrent != 10 || got.Version != 1 || got.PausedAt != 0 {
			t.Errorf("after EndpointUpdateCircuit: %s", fmtEndpoint(got))
		}
		return nil
	})
	txErr(t, s, "EndpointUpdateCircuit of a missing endpoint", store.ErrNotFound, func(q store.Queries) error {
		missing := *ep
		missing.ID += 100
		return q.EndpointUpdateCircuit(ctx, &missing)
	})
}
