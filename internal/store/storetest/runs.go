package storetest

import (
	"testing"

	"github.com/getratchet/ratchet/internal/store"
)

func testRuns(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	other := newProject(t, s, "b")
	r := &store.Run{ProjectID: p.ID, Name: "nightly", CreatedAt: 2000}
	tx(t, s, func(q store.Queries) error { return q.RunCreate(ctx, r) })
	if r.ID == 0 || r.State != "open" {
		t.Fatalf("created run %+v, want an id and state open", r)
	}
	txErr(t, s, "RunFinish from another project", store.ErrNotFound, func(q store.Queries) error {
		return q.RunFinish(ctx, &store.RunFinishParams{ProjectID: other.ID, ID: r.ID, Now: 3000})
	})
	tx(t, s, func(q store.Queries) error {
		return q.RunFinish(ctx, &store.RunFinishParams{ProjectID: p.ID, ID: r.ID, Now: 3000})
	})
	txErr(t, s, "RunFinish twice", store.ErrNotFound, func(q store.Queries) error {
		return q.RunFinish(ctx, &store.RunFinishParams{ProjectID: p.ID, ID: r.ID, Now: 4000})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.RunGetInProject(ctx, &store.RunGetInProjectParams{ProjectID: p.ID, ID: r.ID})
		if err != nil {
			return err
		}
		if want := (store.Run{ID: r.ID, ProjectID: p.ID, Name: "nightly", State: "finished", CreatedAt: 2000, FinishedAt: 3000}); *got != want {
			t.Errorf("RunGetInProject = %+v, want %+v", *got, want)
		}
		_, err = q.RunGetInProject(ctx, &store.RunGetInProjectParams{ProjectID: other.ID, ID: r.ID})
		wantErr(t, "RunGetInProject from another project", err, store.ErrNotFound)
		return nil
	})
}
