package engine

import "context"

// historyService rolls up the per-minute history (RollUpHistory,
// observe.go) once a minute has closed. It looks at RescueInterval's pace;
// a look before the next minute closes costs one atomic read.
var historyService = service{
	name:  "history roll-up",
	first: rescueEvery,
	every: rescueEvery,
	pass: func(ctx context.Context, e *Engine) error {
		e.maybeRollUp(ctx)
		return nil
	},
}
