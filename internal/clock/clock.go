// Package clock is the time source of Ratchet's engine. Logic never calls
// time.Now directly: it takes a Clock, and tests take a Fake they advance by
// hand, so nothing waits on the wall clock.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer the engine uses.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// Real is the system clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

// Fake is a manual clock for tests. Timers fire when Advance passes them.
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
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, at: f.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.fired = true
		t.c <- f.now
		return t
	}
	f.timers = append(f.timers, t)
	return t
}

// Advance moves the clock forward and fires every timer that is due, in order.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	sort.Slice(f.timers, func(i, j int) bool { return f.timers[i].at.Before(f.timers[j].at) })
	kept := f.timers[:0]
	for _, t := range f.timers {
		if !t.at.After(f.now) {
			t.fired = true
			t.c <- t.at
			continue
		}
		kept = append(kept, t)
	}
	f.timers = kept
}

// Set moves the clock to t (forward only) and fires due timers.
func (f *Fake) Set(t time.Time) {
	if d := t.Sub(f.Now()); d > 0 {
		f.Advance(d)
	}
}

// Timers returns how many timers are waiting, so a test can tell that a
// goroutine has reached its wait before advancing the clock.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

type fakeTimer struct {
	f     *Fake
	at    time.Time
	c     chan time.Time
	fired bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	if t.fired {
		return false
	}
	for i, x := range t.f.timers {
		if x == t {
			t.f.timers = append(t.f.timers[:i], t.f.timers[i+1:]...)
			break
		}
	}
	t.fired = true
	return true
}

// Offset is the system clock plus an adjustable offset, for development
// servers whose tests must see a long backoff elapse without waiting for it
// (`ratchet serve --dev-clock`). Timers run on real time; whoever advances
// the offset must wake waiters that should re-check the time.
type Offset struct {
	mu  sync.Mutex
	off time.Duration
}

// Now returns the system time plus the offset.
func (o *Offset) Now() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return time.Now().Add(o.off)
}

// NewTimer is a real timer.
func (o *Offset) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

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
