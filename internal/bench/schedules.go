package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/server"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// schedBench is mode schedules: N schedules firing every minute on a
// development clock that skips the idle time between ticks.
type schedBench struct {
	cfg   Config
	st    store.Store
	e     *engine.Engine
	clk   *clock.Offset
	p     *engine.Principal
	first int64 // the first tick every schedule has (unix ms)
	early int64 // schedules with a tick before first (made just before a minute's end)
}

// ScheduleResult is what mode schedules measured.
type ScheduleResult struct {
	Expected, Fired, Missed, Doubled int64           // ticks from the first every schedule has
	Lag                              []time.Duration // job due time − (tick + spread offset), sorted
	Minutes                          []time.Duration // per tick: from the tick to the last of its N jobs made
	withJob                          int64           // ticks of any time that made a job
}

func runSchedules(ctx context.Context, cfg Config, dir string, w io.Writer) (*ScheduleResult, error) {
	b, err := newSchedBench(ctx, cfg, dir)
	if err != nil {
		return nil, err
	}
	defer b.st.Close()
	fmt.Fprintf(w, "ratchet bench: mode schedules (in-process engine with its ticker, Engine.Run, on a development clock (clock.Offset) over %s)\n", b.st.Driver())
	fmt.Fprintf(w, "method:     N schedules \"* * * * *\" (overlap allow); before each minute's tick the clock jumps to 0.5 s before it (the idle rest of the minute is skipped), then runs in real time until every schedule fired that tick; lag = job dueAt − (tick + the schedule's spread offset)\n")
	fmt.Fprintf(w, "settings:   synchronous %s, spread %s, GOMAXPROCS %d, ticker every 1 s\n", cfg.Synchronous, cfg.ScheduleSpread, runtimeProcs())
	// Creating starts just after a minute's start, so that every schedule
	// has the same first tick unless creating takes most of a minute.
	now := b.clk.Now()
	b.clk.Advance(now.Truncate(time.Minute).Add(time.Minute + 500*time.Millisecond).Sub(now))
	start := time.Now()
	if err := b.create(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "create:     %d schedules in %s\n", cfg.Schedules, round(time.Since(start)))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { b.e.Run(runCtx); close(done) }()
	res := &ScheduleResult{Expected: int64(cfg.Schedules) * int64(cfg.Minutes)}
	err = b.minutes(ctx, res)
	stop()
	<-done
	if err != nil {
		return nil, err
	}
	if err := b.check(ctx, res); err != nil {
		return nil, err
	}
	printSchedules(w, res)
	return res, nil
}

func newSchedBench(ctx context.Context, cfg Config, dir string) (*schedBench, error) {
	url := cfg.DatabaseURL
	if url == "" {
		url = filepath.Join(dir, "bench.db")
	}
	st, err := server.OpenStore(ctx, url, cfg.Synchronous, true)
	if err != nil {
		return nil, err
	}
	b := &schedBench{cfg: cfg, st: st, clk: clock.NewOffset(0)}
	b.e, err = engine.New(engine.Config{Store: st, Clock: b.clk, Retention: -1})
	var key string
	if err == nil {
		_, key, err = b.e.CreateProject(ctx, fmt.Sprintf("bench-%d", time.Now().UnixNano()), wire.PlanPro)
	}
	if err == nil {
		b.p, err = b.e.Authenticate(ctx, key)
	}
	if err == nil {
		_, err = b.e.CreateEndpoint(ctx, b.p, "bench", engine.EndpointPolicy{Policy: backoff.PresetPolicy(backoff.Standard), EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 300_000, MaxConcurrent: 100_000, CircuitFailureThreshold: engine.DefaultCircuitThreshold, CircuitOpenMs: engine.DefaultCircuitOpenMs}})
	}
	if err == nil {
		_, err = b.e.PublishTool(ctx, b.p, engine.ToolSpec{Name: "noop", Version: "1", Endpoint: "bench", Description: "does nothing (ratchet bench)"})
	}
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("set up the bench project: %w", err)
	}
	return b, nil
}

