package sqlstore

import (
	"context"
	"strconv"

	"github.com/getratchet/ratchet/internal/store"
)

// AlertSinkCreate stores the sink and sets k.ID.
func (q *Queries) AlertSinkCreate(ctx context.Context, k *store.AlertSink) error {
	id, err := q.insertID(ctx, `INSERT INTO alert_sinks (project_id, name, kind, url, secret, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		k.ProjectID, k.Name, k.Kind, k.URL, k.Secret, k.CreatedAt)
	k.ID = id
	return err
}

const sinkColumns = `k.id, k.project_id, k.name, k.kind, k.url, k.secret, k.created_at`

func scanSink(sc scanner) (store.AlertSink, error) {
	var k store.AlertSink
	err := sc.Scan(&k.ID, &k.ProjectID, &k.Name, &k.Kind, &k.URL, &k.Secret, &k.CreatedAt)
	return k, err
}

// AlertSinkList lists the project's sinks by name.
func (q *Queries) AlertSinkList(ctx context.Context, projectID int64) ([]store.AlertSink, error) {
	rows, err := q.query(ctx, `SELECT `+sinkColumns+` FROM alert_sinks k WHERE k.project_id = ? ORDER BY k.name`, projectID)
	return collect(q, rows, err, scanSink)
}

// AlertSinkDelete deletes the project's sink p.Name and its pending
// deliveries (the delivered and failed stay, as history).
func (q *Queries) AlertSinkDelete(ctx context.Context, p *store.AlertSinkDeleteParams) error {
	var id int64
	if err := q.row(ctx, `SELECT id FROM alert_sinks WHERE project_id = ? AND name = ?`, p.ProjectID, p.Name).Scan(&id); err != nil {
		return q.D.Translate(err)
	}
	if _, err := q.exec(ctx, `DELETE FROM alert_deliveries WHERE sink_id = ? AND state = 'pending'`, id); err != nil {
		return err
	}
	return q.expectOne(q.exec(ctx, `DELETE FROM alert_sinks WHERE id = ?`, id))
}

// AlertSettingsGet reads the project's thresholds.
func (q *Queries) AlertSettingsGet(ctx context.Context, projectID int64) (*store.AlertSettings, error) {
	var a store.AlertSettings
	err := q.row(ctx, `SELECT project_id, paused_after_ms, failure_rate_percent, failure_rate_min, window_ms, max_per_window, updated_at
		FROM alert_settings WHERE project_id = ?`, projectID).
		Scan(&a.ProjectID, &a.PausedAfterMs, &a.FailureRatePercent, &a.FailureRateMin, &a.WindowMs, &a.MaxPerWindow, &a.UpdatedAt)
	return &a, q.D.Translate(err)
}

// AlertSettingsPut stores the project's thresholds, replacing any.
func (q *Queries) AlertSettingsPut(ctx context.Context, a *store.AlertSettings) error {
	_, err := q.exec(ctx, `INSERT INTO alert_settings (project_id, paused_after_ms, failure_rate_percent, failure_rate_min, window_ms, max_per_window, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id) DO UPDATE SET paused_after_ms = excluded.paused_after_ms,
		failure_rate_percent = excluded.failure_rate_percent, failure_rate_min = excluded.failure_rate_min, window_ms = excluded.window_ms,
		max_per_window = excluded.max_per_window, updated_at = excluded.updated_at`,
		a.ProjectID, a.PausedAfterMs, a.FailureRatePercent, a.FailureRateMin, a.WindowMs, a.MaxPerWindow, a.UpdatedAt)
	return err
}

// AlertFeedGet reads the feed's position, locking it on PostgreSQL.
func (q *Queries) AlertFeedGet(ctx context.Context) (int64, error) {
	var id int64
	err := q.row(ctx, `SELECT last_event_id FROM alert_feed WHERE id = 1`+q.forUpdate()).Scan(&id)
	return id, q.D.Translate(err)
}

// AlertFeedSet stores the feed's position.
func (q *Queries) AlertFeedSet(ctx context.Context, lastEventID int64) error {
	return q.expectOne(q.exec(ctx, `UPDATE alert_feed SET last_event_id = ? WHERE id = 1`, lastEventID))
}

// AlertInsert stores the alert and sets a.ID.
func (q *Queries) AlertInsert(ctx context.Context, a *store.Alert) error {
	id, err := q.insertID(ctx, `INSERT INTO alerts (project_id, endpoint_id, kind, at, dedup_key, event_id, count, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ProjectID, a.EndpointID, a.Kind, a.At, a.DedupKey, a.EventID, a.Count, a.Body)
	a.ID = id
	return err
}

const alertColumns = `a.id, a.project_id, a.endpoint_id, a.kind, a.at, a.dedup_key, a.event_id, a.count, a.body`

func scanAlert(sc scanner, a *store.Alert, more ...any) error {
	return sc.Scan(append([]any{&a.ID, &a.ProjectID, &a.EndpointID, &a.Kind, &a.At, &a.DedupKey, &a.EventID, &a.Count, &a.Body}, more...)...)
}

// AlertByKey reads the project's alert with p.DedupKey.
func (q *Queries) AlertByKey(ctx context.Context, p *store.AlertByKeyParams) (*store.Alert, error) {
	var a store.Alert
	err := scanAlert(q.row(ctx, `SELECT `+alertColumns+` FROM alerts a WHERE a.project_id = ? AND a.dedup_key = ?`, p.ProjectID, p.DedupKey), &a)
	return &a, q.D.Translate(err)
}

// AlertAddCount adds p.N to the alert's count.
func (q *Queries) AlertAddCount(ctx context.Context, p *store.AlertAddCountParams) error {
	return q.expectOne(q.exec(ctx, `UPDATE alerts SET count = count + ? WHERE id = ?`, p.N, p.ID))
}

// AlertsCount counts the endpoint's alerts of [p.From, p.To), p.Except
// aside.
func (q *Queries) AlertsCount(ctx context.Context, p *store.AlertsCountParams) (int64, error) {
	var n int64
	err := q.row(ctx, `SELECT COUNT(*) FROM alerts WHERE project_id = ? AND endpoint_id = ? AND at >= ? AND at < ? AND kind <> ?`,
		p.ProjectID, p.EndpointID, p.From, p.To, string(p.Except)).Scan(&n)
	return n, q.D.Translate(err)
}

// AlertDeliveriesInsert stores the deliveries and sets their IDs.
func (q *Queries) AlertDeliveriesInsert(ctx context.Context, ds []*store.AlertDelivery) error {
	for _, d := range ds {
		id, err := q.insertID(ctx, `INSERT INTO alert_deliveries (alert_id, sink_id, state, attempts, due_at) VALUES (?, ?, ?, ?, ?)`,
			d.AlertID, d.SinkID, d.State, d.Attempts, d.DueAt)
		if err != nil {
			return err
		}
		d.ID = id
	}
	return nil
}

const deliveryColumns = `d.id, d.alert_id, d.sink_id, d.state, d.attempts, d.due_at, d.lease_until, d.last_status, d.last_error, d.delivered_at`

func scanDelivery(sc scanner) (store.AlertDelivery, error) {
	d := store.AlertDelivery{Alert: &store.Alert{}, Sink: &store.AlertSink{}}
	k := d.Sink
	err := scanAlert(sc, d.Alert, &d.ID, &d.AlertID, &d.SinkID, &d.State, &d.Attempts, &d.DueAt, &d.LeaseUntil, &d.LastStatus, &d.LastError, &d.DeliveredAt,
		&k.ID, &k.ProjectID, &k.Name, &k.Kind, &k.URL, &k.Secret, &k.CreatedAt)
	return d, err
}

const deliveryJoin = `SELECT ` + alertColumns + `, ` + deliveryColumns + `, ` + sinkColumns + `
	FROM alert_deliveries d JOIN alerts a ON a.id = d.alert_id JOIN alert_sinks k ON k.id = d.sink_id`

// AlertDeliveriesDue leases up to p.Limit due pending deliveries.
func (q *Queries) AlertDeliveriesDue(ctx context.Context, p *store.AlertDeliveriesDueParams) ([]store.AlertDelivery, error) {
	lock := ""
	if q.D.Locking && !p.Peek {
		lock = " FOR UPDATE OF d SKIP LOCKED"
	}
	rows, err := q.query(ctx, deliveryJoin+` WHERE d.state = 'pending' AND d.due_at <= ? AND d.lease_until <= ?
		ORDER BY d.due_at, d.id LIMIT `+strconv.Itoa(p.Limit)+lock, p.Now, p.Now)
	ds, err := collect(q, rows, err, scanDelivery)
	if err != nil || len(ds) == 0 || p.Peek {
		return ds, err
	}
	ids := make([]int64, len(ds))
	for i := range ds {
		ids[i], ds[i].LeaseUntil = ds[i].ID, p.LeaseUntil
	}
	_, err = q.exec(ctx, `UPDATE alert_deliveries SET lease_until = ? WHERE id IN (`+placeholders(len(ids))+`)`, append([]any{p.LeaseUntil}, int64Args(ids)...)...)
	return ds, err
}

// AlertDeliveryFinish writes what an attempt of the delivery did.
func (q *Queries) AlertDeliveryFinish(ctx context.Context, d *store.AlertDelivery) error {
	return q.expectOne(q.exec(ctx, `UPDATE alert_deliveries SET state = ?, attempts = ?, due_at = ?, lease_until = 0, last_status = ?, last_error = ?,
		delivered_at = ? WHERE id = ?`, d.State, d.Attempts, d.DueAt, d.LastStatus, d.LastError, d.DeliveredAt, d.ID))
}

// AlertDeliveryList lists the project's latest deliveries, newest first.
func (q *Queries) AlertDeliveryList(ctx context.Context, p *store.AlertDeliveryListParams) ([]store.AlertDelivery, error) {
	rows, err := q.query(ctx, deliveryJoin+` WHERE a.project_id = ? ORDER BY d.id DESC LIMIT `+strconv.Itoa(limitOr100(p.Limit)), p.ProjectID)
	return collect(q, rows, err, scanDelivery)
}

// AlertsPrune deletes up to p.Limit alerts raised before p.Before that
// have no pending delivery, with their deliveries.
func (q *Queries) AlertsPrune(ctx context.Context, p *store.AlertsPruneParams) (int64, error) {
	rows, err := q.query(ctx, `SELECT a.id FROM alerts a WHERE a.at < ? AND NOT EXISTS
		(SELECT 1 FROM alert_deliveries d WHERE d.alert_id = a.id AND d.state = 'pending') ORDER BY a.at LIMIT `+strconv.Itoa(p.Limit), p.Before)
	ids, err := collect(q, rows, err, scanInt64)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	if _, err := q.exec(ctx, `DELETE FROM alert_deliveries WHERE alert_id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...); err != nil {
		return 0, err
	}
	r, err := q.exec(ctx, `DELETE FROM alerts WHERE id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}
