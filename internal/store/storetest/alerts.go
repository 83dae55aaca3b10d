package storetest

import (
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// testAlertConfig: sinks are stored with every field, listed by name per
// project, unique by name, deleted by name (ErrNotFound for a missing
// one); settings are ErrNotFound until put, then read back, and a second
// put replaces them.
func testAlertConfig(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	other := newProject(t, s, "b")
	hook := store.AlertSink{ProjectID: p.ID, Name: "pager", Kind: wire.SinkWebhook, URL: "https://hooks.example/a", Secret: "whsec_x", CreatedAt: 1000}
	tx(t, s, func(q store.Queries) error {
		for _, k := range []*store.AlertSink{&hook, {ProjectID: p.ID, Name: "chat", Kind: wire.SinkSlack, URL: "https://hooks.slack.example/b", CreatedAt: 2000},
			{ProjectID: other.ID, Name: "pager", Kind: wire.SinkTeams, URL: "https://x.example/c", CreatedAt: 3000}} {
			if err := q.AlertSinkCreate(ctx, k); err != nil || k.ID == 0 {
				t.Errorf("AlertSinkCreate %s: %v, id %d", k.Name, err, k.ID)
			}
		}
		return nil
	})
	txErr(t, s, "a second sink named pager", store.ErrConflict, func(q store.Queries) error {
		return q.AlertSinkCreate(ctx, &store.AlertSink{ProjectID: p.ID, Name: "pager", Kind: wire.SinkSlack, URL: "https://y.example", CreatedAt: 4000})
	})
	var sinks []store.AlertSink
	read(t, s, func(q store.Queries) (err error) { sinks, err = q.AlertSinkList(ctx, p.ID); return err })
	if len(sinks) != 2 || sinks[0].Name != "chat" || sinks[1] != hook {
		t.Fatalf("AlertSinkList = %+v, want chat and %+v", sinks, hook)
	}
	tx(t, s, func(q store.Queries) error {
		return q.AlertSinkDelete(ctx, &store.AlertSinkDeleteParams{ProjectID: p.ID, Name: "chat"})
	})
	txErr(t, s, "deleting a missing sink", store.ErrNotFound, func(q store.Queries) error {
		return q.AlertSinkDelete(ctx, &store.AlertSinkDeleteParams{ProjectID: p.ID, Name: "chat"})
	})
	read(t, s, func(q store.Queries) (err error) { sinks, err = q.AlertSinkList(ctx, p.ID); return err })
	if len(sinks) != 1 {
		t.Errorf("after delete: %+v", sinks)
	}
	txErr(t, s, "settings never put", store.ErrNotFound, func(q store.Queries) error {
		_, err := q.AlertSettingsGet(ctx, p.ID)
		return err
	})
	want := store.AlertSettings{ProjectID: p.ID, PausedAfterMs: 60_000, FailureRatePercent: 30, FailureRateMin: 5, WindowMs: 120_000, MaxPerWindow: 3, UpdatedAt: 5000}
	tx(t, s, func(q store.Queries) error {
		return q.AlertSettingsPut(ctx, &store.AlertSettings{ProjectID: p.ID, PausedAfterMs: 1, UpdatedAt: 1})
	})
	tx(t, s, func(q store.Queries) error { return q.AlertSettingsPut(ctx, &want) })
	read(t, s, func(q store.Queries) error {
		got, err := q.AlertSettingsGet(ctx, p.ID)
		if err == nil && *got != want {
			t.Errorf("AlertSettingsGet = %+v, want %+v", got, want)
		}
		return err
	})
}

// testAlerts: the feed position starts at 0 and is stored; alerts are
// unique per project and dedup key, found by key, counted per endpoint
// and window (a kind aside), their counts added to; deliveries are
// inserted pending, leased when due (each once until the lease ends) with
// their alert and sink, finished, and listed newest first; old alerts
// whose deliveries are done are pruned with them, pending ones kept;
// deleting a sink deletes its pending deliveries.
func testAlerts(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	var pos int64
	read(t, s, func(q store.Queries) (err error) { pos, err = q.AlertFeedGet(ctx); return err })
	if pos != 0 {
		t.Errorf("AlertFeedGet on a new store = %d", pos)
	}
	tx(t, s, func(q store.Queries) error { return q.AlertFeedSet(ctx, 42) })
	read(t, s, func(q store.Queries) (err error) { pos, err = q.AlertFeedGet(ctx); return err })
	if pos != 42 {
		t.Errorf("AlertFeedGet after set = %d", pos)
	}
	sink := store.AlertSink{ProjectID: f.p.ID, Name: "pager", Kind: wire.SinkWebhook, URL: "https://h.example", Secret: "whsec_y", CreatedAt: 1}
	a1 := store.Alert{ProjectID: f.p.ID, EndpointID: f.ep.ID, Kind: wire.AlertCircuitOpened, At: 1000, DedupKey: "event:1", EventID: 1, Body: `{"x":1}`}
	a2 := store.Alert{ProjectID: f.p.ID, EndpointID: f.ep.ID, Kind: wire.AlertSuppressed, At: 1500, DedupKey: "suppressed:1:0", Count: 1}
	tx(t, s, func(q store.Queries) error {
		if err := q.AlertSinkCreate(ctx, &sink); err != nil {
			return err
		}
		if err := q.AlertInsert(ctx, &a1); err != nil {
			return err
		}
		return q.AlertInsert(ctx, &a2)
	})
	txErr(t, s, "a second alert with one dedup key", store.ErrConflict, func(q store.Queries) error {
		return q.AlertInsert(ctx, &store.Alert{ProjectID: f.p.ID, EndpointID: f.ep.ID, Kind: wire.AlertCircuitOpened, At: 1, DedupKey: "event:1"})
	})
	tx(t, s, func(q store.Queries) error { return q.AlertAddCount(ctx, &store.AlertAddCountParams{ID: a2.ID, N: 4}) })
	read(t, s, func(q store.Queries) error {
		got, err := q.AlertByKey(ctx, &store.AlertByKeyParams{ProjectID: f.p.ID, DedupKey: "suppressed:1:0"})
		if err != nil || got.ID != a2.ID || got.Count != 5 || got.Kind != wire.AlertSuppressed {
			t.Errorf("AlertByKey = %+v, %v (want count 5)", got, err)
		}
		if got, err := q.AlertByKey(ctx, &store.AlertByKeyParams{ProjectID: f.p.ID, DedupKey: "event:1"}); err != nil || *got != a1 {
			t.Errorf("AlertByKey = %+v, %v, want %+v", got, err, a1)
		}
		if _, err := q.AlertByKey(ctx, &store.AlertByKeyParams{ProjectID: f.p.ID, DedupKey: "nope"}); err != store.ErrNotFound {
			t.Errorf("AlertByKey of a missing key: %v", err)
		}
		for _, c := range []struct {
			p    store.AlertsCountParams
			want int64
		}{
			{store.AlertsCountParams{ProjectID: f.p.ID, EndpointID: f.ep.ID, From: 0, To: 2000}, 2},
			{store.AlertsCountParams{ProjectID: f.p.ID, EndpointID: f.ep.ID, From: 0, To: 2000, Except: wire.AlertSuppressed}, 1},
			{store.AlertsCountParams{ProjectID: f.p.ID, EndpointID: f.ep.ID, From: 1001, To: 2000}, 1},
			{store.AlertsCountParams{ProjectID: f.p.ID, EndpointID: f.ep.ID + 1, From: 0, To: 2000}, 0},
		} {
			if n, err := q.AlertsCount(ctx, &c.p); err != nil || n != c.want {
				t.Errorf("AlertsCount(%+v) = %d, %v, want %d", c.p, n, err, c.want)
			}
		}
		return nil
	})
	d1 := &store.AlertDelivery{AlertID: a1.ID, SinkID: sink.ID, State: wire.AlertPending, DueAt: 1000}
	d2 := &store.AlertDelivery{AlertID: a2.ID, SinkID: sink.ID, State: wire.AlertPending, DueAt: 5000}
	tx(t, s, func(q store.Queries) error { return q.AlertDeliveriesInsert(ctx, []*store.AlertDelivery{d1, d2}) })
	due := func(now int64) []store.AlertDelivery {
		t.Helper()
		var out []store.AlertDelivery
		tx(t, s, func(q store.Queries) (err error) {
			out, err = q.AlertDeliveriesDue(ctx, &store.AlertDeliveriesDueParams{Now: now, LeaseUntil: now + 100, Limit: 10})
			return err
		})
		return out
	}
	var peeked []store.AlertDelivery
	read(t, s, func(q store.Queries) (err error) {
		peeked, err = q.AlertDeliveriesDue(ctx, &store.AlertDeliveriesDueParams{Now: 1000, LeaseUntil: 1100, Limit: 10, Peek: true})
		return err
	})
	if len(peeked) != 1 || peeked[0].ID != d1.ID || peeked[0].LeaseUntil != 0 {
		t.Fatalf("a peek in a read transaction = %+v, want d1 unleased", peeked)
	}
	got := due(1000)
	if len(got) != 1 || got[0].ID != d1.ID || got[0].LeaseUntil != 1100 || *got[0].Alert != a1 || *got[0].Sink != sink {
		t.Fatalf("AlertDeliveriesDue(1000) = %+v", got)
	}
	if again := due(1050); len(again) != 0 {
		t.Errorf("a leased delivery was leased again: %+v", again)
	}
	if again := due(1100); len(again) != 1 {
		t.Errorf("a delivery whose lease ended was not leased again: %+v", again)
	}
	fin := got[0]
	fin.State, fin.Attempts, fin.LastStatus, fin.LastError, fin.DeliveredAt = wire.AlertDelivered, 1, 204, "", 1200
	tx(t, s, func(q store.Queries) error { return q.AlertDeliveryFinish(ctx, &fin) })
	if left := due(10_000); len(left) != 1 || left[0].ID != d2.ID || left[0].Alert.Count != 5 {
		t.Errorf("due after the first was delivered: %+v", left)
	}
	var list []store.AlertDelivery
	read(t, s, func(q store.Queries) (err error) {
		list, err = q.AlertDeliveryList(ctx, &store.AlertDeliveryListParams{ProjectID: f.p.ID})
		return err
	})
	if len(list) != 2 || list[0].ID != d2.ID || list[1].State != wire.AlertDelivered || list[1].Attempts != 1 || list[1].LastStatus != 204 ||
		list[1].DeliveredAt != 1200 || list[1].LeaseUntil != 0 || list[1].Sink.Name != "pager" {
		t.Errorf("AlertDeliveryList = %+v", list)
	}
	var pruned int64
	tx(t, s, func(q store.Queries) (err error) {
		pruned, err = q.AlertsPrune(ctx, &store.AlertsPruneParams{Before: 2000, Limit: 10})
		return err
	})
	read(t, s, func(q store.Queries) error {
		_, err1 := q.AlertByKey(ctx, &store.AlertByKeyParams{ProjectID: f.p.ID, DedupKey: "event:1"})
		_, err2 := q.AlertByKey(ctx, &store.AlertByKeyParams{ProjectID: f.p.ID, DedupKey: "suppressed:1:0"})
		if pruned != 1 || err1 != store.ErrNotFound || err2 != nil {
			t.Errorf("AlertsPrune(before 2000) = %d; delivered a1: %v, pending a2: %v (want a1 gone, a2 kept)", pruned, err1, err2)
		}
		return nil
	})
	tx(t, s, func(q store.Queries) error {
		return q.AlertSinkDelete(ctx, &store.AlertSinkDeleteParams{ProjectID: f.p.ID, Name: "pager"})
	})
	read(t, s, func(q store.Queries) (err error) {
		list, err = q.AlertDeliveryList(ctx, &store.AlertDeliveryListParams{ProjectID: f.p.ID})
		return err
	})
	if len(list) != 0 {
		t.Errorf("deliveries listed after their sink went: %+v", list)
	}
}
