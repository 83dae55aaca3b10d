package storetest

import (
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// testEndpointPause: EndpointUpdatePause writes the pause fields and the
// update time only; every read of the endpoint (by name, by id, locked,
// listed) returns them; clearing them resumes. Other transactions, such as
// another node's claims on PostgreSQL, read the pause from the row once it
// is committed.
func testEndpointPause(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	ep := newEndpoint(t, s, p.ID, "stripe")
	ep.PausedAt, ep.PausedBy, ep.PausedReason, ep.UpdatedAt = 7000, "ops", "provider incident #12", 7000
	ep.MaxConcurrent = 999 // not a pause field: must not be written
	ep.CircuitState = wire.CircuitOpen
	tx(t, s, func(q store.Queries) error { return q.EndpointUpdatePause(ctx, ep) })
	check := func(got *store.Endpoint, at int64, by, reason string) {
		t.Helper()
		if got.PausedAt != at || got.PausedBy != by || got.PausedReason != reason || got.MaxConcurrent != 10 || got.CircuitState != wire.CircuitClosed {
			t.Errorf("after EndpointUpdatePause: %+v", got)
		}
	}
	read(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ID, Name: "stripe"})
		if err != nil {
			return err
		}
		check(got, 7000, "ops", "provider incident #12")
		if got.UpdatedAt != 7000 {
			t.Errorf("updatedAt %d, want 7000", got.UpdatedAt)
		}
		list, err := q.EndpointList(ctx, p.ID)
		if err != nil {
			return err
		}
		check(&list[0], 7000, "ops", "provider incident #12")
		return nil
	})
	tx(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: ep.ID, Lock: true})
		if err != nil {
			return err
		}
		check(got, 7000, "ops", "provider incident #12")
		got.PausedAt, got.PausedBy, got.PausedReason = 0, "", ""
		return q.EndpointUpdatePause(ctx, got)
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: ep.ID})
		if err != nil {
			return err
		}
		check(got, 0, "", "")
		return nil
	})
	txErr(t, s, "EndpointUpdatePause of a missing endpoint", store.ErrNotFound, func(q store.Queries) error {
		missing := *ep
		missing.ID += 100
		return q.EndpointUpdatePause(ctx, &missing)
	})
}

// testAudit: AuditInsert sets ids; AuditList returns a project's entries
// newest first, only that project's, filtered by exact target, paged by
// the id cursor; a rolled-back transaction leaves no entry.
func testAudit(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	other := newProject(t, s, "b")
	var ids []int64
	tx(t, s, func(q store.Queries) error {
		for i, e := range []store.AuditEntry{
			{ProjectID: p.ID, At: 1000, Actor: "ops", KeyPrefix: "rk_abc", Action: "endpoint.pause", Target: "endpoint:payments", Detail: "paused: incident"},
			{ProjectID: p.ID, At: 2000, Actor: "rk_def", KeyPrefix: "rk_def", Action: "job.run_now", Target: "job:42"},
			{ProjectID: other.ID, At: 2500, Actor: "x", KeyPrefix: "rk_x", Action: "endpoint.pause", Target: "endpoint:payments"},
			{ProjectID: p.ID, At: 3000, Actor: "ops", KeyPrefix: "rk_abc", Action: "endpoint.resume", Target: "endpoint:payments"},
		} {
			if err := q.AuditInsert(ctx, &e); err != nil {
				return err
			}
			if e.ID == 0 || (i > 0 && e.ID <= ids[i-1]) {
				t.Errorf("entry %d: id %d after %v", i, e.ID, ids)
			}
			ids = append(ids, e.ID)
		}
		return nil
	})
	list := func(params store.AuditListParams) []store.AuditEntry {
		t.Helper()
		var out []store.AuditEntry
		read(t, s, func(q store.Queries) (err error) {
			out, err = q.AuditList(ctx, &params)
			return err
		})
		return out
	}
	all := list(store.AuditListParams{ProjectID: p.ID})
	if len(all) != 3 || all[0].ID != ids[3] || all[1].ID != ids[1] || all[2].ID != ids[0] {
		t.Fatalf("AuditList: %+v", all)
	}
	if a := all[2]; a.At != 1000 || a.Actor != "ops" || a.KeyPrefix != "rk_abc" || a.Action != "endpoint.pause" || a.Target != "endpoint:payments" ||
		a.Detail != "paused: incident" || a.ProjectID != p.ID {
		t.Errorf("entry read back: %+v", a)
	}
	if got := list(store.AuditListParams{ProjectID: p.ID, Target: "endpoint:payments"}); len(got) != 2 || got[0].ID != ids[3] || got[1].ID != ids[0] {
		t.Errorf("by target: %+v", got)
	}
	if got := list(store.AuditListParams{ProjectID: p.ID, Target: "endpoint:pay"}); len(got) != 0 {
		t.Errorf("a target prefix matched: %+v", got)
	}
	page := list(store.AuditListParams{ProjectID: p.ID, Limit: 2})
	if len(page) != 2 || page[1].ID != ids[1] {
		t.Fatalf("first page: %+v", page)
	}
	if got := list(store.AuditListParams{ProjectID: p.ID, Limit: 2, AfterID: page[1].ID}); len(got) != 1 || got[0].ID != ids[0] {
		t.Errorf("second page: %+v", got)
	}
	_ = s.Tx(ctx, func(q store.Queries) error {
		if err := q.AuditInsert(ctx, &store.AuditEntry{ProjectID: p.ID, At: 4000, Actor: "ops", KeyPrefix: "rk_abc", Action: "job.cancel", Target: "job:1"}); err != nil {
			return err
		}
		return store.ErrConflict // roll back
	})
	if got := list(store.AuditListParams{ProjectID: p.ID}); len(got) != 3 {
		t.Errorf("a rolled-back entry was kept: %+v", got)
	}
}

