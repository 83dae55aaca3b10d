package simulate

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Result is a whole sweep: one series per mode, one point per number of
// clients, in the order of Config.Modes and Config.Points.
type Result struct {
	Config  Config   `json:"config"`
	Clients []int    `json:"clients"` // the x axis
	Series  []Series `json:"series"`
}

// Series is one mode across the sweep.
type Series struct {
	Mode   Mode    `json:"mode"`
	Points []Point `json:"points"`
}

// Point is one mode at one number of clients, over Config.Runs runs.
type Point struct {
	Clients int `json:"clients"`
	// Calls is the number of writes per run: the work the resource did.
	Calls Stat `json:"calls"`
	// TimeMs is when the last client had its final answer, per run.
	TimeMs Stat `json:"timeMs"`
	// ClientCalls are the 50th, 90th and 99th percentiles of the writes of one
	// client within a run, averaged over the runs.
	ClientCalls Percentiles `json:"clientCalls"`
	// ClientTimeMs are the same percentiles of each client's finishing time.
	ClientTimeMs Percentiles `json:"clientTimeMs"`
	// Failed is the number of clients per run that gave up: a retry the
	// budget refused, an exhausted policy or a used-up calculator schedule.
	Failed Stat `json:"failed"`
	// Refused is the mean number of retries per run the budget refused.
	Refused float64 `json:"refused"`
	// Hinted is the mean number of conflict answers per run that carried a
	// retry-after hint.
	Hinted float64 `json:"hinted"`
}

// Stat summarises one measure over the runs of a point: the mean, the sample
// standard deviation, and the 5th and 95th percentiles (nearest rank).
type Stat struct {
	Mean float64 `json:"mean"`
	Sd   float64 `json:"sd"`
	P5   float64 `json:"p5"`
	P95  float64 `json:"p95"`
}

// Percentiles are per-client percentiles (nearest rank).
type Percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

// Sweep runs the sweep of cfg; see SweepContext.
func Sweep(cfg Config) (Result, error) { return SweepContext(context.Background(), cfg) }

// SweepContext validates cfg and runs every mode at every point Runs times,
// spread over Workers goroutines. Each run draws from streams seeded by
// (Seed, clients, run, client) and writes its own slot, so the result is the
// same for any number of workers and on any machine. It stops early with the
// context's error when ctx is done.
func SweepContext(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	cfg.Modes = slices.Clone(cfg.Modes)
	points := cfg.Points()
	nm, np, nr := len(cfg.Modes), len(points), cfg.Runs
	stats := make([]runStats, nm*np*nr)
	runAll(ctx, &cfg, points, stats)
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	cfg.Workers = 0 // how the work was spread is not part of the result
	res := Result{Config: cfg, Clients: points, Series: make([]Series, nm)}
	buf := make([]float64, nr)
	for m, mode := range cfg.Modes {
		ser := Series{Mode: mode, Points: make([]Point, np)}
		for p, n := range points {
			ser.Points[p] = summarizePoint(n, stats[(m*np+p)*nr:(m*np+p+1)*nr], buf)
		}
		res.Series[m] = ser
	}
	return res, nil
}

// runAll makes every run of every mode at every point on cfg.Workers
// goroutines (one per CPU for 0), each run writing its own slot of stats:
// mode by mode, point by point, run by run. It stops early when ctx is
// done.
func runAll(ctx context.Context, cfg *Config, points []int, stats []runStats) {
	nm, np, nr := len(cfg.Modes), len(points), cfg.Runs
	workers := cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(stats))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s := &sim{cfg: cfg}
			for {
				u := int(next.Add(1) - 1)
				if u >= len(stats) || ctx.Err() != nil {
					return
				}
				// Largest points first, so the last units to finish are short.
				p := np - 1 - u/(nm*nr)
				m := u / nr % nm
				r := u % nr
				stats[(m*np+p)*nr+r] = s.run(cfg.Modes[m], points[p], r)
			}
		})
	}
	wg.Wait()
}

// summarizePoint is the point of n clients from its runs rs: the spread
// of calls, time and failures over the runs, and the per-client
// percentiles, refusals and hints averaged over them.
func summarizePoint(n int, rs []runStats, buf []float64) Point {
	pt := Point{Clients: n}
	pt.Calls = summarize(rs, buf, func(s *runStats) float64 { return float64(s.calls) })
	pt.TimeMs = summarize(rs, buf, func(s *runStats) float64 { return s.timeMs })
	pt.Failed = summarize(rs, buf, func(s *runStats) float64 { return float64(s.failed) })
	for i := range rs {
		pt.ClientCalls.P50 += rs[i].clientP[0]
		pt.ClientCalls.P90 += rs[i].clientP[1]
		pt.ClientCalls.P99 += rs[i].clientP[2]
		pt.ClientTimeMs.P50 += rs[i].clientTP[0]
		pt.ClientTimeMs.P90 += rs[i].clientTP[1]
		pt.ClientTimeMs.P99 += rs[i].clientTP[2]
		pt.Refused += float64(rs[i].refused)
		pt.Hinted += float64(rs[i].hinted)
	}
	k := float64(len(rs))
	pt.ClientCalls = Percentiles{pt.ClientCalls.P50 / k, pt.ClientCalls.P90 / k, pt.ClientCalls.P99 / k}
	pt.ClientTimeMs = Percentiles{pt.ClientTimeMs.P50 / k, pt.ClientTimeMs.P90 / k, pt.ClientTimeMs.P99 / k}
	pt.Refused /= k
	pt.Hinted /= k
	return pt
}

// summarize computes a Stat of one measure over runs, summing in run order
// so the floating-point result does not depend on scheduling.
func summarize(rs []runStats, buf []float64, f func(*runStats) float64) Stat {
	buf = buf[:len(rs)]
	sum := 0.0
	for i := range rs {
		buf[i] = f(&rs[i])
		sum += buf[i]
	}
	n := float64(len(rs))
	mean := sum / n
	ss := 0.0
	for _, v := range buf {
		d := v - mean
		ss += float64(d * d)
	}
	sd := 0.0
	if len(rs) > 1 {
		sd = math.Sqrt(ss / (n - 1))
	}
	slices.Sort(buf)
	return Stat{Mean: mean, Sd: sd, P5: rank(buf, 5), P95: rank(buf, 95)}
}

// percentiles3 sorts v and returns its 50th, 90th and 99th percentiles.
func percentiles3(v []float64) [3]float64 {
	slices.Sort(v)
	return [3]float64{rank(v, 50), rank(v, 90), rank(v, 99)}
}

// rank is the nearest-rank percentile p of sorted v: the smallest value with
// at least p % of the values at or below it.
func rank(sorted []float64, p int) float64 {
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(i, 0)]
}

// Mode returns the series of mode m, or false when the sweep did not run it.
func (r Result) Mode(m Mode) (Series, bool) {
	for _, s := range r.Series {
		if s.Mode == m {
			return s, true
		}
	}
	return Series{}, false
}
