package api

import (
	"encoding/json"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func (a *API) alertRoutes() []Route {
	return []Route{
		route(a, "POST", "/v1/alerts/sinks", "Add an alert sink: a webhook signed with Standard Webhooks (its secret is shown once), a Slack or a Microsoft Teams incoming webhook; audited", owner, 201, a.createAlertSink),
		route(a, "GET", "/v1/alerts/sinks", "List the project's alert sinks (secrets not shown) and its alert thresholds", owner, 200, a.listAlertSinks),
		route(a, "DELETE", "/v1/alerts/sinks/{name}", "Delete an alert sink and its alerts not sent yet; audited", owner, 204, a.deleteAlertSink),
		route(a, "POST", "/v1/alerts/sinks/{name}/test", "Send a test alert to the sink, through the outbox as any alert; audited", owner, 202, a.testAlert),
		route(a, "PUT", "/v1/alerts/settings", "Replace the project's alert thresholds (pause, failure rate, window and cap per endpoint and window); audited", owner, 200, a.setAlertSettings),
		route(a, "GET", "/v1/alerts", "List the project's latest alert deliveries, newest first, with their alerts and states", owner, 200, a.listAlerts, inQuery()),
	}
}

func (a *API) createAlertSink(c *call[wire.AlertSinkCreate]) (*wire.AlertSink, error) {
	k, err := a.e.CreateAlertSink(c.ctx(), c.p, c.in)
	if err != nil {
		return nil, err
	}
	v := alertSinkView(k)
	if k.Secret != "" {
		v.Secret = &k.Secret
	}
	return &v, nil
}

func (a *API) listAlertSinks(c *call[none]) (*wire.AlertSinkList, error) {
	sinks, set, err := a.e.AlertSinks(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	out := &wire.AlertSinkList{Sinks: []wire.AlertSink{}, Settings: set}
	for i := range sinks {
		out.Sinks = append(out.Sinks, alertSinkView(&sinks[i]))
	}
	return out, nil
}

func (a *API) deleteAlertSink(c *call[none]) (*none, error) {
	return nil, a.e.DeleteAlertSink(c.ctx(), c.p, c.r.PathValue("name"))
}

func (a *API) testAlert(c *call[none]) (*wire.AlertTestResult, error) {
	al, err := a.e.TestAlert(c.ctx(), c.p, c.r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	return &wire.AlertTestResult{Alert: al.ID, Sink: c.r.PathValue("name")}, nil
}

func (a *API) setAlertSettings(c *call[wire.AlertSettings]) (*wire.AlertSettings, error) {
	set, err := a.e.SetAlertSettings(c.ctx(), c.p, c.in)
	return &set, err
}

func (a *API) listAlerts(c *call[wire.AlertsQuery]) (*wire.AlertDeliveryList, error) {
	var errs field.Errors
	limit := limitParam(&errs, c.in.Limit, wire.DefaultListLimit, wire.MaxListLimit)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	ds, err := a.e.AlertDeliveries(c.ctx(), c.p, limit)
	if err != nil {
		return nil, err
	}
	out := &wire.AlertDeliveryList{Deliveries: []wire.AlertDelivery{}}
	for i := range ds {
		out.Deliveries = append(out.Deliveries, alertDeliveryView(&ds[i]))
	}
	return out, nil
}

func alertSinkView(k *store.AlertSink) wire.AlertSink {
	return wire.AlertSink{Name: k.Name, Kind: k.Kind, URL: k.URL, CreatedAt: ft(k.CreatedAt)}
}

func alertDeliveryView(d *store.AlertDelivery) wire.AlertDelivery {
	v := wire.AlertDelivery{ID: d.ID, Sink: d.Sink.Name, State: d.State, Attempts: d.Attempts, DueAt: ft(d.DueAt), LastStatus: d.LastStatus,
		LastError: d.LastError, DeliveredAt: ftOrNull(d.DeliveredAt)}
	_ = json.Unmarshal([]byte(d.Alert.Body), &v.Alert) // written by the engine from a wire.Alert
	v.Alert.ID, v.Alert.Kind = d.Alert.ID, d.Alert.Kind
	if d.Alert.Count > 0 {
		v.Alert.Count = d.Alert.Count
	}
	if v.Alert.Facts == nil {
		v.Alert.Facts = map[string]int64{}
	}
	return v
}
