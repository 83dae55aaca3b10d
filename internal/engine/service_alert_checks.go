package engine

import (
	"context"
	"time"
)

// alertChecksService raises, every AlertCheckInterval, the alerts no
// single event marks: long pauses, exhausted jobs and failure rates
// (CheckAlerts, alert_checks.go).
var alertChecksService = service{
	name:  "alert checks",
	first: func(c *Config) time.Duration { return c.AlertCheckInterval },
	every: func(c *Config) time.Duration { return c.AlertCheckInterval },
	pass:  func(ctx context.Context, e *Engine) error { return e.CheckAlerts(ctx) },
}
