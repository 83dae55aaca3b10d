package clock_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/clock"
)

var start = time.Date(2026, 3, 4, 23, 59, 0, 0, time.UTC)

func fired(c <-chan time.Time) (time.Time, bool) {
	select {
	case t := <-c:
		return t, true
	default:
		return time.Time{}, false
	}
}

// TestFakeTimer: a timer fires once when the clock passes it, with its own
// time, and a stopped one never does.
func TestFakeTimer(t *testing.T) {
	f := clock.NewFake(start)
	a := f.NewTimer(2 * time.Second)
	b := f.NewTimer(5 * time.Second)
	if f.Timers() != 2 {
		t.Fatalf("Timers = %d, want 2", f.Timers())
	}
	f.Advance(time.Second)
	if _, ok := fired(a.C()); ok {
		t.Fatal("a 2 s timer fired after 1 s")
	}
	f.Advance(1500 * time.Millisecond)
	if at, ok := fired(a.C()); !ok || !at.Equal(start.Add(2*time.Second)) {
		t.Fatalf("2 s timer after 2.5 s: fired %v at %v", ok, at)
	}
	if a.Stop() {
		t.Error("Stop of a fired timer reported it stopped it")
	}
	if !b.Stop() {
		t.Error("Stop of a waiting timer reported it had fired")
	}
	f.Advance(time.Hour)
	if _, ok := fired(b.C()); ok {
		t.Error("a stopped timer fired")
	}
	if got := f.Now(); !got.Equal(start.Add(time.Hour + 2500*time.Millisecond)) {
		t.Errorf("Now = %v", got)
	}
	if c := f.NewTimer(0); c != nil {
		if _, ok := fired(c.C()); !ok {
			t.Error("a timer of 0 did not fire at once")
		}
	}
	if f.Timers() != 0 {
		t.Errorf("Timers = %d after all fired or stopped", f.Timers())
	}
}

// TestFakeTicker: a ticker fires every period in time order with other
// timers, holds one tick for a slow reader, restarts on Reset and stops.
func TestFakeTicker(t *testing.T) {
	f := clock.NewFake(start)
	k := f.NewTicker(time.Second)
	f.Advance(999 * time.Millisecond)
	if _, ok := fired(k.C()); ok {
		t.Fatal("a 1 s ticker fired before 1 s")
	}
	f.Advance(time.Millisecond)
	if at, ok := fired(k.C()); !ok || !at.Equal(start.Add(time.Second)) {
		t.Fatalf("tick at 1 s: %v %v", ok, at)
	}
	// Three periods pass unread: one tick waits (the first), the rest drop.
	f.Advance(3 * time.Second)
	if at, ok := fired(k.C()); !ok || !at.Equal(start.Add(2*time.Second)) {
		t.Fatalf("slow reader got %v %v, want the tick at 2 s", ok, at)
	}
	if _, ok := fired(k.C()); ok {
		t.Fatal("a slow reader got a second queued tick")
	}
	k.Reset(10 * time.Second)
	f.Advance(9 * time.Second)
	if _, ok := fired(k.C()); ok {
		t.Fatal("a ticker reset to 10 s fired after 9 s")
	}
	f.Advance(time.Second)
	if at, ok := fired(k.C()); !ok || !at.Equal(start.Add(4*time.Second+10*time.Second)) {
		t.Fatalf("after Reset: %v %v", ok, at)
	}
	k.Stop()
	f.Advance(time.Minute)
	if _, ok := fired(k.C()); ok {
		t.Fatal("a stopped ticker fired")
	}
	if f.Timers() != 0 {
		t.Errorf("Timers = %d after Stop", f.Timers())
	}
}

// TestFakeAfterFunc: the function runs once, when the clock passes it; a
// stopped one never runs.
func TestFakeAfterFunc(t *testing.T) {
	f := clock.NewFake(start)
	ran := make(chan time.Time, 2)
	f.AfterFunc(time.Minute, func() { ran <- f.Now() })
	var never atomic.Bool
	stopped := f.AfterFunc(time.Minute, func() { never.Store(true) })
	if stopped.C() != nil {
		t.Error("an AfterFunc timer has a channel")
	}
	if !stopped.Stop() {
		t.Error("Stop of a waiting AfterFunc reported it had run")
	}
	f.Advance(59 * time.Second)
	select {
	case <-ran:
		t.Fatal("ran before its time")
	default:
	}
	f.Advance(2 * time.Second)
	if at := <-ran; at.Before(start.Add(time.Minute)) {
		t.Errorf("ran at %v, before its time", at)
	}
	if never.Load() {
		t.Error("a stopped AfterFunc ran")
	}
}

// TestSinceUntil are the clock's, not the machine's.
func TestSinceUntil(t *testing.T) {
	f := clock.NewFake(start)
	f.Advance(90 * time.Second)
	if d := clock.Since(f, start); d != 90*time.Second {
		t.Errorf("Since = %v", d)
	}
	if d := clock.Until(f, start.Add(2*time.Minute)); d != 30*time.Second {
		t.Errorf("Until = %v", d)
	}
}

// TestSystemOffset: RATCHET_TEST_CLOCK_OFFSET shifts System, a bad value is
// an error naming the variable, and unset is the plain machine clock.
func TestSystemOffset(t *testing.T) {
	t.Setenv(clock.TestOffsetEnv, "")
	c, err := clock.System()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(clock.Real); !ok {
		t.Errorf("unset: System = %T, want Real", c)
	}
	t.Setenv(clock.TestOffsetEnv, "10h30m")
	c, err = clock.System()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(c.Now()); d < 10*time.Hour+29*time.Minute || d > 10*time.Hour+31*time.Minute {
		t.Errorf("with 10h30m: System runs %v ahead", d)
	}
	t.Setenv(clock.TestOffsetEnv, "soon")
	if _, err := clock.System(); err == nil || !contains(err.Error(), clock.TestOffsetEnv) || !contains(err.Error(), `"soon"`) {
		t.Errorf("bad value: err = %v, want one naming the variable and the value", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
