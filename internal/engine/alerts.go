package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/webhook"
	"github.com/getratchet/ratchet/wire"
)

// Alerts (docs/alerts.md) are configured per project: sinks (where they
// go) and thresholds (AlertSettings). This file is the configuration; the
// raising of alerts from the endpoint event log is alert_raise.go, their
// bodies alert_render.go, their outbox alert_send.go.

// DefaultAlertSettings are a project's thresholds until it sets its own.
func DefaultAlertSettings() wire.AlertSettings {
	return wire.AlertSettings{PausedAfterMs: wire.DefaultAlertPausedAfterMs, FailureRatePercent: wire.DefaultAlertFailureRate,
		FailureRateMin: wire.DefaultAlertFailureMin, WindowMs: wire.DefaultAlertWindowMs, MaxPerWindow: wire.DefaultAlertMaxPerWindow}
}

// checkSinkURL validates an alert sink's URL as a delivery target's: an
// absolute http or https URL without user info or fragment, at most 2048
// bytes, whose host (when an address) the delivery policy allows; the
// address a name resolves to is checked again when it is sent.
func (e *Engine) checkSinkURL(raw string) error {
	show := strconv.Quote(raw)
	if len(raw) > 2048 {
		show = "a URL of " + strconv.Itoa(len(raw)) + " bytes"
	}
	const allowed = "must be an absolute http or https URL of at most 2048 bytes, without user info or fragment"
	u, err := url.Parse(raw)
	if len(raw) > 2048 || !utf8.ValidString(raw) || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" ||
		strings.ContainsAny(raw, " \t\r\n") {
		return invalidField("url", show, allowed)
	}
	if err := e.cfg.DeliveryPolicy.CheckHost(u.Hostname()); err != nil {
		return invalidField("url", show, "must reach an address deliveries may reach: "+err.Error())
	}
	return nil
}

// CreateAlertSink adds a sink to the project. A webhook sink gets a
// fresh signing secret, returned in the sink this once.
func (e *Engine) CreateAlertSink(ctx context.Context, p *Principal, in wire.AlertSinkCreate) (*store.AlertSink, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	var errs field.Errors
	if !ValidName(in.Name) {
		errs.Add("name", strconv.Quote(in.Name), "must match "+wire.NamePattern)
	}
	if !slices.Contains(wire.AlertSinkKinds(), in.Kind) {
		errs.Add("kind", strconv.Quote(string(in.Kind)), "must be "+wire.JoinOr(wire.AlertSinkKinds()))
	}
	if err := e.checkSinkURL(in.URL); err != nil {
		fe, _ := field.As(err)
		errs = append(errs, fe...)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	k := &store.AlertSink{ProjectID: p.ProjectID, Name: in.Name, Kind: in.Kind, URL: in.URL}
	if in.Kind == wire.SinkWebhook {
		k.Secret = webhook.NewSecret()
	}
	err := e.st.Tx(ctx, func(q store.Queries) error {
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		k.CreatedAt = now
		have, err := q.AlertSinkList(ctx, p.ProjectID)
		if err != nil {
			return err
		}
		if len(have) >= wire.MaxAlertSinks {
			return conflict("the project has %d alert sinks, the most it may have; delete one first", len(have))
		}
		if err := q.AlertSinkCreate(ctx, k); err != nil {
			return err
		}
		return e.audit(ctx, q, p, now, "alert.sink.create", "alert-sink:"+in.Name, fmt.Sprintf("created %s alert sink %s to %s", in.Kind, in.Name, redactURL(in.URL)))
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, conflict("the project has an alert sink named %q already", in.Name)
	}
	return k, storeErr(err, "alert sink")
}

// redactURL is a sink URL for the audit log: scheme and host only, since
// an incoming-webhook URL's path is its secret.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL)"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// AlertSinks lists the project's sinks (secrets not shown) and its
// thresholds.
func (e *Engine) AlertSinks(ctx context.Context, p *Principal) ([]store.AlertSink, wire.AlertSettings, error) {
	var sinks []store.AlertSink
	set := DefaultAlertSettings()
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, set, err
	}
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		if sinks, err = q.AlertSinkList(ctx, p.ProjectID); err != nil {
			return err
		}
		set, err = alertSettings(ctx, q, p.ProjectID)
		return err
	})
	for i := range sinks {
		sinks[i].Secret = ""
	}
	return sinks, set, storeErr(err, "alert sinks")
}

// alertSettings reads a project's thresholds, the defaults when it has
// set none.
func alertSettings(ctx context.Context, q store.Queries, projectID int64) (wire.AlertSettings, error) {
	s, err := q.AlertSettingsGet(ctx, projectID)
	if errors.Is(err, store.ErrNotFound) {
		return DefaultAlertSettings(), nil
	}
	if err != nil {
		return wire.AlertSettings{}, err
	}
	return wire.AlertSettings{PausedAfterMs: s.PausedAfterMs, FailureRatePercent: s.FailureRatePercent, FailureRateMin: s.FailureRateMin,
		WindowMs: s.WindowMs, MaxPerWindow: s.MaxPerWindow}, nil
}

