// Package engine is Ratchet's job lifecycle: enqueue, claim, heartbeat,
// report, rescue, cancel and replay, with the gates (due time, circuit,
// maximum concurrency, rate limit, allowlist) and the circuit breaker. It
// owns the clock and the randomness; the store only persists, inside the
// transactions the engine opens.
package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/webhook"
	"github.com/getratchet/ratchet/wire"
)

// Config builds an Engine. Zero values take the documented defaults.
type Config struct {
	Store  store.Store
	Clock  clock.Clock    // default: clock.System (the machine's, or shifted by RATCHET_TEST_CLOCK_OFFSET in tests)
	Rand   func() float64 // the sample u for jitter, in [0, 1]; default: math/rand/v2
	Logger *slog.Logger   // default: discard

	RescueInterval time.Duration // how often expired leases are looked for; default 250 ms
	Retention      time.Duration // finished jobs older than this are pruned; default 7 days; negative keeps them forever
	PruneInterval  time.Duration // default 1 minute
	// HistoryRetention is how long per-minute roll-ups are kept (GET
	// /v1/history); default 48 hours.
	HistoryRetention time.Duration
	// ScheduleInterval is how often due schedules are looked for;
	// default 1 s.
	ScheduleInterval time.Duration
	MaxWait          time.Duration // longest claim long-poll; default 30 s
	MaxClaim         int           // most jobs one claim may take; default 1000
	// SearchWindow is how many jobs (newest first) a text search counts
	// or acts on in bulk; default wire.SearchWindow. Tests lower it.
	SearchWindow int

	// DatabaseClock takes the time of every transaction that decides on
	// time from the database's clock (store.Queries.Now) instead of Clock:
	// claims (the due time, the gates, the lease), heartbeats, reports (the
	// next due time, the circuit), lease rescue, enqueues, cancels,
	// replays and what holds a job. Nodes that share a database then agree
	// on time however far their own clocks drift apart: a node whose clock
	// runs ahead would otherwise rescue leases before they end and count
	// the rate limit's window from the future. ratchet serve sets it on
	// PostgreSQL. Clock still runs the timers (long polls, the rescue
	// period) and stamps what only people read (when a key, tool, run or
	// endpoint was made). Tests on a fake clock leave it off.
	DatabaseClock bool

	// Observer receives counts for metrics; nil for none.
	Observer Observer

	// DeliveryPolicy is where HTTP deliveries may connect; publish refuses
	// a delivery URL whose host is an address it refuses.
	DeliveryPolicy webhook.Policy
}

// Observer is told about events worth counting. The HTTP server turns them
// into Prometheus metrics; the engine stays free of that dependency.
type Observer interface {
	Claimed(endpoint string, n int, lags []time.Duration)
	Reported(classification, outcome string)
	GateHeld(gate wire.Gate)
	// QuotaIgnored counts a provider's rate-limit header value that was
	// refused (one of classify.QuotaIgnoreReasons).
	QuotaIgnored(reason string)
}

// Engine runs the lifecycle. It is safe for concurrent use.
type Engine struct {
	st     store.Store
	clk    clock.Clock
	rnd    func() float64
	log    *slog.Logger
	cfg    Config
	obs    Observer
	wakeMu sync.Mutex
	wakeCh chan struct{}

	schemas     sync.Map // tool id → *compiledSchema (tools are immutable)
	toolIDCache sync.Map // toolRef → tool id, of published tools (never deleted or changed)
	// optimisticMiss holds, per endpoint id, when an optimistic claim last
	// had to be taken back (unix ms); for a while after, that endpoint's
	// claims go straight to the locked path.
	optimisticMiss sync.Map
	// delivery is what the engine knows of HTTP-delivered tools.
	delivery deliveryTools

	// forwarding is true while Run relays the store's wake-ups.
	forwarding atomic.Bool

	// workers holds what this node saw of workers since its last flush.
	workers workerSeenMap
	// nextRollUp is when (unix ms) a minute may next have closed for
	// RollUpHistory; until then Run does not look.
	nextRollUp atomic.Int64
}

// New checks the configuration and builds an engine.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil {
		return nil, errors.New("engine: Store is required")
	}
	if cfg.Clock == nil {
		clk, err := clock.System()
		if err != nil {
			return nil, err
		}
		cfg.Clock = clk
	}
	if cfg.Rand == nil {
		cfg.Rand = mrand.Float64
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.SearchWindow <= 0 {
		cfg.SearchWindow = wire.SearchWindow
	}
	if cfg.RescueInterval <= 0 {
		cfg.RescueInterval = 250 * time.Millisecond
	}
	if cfg.Retention == 0 {
		cfg.Retention = 7 * 24 * time.Hour
	}
	if cfg.PruneInterval <= 0 {
		cfg.PruneInterval = time.Minute
	}
	if cfg.HistoryRetention <= 0 {
		cfg.HistoryRetention = 48 * time.Hour
	}
	if cfg.ScheduleInterval <= 0 {
		cfg.ScheduleInterval = time.Second
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 30 * time.Second
	}
	if cfg.MaxClaim <= 0 {
		cfg.MaxClaim = 1000
	}
	return &Engine{st: cfg.Store, clk: cfg.Clock, rnd: cfg.Rand, log: cfg.Logger, cfg: cfg, obs: cfg.Observer, wakeCh: make(chan struct{})}, nil
}

