package engine

import (
	"context"
	"strconv"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// RunNow makes a scheduled job due now: its due time becomes the
// transaction's time, its attempt count stays, and the gates still apply (a
// paused endpoint or an open circuit still holds it). A job in any other
// state is a conflict naming the state.
func (e *Engine) RunNow(ctx context.Context, p *Principal, id int64) (*store.Job, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	var j *store.Job
	err := e.st.Tx(ctx, func(q store.Queries) (err error) {
		if j, err = q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: p.ProjectID, ID: id}); err != nil {
			return err
		}
		if j.State != wire.JobScheduled {
			return conflict("job %d is %s; only a scheduled job can be run now", id, j.State)
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		if j.DueAt > now {
			j.DueAt = now
		}
		j.UpdatedAt = now
		return q.JobUpdate(ctx, j)
	})
	if err != nil {
		return nil, storeErr(err, "job "+strconv.FormatInt(id, 10))
	}
	e.signal(ctx)
	return j, nil
}
