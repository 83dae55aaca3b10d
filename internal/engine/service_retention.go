package engine

import (
	"context"
	"time"
)

// retentionService prunes finished jobs older than Retention (Prune,
// report.go) every PruneInterval, the first time soon after start. A
// negative Retention keeps everything and the service does not run.
var retentionService = service{
	name:  "retention prune",
	first: rescueEvery,
	every: func(c *Config) time.Duration { return c.PruneInterval },
	on:    func(c *Config) bool { return c.Retention > 0 },
	pass: func(ctx context.Context, e *Engine) error {
		n, err := e.Prune(ctx)
		if err == nil && n > 0 {
			e.log.Info("pruned finished jobs", "count", n)
		}
		return err
	},
}