// testRunList: RunList returns a project's runs newest first, only that
// project's, with what RunCreate and RunFinish stored, paged by the id
// cursor.
func testRunList(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	other := newProject(t, s, "b")
	var ids []int64
	tx(t, s, func(q store.Queries) error {
		for i, r := range []store.Run{{ProjectID: p.ID, Name: "nightly", CreatedAt: 1000}, {ProjectID: other.ID, Name: "x", CreatedAt: 1500},
			{ProjectID: p.ID, Name: "", CreatedAt: 2000}, {ProjectID: p.ID, Name: "weekly", CreatedAt: 3000}} {
			if err := q.RunCreate(ctx, &r); err != nil {
				return err
			}
			if r.ID == 0 || (i > 0 && r.ID <= ids[i-1]) {
				t.Errorf("run %d: id %d after %v", i, r.ID, ids)
			}
			ids = append(ids, r.ID)
		}
		return q.RunFinish(ctx, &store.RunFinishParams{ProjectID: p.ID, ID: ids[0], Now: 5000})
	})
	list := func(params store.RunListParams) []store.Run {
		t.Helper()
		var out []store.Run
		read(t, s, func(q store.Queries) (err error) {
			out, err = q.RunList(ctx, &params)
			return err
		})
		return out
	}
	all := list(store.RunListParams{ProjectID: p.ID})
	if len(all) != 3 || all[0].ID != ids[3] || all[1].ID != ids[2] || all[2].ID != ids[0] {
		t.Fatalf("RunList: %+v", all)
	}
	if r := all[2]; r.Name != "nightly" || r.State != "finished" || r.CreatedAt != 1000 || r.FinishedAt != 5000 || r.ProjectID != p.ID {
		t.Errorf("run read back: %+v", r)
	}
	if r := all[0]; r.Name != "weekly" || r.State != "open" || r.FinishedAt != 0 {
		t.Errorf("open run read back: %+v", r)
	}
	page := list(store.RunListParams{ProjectID: p.ID, Limit: 2})
	if len(page) != 2 || page[1].ID != ids[2] {
		t.Fatalf("first page: %+v", page)
	}
	if got := list(store.RunListParams{ProjectID: p.ID, Limit: 2, AfterID: page[1].ID}); len(got) != 1 || got[0].ID != ids[0] {
		t.Errorf("second page: %+v", got)
	}
}
