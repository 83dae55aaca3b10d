package engine

import (
	"context"
	"sync"
	"time"
)

// Background duties are services: each is a unit in a file of its own
// (service_*.go) with its own interval, started by Run in a goroutine of
// its own and stopped with Run's context, and listed once in services. None
// rides another's timer, so a slow pass of one (a large prune, a catch-up
// of many schedules) delays no other. Every duty is safe to run on every
// node at once: each pass is a transaction that decides under the
// database's locks.
type service struct {
	name string // for logs: "<name> failed"
	// first and every are the delay before its first pass and between
	// passes, read from the engine's Config.
	first, every func(*Config) time.Duration
	// on reports whether the node runs it (nil: always).
	on func(*Config) bool
	// pass is one run of the duty.
	pass func(context.Context, *Engine) error
}

// services are the node's background duties.
var services = []service{
	rescueService,
	workersService,
	historyService,
	flowKeysService,
	retentionService,
	schedulesService,
	alertsService,
	alertChecksService,
}

// Run performs the background duties (services) until ctx ends, and
// forwards the store's wake-ups to claimers waiting on this node.
func (e *Engine) Run(ctx context.Context) {
	var wg sync.WaitGroup
	e.forwarding.Store(true)
	wg.Go(func() {
		defer e.forwarding.Store(false)
		for {
			select {
			case <-ctx.Done():
				return
			case <-e.st.Wakeups():
				e.wake()
			}
		}
	})
	e.runServices(ctx, &wg, services)
	wg.Wait()
}

// runServices starts each service of list the node runs, in wg.
func (e *Engine) runServices(ctx context.Context, wg *sync.WaitGroup, list []service) {
	for _, s := range list {
		if s.on == nil || s.on(&e.cfg) {
			wg.Go(func() { e.runService(ctx, s) })
		}
	}
}

// runService runs s's passes on its own timer until ctx ends.
func (e *Engine) runService(ctx context.Context, s service) {
	wait := s.first(&e.cfg)
	for {
		t := e.clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if err := s.pass(ctx, e); err != nil && ctx.Err() == nil {
			e.log.Warn(s.name+" failed", "err", err)
		}
		wait = s.every(&e.cfg)
	}
}

// rescueEvery is RescueInterval, the pace of the duties that look often.
func rescueEvery(c *Config) time.Duration { return c.RescueInterval }

// fixed is an interval that does not depend on the configuration.
func fixed(d time.Duration) func(*Config) time.Duration {
	return func(*Config) time.Duration { return d }
}
