package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/server"
	"github.com/getratchet/ratchet/wire"
)

// runDelivery is mode "delivery": in one run, the worker burn-down of mode
// http, then the same N jobs delivered by the server's own dispatcher to a
// local provider that answers 200 at once, each on a fresh SQLite file.
func runDelivery(ctx context.Context, cfg Config, dir string, w io.Writer, res *Result) error {
	if err := workersBurnDown(ctx, cfg, dir, res); err != nil {
		return err
	}
	fmt.Fprintf(w, "workers:    %d jobs in %s = %.0f jobs/s (mode http: C %d claimers, B %d per claim and per batch report)\n", res.Jobs, round(res.BurnDownDuration), res.BurnDownRate, cfg.Claimers, cfg.Batch)

	var served atomic.Int64
	pln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	provider := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		served.Add(1)
		_, _ = io.WriteString(w, `{"ok":true}`)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = provider.Serve(pln) }()
	defer provider.Close()

	key := engine.NewSecret()
	base, stop, done, err := startServer(server.Config{Addr: "127.0.0.1:0", DatabaseURL: filepath.Join(dir, "delivery.db"), BootstrapKey: key,
		SQLiteSynchronous: cfg.Synchronous, Retention: -1, DevClock: true, DeliveryConcurrency: cfg.DeliveryConcurrency,
		DeliveryAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, "delivery bench server")
	defer func() { stop(); <-done }()
	if err != nil {
		return err
	}
	c := client.New(base, key)
	if err := enqueueForDelivery(ctx, c, cfg, "http://"+pln.Addr().String()+"/deliver"); err != nil {
		return err
	}
	if err := awaitDelivery(ctx, c, cfg, &served, res); err != nil {
		return err
	}
	fmt.Fprintf(w, "delivery:   %d jobs in %s = %.0f jobs/s (dispatcher concurrency %d; provider served %d requests)\n", cfg.Jobs, round(res.DeliveryDuration), res.DeliveryRate, cfg.DeliveryConcurrency, served.Load())
	fmt.Fprintf(w, "ratio:      delivery / workers = %.2f\n", res.DeliveryRate/res.BurnDownRate)
	return nil
}

// workersBurnDown is the first half of mode delivery: the burn-down of
// mode http (without the lag phase), the figure the dispatcher is held to.
func workersBurnDown(ctx context.Context, cfg Config, dir string, res *Result) error {
	hcfg := cfg
	hcfg.Mode, hcfg.SkipLag = "http", true
	t, err := newHTTPTarget(ctx, hcfg, dir)
	if err != nil {
		return err
	}
	defer t.close()
	return burnDown(ctx, hcfg, t, res)
}

// enqueueForDelivery creates the endpoint and the tool that delivers to
// deliverURL, and enqueues the N jobs due an hour ahead on the server's
// development clock, so none is delivered while they are enqueued.
func enqueueForDelivery(ctx context.Context, c *client.Client, cfg Config, deliverURL string) error {
	if _, err := c.CreateEndpoint(ctx, "bench", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, DefaultTimeoutMs: 300_000, MaxConcurrent: 100_000}); err != nil {
		return fmt.Errorf("create the delivery bench endpoint: %w", err)
	}
	if _, err := c.PublishTool(ctx, client.ToolSpec{Name: "bench", Version: "1", Endpoint: "bench",
		Delivery: &wire.DeliveryTarget{URL: deliverURL}}); err != nil {
		return fmt.Errorf("publish the delivery bench tool: %w", err)
	}
	runAt := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	for left := cfg.Jobs; left > 0; {
		n := min(left, cfg.EnqueueBatch)
		rs := make([]client.EnqueueRequest, n)
		for i := range rs {
			rs[i] = client.EnqueueRequest{Tool: "bench@1", Payload: json.RawMessage(`{}`), RunAt: runAt}
		}
		if _, err := c.EnqueueBatch(ctx, rs); err != nil {
			return fmt.Errorf("delivery enqueue: %w", err)
		}
		left -= n
	}
	return nil
}

// awaitDelivery moves the server's clock on, so every job is due at once
// as in the worker burn-down, and times until all have succeeded and the
// provider (whose count is served) answered each exactly once.
func awaitDelivery(ctx context.Context, c *client.Client, cfg Config, served *atomic.Int64, res *Result) error {
	start := time.Now()
	if err := c.AdvanceClock(ctx, time.Hour+time.Second); err != nil {
		return err
	}
	deadline := start.Add(10 * time.Minute)
	// Wait for the provider's count first: counting succeeded jobs in the
	// database every few milliseconds would compete with the deliveries.
	for served.Load() < int64(cfg.Jobs) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for {
		n, err := c.CountJobs(ctx, client.JobFilter{States: []wire.JobState{wire.JobSucceeded}})
		if err != nil {
			return err
		}
		if n == int64(cfg.Jobs) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("delivery: %d of %d jobs succeeded after 10 minutes", n, cfg.Jobs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	res.DeliveryDuration = time.Since(start)
	res.DeliveryRate = float64(cfg.Jobs) / res.DeliveryDuration.Seconds()
	if n := served.Load(); n != int64(cfg.Jobs) {
		return fmt.Errorf("delivery: the provider served %d requests for %d jobs", n, cfg.Jobs)
	}
	return nil
}
