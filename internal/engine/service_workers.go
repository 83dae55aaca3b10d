package engine

import (
	"context"
	"time"
)

// workersService writes what this node saw of workers (FlushWorkers,
// observe.go) every second, for GET /v1/workers on every node.
var workersService = service{
	name:  "writing workers",
	first: rescueEvery,
	every: fixed(time.Second),
	pass:  func(ctx context.Context, e *Engine) error { return e.FlushWorkers(ctx) },
}
