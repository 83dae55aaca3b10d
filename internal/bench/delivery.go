package bench

import (
	"bytes"
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
	var workers, calling, deliveries, ratios, callingRatios, cpuRatios []float64
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
		calling = append(calling, res.CallingRate)
		ratios = append(ratios, res.DeliveryRate/res.BurnDownRate)
		callingRatios = append(callingRatios, res.DeliveryRate/res.CallingRate)
		if res.DeliveryCPU > 0 {
			cpuRatios = append(cpuRatios, float64(res.CallingCPU)/float64(res.DeliveryCPU))
		}
	}
	if rounds == 1 {
		return nil
	}
	res.BurnDownRate, res.CallingRate, res.DeliveryRate = median(workers), median(calling), median(deliveries)
	fmt.Fprintf(w, "median of %d rounds: workers %.0f jobs/s, calling workers %.0f jobs/s, delivery %.0f jobs/s; "+
		"ratio delivery / calling workers %.2f (median of the rounds' ratios, range %.2f–%.2f); ratio delivery / workers %.2f (range %.2f–%.2f)",
		rounds, res.BurnDownRate, res.CallingRate, res.DeliveryRate, median(callingRatios), slices.Min(callingRatios), slices.Max(callingRatios),
		median(ratios), slices.Min(ratios), slices.Max(ratios))
	if len(cpuRatios) > 0 {
		fmt.Fprintf(w, "; CPU per job, calling workers / delivery %.2f", median(cpuRatios))
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
// mode http (no-op handlers); the same N jobs run by the Go SDK's Worker
// whose handler makes the call delivery makes (POST the payload to a
// local provider that answers 200 at once, report its answer); and the
// same N jobs delivered by the server's own dispatcher to that provider.
// Each phase runs on a fresh SQLite file.
func deliveryRound(ctx context.Context, cfg Config, dir string, w io.Writer, res *Result) error {
	if err := workersBurnDown(ctx, cfg, dir, res); err != nil {
		return err
	}
	fmt.Fprintf(w, "workers:    %d jobs in %s = %.0f jobs/s, CPU %s per job (mode http: C %d claimers, B %d per claim and per batch report)\n", res.Jobs, round(res.BurnDownDuration), res.BurnDownRate, perJob(res.BurnDownCPU, res.Jobs), cfg.Claimers, cfg.Batch)

	var served atomic.Int64
	providerURL, closeProvider, err := startProvider(&served)
	if err != nil {
		return err
	}
	defer closeProvider()
	if err := callingWorkers(ctx, cfg, dir, providerURL, &served, res); err != nil {
		return err
	}
	fmt.Fprintf(w, "calling:    %d jobs in %s = %.0f jobs/s, CPU %s per job (the Go SDK's Worker, concurrency %d; each handler POSTs the payload to the provider and returns CheckResponse; provider served %d requests)\n",
		cfg.Jobs, round(res.CallingDuration), res.CallingRate, perJob(res.CallingCPU, cfg.Jobs), cfg.DeliveryConcurrency, served.Load())

	served.Store(0)
	if err := delivering(ctx, cfg, dir, providerURL, &served, res); err != nil {
		return err
	}
	fmt.Fprintf(w, "delivery:   %d jobs in %s = %.0f jobs/s, CPU %s per job (dispatcher concurrency %d; provider served %d requests)\n", cfg.Jobs, round(res.DeliveryDuration), res.DeliveryRate, perJob(res.DeliveryCPU, cfg.Jobs), cfg.DeliveryConcurrency, served.Load())
	fmt.Fprintf(w, "ratio:      delivery / calling workers = %.2f; delivery / workers = %.2f", res.DeliveryRate/res.CallingRate, res.DeliveryRate/res.BurnDownRate)
	if res.DeliveryCPU > 0 && res.CallingCPU > 0 {
		fmt.Fprintf(w, "; CPU per job, calling workers / delivery = %.2f", float64(res.CallingCPU)/float64(res.DeliveryCPU))
	}
	fmt.Fprintln(w)
	return nil
}

// startProvider serves the local provider of mode delivery on loopback: it
// reads each request, counts it in served and answers 200 at once.
func startProvider(served *atomic.Int64) (url string, closeIt func(), err error) {
	pln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	provider := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		served.Add(1)
		_, _ = io.WriteString(w, `{"ok":true}`)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = provider.Serve(pln) }()
	return "http://" + pln.Addr().String() + "/deliver", func() { provider.Close() }, nil
}

