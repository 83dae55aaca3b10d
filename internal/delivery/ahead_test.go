package delivery_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/delivery"
	"github.com/getratchet/ratchet/internal/webhook"
	"github.com/getratchet/ratchet/wire"
)

// observed is an Observer that passes each recorded attempt on a channel.
type observed chan string

func (o observed) Delivered(_, classification, outcome string, _ time.Duration) {
	o <- outcome + "/" + classification
}

// runDispatcher runs v's engine through a dispatcher of cfg until the
// test ends; it returns after Run has returned at the test's cleanup.
func runDispatcher(t *testing.T, v *env, cfg delivery.Config) *delivery.Dispatcher {
	t.Helper()
	cfg.Engine, cfg.Policy = v.e, webhook.Policy{Allow: loopback}
	d := delivery.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { d.Stop(); cancel(); <-done })
	return d
}

// TestBatchedReportsRecordEachAttemptOnce runs the dispatcher over more
// jobs than it holds at once (its concurrency in flight and as many
// claimed ahead), so claims, the claim-ahead buffer and batched reports
// all take part: the provider sees each job once, and each job has one
// attempt, succeeded.
func TestBatchedReportsRecordEachAttemptOnce(t *testing.T) {
	v := newEnv(t, loopback)
	var mu sync.Mutex
	seen := map[string]int{}
	srv := provider(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen[r.Header.Get("Ratchet-Job-Id")]++
		mu.Unlock()
		io.WriteString(w, `{"ok":true}`)
	})
	v.tool("charge", srv.URL)
	const n = 60
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = v.enqueue("charge", `{}`, "k"+strconv.Itoa(i))
	}
	obs := make(observed, n)
	runDispatcher(t, v, delivery.Config{Concurrency: 4, Observer: obs})
	for range n {
		if got := <-obs; got != "succeeded/success" {
			t.Errorf("an attempt was recorded as %s", got)
		}
	}
	for _, id := range ids {
		j, as := v.job(id)
		if j.State != wire.JobSucceeded || len(as) != 1 {
			t.Errorf("job %d: %s with %d attempts, want succeeded with 1", id, j.State, len(as))
		}
		mu.Lock()
		if c := seen[strconv.FormatInt(id, 10)]; c != 1 {
			t.Errorf("job %d: the provider saw %d requests, want 1", id, c)
		}
		mu.Unlock()
	}
}

// TestClaimedAheadJobPastItsMarginIsNotSent: with concurrency 1 the
// dispatcher claims two due jobs, sends one and holds the other in its
// claim-ahead buffer. When the first request ends after the second job
// waited longer than its lease's margin (a tenth of the lease, at most
// 2 s), the second is not sent: it is reported once, as a retryable
// attempt that does not count toward the circuit, and the provider never
// sees it. The dispatcher's clock is a fake one, moved on by hand.
func TestClaimedAheadJobPastItsMarginIsNotSent(t *testing.T) {
	v := newEnv(t, loopback)
	started := make(chan string, 2)
	release := make(chan struct{})
	srv := provider(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		started <- r.Header.Get("Ratchet-Job-Id")
		<-release
		io.WriteString(w, `{"ok":true}`)
	})
	// A 60 s lease: its margin is 2 s, and the first request's own
	// timeout (58 s) is far from any real wait here.
	if _, err := v.publish("charge", `{"url":"`+srv.URL+`"}`, 60_000); err != nil {
		t.Fatal(err)
	}
	first := v.enqueue("charge", `{}`, "a")
	second := v.enqueue("charge", `{}`, "b")
	dclk := clock.NewFake(t0)
	obs := make(observed, 2)
	runDispatcher(t, v, delivery.Config{Concurrency: 1, Observer: obs, Clock: dclk})
	if got := <-started; got != strconv.FormatInt(first, 10) {
		t.Fatalf("the provider got job %s first, want %d", got, first)
	}
	// Both jobs were claimed by then (one claim of two); the second waits.
	dclk.Advance(3 * time.Second)
	close(release)
	outcomes := []string{<-obs, <-obs}
	select {
	case id := <-started:
		t.Fatalf("the provider got job %s, want only job %d", id, first)
	default:
	}
	j, as := v.job(second)
	if j.State != wire.JobScheduled || len(as) != 1 {
		t.Fatalf("job %d: %s with %d attempts, want scheduled after 1 attempt (outcomes %v)", second, j.State, len(as), outcomes)
	}
	a := as[0]
	// worker_retry: the dispatcher's own decision to retry, which the
	// circuit never counts (a timed_out or network_timeout attempt would).
	if a.Outcome != wire.OutcomeFailed || a.Classification != "worker_retry" || !strings.Contains(a.Message, "not sent") {
		t.Errorf("attempt: %s, %s, %q; want a failed attempt, classified worker_retry, saying it was not sent", a.Outcome, a.Classification, a.Message)
	}
	if j, as := v.job(first); j.State != wire.JobSucceeded || len(as) != 1 {
		t.Errorf("job %d: %s with %d attempts, want succeeded with 1", first, j.State, len(as))
	}
}
