package engine

import (
	"context"
	"time"
)

// schedulesService fires due schedules (FireSchedules, schedule_fire.go)
// every ScheduleInterval.
var schedulesService = service{
	name:  "firing schedules",
	first: func(c *Config) time.Duration { return c.ScheduleInterval },
	every: func(c *Config) time.Duration { return c.ScheduleInterval },
	pass: func(ctx context.Context, e *Engine) error {
		_, err := e.FireSchedules(ctx)
		return err
	},
}
