package engine

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/webhook"
	"github.com/getratchet/ratchet/wire"
)

// alertRetry is the backoff of an alert delivery that failed: 2 s
// doubling to at most 5 minutes, ±50 % jitter (so sinks that failed
// together are not retried together), a Retry-After honoured, 10 attempts
// in all (about 20 minutes). An alert is never held by the gates of the
// endpoint it reports on: it is not a job of any endpoint.
var alertRetry = backoff.Params{MaxAttempts: 10, InitialDelayMs: 2000, Multiplier: 2, MaxDelayMs: 300_000, JitterPercent: 50}

// alertLeaseMs is how long a node holds a delivery it is sending; one
// whose node died is sent again after it.
const alertLeaseMs = 60_000

// AlertRequest is one alert delivery to send: the request to make, and
// the outbox row it reports back to (AlertSent).
type AlertRequest struct {
	Delivery store.AlertDelivery
	URL      string
	Header   map[string]string
	Body     []byte
}

// DueAlerts leases up to limit alert deliveries that are due and renders
// each for its sink: the alert as JSON signed with Standard Webhooks for a
// webhook sink, a Slack or a Teams message for the others.
func (e *Engine) DueAlerts(ctx context.Context, limit int) ([]AlertRequest, error) {
	// A read first: most passes find nothing due, and a write transaction
	// each would queue behind the claims (on SQLite, the one writer).
	var due []store.AlertDelivery
	err := e.st.Read(ctx, func(q store.Queries) error {
		now, err := e.txNow(ctx, q)
		if err == nil {
			due, err = q.AlertDeliveriesDue(ctx, &store.AlertDeliveriesDueParams{Now: now, Limit: 1, Peek: true})
		}
		return err
	})
	if err != nil || len(due) == 0 {
		return nil, storeErr(err, "alerts")
	}
	var out []AlertRequest
	err = e.st.Tx(ctx, func(q store.Queries) error {
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		ds, err := q.AlertDeliveriesDue(ctx, &store.AlertDeliveriesDueParams{Now: now, LeaseUntil: now + alertLeaseMs, Limit: limit})
		if err != nil {
			return err
		}
		names := map[int64]string{}
		for _, d := range ds {
			if _, ok := names[d.Alert.ProjectID]; !ok {
				p, err := q.ProjectGet(ctx, d.Alert.ProjectID)
				if err != nil {
					return err
				}
				names[d.Alert.ProjectID] = p.Name
			}
			r, err := e.renderAlert(d, names[d.Alert.ProjectID], time.UnixMilli(now))
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, storeErr(err, "alerts")
}

// alertData is the alert as sinks receive it: its stored facts, with the
// count and the console link read now.
func (e *Engine) alertData(a *store.Alert, project string) (*wire.Alert, error) {
	var b wire.Alert
	if err := json.Unmarshal([]byte(a.Body), &b); err != nil {
		return nil, err
	}
	b.ID, b.Kind, b.Project = a.ID, a.Kind, project
	if a.Count > 0 {
		b.Count = a.Count
	}
	if e.cfg.PublicURL != "" && b.Endpoint != "" {
		b.Link = e.cfg.PublicURL + "/endpoints/" + url.PathEscape(b.Endpoint)
	} else if e.cfg.PublicURL != "" {
		b.Link = e.cfg.PublicURL + "/"
	}
	if b.Facts == nil {
		b.Facts = map[string]int64{}
	}
	return &b, nil
}

func (e *Engine) renderAlert(d store.AlertDelivery, project string, now time.Time) (AlertRequest, error) {
	r := AlertRequest{Delivery: d, URL: d.Sink.URL, Header: map[string]string{"Content-Type": "application/json"}}
	data, err := e.alertData(d.Alert, project)
	if err != nil {
		return r, err
	}
	switch d.Sink.Kind {
	case wire.SinkSlack:
		r.Body, err = json.Marshal(slackMessage(data))
	case wire.SinkTeams:
		r.Body, err = json.Marshal(teamsMessage(data))
	default:
		msg := map[string]any{"type": "ratchet.alert." + string(data.Kind), "timestamp": now.UTC().Format(time.RFC3339), "data": data}
		if r.Body, err = json.Marshal(msg); err != nil {
			return r, err
		}
		key, err := webhook.ParseSecret(d.Sink.Secret)
		if err != nil {
			return r, err
		}
		// The id is the alert's, the same on every retry, so a receiver
		// can drop a delivery it has seen (Standard Webhooks).
		id := "alert_" + strconv.FormatInt(d.Alert.ID, 10)
		r.Header[webhook.HeaderID] = id
		r.Header[webhook.HeaderTimestamp] = strconv.FormatInt(now.Unix(), 10)
		r.Header[webhook.HeaderSignature] = webhook.Sign(key, id, now, r.Body)
	}
	return r, err
}

// AlertSent records what sending r did: status is the sink's HTTP status
// (0 when no answer came), errText what went wrong. A 2xx answer delivers
// it; a 4xx other than 408 and 429 is a refusal it keeps (failed);
// anything else is retried by alertRetry until its attempts are spent.
func (e *Engine) AlertSent(ctx context.Context, r *AlertRequest, status int, errText string, retryAfterMs int64) error {
	err := e.st.Tx(ctx, func(q store.Queries) error {
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		d := r.Delivery
		d.Attempts++
		d.LastStatus, d.LastError = int64(status), cutText(errText, 500)
		switch {
		case status >= 200 && status < 300:
			d.State, d.DeliveredAt, d.LastError = wire.AlertDelivered, now, ""
		case status >= 400 && status < 500 && status != 408 && status != 429:
			d.State = wire.AlertFailed
		default:
			dec, err := alertRetry.Delay(int(d.Attempts), e.rnd(), max(retryAfterMs, 0))
			if err != nil {
				return err
			}
			if dec.Exhausted {
				d.State = wire.AlertFailed
			} else {
				d.DueAt = now + dec.SelectedMs
			}
		}
		return q.AlertDeliveryFinish(ctx, &d)
	})
	return storeErr(err, "alert delivery")
}

// cutText cuts s to at most n bytes on a character boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
