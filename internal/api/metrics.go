package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// Metrics are Ratchet's Prometheus metrics. It implements engine.Observer.
type Metrics struct {
	reg     *prometheus.Registry
	claims  *prometheus.CounterVec
	reports *prometheus.CounterVec
	holds   *prometheus.CounterVec
	// Rate-limit header values refused (engine.learnLimit).
	quotaIgnored *prometheus.CounterVec
	lag          prometheus.Histogram
	requests     *prometheus.HistogramVec
	// HTTP deliveries (internal/delivery).
	deliveries       *prometheus.CounterVec
	deliveryDuration *prometheus.HistogramVec
	// Schedule ticks (metrics_schedules.go).
	ticks tickMetrics
}

// NewMetrics registers the metrics; st is read at scrape time for jobs by
// state and circuit state per endpoint.
func NewMetrics(st store.Store) *Metrics {
	m := &Metrics{
		reg:     prometheus.NewRegistry(),
		claims:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ratchet_claims_total", Help: "Jobs handed to workers, by endpoint."}, []string{"endpoint"}),
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ratchet_reports_total", Help: "Attempt outcomes by classification and decision (lease expiries included)."}, []string{"classification", "outcome"}),
		holds:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ratchet_gate_holds_total", Help: "Claims that found an endpoint's due jobs held, by gate."}, []string{"gate"}),
		quotaIgnored: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ratchet_provider_headers_ignored_total",
			Help: "Rate-limit header values from providers that were refused (malformed, absurd or conflicting), by reason."}, []string{"reason"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ratchet_claim_lag_seconds", Help: "Time from a job's due time to its claim.",
			Buckets: []float64{0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}}),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ratchet_http_request_duration_seconds", Help: "HTTP API request latency by route and status.",
			Buckets: prometheus.DefBuckets}, []string{"route", "code"}),
	}
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ratchet_deliveries_total", Help: "HTTP deliveries made by this node, by endpoint, classification and decision."},
		[]string{"endpoint", "classification", "outcome"})
	m.deliveryDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ratchet_delivery_duration_seconds", Help: "HTTP delivery request latency (connect to end of body), by endpoint.",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}}, []string{"endpoint"})
	m.ticks = newTickMetrics(m.reg)
	m.reg.MustRegister(m.claims, m.reports, m.holds, m.quotaIgnored, m.lag, m.requests, m.deliveries, m.deliveryDuration, &stateCollector{st: st},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observeStreams adds ratchet_streams_open, read from s at scrape time.
// One API per Metrics: a second call panics on the duplicate name.
func (m *Metrics) observeStreams(s *streams) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ratchet_streams_open",
		Help: "GET /v1/stream streams this node serves now (at most 256; 8 per key)."}, func() float64 { return float64(s.open()) }))
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

// Claimed counts claims and their lag.
func (m *Metrics) Claimed(endpoint string, n int, lags []time.Duration) {
	m.claims.WithLabelValues(endpoint).Add(float64(n))
	for _, l := range lags {
		m.lag.Observe(max(0, l.Seconds()))
	}
}

// Reported counts an attempt outcome.
func (m *Metrics) Reported(classification, outcome string) {
	m.reports.WithLabelValues(classification, outcome).Inc()
}

// Delivered counts an HTTP delivery and its latency.
func (m *Metrics) Delivered(endpoint, classification, outcome string, d time.Duration) {
	m.deliveries.WithLabelValues(endpoint, classification, outcome).Inc()
	m.deliveryDuration.WithLabelValues(endpoint).Observe(d.Seconds())
}

// GateHeld counts a hold.
func (m *Metrics) GateHeld(gate wire.Gate) { m.holds.WithLabelValues(string(gate)).Inc() }

// QuotaIgnored counts a refused rate-limit header value.
func (m *Metrics) QuotaIgnored(reason string) { m.quotaIgnored.WithLabelValues(reason).Inc() }

func (m *Metrics) request(route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Observe(d.Seconds())
}

// stateCollector reads the store at scrape time.
type stateCollector struct{ st store.Store }

var (
	jobsDesc    = prometheus.NewDesc("ratchet_jobs", "Jobs by state.", []string{"state"}, nil)
	circuitDesc = prometheus.NewDesc("ratchet_circuit_state", "Circuit state per endpoint: 1 for the current state.", []string{"project", "endpoint", "state"}, nil)
	pausedDesc  = prometheus.NewDesc("ratchet_endpoint_paused", "1 while an owner has paused the endpoint, else 0.", []string{"project", "endpoint"}, nil)
	rampDesc    = prometheus.NewDesc("ratchet_endpoint_recovery_rate", "Claims a second the recovery ramp allows while the endpoint recovers (docs/outages.md); 0 when it is not recovering.",
		[]string{"project", "endpoint"}, nil)
	learnedDesc = prometheus.NewDesc("ratchet_endpoint_learned_limit_per_second", "The rate limit learned from the provider's headers, in requests a second, while it stands; 0 for none.",
		[]string{"project", "endpoint"}, nil)
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- circuitDesc
	ch <- pausedDesc
	ch <- rampDesc
	ch <- learnedDesc
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := c.st.Read(ctx, func(q store.Queries) error {
		counts, err := q.JobCountsByState(ctx, 0)
		if err != nil {
			return err
		}
		for _, s := range wire.JobStates() {
			ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(counts[s]), string(s))
		}
		eps, err := q.EndpointList(ctx, 0)
		if err != nil {
			return err
		}
		now := time.Now().UnixMilli()
		for _, ep := range eps {
			for _, s := range wire.CircuitStates() {
				v := 0.0
				if ep.CircuitState == s {
					v = 1
				}
				ch <- prometheus.MustNewConstMetric(circuitDesc, prometheus.GaugeValue, v, strconv.FormatInt(ep.ProjectID, 10), ep.Name, string(s))
			}
			paused := 0.0
			if ep.PausedAt != 0 {
				paused = 1
			}
			ch <- prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, paused, strconv.FormatInt(ep.ProjectID, 10), ep.Name)
			var ramp, learned float64
			if r := engine.RecoveryView(&ep, now); r != nil {
				ramp = r.RatePerSecond
			}
			if l := engine.LearnedView(&ep, now); l != nil && l.WindowMs > 0 {
				learned = float64(l.Limit) * 1000 / float64(l.WindowMs)
			}
			ch <- prometheus.MustNewConstMetric(rampDesc, prometheus.GaugeValue, ramp, strconv.FormatInt(ep.ProjectID, 10), ep.Name)
			ch <- prometheus.MustNewConstMetric(learnedDesc, prometheus.GaugeValue, learned, strconv.FormatInt(ep.ProjectID, 10), ep.Name)
		}
		return nil
	})
	if err != nil {
		// The scrape fails and says why, instead of reporting no jobs.
		ch <- prometheus.NewInvalidMetric(jobsDesc, fmt.Errorf("read job and circuit states: %w", err))
	}
}
