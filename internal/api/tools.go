package api

// The tools area: publish and read tool contracts.

import (
	"github.com/getratchet/ratchet/wire"
)

func (a *API) publishTool(c *call[wire.ToolPublish]) (*wire.Tool, error) {
	spec, err := DecodeToolSpec(c.body)
	if err != nil {
		return nil, err
	}
	t, err := a.e.PublishTool(c.ctx(), c.p, spec)
	if err != nil {
		return nil, err
	}
	v := toolView(t, spec.Endpoint)
	if v.Delivery != nil {
		v.Delivery.Secret = t.DeliverySecret // shown once, in this answer
	}
	return &v, nil
}

func (a *API) listTools(c *call[none]) (*wire.ToolList, error) {
	ts, err := a.e.Tools(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	eps, err := a.e.Endpoints(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	names := map[int64]string{}
	for _, ep := range eps {
		names[ep.ID] = ep.Name
	}
	out := &wire.ToolList{Tools: []wire.Tool{}}
	for i := range ts {
		out.Tools = append(out.Tools, toolView(&ts[i], names[ts[i].EndpointID]))
	}
	return out, nil
}

func (a *API) getTool(c *call[none]) (*wire.Tool, error) {
	t, ep, err := a.e.Tool(c.ctx(), c.p, c.r.PathValue("name"), c.r.PathValue("version"))
	if err != nil {
		return nil, err
	}
	v := toolView(t, ep.Name)
	return &v, nil
}
