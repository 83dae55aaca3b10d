package engine

import "context"

// rescueService ends expired leases (Rescue, report.go): each is a failed
// attempt, timed_out, retried by the job's policy.
var rescueService = service{
	name:  "lease rescue",
	first: rescueEvery,
	every: rescueEvery,
	pass: func(ctx context.Context, e *Engine) error {
		_, err := e.Rescue(ctx)
		return err
	},
}
