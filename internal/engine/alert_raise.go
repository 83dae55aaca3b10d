package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// alertOfEvent is the alert an endpoint event raises; "" for none (a
// pause alerts only when it lasts: checkPaused).
func alertOfEvent(k wire.EndpointEventKind) wire.AlertKind {
	switch k {
	case wire.EndpointCircuitOpened:
		return wire.AlertCircuitOpened
	case wire.EndpointCircuitHalfOpen:
		return wire.AlertCircuitHalfOpen
	case wire.EndpointCircuitClosed:
		return wire.AlertCircuitClosed
	case wire.EndpointLimitLearned:
		return wire.AlertLimitChanged
	case wire.EndpointRecoveryEnded:
		return wire.AlertBacklogRecovered
	}
	return ""
}

// alertPass is what one pass of raising alerts read, per project: its
// sinks and thresholds, read once.
type alertPass struct {
	q        store.Queries
	now      int64
	projects map[int64]*alertProject
}

type alertProject struct {
	name  string
	sinks []store.AlertSink
	set   wire.AlertSettings
}

func (ap *alertPass) project(ctx context.Context, id int64) (*alertProject, error) {
	if pr, ok := ap.projects[id]; ok {
		return pr, nil
	}
	sinks, err := ap.q.AlertSinkList(ctx, id)
	if err != nil {
		return nil, err
	}
	pr := &alertProject{sinks: sinks}
	if len(sinks) > 0 {
		if pr.set, err = alertSettings(ctx, ap.q, id); err != nil {
			return nil, err
		}
		p, err := ap.q.ProjectGet(ctx, id)
		if err != nil {
			return nil, err
		}
		pr.name = p.Name
	}
	ap.projects[id] = pr
	return pr, nil
}

// RaiseAlerts reads the endpoint events written since its last pass and
// raises an alert for each transition that has one (alertOfEvent), for
// the projects that have sinks. It holds the feed's position locked, so
// across nodes each event is read once; an alert's dedup key ("event:ID")
// keeps it once besides. It returns how many events it read.
func (e *Engine) RaiseAlerts(ctx context.Context) (int, error) {
	// A read first, from the feed's position as this node last saw it:
	// most passes find no new event, and a write transaction each would
	// queue behind the claims. Another node may have moved the feed on;
	// then the write transaction below finds nothing and learns where it is.
	seen := e.alertFeedSeen.Load()
	var next []store.EndpointEvent
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		next, err = q.EndpointEventsAfter(ctx, &store.EndpointEventsAfterParams{AfterID: seen, Limit: 1})
		return err
	})
	if err != nil || len(next) == 0 {
		return 0, storeErr(err, "alerts")
	}
	n := 0
	err = e.st.Tx(ctx, func(q store.Queries) error {
		pos, err := q.AlertFeedGet(ctx)
		if err != nil {
			return err
		}
		evs, err := q.EndpointEventsAfter(ctx, &store.EndpointEventsAfterParams{AfterID: pos, Limit: 500})
		if err != nil {
			return err
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		if evs = settled(evs, now, e.st.ConcurrentWriters()); len(evs) == 0 {
			seen = pos
			return nil
		}
		seen = evs[len(evs)-1].ID
		ap := &alertPass{q: q, now: now, projects: map[int64]*alertProject{}}
		for i := range evs {
			ev := &evs[i]
			kind := alertOfEvent(ev.Kind)
			if kind == "" {
				continue
			}
			body := eventAlertBody(ev, kind)
			if err := e.raise(ctx, ap, &store.Alert{ProjectID: ev.ProjectID, EndpointID: ev.EndpointID, Kind: kind, At: ev.At,
				DedupKey: "event:" + strconv.FormatInt(ev.ID, 10), EventID: ev.ID}, body); err != nil {
				return err
			}
		}
		n = len(evs)
		return q.AlertFeedSet(ctx, evs[len(evs)-1].ID)
	})
	if err == nil {
		e.alertFeedSeen.Store(seen)
	}
	return n, storeErr(err, "alerts")
}

// feedSettleMs is how old an event must be before the feed moves past
// it where writers commit side by side (PostgreSQL): ids are taken at
// insert and a transaction that took a smaller id may commit after one
// that took a larger, so a position moved past the larger would skip the
// smaller for good. The transitions' transactions take milliseconds.
// SQLite's one writer commits in id order and needs no wait.
const feedSettleMs = 500

// settled keeps the events of evs (in id order) up to the first one not
// settled yet.
func settled(evs []store.EndpointEvent, now int64, concurrent bool) []store.EndpointEvent {
	if !concurrent {
		return evs
	}
	for i, ev := range evs {
		if ev.At > now-feedSettleMs {
			return evs[:i]
		}
	}
	return evs
}

