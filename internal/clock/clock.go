// Package clock is the time source of Ratchet's engine. Logic never calls
// time.Now directly: it takes a Clock, and tests take a Fake they advance by
// hand, so nothing waits on the wall clock.
//
// A Clock tells the time and makes the three kinds of waits the code uses:
// one-shot timers, tickers and functions run after a delay. Since and Until
// are the clock's own, so an elapsed time on a Fake is the time advanced.
//
// Network deadlines (SetReadDeadline, SetWriteDeadline) are not the clock's:
// the kernel measures them on the machine's clock, so they stay time.Now.
package clock

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that fires every d (d > 0); a reader that
	// falls behind misses ticks rather than queueing them, as with
	// time.Ticker.
	NewTicker(d time.Duration) Ticker
	// AfterFunc runs f in its own goroutine after d. The timer's C is nil.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is the part of *time.Timer the engine uses.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// Ticker is the part of *time.Ticker the engine uses.
type Ticker interface {
	C() <-chan time.Time
	Stop()
	// Reset stops the ticker and restarts it with period d from now.
	Reset(d time.Duration)
}

// Since is the time elapsed on c since t.
func Since(c Clock, t time.Time) time.Duration { return c.Now().Sub(t) }

// Until is the time on c until t.
func Until(c Clock, t time.Time) time.Duration { return t.Sub(c.Now()) }

// TestOffsetEnv names the environment variable that shifts the system
// clock of every Ratchet process that reads it (a Go duration, e.g. "9h30m"
// or "-2h"). It exists for tests only: the test script runs the server and
// browser suites a second and a third time with every process's clock put
// at 23:30 and at 00:30 UTC, so a test that depends on the hour or the date
// fails whenever it is run, not only at that hour.
const TestOffsetEnv = "RATCHET_TEST_CLOCK_OFFSET"

// TestOffset reads TestOffsetEnv: zero when it is unset.
func TestOffset() (time.Duration, error) {
	v := os.Getenv(TestOffsetEnv)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want a Go duration such as 9h30m or -2h: %w", TestOffsetEnv, v, err)
	}
	return d, nil
}

// System is the machine's clock: Real, or Real shifted by TestOffsetEnv when
// that is set.
func System() (Clock, error) {
	off, err := TestOffset()
	if err != nil || off == 0 {
		return Real{}, err
	}
	return Shifted{Base: Real{}, By: off}, nil
}

// Real is the system clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// NewTicker wraps time.NewTicker.
func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return realTimer{time.AfterFunc(d, f)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time   { return r.t.C }
func (r realTicker) Stop()                 { r.t.Stop() }
func (r realTicker) Reset(d time.Duration) { r.t.Reset(d) }

// Fake is a manual clock for tests. Timers, tickers and functions fire when
// Advance passes them, in time order.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// NewFake starts a fake clock at t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer makes a timer that fires when the clock reaches now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	return f.add(&fakeTimer{f: f, c: make(chan time.Time, 1)}, d)
}

// NewTicker makes a ticker that fires each time the clock passes a multiple
// of d from now. It panics on d <= 0, as time.NewTicker does.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	t := &fakeTimer{f: f, c: make(chan time.Time, 1), period: d}
	f.add(t, d)
	return fakeTicker{t}
}

// AfterFunc runs fn in its own goroutine when the clock reaches now+d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	return f.add(&fakeTimer{f: f, fn: fn}, d)
}

func (f *Fake) add(t *fakeTimer, d time.Duration) *fakeTimer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t.at = f.now.Add(d)
	if d <= 0 {
		t.fire(f.now)
		if t.period == 0 {
			t.done = true
			return t
		}
	}
	f.timers = append(f.timers, t)
	return t
}

// Advance moves the clock forward and fires every timer, ticker and
// function that is due, in time order; a ticker fires once per period
// passed but, like time.Ticker, holds at most one tick for a slow reader.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	end := f.now.Add(d)
	for {
		sort.SliceStable(f.timers, func(i, j int) bool { return f.timers[i].at.Before(f.timers[j].at) })
		if len(f.timers) == 0 || f.timers[0].at.After(end) {
			break
		}
		t := f.timers[0]
		f.now = t.at
		t.fire(t.at)
		if t.period > 0 {
			t.at = t.at.Add(t.period)
			continue
		}
		t.done = true
		f.timers = f.timers[1:]
	}
	f.now = end
}

