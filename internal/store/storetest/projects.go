package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// testProjectWrites: ProjectNoteWrite counts a project's operator writes,
// only in transactions that commit, every one of concurrent writers, and
// never another project's.
func testProjectWrites(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := newProject(t, s, "a")
	b := newProject(t, s, "b")
	writes := func(id int64) (n int64) {
		t.Helper()
		read(t, s, func(q store.Queries) (err error) {
			n, err = q.ProjectWrites(ctx, id)
			return err
		})
		return n
	}
	if n := writes(a.ID); n != 0 {
		t.Errorf("a new project has %d writes, want 0", n)
	}
	tx(t, s, func(q store.Queries) error { return q.ProjectNoteWrite(ctx, a.ID) })
	tx(t, s, func(q store.Queries) error {
		if err := q.ProjectNoteWrite(ctx, a.ID); err != nil {
			return err
		}
		// The transaction's own read sees its write.
		n, err := q.ProjectWrites(ctx, a.ID)
		if err == nil && n != 2 {
			t.Errorf("ProjectWrites inside the writing transaction = %d, want 2", n)
		}
		return err
	})
	rollback := errors.New("roll back")
	if err := s.Tx(ctx, func(q store.Queries) error {
		if err := q.ProjectNoteWrite(ctx, a.ID); err != nil {
			return err
		}
		return rollback
	}); !errors.Is(err, rollback) {
		t.Fatalf("Tx = %v, want the rollback error", err)
	}
	if n := writes(a.ID); n != 2 {
		t.Errorf("after two committed writes and one rolled back, ProjectWrites = %d, want 2", n)
	}
	const writers = 8
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			if err := s.Tx(ctx, func(q store.Queries) error { return q.ProjectNoteWrite(ctx, a.ID) }); err != nil {
				t.Errorf("concurrent ProjectNoteWrite: %v", err)
			}
		})
	}
	wg.Wait()
	if n := writes(a.ID); n != 2+writers {
		t.Errorf("after %d concurrent writes, ProjectWrites = %d, want %d", writers, n, 2+writers)
	}
	if n := writes(b.ID); n != 0 {
		t.Errorf("project b has %d writes after a's, want 0", n)
	}
	txErr(t, s, "ProjectNoteWrite of a missing id", store.ErrNotFound, func(q store.Queries) error {
		return q.ProjectNoteWrite(ctx, b.ID+100)
	})
	read(t, s, func(q store.Queries) error {
		_, err := q.ProjectWrites(ctx, b.ID+100)
		wantErr(t, "ProjectWrites of a missing id", err, store.ErrNotFound)
		return nil
	})
}

func testProjects(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := newProject(t, s, "a")
	b := newProject(t, s, "b")
	if a.ID == 0 || b.ID == 0 || a.ID == b.ID {
		t.Fatalf("project ids %d, %d: want distinct non-zero", a.ID, b.ID)
	}
	tx(t, s, func(q store.Queries) error { return q.ProjectSetPlan(ctx, b.ID, wire.PlanBasic) })
	read(t, s, func(q store.Queries) error {
		got, err := q.ProjectGet(ctx, b.ID)
		if err != nil {
			return err
		}
		if want := (store.Project{ID: b.ID, Name: "b", Plan: wire.PlanBasic, CreatedAt: 1000}); *got != want {
			t.Errorf("ProjectGet = %+v, want %+v", *got, want)
		}
		n, err := q.ProjectCount(ctx)
		if err != nil {
			return err
		}
		if n != 2 {
			t.Errorf("ProjectCount = %d, want 2", n)
		}
		_, err = q.ProjectGet(ctx, b.ID+100)
		wantErr(t, "ProjectGet of a missing id", err, store.ErrNotFound)
		return nil
	})
	txErr(t, s, "ProjectSetPlan of a missing id", store.ErrNotFound, func(q store.Queries) error {
		return q.ProjectSetPlan(ctx, b.ID+100, wire.PlanFree)
	})
}
