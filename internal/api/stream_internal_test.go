package api

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestStreamSlots checks both bounds of the stream counter: eight per key,
// then the node's limit whatever the key, and that a released slot is
// free again (once, however often release is called).
func TestStreamSlots(t *testing.T) {
	s := newStreams()
	s.perNode = 20
	var releases []func()
	for i := range MaxStreamsPerKey {
		r, err := s.acquire(1)
		if err != nil {
			t.Fatalf("stream %d of key 1: %v", i+1, err)
		}
		releases = append(releases, r)
	}
	var te *transportError
	if _, err := s.acquire(1); !errors.As(err, &te) || te.status != http.StatusTooManyRequests {
		t.Fatalf("the ninth stream of key 1: %v", err)
	}
	for key := int64(2); s.total < s.perNode; key++ {
		if _, err := s.acquire(key); err != nil {
			t.Fatalf("key %d below the node limit: %v", key, err)
		}
	}
	if _, err := s.acquire(999); !errors.As(err, &te) || te.status != http.StatusTooManyRequests {
		t.Fatalf("a stream beyond the node limit: %v", err)
	}
	releases[0]()
	releases[0]()
	if s.total != s.perNode-1 || s.perKey[1] != MaxStreamsPerKey-1 {
		t.Fatalf("after one release (twice): total %d, key 1 holds %d", s.total, s.perKey[1])
	}
	if _, err := s.acquire(1); err != nil {
		t.Fatalf("a released slot: %v", err)
	}
}

// TestSharedOverview: overview streams of one project share one read per
// interval (concurrent streams wait for the one reader) unless an operator
// wrote since, other projects
// read their own, a failed read is not kept, and a project nobody reads
// for a minute is forgotten.
func TestSharedOverview(t *testing.T) {
	s := newStreams()
	now := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	var reads atomic.Int64
	read := func(tag string) func() (string, any, []byte, error) {
		return func() (string, any, []byte, error) {
			n := reads.Add(1)
			time.Sleep(10 * time.Millisecond) // the others arrive while it reads
			return "overview", tag, []byte(tag + strconv.FormatInt(n, 10)), nil
		}
	}
	var wg sync.WaitGroup
	got := make([]string, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, same, err := s.sharedOverview(1, 0, read("p1-"))
			if err != nil {
				t.Error(err)
			}
			got[i] = string(same)
		}()
	}
	wg.Wait()
	if reads.Load() != 1 {
		t.Fatalf("20 streams of one project read %d times, want 1", reads.Load())
	}
	for _, g := range got {
		if g != "p1-1" {
			t.Fatalf("a stream got %q, want the shared read p1-1", g)
		}
	}
	if _, _, same, _ := s.sharedOverview(2, 0, read("p2-")); string(same) != "p2-2" {
		t.Fatalf("another project got %q, want its own read", same)
	}
	// An operator wrote (the count moved): the next read is new at once,
	// not up to an interval late, and is then shared again.
	if _, _, same, _ := s.sharedOverview(1, 1, read("p1-")); string(same) != "p1-3" {
		t.Fatalf("after an operator write got %q, want a new read", same)
	}
	if _, _, same, _ := s.sharedOverview(1, 1, read("p1-")); string(same) != "p1-3" {
		t.Fatalf("with no write since got %q, want the shared read p1-3", same)
	}
	// A stream that read the count before another's newer read still gets
	// the newer read: it holds every write the older count did.
	if _, _, same, _ := s.sharedOverview(1, 0, read("p1-")); string(same) != "p1-3" {
		t.Fatalf("an older count got %q, want the newer shared read p1-3", same)
	}
	now = now.Add(s.interval) // the next tick: read again
	if _, _, same, _ := s.sharedOverview(1, 1, read("p1-")); string(same) != "p1-4" {
		t.Fatalf("after an interval got %q, want a new read", same)
	}
	boom := errors.New("database down")
	now = now.Add(s.interval)
	if _, _, _, err := s.sharedOverview(1, 0, func() (string, any, []byte, error) { return "", nil, nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("a failed read: %v", err)
	}
	if _, _, same, _ := s.sharedOverview(1, 0, read("p1-")); string(same) != "p1-5" {
		t.Fatalf("after a failed read got %q, want a new read (the failure is not kept)", same)
	}
	now = now.Add(2 * time.Minute)
	s.sharedOverview(3, 0, read("p3-"))
	if _, ok := s.overviews[2]; ok || len(s.overviews) != 1 {
		t.Fatalf("projects left after a quiet minute: %v", slices.Collect(maps.Keys(s.overviews)))
	}
}
