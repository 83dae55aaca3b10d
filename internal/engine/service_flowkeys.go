package engine

import "context"

// flowKeysService gives every key of a keyed endpoint with jobs scheduled
// a row in flow_keys (SweepFlowKeys, flowclaim.go), every
// flowSweepInterval.
var flowKeysService = service{
	name:  "flow key sweep",
	first: fixed(flowSweepInterval),
	every: fixed(flowSweepInterval),
	pass:  func(ctx context.Context, e *Engine) error { return e.SweepFlowKeys(ctx) },
}
