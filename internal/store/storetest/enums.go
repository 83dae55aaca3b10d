package storetest

import (
	"fmt"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// testEnumsStored: every value of the enums that have a column is stored
// and read back. The plan and scope columns carry CHECK constraints written
// in the first migration, so a plan or scope added to wire without a
// migration that widens its CHECK fails here on both drivers. (Every job
// state is stored and counted by testJobCountsByState and the counters'
// cases, which range over wire.JobStates.)
func testEnumsStored(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, plan := range wire.Plans() {
		p := &store.Project{Name: "plan-" + string(plan), Plan: plan, CreatedAt: 1000}
		if err := s.Tx(ctx, func(q store.Queries) error { return q.ProjectCreate(ctx, p) }); err != nil {
			t.Errorf("ProjectCreate with plan %s: %v (does a migration allow it?)", plan, err)
			continue
		}
		read(t, s, func(q store.Queries) error {
			got, err := q.ProjectGet(ctx, p.ID)
			if err == nil && got.Plan != plan {
				t.Errorf("plan stored as %s, read as %s", plan, got.Plan)
			}
			return err
		})
	}
	p := newProject(t, s, "scopes")
	for i, scope := range wire.Scopes() {
		k := &store.APIKey{ProjectID: p.ID, Name: string(scope), Scope: scope, Hash: fmt.Sprintf("h-%d", i), Prefix: "rk", CreatedAt: 2000}
		if err := s.Tx(ctx, func(q store.Queries) error { return q.KeyCreate(ctx, k) }); err != nil {
			t.Errorf("KeyCreate with scope %s: %v (does a migration allow it?)", scope, err)
			continue
		}
		read(t, s, func(q store.Queries) error {
			got, err := q.KeyByHash(ctx, k.Hash)
			if err == nil && got.Scope != scope {
				t.Errorf("scope stored as %s, read as %s", scope, got.Scope)
			}
			return err
		})
	}
	for _, cs := range wire.CircuitStates() {
		ep := newEndpoint(t, s, p.ID, "circuit-"+string(cs))
		ep.CircuitState = cs
		tx(t, s, func(q store.Queries) error { return q.EndpointUpdateCircuit(ctx, ep) })
		read(t, s, func(q store.Queries) error {
			got, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: ep.ID})
			if err == nil && got.CircuitState != cs {
				t.Errorf("circuit state stored as %s, read as %s", cs, got.CircuitState)
			}
			return err
		})
	}
}
