package api

import (
	"errors"
	"net/http"
	"testing"
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
