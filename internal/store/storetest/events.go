package storetest

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// testEndpointEvents: EndpointEventInsert sets ascending ids and stores
// every field (facts included); EndpointEventList returns one project's
// events newest first with the endpoint's name, by endpoint, since a
// time and by the id cursor; EndpointEventsAfter is every project's feed
// oldest first after an id; EndpointEventsPrune deletes the oldest up to
// its limit; a rolled-back insert leaves nothing.
func testEndpointEvents(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	other := newEndpoint(t, s, f.p.ID, "github")
	op := newProject(t, s, "other")
	oep := newEndpoint(t, s, op.ID, "stripe")
	full := store.EndpointEvent{ProjectID: f.p.ID, EndpointID: f.ep.ID, At: 1000, Kind: wire.EndpointCircuitOpened, Failures: 5, Threshold: 5,
		OpenedAt: 1000, NextProbeAt: 61_000, ProbeJob: 7, HeldJobs: 42, Actor: "ops", Detail: "opened after 5 failures",
		Facts: map[string]int64{"allowed": 12, "limit": 50}}
	evs := []store.EndpointEvent{full,
		{ProjectID: f.p.ID, EndpointID: other.ID, At: 2000, Kind: wire.EndpointPaused, Actor: "ops"},
		{ProjectID: op.ID, EndpointID: oep.ID, At: 2500, Kind: wire.EndpointPaused},
		{ProjectID: f.p.ID, EndpointID: f.ep.ID, At: 3000, Kind: wire.EndpointCircuitHalfOpen, ProbeJob: 9},
		{ProjectID: f.p.ID, EndpointID: f.ep.ID, At: 4000, Kind: wire.EndpointCircuitClosed}}
	var ids []int64
	tx(t, s, func(q store.Queries) error {
		for i := range evs {
			if err := q.EndpointEventInsert(ctx, &evs[i]); err != nil {
				return err
			}
			if evs[i].ID == 0 || (i > 0 && evs[i].ID <= ids[i-1]) {
				t.Errorf("event %d: id %d after %v", i, evs[i].ID, ids)
			}
			ids = append(ids, evs[i].ID)
		}
		return nil
	})
	list := func(p store.EndpointEventListParams) []store.EndpointEvent {
		t.Helper()
		var out []store.EndpointEvent
		read(t, s, func(q store.Queries) (err error) {
			out, err = q.EndpointEventList(ctx, &p)
			return err
		})
		return out
	}
	evIDs := func(evs []store.EndpointEvent) []int64 {
		var out []int64
		for _, ev := range evs {
			out = append(out, ev.ID)
		}
		return out
	}
	all := list(store.EndpointEventListParams{ProjectID: f.p.ID})
	if want := []int64{ids[4], ids[3], ids[1], ids[0]}; !slices.Equal(evIDs(all), want) {
		t.Fatalf("EndpointEventList = %v, want %v", evIDs(all), want)
	}
	got := all[3]
	want := full
	want.ID, want.Endpoint = ids[0], "stripe"
	if !maps.Equal(got.Facts, want.Facts) {
		t.Errorf("facts read back %v, want %v", got.Facts, want.Facts)
	}
	got.Facts, want.Facts = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("event read back\n%+v\nwant\n%+v", got, want)
	}
	if all[0].Facts != nil || all[2].Endpoint != "github" {
		t.Errorf("an event without facts read back %v; the paused event's endpoint %q", all[0].Facts, all[2].Endpoint)
	}
	if got := list(store.EndpointEventListParams{ProjectID: f.p.ID, EndpointID: f.ep.ID, Since: 3000}); !slices.Equal(evIDs(got), []int64{ids[4], ids[3]}) {
		t.Errorf("by endpoint since 3000: %v", evIDs(got))
	}
	page := list(store.EndpointEventListParams{ProjectID: f.p.ID, Limit: 2})
	if next := list(store.EndpointEventListParams{ProjectID: f.p.ID, Limit: 2, AfterID: page[1].ID}); !slices.Equal(evIDs(next), []int64{ids[1], ids[0]}) {
		t.Errorf("second page: %v", evIDs(next))
	}
	var feed []store.EndpointEvent
	read(t, s, func(q store.Queries) (err error) {
		feed, err = q.EndpointEventsAfter(ctx, &store.EndpointEventsAfterParams{AfterID: ids[0], Limit: 3})
		return err
	})
	if !slices.Equal(evIDs(feed), ids[1:4]) || feed[1].ProjectID != op.ID {
		t.Errorf("EndpointEventsAfter = %+v, want ids %v across projects", feed, ids[1:4])
	}
	_ = s.Tx(ctx, func(q store.Queries) error {
		if err := q.EndpointEventInsert(ctx, &store.EndpointEvent{ProjectID: f.p.ID, EndpointID: f.ep.ID, At: 5000, Kind: wire.EndpointResumed}); err != nil {
			return err
		}
		return store.ErrConflict // roll back
	})
	var n int64
	tx(t, s, func(q store.Queries) (err error) {
		n, err = q.EndpointEventsPrune(ctx, &store.EndpointEventsPruneParams{Before: 3000, Limit: 2})
		return err
	})
	if n != 2 {
		t.Errorf("EndpointEventsPrune(before 3000, limit 2) = %d, want 2", n)
	}
	tx(t, s, func(q store.Queries) (err error) {
		n, err = q.EndpointEventsPrune(ctx, &store.EndpointEventsPruneParams{Before: 3000, Limit: 100})
		return err
	})
	if n != 1 {
		t.Errorf("second prune = %d, want the one left before 3000", n)
	}
	if got := list(store.EndpointEventListParams{ProjectID: f.p.ID}); !slices.Equal(evIDs(got), []int64{ids[4], ids[3]}) {
		t.Errorf("left after pruning (and a rolled-back insert): %v", evIDs(got))
	}
}
