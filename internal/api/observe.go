package api

// The observe area: the overview, the workers seen and the per-minute history.

import (
	"strconv"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/wire"
)

func (a *API) overview(c *call[none]) (*wire.Overview, error) {
	ovs, err := a.e.Overview(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	out := &wire.Overview{Now: ft(a.e.Clock().Now().UnixMilli()), Endpoints: []wire.OverviewEndpoint{}}
	for _, o := range ovs {
		v := wire.OverviewEndpoint{Endpoint: endpointView(o.Endpoint, a.e.Clock().Now().UnixMilli()), Running: o.Running, ClaimsInWindow: o.ClaimsInWindow, Scheduled: o.Scheduled,
			Due: o.Due, Outcomes5m: orEmptyMap(o.Outcomes5m), Outcomes1h: orEmptyMap(o.Outcomes1h)}
		if o.HeldBy != "" {
			h := &wire.Hold{Gate: o.HeldBy, Detail: o.HeldDetail}
			if o.HeldUntil > 0 {
				h.Until = ft(o.HeldUntil)
			}
			v.HeldBy = h
		}
		out.Endpoints = append(out.Endpoints, v)
	}
	return out, nil
}

func (a *API) workers(c *call[none]) (*wire.WorkerList, error) {
	ws, err := a.e.Workers(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	out := &wire.WorkerList{Workers: []wire.WorkerStatus{}}
	for i := range ws {
		out.Workers = append(out.Workers, workerView(&ws[i]))
	}
	return out, nil
}

func (a *API) history(c *call[wire.HistoryQuery]) (*wire.History, error) {
	hours := wire.HistoryDefaultHours
	if c.in.Hours != "" {
		n, err := strconv.Atoi(c.in.Hours)
		if err != nil {
			return nil, field.New("hours", strconv.Quote(c.in.Hours), "must be an integer from 1 through "+strconv.Itoa(wire.HistoryMaxHours))
		}
		hours = n
	}
	res, err := a.e.History(c.ctx(), c.p, c.in.Endpoint, hours)
	if err != nil {
		return nil, err
	}
	return historyView(res), nil
}