// eventAlertBody is an event's alert: its facts and its sentence.
func eventAlertBody(ev *store.EndpointEvent, kind wire.AlertKind) *wire.Alert {
	b := &wire.Alert{Kind: kind, Endpoint: ev.Endpoint, At: FormatTime(ev.At), Detail: ev.Detail, Failures: ev.Failures, Threshold: ev.Threshold,
		OpenedAt: timeOrNil(ev.OpenedAt), NextProbeAt: timeOrNil(ev.NextProbeAt), HeldJobs: ev.HeldJobs, Facts: ev.Facts}
	switch kind {
	case wire.AlertCircuitOpened:
		b.Summary = "Circuit opened: endpoint " + ev.Endpoint + " is held"
	case wire.AlertCircuitHalfOpen:
		b.Summary = "Circuit half-open: endpoint " + ev.Endpoint + " is probed"
	case wire.AlertCircuitClosed:
		b.Summary = "Circuit closed: endpoint " + ev.Endpoint + " is released"
	case wire.AlertLimitChanged:
		b.Summary = "Learned limit changed on endpoint " + ev.Endpoint
	case wire.AlertBacklogRecovered:
		b.Summary = "Backlog recovered on endpoint " + ev.Endpoint
	}
	return b
}

func timeOrNil(ms int64) *string {
	if ms == 0 {
		return nil
	}
	s := FormatTime(ms)
	return &s
}

func encodeAlertBody(b *wire.Alert) string {
	out, _ := json.Marshal(b) // a wire.Alert always encodes
	return string(out)
}

// raise stores alert a (unless its dedup key is taken: raised already)
// with body b, and queues it for each of the project's sinks, unless the
// endpoint had MaxPerWindow alerts in a.At's window already: then it is
// stored without deliveries and counted in the window's one suppressed
// alert, sent when the window ends. Projects without sinks get nothing.
func (e *Engine) raise(ctx context.Context, ap *alertPass, a *store.Alert, b *wire.Alert) error {
	pr, err := ap.project(ctx, a.ProjectID)
	if err != nil || len(pr.sinks) == 0 {
		return err
	}
	q := ap.q
	if _, err := q.AlertByKey(ctx, &store.AlertByKeyParams{ProjectID: a.ProjectID, DedupKey: a.DedupKey}); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	win := pr.set.WindowMs
	from := a.At - a.At%win
	n, err := q.AlertsCount(ctx, &store.AlertsCountParams{ProjectID: a.ProjectID, EndpointID: a.EndpointID, From: from, To: from + win, Except: wire.AlertSuppressed})
	if err != nil {
		return err
	}
	if b.HeldJobs > 0 && a.EndpointID != 0 {
		if err := drainPace(ctx, q, a.EndpointID, ap.now, b); err != nil {
			return err
		}
	}
	a.Body = encodeAlertBody(b)
	if err := q.AlertInsert(ctx, a); err != nil {
		return err
	}
	if n < pr.set.MaxPerWindow {
		return queueAlert(ctx, q, a.ID, pr.sinks, ap.now)
	}
	e.log.Info("alert suppressed by the cap", "endpoint", b.Endpoint, "kind", a.Kind, "window", FormatTime(from))
	return e.suppressed(ctx, ap, pr, a, b.Endpoint, from)
}

// suppressed counts a held-back alert in its window's suppressed alert,
// making that alert (sent at the window's end) for the first.
func (e *Engine) suppressed(ctx context.Context, ap *alertPass, pr *alertProject, a *store.Alert, endpoint string, from int64) error {
	key := "suppressed:" + strconv.FormatInt(a.EndpointID, 10) + ":" + strconv.FormatInt(from, 10)
	s, err := ap.q.AlertByKey(ctx, &store.AlertByKeyParams{ProjectID: a.ProjectID, DedupKey: key})
	if err == nil {
		return ap.q.AlertAddCount(ctx, &store.AlertAddCountParams{ID: s.ID, N: 1})
	}
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	end := from + pr.set.WindowMs
	b := &wire.Alert{Kind: wire.AlertSuppressed, Endpoint: endpoint, At: FormatTime(a.At),
		Summary: "Alerts suppressed on endpoint " + endpoint,
		Detail: "endpoint " + endpoint + " had " + strconv.FormatInt(pr.set.MaxPerWindow, 10) + " alerts (maxPerWindow) in the window from " + FormatTime(from) +
			" to " + FormatTime(end) + "; the count says how many more were held back. Its event log has each change."}
	s = &store.Alert{ProjectID: a.ProjectID, EndpointID: a.EndpointID, Kind: wire.AlertSuppressed, At: a.At, DedupKey: key, Count: 1, Body: encodeAlertBody(b)}
	if err := ap.q.AlertInsert(ctx, s); err != nil {
		return err
	}
	return queueAlert(ctx, ap.q, s.ID, pr.sinks, end)
}

// queueAlert queues an alert for each sink, due at due.
func queueAlert(ctx context.Context, q store.Queries, alertID int64, sinks []store.AlertSink, due int64) error {
	ds := make([]*store.AlertDelivery, len(sinks))
	for i, k := range sinks {
		ds[i] = &store.AlertDelivery{AlertID: alertID, SinkID: k.ID, State: wire.AlertPending, DueAt: due}
	}
	return q.AlertDeliveriesInsert(ctx, ds)
}

// drainPace adds the pace of the drain (attempts claimed in the last
// minute) and, at that pace, when the held jobs are through.
func drainPace(ctx context.Context, q store.Queries, endpointID, now int64, b *wire.Alert) error {
	n, _, err := q.ClaimsSince(ctx, &store.ClaimsSinceParams{EndpointID: endpointID, Since: now - time.Minute.Milliseconds(), Limit: 1_000_000})
	if err != nil || n == 0 {
		return err
	}
	b.DrainPerMinute = n
	b.DrainEndsAt = timeOrNil(now + b.HeldJobs*time.Minute.Milliseconds()/n)
	return nil
}
