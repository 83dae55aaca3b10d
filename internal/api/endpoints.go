package api

// The endpoints area: create, read and update an endpoint's policy and settings.

import (
	"strconv"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func (a *API) createEndpoint(c *call[wire.EndpointCreate]) (*wire.Endpoint, error) {
	fields, err := backoff.ReadObject(c.body, "body")
	if err != nil {
		return nil, err
	}
	var errs field.Errors
	if raw, ok := fields["name"]; !ok {
		errs.Add("name", field.Missing, "required: the endpoint name, e.g. \"stripe\"")
	} else if !decodeString(raw, &c.in.Name) {
		errs.Add("name", string(raw), "must be a string")
	}
	pol, perr := DecodeEndpointPolicy(fields, false, nil, "name")
	if !errs.Merge(perr) {
		return nil, perr
	}
	if len(errs) > 0 {
		return nil, errs
	}
	ep, err := a.e.CreateEndpoint(c.ctx(), c.p, c.in.Name, pol)
	if err != nil {
		return nil, err
	}
	v := endpointView(ep, a.e.Clock().Now().UnixMilli())
	return &v, nil
}

func (a *API) listEndpoints(c *call[none]) (*wire.EndpointList, error) {
	eps, err := a.e.Endpoints(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	out := &wire.EndpointList{Endpoints: []wire.Endpoint{}}
	for i := range eps {
		out.Endpoints = append(out.Endpoints, endpointView(&eps[i], a.e.Clock().Now().UnixMilli()))
	}
	return out, nil
}

func (a *API) getEndpoint(c *call[none]) (*wire.Endpoint, error) {
	ep, use, err := a.e.EndpointUse(c.ctx(), c.p, c.r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	v := endpointView(ep, a.e.Clock().Now().UnixMilli())
	v.Budget = use
	return &v, nil
}

func (a *API) updatePolicy(c *call[wire.EndpointPolicyUpdate]) (*wire.Endpoint, error) {
	fields, err := backoff.ReadObject(c.body, "body")
	if err != nil {
		return nil, err
	}
	name := c.r.PathValue("name")
	ep, err := a.e.Endpoint(c.ctx(), c.p, name)
	if err != nil {
		return nil, err
	}
	cur, err := engine.CurrentPolicy(ep)
	if err != nil {
		return nil, err
	}
	var errs field.Errors
	if raw, ok := fields["expectedVersion"]; !ok {
		errs.Add("expectedVersion", field.Missing, "required: the version you read (currently "+strconv.FormatInt(ep.Version, 10)+")")
	} else if !decodeInt(raw, &c.in.ExpectedVersion) || c.in.ExpectedVersion < 1 {
		errs.Add("expectedVersion", string(raw), "must be the integer version you read")
	}
	pol, perr := DecodeEndpointPolicy(fields, true, &cur, "expectedVersion")
	if !errs.Merge(perr) {
		return nil, perr
	}
	if len(errs) > 0 {
		return nil, errs
	}
	ep, err = a.e.UpdateEndpointPolicy(c.ctx(), c.p, name, c.in.ExpectedVersion, pol)
	if err != nil {
		return nil, err
	}
	v := endpointView(ep, a.e.Clock().Now().UnixMilli())
	return &v, nil
}

func (a *API) endpointResult(ep *store.Endpoint, err error) (*wire.Endpoint, error) {
	if err != nil {
		return nil, err
	}
	v := endpointView(ep, a.e.Clock().Now().UnixMilli())
	return &v, nil
}
