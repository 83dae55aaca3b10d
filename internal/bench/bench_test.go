package bench

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRunPrintsFigures runs both modes at a tiny size and checks that every
// figure is printed and positive. It never asserts on speed.
func TestRunPrintsFigures(t *testing.T) {
	for _, mode := range []string{"engine", "http"} {
		t.Run(mode, func(t *testing.T) {
			var out bytes.Buffer
			res, err := Run(context.Background(), Config{Mode: mode, Jobs: 250, Batch: 20, Claimers: 3, EnqueueBatch: 100, LagJobs: 20, Synchronous: "NORMAL"}, &out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			text := out.String()
			for _, want := range []string{"mode " + mode, "driver sqlite", "synchronous NORMAL", "GOMAXPROCS", "N 250 jobs", "B 20 jobs", "C 3 claimers", "method:", "lag method:"} {
				if !strings.Contains(text, want) {
					t.Errorf("output lacks %q:\n%s", want, text)
				}
			}
			for _, re := range []string{`enqueue: +250 jobs in \S+ = (\d+) jobs/s`, `burn-down: +250 jobs in \S+ = (\d+) jobs/s`, `lag: +20 jobs  p50 ([\d.]+) ms  p99 ([\d.]+) ms  max ([\d.]+) ms`} {
				m := regexp.MustCompile(re).FindStringSubmatch(text)
				if m == nil {
					t.Errorf("output lacks %s:\n%s", re, text)
					continue
				}
				for _, v := range m[1:] {
					if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 || (f == 0 && !strings.HasPrefix(re, "lag")) {
						t.Errorf("%s: figure %q is not positive", re, v)
					}
				}
			}
			if res.BurnDownRate <= 0 || res.EnqueueRate <= 0 || len(res.Lag) != 20 || res.LagMax < res.LagP99 || res.LagP99 < res.LagP50 {
				t.Errorf("result %+v", res)
			}
			checkPerJob(t, mode, text, res)
		})
	}
}

// checkPerJob checks the per-job line and, over HTTP, the wire line: each
// claimer claims until a claim comes back empty and reports every
// non-empty claim once, so the claims are the reports plus one per claimer.
func checkPerJob(t *testing.T, mode, text string, res *Result) {
	t.Helper()
	if !regexp.MustCompile(`per job: +CPU (\d+ µs|n/a), [1-9]\d* allocations \([\d.]+ KiB\) in this process during the burn-down`).MatchString(text) || res.BurnDownAllocs == 0 {
		t.Errorf("no per-job line with allocations (%d):\n%s", res.BurnDownAllocs, text)
	}
	if mode == "engine" {
		if res.Wire != nil || strings.Contains(text, "wire:") {
			t.Errorf("the engine mode counts a wire: %+v", res.Wire)
		}
		return
	}
	x := res.Wire
	if x == nil || !strings.Contains(text, "wire:       "+strconv.FormatInt(x.ClaimRequests, 10)+" claims and "+strconv.FormatInt(x.ReportRequests, 10)+" batch reports") {
		t.Fatalf("no wire figures: %+v\n%s", x, text)
	}
	if x.ReportRequests < 250/20 || x.ClaimRequests != x.ReportRequests+3 {
		t.Errorf("%d claims and %d reports for 250 jobs at 20 per claim by 3 claimers", x.ClaimRequests, x.ReportRequests)
	}
	if x.ClaimSent <= 0 || x.ClaimReceived <= 0 || x.ReportSent <= 0 || x.ReportReceived <= 0 {
		t.Errorf("bytes per job not all counted: %+v", x)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	c := Config{Mode: "grpc", Batch: 5000, Synchronous: "OFF", Server: "http://x"}
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`mode: "grpc"`, "batch: 5000", `synchronous: "OFF"`, "server:", "key:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestQuantile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	if quantile(d, 0.5) != 50 || quantile(d, 0.99) != 99 || quantile(d[:1], 0.99) != 1 {
		t.Errorf("quantiles %v %v", quantile(d, 0.5), quantile(d, 0.99))
	}
}

// BenchmarkEngineBurnDown burns down b.N jobs on the in-process engine
// (SQLite, synchronous NORMAL, 4 claimers, batches of 100); jobs/s is
// reported as a metric. Enqueueing is outside the timer.
func BenchmarkEngineBurnDown(b *testing.B) {
	benchBurnDown(b, "engine")
}

// BenchmarkHTTPBurnDown is the same through HTTP with the Go SDK.
func BenchmarkHTTPBurnDown(b *testing.B) {
	benchBurnDown(b, "http")
}

func benchBurnDown(b *testing.B, mode string) {
	ctx := context.Background()
	cfg := Config{Mode: mode, Jobs: max(b.N, 1), Synchronous: "NORMAL", SkipLag: true}
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	var t target
	var err error
	if mode == "engine" {
		t, err = newEngineTarget(ctx, cfg, b.TempDir())
	} else {
		t, err = newHTTPTarget(ctx, cfg, b.TempDir())
	}
	if err != nil {
		b.Fatal(err)
	}
	defer t.close()
	res := &Result{}
	cpu0, _ := processCPU()
	b.ResetTimer()
	if err := burnDown(ctx, cfg, t, res); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(res.BurnDownRate, "jobs/s")
	// CPU time of the process per job, enqueue included: on a machine shared
	// with other work it moves far less than the wall-clock rate.
	cpu1, _ := processCPU()
	b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(cfg.Jobs), "cpu-µs/job")
	b.ReportMetric(0, "ns/op")
}