// Set moves the clock to t (forward only) and fires due timers.
func (f *Fake) Set(t time.Time) {
	if d := t.Sub(f.Now()); d > 0 {
		f.Advance(d)
	}
}

// Timers returns how many timers, tickers and functions are waiting, so a
// test can tell that a goroutine has reached its wait before advancing the
// clock.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// remove takes t off the waiting list; it reports whether t was there.
// f.mu is held.
func (f *Fake) remove(t *fakeTimer) bool {
	for i, x := range f.timers {
		if x == t {
			f.timers = append(f.timers[:i], f.timers[i+1:]...)
			return true
		}
	}
	return false
}

type fakeTimer struct {
	f      *Fake
	at     time.Time
	period time.Duration // > 0 for a ticker
	c      chan time.Time
	fn     func()
	done   bool
}

// fire delivers one tick without blocking (a full channel drops it, as a
// time.Ticker does) or starts fn. f.mu is held.
func (t *fakeTimer) fire(at time.Time) {
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.c <- at:
	default:
	}
}

func (t *fakeTimer) C() <-chan time.Time {
	if t.fn != nil {
		return nil
	}
	return t.c
}

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	return t.f.remove(t)
}

type fakeTicker struct{ t *fakeTimer }

func (k fakeTicker) C() <-chan time.Time { return k.t.c }
func (k fakeTicker) Stop()               { k.t.Stop() }

func (k fakeTicker) Reset(d time.Duration) {
	if d <= 0 {
		panic("clock: non-positive interval for Ticker.Reset")
	}
	f := k.t.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.remove(k.t)
	k.t.done = false
	k.t.period = d
	k.t.at = f.now.Add(d)
	f.timers = append(f.timers, k.t)
}

// Offset is the system clock plus an adjustable offset, for development
// servers whose tests must see a long backoff elapse without waiting for it
// (`ratchet serve --dev-clock`). Timers run on real time; whoever advances
// the offset must wake waiters that should re-check the time.
type Offset struct {
	mu  sync.Mutex
	off time.Duration
}

// NewOffset starts an Offset clock at the system time plus off.
func NewOffset(off time.Duration) *Offset { return &Offset{off: off} }

// Now returns the system time plus the offset.
func (o *Offset) Now() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return time.Now().Add(o.off)
}

// NewTimer is a real timer.
func (o *Offset) NewTimer(d time.Duration) Timer { return Real{}.NewTimer(d) }

// NewTicker is a real ticker.
func (o *Offset) NewTicker(d time.Duration) Ticker { return Real{}.NewTicker(d) }

// AfterFunc is a real timer.
func (o *Offset) AfterFunc(d time.Duration, f func()) Timer { return Real{}.AfterFunc(d, f) }

// Advance moves the clock forward by d.
func (o *Offset) Advance(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.off += d
}

// Shifted is a clock that runs a fixed offset ahead of (or, negative,
// behind) another: `ratchet serve --clock-offset` runs a node whose clock is
// wrong, so fault tests can show what clock skew between nodes does.
// Timers are the base clock's: a duration is the same on every clock.
type Shifted struct {
	Base Clock         // the clock shifted; required
	By   time.Duration // added to every reading of Base
}

// Now returns the base clock's time plus the offset.
func (s Shifted) Now() time.Time { return s.Base.Now().Add(s.By) }

// NewTimer is the base clock's timer.
func (s Shifted) NewTimer(d time.Duration) Timer { return s.Base.NewTimer(d) }

// NewTicker is the base clock's ticker.
func (s Shifted) NewTicker(d time.Duration) Ticker { return s.Base.NewTicker(d) }

// AfterFunc is the base clock's.
func (s Shifted) AfterFunc(d time.Duration, f func()) Timer { return s.Base.AfterFunc(d, f) }