// delivering is the last phase of mode delivery: the N jobs delivered by
// the server's own dispatcher to the provider.
func delivering(ctx context.Context, cfg Config, dir, providerURL string, served *atomic.Int64, res *Result) error {
	key := engine.NewSecret()
	base, stop, done, err := startServer(server.Config{Addr: "127.0.0.1:0", DatabaseURL: filepath.Join(dir, "delivery.db"), BootstrapKey: key,
		SQLiteSynchronous: cfg.Synchronous, Retention: -1, DevClock: true, DeliveryConcurrency: cfg.DeliveryConcurrency,
		DeliveryAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, "delivery bench server")
	defer func() { stop(); <-done }()
	if err != nil {
		return err
	}
	c := client.New(base, key)
	if err := setUpDueLater(ctx, c, cfg, &wire.DeliveryTarget{URL: providerURL}); err != nil {
		return err
	}
	stopProfile, err := startProfile(cfg.CPUProfile)
	if err != nil {
		return err
	}
	res.DeliveryDuration, res.DeliveryCPU, err = awaitSucceeded(ctx, c, cfg.Jobs, served, "delivery")
	stopProfile()
	if err != nil {
		return err
	}
	res.DeliveryRate = float64(cfg.Jobs) / res.DeliveryDuration.Seconds()
	return nil
}

// callingWorkers is the second phase of mode delivery: what a team that
// does not use delivery runs instead. The Go SDK's Worker, with the
// dispatcher's concurrency, claims the N jobs and runs a handler that
// makes delivery's call (POST the payload with its idempotency key to the
// provider, over one keep-alive client) and returns CheckResponse of the
// answer, which the Worker reports in batches.
func callingWorkers(ctx context.Context, cfg Config, dir, providerURL string, served *atomic.Int64, res *Result) error {
	key := engine.NewSecret()
	base, stop, done, err := startServer(server.Config{Addr: "127.0.0.1:0", DatabaseURL: filepath.Join(dir, "calling.db"), BootstrapKey: key,
		SQLiteSynchronous: cfg.Synchronous, Retention: -1, DevClock: true}, "calling-workers bench server")
	defer func() { stop(); <-done }()
	if err != nil {
		return err
	}
	c := client.New(base, key)
	if err := setUpDueLater(ctx, c, cfg, nil); err != nil {
		return err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = cfg.DeliveryConcurrency
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	var workerErr atomic.Pointer[error]
	wk := client.NewWorker(c, client.WorkerOptions{ID: "bench-calling", Concurrency: cfg.DeliveryConcurrency, Wait: time.Second,
		OnError: func(err error) { workerErr.CompareAndSwap(nil, &err) }})
	wk.Handle("bench@1", callProvider(hc, providerURL))
	wctx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- wk.Run(wctx) }()
	res.CallingDuration, res.CallingCPU, err = awaitSucceeded(ctx, c, cfg.Jobs, served, "calling workers")
	cancel()
	if rerr := <-ran; err == nil {
		err = rerr
	}
	if p := workerErr.Load(); err == nil && p != nil {
		err = fmt.Errorf("calling workers: %w", *p)
	}
	if err != nil {
		return err
	}
	res.CallingRate = float64(cfg.Jobs) / res.CallingDuration.Seconds()
	return nil
}

// callProvider is the calling workers' handler: delivery's call made by
// hand, as the SDK's docs show it.
func callProvider(hc *http.Client, providerURL string) client.Handler {
	return func(ctx context.Context, j *client.ClaimedJob) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, providerURL, bytes.NewReader(j.Payload))
		if err != nil {
			return client.Permanent(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", j.IdempotencyKey)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return client.CheckResponse(resp)
	}
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

// setUpDueLater creates the endpoint and the tool (which delivers to
// target, when not nil), and enqueues the N jobs due an hour ahead on the
// server's development clock, so none runs while they are enqueued.
func setUpDueLater(ctx context.Context, c *client.Client, cfg Config, target *wire.DeliveryTarget) error {
	if _, err := c.CreateEndpoint(ctx, "bench", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 300_000, MaxConcurrent: 100_000}}); err != nil {
		return fmt.Errorf("create the bench endpoint: %w", err)
	}
	if _, err := c.PublishTool(ctx, client.ToolSpec{Name: "bench", Version: "1", Endpoint: "bench",
		Delivery: target}); err != nil {
		return fmt.Errorf("publish the bench tool: %w", err)
	}
	runAt := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	for left := cfg.Jobs; left > 0; {
		n := min(left, cfg.EnqueueBatch)
		rs := make([]client.EnqueueRequest, n)
		for i := range rs {
			rs[i] = client.EnqueueRequest{Tool: "bench@1", Payload: json.RawMessage(`{}`), RunAt: runAt}
		}
		if _, err := c.EnqueueBatch(ctx, rs); err != nil {
			return fmt.Errorf("enqueue: %w", err)
		}
		left -= n
	}
	return nil
}

// awaitSucceeded moves the server's clock on, so every job is due at
// once as in the worker burn-down, and times until all n have succeeded
// and the provider (whose count is served) answered each exactly once. It
// returns that time and this process's CPU time over it.
func awaitSucceeded(ctx context.Context, c *client.Client, n int, served *atomic.Int64, what string) (time.Duration, time.Duration, error) {
	cpu0, _ := processCPU()
	start := time.Now()
	if err := c.AdvanceClock(ctx, time.Hour+time.Second); err != nil {
		return 0, 0, err
	}
	deadline := start.Add(10 * time.Minute)
	// Wait for the provider's count first: counting succeeded jobs in the
	// database every few milliseconds would compete with the calls.
	for served.Load() < int64(n) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for {
		got, err := c.CountJobs(ctx, client.JobFilter{States: []wire.JobState{wire.JobSucceeded}})
		if err != nil {
			return 0, 0, err
		}
		if got == int64(n) {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%s: %d of %d jobs succeeded after 10 minutes", what, got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	var cpu time.Duration
	if cpu1, ok := processCPU(); ok {
		cpu = cpu1 - cpu0
	}
	if got := served.Load(); got != int64(n) {
		return 0, 0, fmt.Errorf("%s: the provider served %d requests for %d jobs", what, got, n)
	}
	return elapsed, cpu, nil
}