// TestDeliveryModePrintsBoth runs mode delivery at a tiny size: both
// burn-downs, the method and the ratio are printed. It never asserts on
// speed.
func TestDeliveryModePrintsBoth(t *testing.T) {
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Mode: "delivery", Jobs: 200, Batch: 20, Claimers: 2, EnqueueBatch: 100, Synchronous: "NORMAL", DeliveryConcurrency: 8}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, re := range []string{`workers: +200 jobs in \S+ = \d+ jobs/s, CPU (\d+ µs|n/a) per job`,
		`delivery: +200 jobs in \S+ = \d+ jobs/s, CPU (\d+ µs|n/a) per job \(dispatcher concurrency 8; provider served 200 requests\)`,
		`calling: +200 jobs in \S+ = \d+ jobs/s, CPU (\d+ µs|n/a) per job \(the Go SDK's Worker, concurrency 8; .*provider served 200 requests\)`,
		`ratio: +delivery / calling workers = [\d.]+; delivery / workers = [\d.]+`, `delivery method: `} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("output lacks %s:\n%s", re, text)
		}
	}
	if res.DeliveryRate <= 0 || res.BurnDownRate <= 0 || res.CallingRate <= 0 {
		t.Errorf("rates %v, %v, %v", res.DeliveryRate, res.BurnDownRate, res.CallingRate)
	}
}

// TestDeliveryRoundsPrintMedians runs mode delivery twice over at a tiny
// size: each round prints its figures, and the last line the medians.
func TestDeliveryRoundsPrintMedians(t *testing.T) {
	var out bytes.Buffer
	if _, err := Run(context.Background(), Config{Mode: "delivery", Rounds: 2, Jobs: 100, Batch: 20, Claimers: 2, EnqueueBatch: 100, Synchronous: "NORMAL", DeliveryConcurrency: 4}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, re := range []string{`round 1 of 2 \(load average \S+\)`, `round 2 of 2`, `(?s)(delivery: +100 jobs.*){2}`,
		`median of 2 rounds: workers \d+ jobs/s, calling workers \d+ jobs/s, delivery \d+ jobs/s; ratio delivery / calling workers [\d.]+ \(median of the rounds' ratios, range [\d.]+–[\d.]+\); ratio delivery / workers [\d.]+ \(range [\d.]+–[\d.]+\)`} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("output lacks %s:\n%s", re, text)
		}
	}
}

// TestConsolePrintsFigures runs mode console at a small size and with 3
// timed runs (the race detector makes SQLite's full scans slow): every
// request is timed and answers what the seeding stored. It never asserts on
// speed.
func TestConsolePrintsFigures(t *testing.T) {
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Mode: "console", Jobs: 8000, Synchronous: "NORMAL", ConsoleRuns: 3}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"mode console", "driver sqlite", "seed method:", "timing method:", "seed:       8000 jobs"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	items := map[string]int{}
	for _, c := range res.Console {
		items[c.Name] = c.Items
		if c.Median <= 0 || c.Max < c.Median || c.First <= 0 {
			t.Errorf("%s: figures %+v", c.Name, c)
		}
		if !regexp.MustCompile(regexp.QuoteMeta(c.Name) + `: +median +[\d.]+ ms +max +[\d.]+ ms`).MatchString(text) {
			t.Errorf("output lacks the line of %s:\n%s", c.Name, text)
		}
	}
	for name, want := range map[string]int{
		"overview":                   3,    // endpoints
		"state counts":               8000, // the total
		"state counts of a tool":     1600,
		"failed jobs of an endpoint": 100,
		"scheduled jobs":             100,
		"failed jobs of a tool":      100,
		"search, an error substring": 100,
		"search, a job id":           1,
		"search, text found nowhere": 0,
	} {
		if got, ok := items[name]; !ok || got != want {
			t.Errorf("%s: %d items (timed: %v), want %d", name, got, ok, want)
		}
	}
}

// TestKeysModePrintsFigures runs mode keys at a tiny size: every figure is
// printed and positive, and the claim order shows fair sharing (B–K's 100
// jobs all go within the first rounds) against the oldest-due order
// without it (behind key A's whole backlog). Never a speed.
func TestKeysModePrintsFigures(t *testing.T) {
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Mode: "keys", Jobs: 300, Batch: 20, Claimers: 2, EnqueueBatch: 100, Keys: 30, KeyLimit: 2,
		FairBacklog: 300, Synchronous: "NORMAL"}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"mode keys", "keys method:", "fairness method:", "key-less:", "keyed:      300 jobs over 30 keys, keyMaxConcurrent 2",
		"claim cost:", "fairness:"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	k := res.Keys
	if k.Plain <= 0 || k.Keyed <= 0 || k.FewKeys <= 0 || k.ManyKeys <= 0 {
		t.Errorf("a burn-down figure is not positive: %+v", k)
	}
	// Eleven keys take turns in claims of 20: ten rounds of about eleven.
	if k.FairLast > 150 || k.UnfairLast != 400 {
		t.Errorf("the last of B–K's jobs went %dth with fairKeys (want within 150), %dth without (want 400th)", k.FairLast, k.UnfairLast)
	}
}

// TestSchedulesMode: mode schedules fires every tick of every schedule
// once and prints the figures with the method; no speed is asserted.
func TestSchedulesMode(t *testing.T) {
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Mode: "schedules", Schedules: 30, Minutes: 2, ScheduleSpread: 2 * time.Second, Synchronous: "NORMAL"}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	s := res.Schedules
	if s.Expected != 60 || s.Fired != 60 || s.Missed != 0 || s.Doubled != 0 || len(s.Lag) != 60 {
		t.Fatalf("result %+v\n%s", *s, out.String())
	}
	for _, want := range []string{"mode schedules", "method:", "60 expected, 60 fired, 0 missed, 0 doubled", "p99"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
