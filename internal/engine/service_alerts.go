package engine

import (
	"context"
	"time"
)

// alertsService reads the endpoint event log every AlertInterval and
// raises the alerts of its new transitions (RaiseAlerts, alert_raise.go),
// so an alert is queued within a fraction of a second of its change.
var alertsService = service{
	name:  "alerts",
	first: func(c *Config) time.Duration { return c.AlertInterval },
	every: func(c *Config) time.Duration { return c.AlertInterval },
	pass: func(ctx context.Context, e *Engine) error {
		_, err := e.RaiseAlerts(ctx)
		return err
	},
}
