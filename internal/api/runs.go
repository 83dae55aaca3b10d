package api

// The runs area: group steps into runs.

import (
	"strconv"

	"github.com/getratchet/ratchet/wire"
)

func (a *API) startRun(c *call[wire.RunCreate]) (*wire.Run, error) {
	run, err := a.e.StartRun(c.ctx(), c.p, c.in.Name)
	if err != nil {
		return nil, err
	}
	v := runView(run, nil)
	return &v, nil
}

func (a *API) getRun(c *call[none]) (*wire.Run, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	run, steps, err := a.e.GetRun(c.ctx(), c.p, id, 500)
	if err != nil {
		return nil, err
	}
	v := runView(run, steps)
	return &v, nil
}

func (a *API) listRuns(c *call[wire.RunQuery]) (*wire.RunList, error) {
	after, limit, err := pageParams(c.in.Cursor, c.in.Limit)
	if err != nil {
		return nil, err
	}
	runs, err := a.e.ListRuns(c.ctx(), c.p, after, limit)
	if err != nil {
		return nil, err
	}
	out := &wire.RunList{Runs: []wire.Run{}}
	for i := range runs {
		out.Runs = append(out.Runs, runView(&runs[i], nil))
	}
	if len(runs) == limit {
		next := strconv.FormatInt(runs[len(runs)-1].ID, 10)
		out.NextCursor = &next
	}
	return out, nil
}

func (a *API) finishRun(c *call[none]) (*wire.Run, error) {
	id, err := pathInt(c.r, "id")
	if err != nil {
		return nil, err
	}
	run, err := a.e.FinishRun(c.ctx(), c.p, id)
	if err != nil {
		return nil, err
	}
	v := runView(run, nil)
	return &v, nil
}
