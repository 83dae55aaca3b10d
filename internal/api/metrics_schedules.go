package api

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// The engine tells Metrics about every tick it fires.
var _ engine.TickObserver = (*Metrics)(nil)

// tickMetrics count the schedule ticks this node fires
// (engine.TickObserver).
type tickMetrics struct {
	ticks  *prometheus.CounterVec
	missed prometheus.Counter
	lag    prometheus.Histogram
}

func newTickMetrics(reg *prometheus.Registry) tickMetrics {
	t := tickMetrics{
		ticks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ratchet_schedule_ticks_total",
			Help: "Schedule ticks this node fired, by outcome: " + wire.JoinOr(wire.TickOutcomes()) + "."}, []string{"outcome"}),
		missed: prometheus.NewCounter(prometheus.CounterOpts{Name: "ratchet_schedule_ticks_missed_total",
			Help: "Schedule ticks the catch-up policy dropped after no node fired them in time."}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ratchet_schedule_tick_lag_seconds",
			Help: "Time from a tick's fire time (tick plus spread offset) to the node firing it.", Buckets: []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600}}),
	}
	for _, o := range wire.TickOutcomes() { // every outcome is a series from the start, so rate() sees its first tick
		t.ticks.WithLabelValues(string(o))
	}
	reg.MustRegister(t.ticks, t.missed, t.lag)
	return t
}

// Ticked counts a fired tick, the ticks it says were missed, and its lag.
func (m *Metrics) Ticked(outcome wire.TickOutcome, missed int64, lag time.Duration) {
	m.ticks.ticks.WithLabelValues(string(outcome)).Inc()
	m.ticks.missed.Add(float64(missed))
	m.ticks.lag.Observe(max(0, lag.Seconds()))
}

// observeSchedules adds ratchet_schedule_overdue_seconds, read from st at
// scrape time with the engine's clock. One call per Metrics.
func (m *Metrics) observeSchedules(st store.Store, now func() time.Time) {
	m.reg.MustRegister(&scheduleCollector{st: st, now: now})
}

// overdueLimit is the most overdue schedules one scrape reports (the most
// overdue first).
const overdueLimit = 1000

// scheduleCollector reports the active schedules whose fire time has
// passed and that no node has fired: a schedule that stopped firing
// (every node down, or the ticker failing) shows as a growing value.
type scheduleCollector struct {
	st  store.Store
	now func() time.Time
}

var overdueDesc = prometheus.NewDesc("ratchet_schedule_overdue_seconds",
	"Seconds since an active schedule's next fire time, for schedules due and not yet fired (at most 1000, most overdue first).", []string{"project", "schedule"}, nil)

func (c *scheduleCollector) Describe(ch chan<- *prometheus.Desc) { ch <- overdueDesc }

func (c *scheduleCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	now := c.now().UnixMilli()
	var due []store.Schedule
	err := c.st.Read(ctx, func(q store.Queries) (err error) {
		due, err = q.SchedulesDue(ctx, &store.SchedulesDueParams{Now: now, Limit: overdueLimit})
		return err
	})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(overdueDesc, fmt.Errorf("read due schedules: %w", err))
		return
	}
	for _, s := range due {
		ch <- prometheus.MustNewConstMetric(overdueDesc, prometheus.GaugeValue, float64(now-s.NextFireAt)/1000, strconv.FormatInt(s.ProjectID, 10), s.Name)
	}
}
