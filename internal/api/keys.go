package api

// The keys area: who is calling, and the project's API keys.

import (
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/wire"
)

func (a *API) me(c *call[none]) (*wire.Me, error) {
	proj, err := a.e.Project(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	return &wire.Me{Project: wire.MeProject{ID: proj.ID, Name: proj.Name, Plan: proj.Plan}, Key: wire.MeKey{ID: c.p.KeyID, Scope: c.p.Scope, Tools: orEmpty(c.p.Tools)}}, nil
}

func (a *API) createKey(c *call[wire.KeyCreate]) (*wire.Key, error) {
	k, secret, err := a.e.CreateKey(c.ctx(), c.p, engine.KeySpec{Name: c.in.Name, Scope: c.in.Scope, Tools: c.in.Tools})
	if err != nil {
		return nil, err
	}
	v := keyView(k, secret)
	return &v, nil
}

func (a *API) listKeys(c *call[none]) (*wire.KeyList, error) {
	ks, err := a.e.ListKeys(c.ctx(), c.p)
	if err != nil {
		return nil, err
	}
	out := &wire.KeyList{Keys: []wire.Key{}}
	for i := range ks {
		out.Keys = append(out.Keys, keyView(&ks[i], ""))
	}
	return out, nil
}

func (a *API) revokeKey(c *call[none]) (*none, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	return nil, a.e.RevokeKey(c.ctx(), c.p, id)
}
