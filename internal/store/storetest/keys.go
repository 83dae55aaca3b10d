package storetest

import (
	"slices"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func testKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	other := newProject(t, s, "b")
	owner := &store.APIKey{ProjectID: p.ID, Name: "ci", Scope: wire.ScopeOwner, Hash: "h-owner", Prefix: "rk_own", CreatedAt: 2000}
	worker := &store.APIKey{ProjectID: p.ID, Scope: wire.ScopeWorker, Hash: "h-worker", Prefix: "rk_wrk", Tools: []string{"charge@v1", "refund@v2"}, CreatedAt: 2001}
	tx(t, s, func(q store.Queries) error {
		if err := q.KeyCreate(ctx, owner); err != nil {
			return err
		}
		return q.KeyCreate(ctx, worker)
	})
	if owner.ID == 0 || worker.ID == 0 || owner.ID == worker.ID {
		t.Fatalf("key ids %d, %d", owner.ID, worker.ID)
	}
	txErr(t, s, "KeyCreate with a used hash", store.ErrConflict, func(q store.Queries) error {
		return q.KeyCreate(ctx, &store.APIKey{ProjectID: other.ID, Scope: wire.ScopeProducer, Hash: "h-owner", Prefix: "x", CreatedAt: 3000})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.KeyByHash(ctx, "h-worker")
		if err != nil {
			return err
		}
		if got.ID != worker.ID || got.ProjectID != p.ID || got.Scope != wire.ScopeWorker || got.Prefix != "rk_wrk" || got.CreatedAt != 2001 ||
			got.RevokedAt != 0 || !slices.Equal(got.Tools, worker.Tools) {
			t.Errorf("KeyByHash = %+v, want %+v", got, worker)
		}
		got, err = q.KeyByHash(ctx, "h-owner")
		if err != nil {
			return err
		}
		if got.Name != "ci" || len(got.Tools) != 0 {
			t.Errorf("owner key = %+v, want name ci and no tools", got)
		}
		_, err = q.KeyByHash(ctx, "nope")
		wantErr(t, "KeyByHash unknown", err, store.ErrNotFound)
		list, err := q.KeyList(ctx, p.ID)
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0].ID != owner.ID || list[1].ID != worker.ID {
			t.Errorf("KeyList = %+v, want owner then worker", list)
		}
		list, err = q.KeyList(ctx, other.ID)
		if err != nil {
			return err
		}
		if len(list) != 0 {
			t.Errorf("KeyList of the other project = %+v, want none (the conflicting key was not stored)", list)
		}
		return nil
	})
	txErr(t, s, "KeyRevoke from another project", store.ErrNotFound, func(q store.Queries) error {
		return q.KeyRevoke(ctx, &store.KeyRevokeParams{ProjectID: other.ID, ID: owner.ID, Now: 5000})
	})
	tx(t, s, func(q store.Queries) error {
		return q.KeyRevoke(ctx, &store.KeyRevokeParams{ProjectID: p.ID, ID: owner.ID, Now: 5000})
	})
	txErr(t, s, "KeyRevoke twice", store.ErrNotFound, func(q store.Queries) error {
		return q.KeyRevoke(ctx, &store.KeyRevokeParams{ProjectID: p.ID, ID: owner.ID, Now: 6000})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.KeyByHash(ctx, "h-owner")
		if err != nil {
			return err
		}
		if got.RevokedAt != 5000 {
			t.Errorf("revoked key RevokedAt = %d, want 5000 (the first revocation)", got.RevokedAt)
		}
		return nil
	})
}
