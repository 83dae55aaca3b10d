package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/server"
	"github.com/getratchet/ratchet/wire"
)

// runDelivery is mode "delivery": Rounds rounds of deliveryRound, then
// (with more than one) the median of each figure and of the rounds'
// ratios, which res then holds.
func runDelivery(ctx context.Context, cfg Config, dir string, w io.Writer, res *Result) error {
	var workers, deliveries, ratios, cpuRatios []float64
	rounds := max(cfg.Rounds, 1)
	for r := range rounds {
		if rounds > 1 {
			fmt.Fprintf(w, "round %d of %d (load average %s)\n", r+1, rounds, loadAverage())
		}
		rdir := filepath.Join(dir, "round"+strconv.Itoa(r+1))
		if err := os.Mkdir(rdir, 0o700); err != nil {
			return err
		}
		if err := deliveryRound(ctx, cfg, rdir, w, res); err != nil {
			return err
		}
		workers, deliveries = append(workers, res.BurnDownRate), append(deliveries, res.DeliveryRate)
		ratios = append(ratios, res.DeliveryRate/res.BurnDownRate)
		if res.DeliveryCPU > 0 {
			cpuRatios = append(cpuRatios, float64(res.BurnDownCPU)/float64(res.DeliveryCPU))
		}
	}
	if rounds == 1 {
		return nil
	}
	res.BurnDownRate, res.DeliveryRate = median(workers), median(deliveries)
	fmt.Fprintf(w, "median of %d rounds: workers %.0f jobs/s, delivery %.0f jobs/s; ratio delivery / workers %.2f (median of the rounds' ratios, range %.2f–%.2f)",
		rounds, res.BurnDownRate, res.DeliveryRate, median(ratios), slices.Min(ratios), slices.Max(ratios))
	if len(cpuRatios) > 0 {
		fmt.Fprintf(w, "; CPU per job, workers / delivery %.2f", median(cpuRatios))
	}
	fmt.Fprintln(w)
	return nil
}

// median is the median of xs (not empty); xs is sorted in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// loadAverage is the 1-minute load average as /proc/loadavg gives it, or
// "n/a": a round run while the machine was busy reads differently.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "n/a"
}

// deliveryRound is one round of mode delivery: the worker burn-down of
// mode http, then the same N jobs delivered by the server's own dispatcher
// to a local provider that answers 200 at once, each on a fresh SQLite
// file.
func deliveryRound(ctx context.Context, cfg Config, dir string, w io.Writer, res *Result) error {
	if err := workersBurnDown(ctx, cfg, dir, res); err != nil {
		return err
	}
	fmt.Fprintf(w, "workers:    %d jobs in %s = %.0f jobs/s, CPU %s per job (mode http: C %d claimers, B %d per claim and per batch report)\n", res.Jobs, round(res.BurnDownDuration), res.BurnDownRate, perJob(res.BurnDownCPU, res.Jobs), cfg.Claimers, cfg.Batch)

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
	fmt.Fprintf(w, "delivery:   %d jobs in %s = %.0f jobs/s, CPU %s per job (dispatcher concurrency %d; provider served %d requests)\n", cfg.Jobs, round(res.DeliveryDuration), res.DeliveryRate, perJob(res.DeliveryCPU, cfg.Jobs), cfg.DeliveryConcurrency, served.Load())
	fmt.Fprintf(w, "ratio:      delivery / workers = %.2f", res.DeliveryRate/res.BurnDownRate)
	if res.DeliveryCPU > 0 {
		fmt.Fprintf(w, "; CPU per job, workers / delivery = %.2f", float64(res.BurnDownCPU)/float64(res.DeliveryCPU))
	}
	fmt.Fprintln(w)
	return nil
}

// perJob is CPU time d spread over n jobs, in microseconds ("n/a" when
// not measured).
func perJob(d time.Duration, n int) string {
	if d <= 0 || n <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f µs", float64(d.Microseconds())/float64(n))
}

// workersBurnDown is the first half of mode delivery: the burn-down of
// mode http (without the lag phase), the figure the dispatcher is held to.
func workersBurnDown(ctx context.Context, cfg Config, dir string, res *Result) error {
	hcfg := cfg
	hcfg.Mode, hcfg.SkipLag = "http", true
	hcfg.CPUProfile = "" // mode delivery profiles the delivery
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
	stopProfile, err := startProfile(cfg.CPUProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	cpu0, _ := processCPU()
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
	if cpu1, ok := processCPU(); ok {
		res.DeliveryCPU = cpu1 - cpu0
	}
	res.DeliveryRate = float64(cfg.Jobs) / res.DeliveryDuration.Seconds()
	if n := served.Load(); n != int64(cfg.Jobs) {
		return fmt.Errorf("delivery: the provider served %d requests for %d jobs", n, cfg.Jobs)
	}
	return nil
}