// MaxClockAdvanceMs is the most one AdvanceClock moves the clock: 30 days.
const MaxClockAdvanceMs = 30 * 24 * 60 * 60 * 1000

// ClockAdvanceAllowed says what AdvanceClock takes, for field errors.
const ClockAdvanceAllowed = "must be from 1 through 2592000000 milliseconds (30 days)"

// AdvanceClock moves a development clock (clock.Offset) forward and wakes
// waiting claimers so they look at the new time. Other clocks refuse.
func (e *Engine) AdvanceClock(ctx context.Context, d time.Duration) error {
	o, ok := e.clk.(*clock.Offset)
	if !ok {
		return forbidden("the clock can only be advanced on a server started with --dev-clock")
	}
	if d < time.Millisecond || d > MaxClockAdvanceMs*time.Millisecond {
		return invalidField("advanceMs", strconv.FormatInt(d.Milliseconds(), 10), ClockAdvanceAllowed)
	}
	o.Advance(d)
	e.signal(ctx)
	return nil
}

// Store returns the engine's store.
func (e *Engine) Store() store.Store { return e.st }

// Clock returns the engine's clock.
func (e *Engine) Clock() clock.Clock { return e.clk }

func (e *Engine) nowMs() int64 { return e.clk.Now().UnixMilli() }

// txNow is the time of a decision made in transaction q: the database's
// clock, read at this moment, with DatabaseClock; else Clock's. Each call
// reads the clock again, so a claim that waited for a row lock is stamped
// after the wait.
func (e *Engine) txNow(ctx context.Context, q store.Queries) (int64, error) {
	if !e.cfg.DatabaseClock {
		return e.nowMs(), nil
	}
	return q.Now(ctx)
}

// wake releases every claimer waiting for work so it looks again.
func (e *Engine) wake() {
	e.wakeMu.Lock()
	close(e.wakeCh)
	e.wakeCh = make(chan struct{})
	e.wakeMu.Unlock()
}

func (e *Engine) waitCh() <-chan struct{} {
	e.wakeMu.Lock()
	defer e.wakeMu.Unlock()
	return e.wakeCh
}

// signal tells waiting claimers on this node and, through the store, on
// every other node that something changed.
//
// Both drivers deliver a Notify to this node's Wakeups too, so while Run
// forwards those, waking locally as well would make every waiting claimer
// look twice (two empty claim transactions on SQLite's single writer).
func (e *Engine) signal(ctx context.Context) {
	if !e.forwarding.Load() {
		e.wake()
	}
	if err := e.st.Notify(ctx); err != nil {
		e.log.Debug("notify failed", "err", err)
	}
}

// Kind classifies an engine error for the API's status mapping.
type Kind int

// Error kinds.
const (
	KindInvalid         Kind = iota + 1 // 400
	KindUnauthenticated                 // 401
	KindForbidden                       // 403
	KindNotFound                        // 404
	KindConflict                        // 409
	KindUnavailable                     // 503
)

// Error is an error a client can act on.
type Error struct {
	Kind    Kind
	Message string
	Fields  field.Errors // field-level problems, for KindInvalid
	Current any          // the current state, e.g. an endpoint after a stale version
}

// Unwrap exposes the field problems, so field.As finds them in an engine
// error as in any other.
func (e *Error) Unwrap() error { return e.Fields.Err() }

// Error is the message, followed by the field problems when there are any.
func (e *Error) Error() string {
	if len(e.Fields) > 0 {
		return e.Message + ": " + e.Fields.Error()
	}
	return e.Message
}

func invalid(fields field.Errors) error {
	return &Error{Kind: KindInvalid, Message: "invalid request", Fields: fields}
}

func invalidField(name, value, allowed string) error {
	return invalid(field.New(name, value, allowed))
}

func notFound(format string, args ...any) error {
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf(format, args...)}
}

func conflict(format string, args ...any) error {
	return &Error{Kind: KindConflict, Message: fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...any) error {
	return &Error{Kind: KindForbidden, Message: fmt.Sprintf(format, args...)}
}

// storeErr maps store sentinels that reach the client.
func storeErr(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return notFound("%s not found", what)
	case errors.Is(err, store.ErrStorageFull):
		return err // the API says so with its own code
	case errors.Is(err, store.ErrUnavailable):
		return &Error{Kind: KindUnavailable, Message: "the database is unavailable; try again"}
	}
	var ee *Error
	if errors.As(err, &ee) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

func token() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