// DeleteAlertSink deletes the project's sink and its alerts not yet sent.
func (e *Engine) DeleteAlertSink(ctx context.Context, p *Principal, name string) error {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return err
	}
	err := e.st.Tx(ctx, func(q store.Queries) error {
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		if err := q.AlertSinkDelete(ctx, &store.AlertSinkDeleteParams{ProjectID: p.ProjectID, Name: name}); err != nil {
			return err
		}
		return e.audit(ctx, q, p, now, "alert.sink.delete", "alert-sink:"+name, "deleted alert sink "+name)
	})
	return storeErr(err, "alert sink "+strconv.Quote(name))
}

// checkAlertSettings returns a field error for each threshold out of its
// bounds.
func checkAlertSettings(in wire.AlertSettings) error {
	var errs field.Errors
	for _, c := range []struct {
		name, bound string
		v           int64
	}{
		{"pausedAfterMs", "alertPausedAfterMs", in.PausedAfterMs},
		{"failureRatePercent", "alertFailureRate", in.FailureRatePercent},
		{"failureRateMin", "alertFailureRateMin", in.FailureRateMin},
		{"windowMs", "alertWindowMs", in.WindowMs},
		{"maxPerWindow", "alertMaxPerWindow", in.MaxPerWindow},
	} {
		r, _ := wire.Bound(c.bound)
		if float64(c.v) < r.Min || float64(c.v) > r.Max {
			errs.Add(c.name, strconv.FormatInt(c.v, 10), fmt.Sprintf("must be an integer from %d through %d", int64(r.Min), int64(r.Max)))
		}
	}
	return errs.Err()
}

// SetAlertSettings replaces the project's thresholds; every value out of
// bounds is a field error and nothing is stored.
func (e *Engine) SetAlertSettings(ctx context.Context, p *Principal, in wire.AlertSettings) (wire.AlertSettings, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return in, err
	}
	if err := checkAlertSettings(in); err != nil {
		return in, err
	}
	err := e.st.Tx(ctx, func(q store.Queries) error {
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		before, err := alertSettings(ctx, q, p.ProjectID)
		if err != nil {
			return err
		}
		if err := q.AlertSettingsPut(ctx, &store.AlertSettings{ProjectID: p.ProjectID, PausedAfterMs: in.PausedAfterMs, FailureRatePercent: in.FailureRatePercent,
			FailureRateMin: in.FailureRateMin, WindowMs: in.WindowMs, MaxPerWindow: in.MaxPerWindow, UpdatedAt: now}); err != nil {
			return err
		}
		return e.audit(ctx, q, p, now, "alert.settings", "alerts", "alert thresholds "+settingsText(in)+" (were "+settingsText(before)+")")
	})
	return in, storeErr(err, "alert settings")
}

// TestAlert queues a test alert for one sink, sent as any alert (through
// the outbox, with its retries), and returns it.
func (e *Engine) TestAlert(ctx context.Context, p *Principal, sinkName string) (*store.Alert, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	var a *store.Alert
	err := e.st.Tx(ctx, func(q store.Queries) error {
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		sinks, err := q.AlertSinkList(ctx, p.ProjectID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(sinks, func(k store.AlertSink) bool { return k.Name == sinkName })
		if i < 0 {
			return store.ErrNotFound
		}
		body := wire.Alert{Kind: wire.AlertTest, At: FormatTime(now), Summary: "Test alert from Ratchet",
			Detail: "sent by " + p.Actor() + " to check alert sink " + sinkName + "; no endpoint changed"}
		a = &store.Alert{ProjectID: p.ProjectID, Kind: wire.AlertTest, At: now, DedupKey: "test:" + strconv.FormatInt(now, 10) + ":" + token()[:8],
			Body: encodeAlertBody(&body)}
		if err := q.AlertInsert(ctx, a); err != nil {
			return err
		}
		if err := q.AlertDeliveriesInsert(ctx, []*store.AlertDelivery{{AlertID: a.ID, SinkID: sinks[i].ID, State: wire.AlertPending, DueAt: now}}); err != nil {
			return err
		}
		return e.audit(ctx, q, p, now, "alert.test", "alert-sink:"+sinkName, "sent a test alert to alert sink "+sinkName)
	})
	return a, storeErr(err, "alert sink "+strconv.Quote(sinkName))
}

// AlertDeliveries lists the project's latest alert deliveries, newest
// first, with their alerts and sinks (secrets not shown).
func (e *Engine) AlertDeliveries(ctx context.Context, p *Principal, limit int) ([]store.AlertDelivery, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	var out []store.AlertDelivery
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		out, err = q.AlertDeliveryList(ctx, &store.AlertDeliveryListParams{ProjectID: p.ProjectID, Limit: limit})
		return err
	})
	for i := range out {
		out[i].Sink.Secret = ""
	}
	return out, storeErr(err, "alerts")
}

// pruneAlerts deletes alerts older than the retention (at least 24 hours,
// as endpoint events) that have no delivery pending, with their
// deliveries.
func (e *Engine) pruneAlerts(ctx context.Context) (int64, error) {
	return e.pruneKept(ctx, func(q store.Queries, before int64, limit int) (int64, error) {
		return q.AlertsPrune(ctx, &store.AlertsPruneParams{Before: before, Limit: limit})
	})
}

// settingsText writes thresholds for the audit log, by their JSON names.
func settingsText(s wire.AlertSettings) string {
	return fmt.Sprintf("pausedAfterMs %d, failureRatePercent %d, failureRateMin %d, windowMs %d, maxPerWindow %d",
		s.PausedAfterMs, s.FailureRatePercent, s.FailureRateMin, s.WindowMs, s.MaxPerWindow)
}