func (b *schedBench) create(ctx context.Context) error {
	firsts := make([]int64, b.cfg.Schedules)
	for i := range b.cfg.Schedules {
		s, err := b.e.CreateSchedule(ctx, b.p, wire.ScheduleCreate{Name: fmt.Sprintf("s%06d", i), Cron: "* * * * *", Tool: "noop@1",
			Payload: []byte(`{"at":"{{tickAt}}"}`), Overlap: wire.OverlapAllow, SpreadMs: b.cfg.ScheduleSpread.Milliseconds()})
		if err != nil {
			return fmt.Errorf("create schedule %d: %w", i, err)
		}
		firsts[i] = s.NextTickAt
		b.first = max(b.first, s.NextTickAt)
	}
	for _, f := range firsts {
		if f < b.first {
			b.early++
		}
	}
	return nil
}

// minutes runs the ticks one minute at a time: jump to just before the
// tick, then wait (in real time) until all N jobs of the tick are made.
func (b *schedBench) minutes(ctx context.Context, res *ScheduleResult) error {
	n := int64(b.cfg.Schedules)
	for i := range b.cfg.Minutes {
		tick := time.UnixMilli(b.first).Add(time.Duration(i) * time.Minute)
		if d := tick.Add(-500 * time.Millisecond).Sub(b.clk.Now()); d > 0 {
			b.clk.Advance(d)
		}
		deadline := time.Now().Add(b.cfg.ScheduleSpread + 5*time.Minute)
		for {
			made, _, err := b.e.CountJobs(ctx, b.p, store.JobFilter{ProjectID: b.p.ProjectID})
			if err != nil {
				return err
			}
			if made >= n*int64(i+1)+b.early || time.Now().After(deadline) {
				res.Minutes = append(res.Minutes, b.clk.Now().Sub(tick))
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// check reads every schedule's ticks and their jobs back.
func (b *schedBench) check(ctx context.Context, res *ScheduleResult) error {
	return b.st.Read(ctx, func(q store.Queries) error {
		list, err := q.ScheduleList(ctx, &store.ScheduleListParams{ProjectID: b.p.ProjectID, Limit: 1 << 30})
		if err != nil {
			return err
		}
		for _, s := range list {
			ticks, err := q.ScheduleTickList(ctx, &store.ScheduleTickListParams{ScheduleID: s.ID, Limit: b.cfg.Minutes + 10})
			if err != nil {
				return err
			}
			if err := b.checkOne(ctx, q, ticks, res); err != nil {
				return err
			}
		}
		jobs, _, err := b.e.CountJobs(ctx, b.p, store.JobFilter{ProjectID: b.p.ProjectID})
		res.Doubled += jobs - res.withJob
		slices.Sort(res.Lag)
		return err
	})
}

func (b *schedBench) checkOne(ctx context.Context, q store.Queries, ticks []store.ScheduleTick, res *ScheduleResult) error {
	seen := map[int64]int{}
	last := b.first + int64(b.cfg.Minutes-1)*60_000
	for _, t := range ticks {
		seen[t.TickAt]++
		if t.JobID != 0 {
			res.withJob++
		}
		if t.JobID == 0 || t.TickAt < b.first || t.TickAt > last {
			continue
		}
		j, err := q.JobGetInProject(ctx, &store.JobGetInProjectParams{ProjectID: b.p.ProjectID, ID: t.JobID})
		if err != nil {
			return err
		}
		res.Fired++
		res.Lag = append(res.Lag, time.Duration(j.DueAt-t.FireAt)*time.Millisecond)
	}
	for i := range b.cfg.Minutes {
		switch c := seen[b.first+int64(i)*60_000]; {
		case c == 0:
			res.Missed++
		case c > 1:
			res.Doubled += int64(c - 1)
		}
	}
	return nil
}

func printSchedules(w io.Writer, res *ScheduleResult) {
	fmt.Fprintf(w, "ticks:      %d expected, %d fired, %d missed, %d doubled\n", res.Expected, res.Fired, res.Missed, res.Doubled)
	fmt.Fprintf(w, "lag:        p50 %s, p99 %s, max %s (tick + spread → job due)\n", ms(quantile(res.Lag, 0.5)), ms(quantile(res.Lag, 0.99)), ms(quantile(res.Lag, 1)))
	fmt.Fprintf(w, "per tick:   tick → last of its jobs made:")
	for _, d := range res.Minutes {
		fmt.Fprintf(w, " %s", round(d))
	}
	fmt.Fprintln(w)
}
