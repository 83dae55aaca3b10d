package engine

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/sqlite"
	"github.com/getratchet/ratchet/wire"
)

// TestAlertsReactToEveryEventKind: the kinds the recovery work writes
// (endpointEvent with its facts) raise their alerts: limit_learned a
// limit_changed, recovery_ended a backlog_recovered, each carrying the
// event's facts and sentence; recovery_started, paused and resumed raise
// none (a pause alerts when it lasts).
func TestAlertsReactToEveryEventKind(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "r.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{Store: st, Clock: clock.NewFake(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := e.Bootstrap(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Authenticate(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := e.CreateEndpoint(ctx, p, "svc", DefaultEndpointPolicy())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateAlertSink(ctx, p, wire.AlertSinkCreate{Name: "pager", Kind: wire.SinkWebhook, URL: "https://hooks.example.com/x"}); err != nil {
		t.Fatal(err)
	}
	err = st.Tx(ctx, func(q store.Queries) error {
		for _, ev := range []struct {
			kind  wire.EndpointEventKind
			facts []eventFact
		}{
			{wire.EndpointRecoveryStarted, []eventFact{withFact("allowed", 5)}},
			{wire.EndpointLimitLearned, []eventFact{withFact("limitPerMinute", 6000), withFact("previousPerMinute", 3000), withDetail("learned 100/s from RateLimit-Limit")}},
			{wire.EndpointRecoveryEnded, []eventFact{withFact("drainedJobs", 5000), withDetail("the backlog drained in 52 s")}},
			{wire.EndpointPaused, nil},
			{wire.EndpointResumed, nil},
		} {
			if err := e.endpointEvent(ctx, q, ep, ev.kind, 1000, ev.facts...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.RaiseAlerts(ctx); err != nil || n != 5 {
		t.Fatalf("RaiseAlerts read %d events, %v", n, err)
	}
	ds, err := e.AlertDeliveries(ctx, p, 10)
	if err != nil || len(ds) != 2 {
		t.Fatalf("%d alerts, %v: want limit_changed and backlog_recovered", len(ds), err)
	}
	var rec, lim wire.Alert
	if json.Unmarshal([]byte(ds[0].Alert.Body), &rec) != nil || json.Unmarshal([]byte(ds[1].Alert.Body), &lim) != nil {
		t.Fatal("bodies")
	}
	if ds[0].Alert.Kind != wire.AlertBacklogRecovered || rec.Facts["drainedJobs"] != 5000 || rec.Detail != "the backlog drained in 52 s" {
		t.Errorf("recovered: %+v", rec)
	}
	if ds[1].Alert.Kind != wire.AlertLimitChanged || lim.Facts["limitPerMinute"] != 6000 || lim.Summary == "" {
		t.Errorf("limit: %+v", lim)
	}
}

// TestFeedWaitsForSettledEvents: where writers commit side by side the
// feed stops at the first event younger than feedSettleMs (a smaller id
// may still commit behind it); with one writer it takes every event.
func TestFeedWaitsForSettledEvents(t *testing.T) {
	evs := []store.EndpointEvent{{ID: 1, At: 1000}, {ID: 2, At: 1600}, {ID: 3, At: 1200}}
	if got := settled(evs, 2000, false); len(got) != 3 {
		t.Errorf("one writer: %d events, want 3", len(got))
	}
	if got := settled(evs, 2000, true); len(got) != 1 || got[0].ID != 1 {
		t.Errorf("side by side at 2000: %+v, want event 1 only (event 2 is 400 ms old)", got)
	}
	if got := settled(evs, 2100, true); len(got) != 3 {
		t.Errorf("side by side at 2100: %d events, want 3", len(got))
	}
}

// FuzzSinkURL: whatever a sink URL holds, checkSinkURL returns nil or a
// field error naming url (never panics), and what it accepts is an
// absolute http or https URL with a host and no user info.
func FuzzSinkURL(f *testing.F) {
	for _, s := range []string{"https://hooks.slack.com/services/T/B/x", "http://10.0.0.1/", "http://[::1]:9/x", "ftp://x", "https://u:p@x/", "https://x/#f",
		"https://x/\x00", "", "https://" + strings.Repeat("a", 3000), "http://169.254.169.254/latest", "https://[fe80::1%25eth0]/"} {
		f.Add(s)
	}
	e := &Engine{}
	f.Fuzz(func(t *testing.T, raw string) {
		err := e.checkSinkURL(raw)
		if err == nil {
			u, perr := url.Parse(raw)
			if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || len(raw) > 2048 {
				t.Fatalf("accepted %q", raw)
			}
			return
		}
		fe, ok := field.As(err)
		if !ok || len(fe) != 1 || fe[0].Field != "url" {
			t.Fatalf("%q: %v is not one field error naming url", raw, err)
		}
	})
}
