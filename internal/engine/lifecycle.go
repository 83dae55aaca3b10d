package engine

import (
	"fmt"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// moveJob is the one place the engine changes a job's state: it applies
// event by the transition table wire.JobTransitions, stamps the change and,
// when the new state is final, the finish time. An event the table does not
// allow from the job's state is a bug in the caller, reported as an error
// rather than written.
//
// The claim (scheduled → running) is the one transition made in SQL, by
// Queries.JobsClaimDue and JobsClaim, which only select scheduled rows; the
// conformance suite checks that they move nothing else.
func moveJob(j *store.Job, event wire.JobEvent, nowMs int64) error {
	to, ok := wire.NextJobState(j.State, event)
	if !ok {
		return fmt.Errorf("job %d is %s: the state machine has no %q transition from it", j.ID, j.State, event)
	}
	j.State, j.UpdatedAt = to, nowMs
	if to.Finished() {
		j.FinishedAt = nowMs
	}
	return nil
}
