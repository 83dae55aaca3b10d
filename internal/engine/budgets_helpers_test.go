package engine_test

import (
	"encoding/json"
	"time"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// at is an RFC 3339 time, for the budgets' tests that move the clock to
// a named instant (a zone's midnight, a daylight-saving change).
func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// enqueueKey enqueues a job of tool for flow key key.
func (h *harness) enqueueKey(tool, key string) *store.Job {
	h.t.Helper()
	r, err := h.e.Enqueue(h.ctx, h.owner, engine.EnqueueRequest{Tool: tool, Payload: json.RawMessage(`{}`), FlowKey: key})
	if err != nil {
		h.t.Fatal(err)
	}
	return r.Job
}

// claimAndSucceed claims up to max jobs of tool and reports each a
// success, returning how many it claimed.
func (h *harness) claimAndSucceed(tool string, max int) []engine.Claimed {
	h.t.Helper()
	cs := h.claim([]string{tool}, max)
	for _, c := range cs {
		h.succeed(c)
	}
	return cs
}

// firstScheduled is the first scheduled job of the project's list whose
// tool is tool.
func (h *harness) firstScheduled(tool string) *store.Job {
	h.t.Helper()
	list, err := h.e.Jobs(h.ctx, h.owner, store.JobFilter{States: []wire.JobState{wire.JobScheduled}})
	if err != nil {
		h.t.Fatal(err)
	}
	for i := range list {
		if list[i].Tool+"@"+list[i].Version == tool {
			return &list[i]
		}
	}
	h.t.Fatalf("no scheduled job of %s", tool)
	return nil
}
