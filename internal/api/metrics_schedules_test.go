package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/api"
	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store/sqlite"
)

// TestScheduleMetrics: the ticks a node fires are counted by outcome with
// their lag; a schedule due and not fired shows in
// ratchet_schedule_overdue_seconds by name; and every schedule metric the
// alert rules of docs/operations.md name is on /metrics.
func TestScheduleMetrics(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "api.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC))
	m := api.NewMetrics(st)
	e, err := engine.New(engine.Config{Store: st, Clock: clk, Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Bootstrap(ctx, key); err != nil {
		t.Fatal(err)
	}
	a := api.New(e, slog.New(slog.DiscardHandler), m, make(chan struct{}))
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := &fixture{srv: srv, api: a}
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/endpoints", `{"name":"stripe","preset":"STANDARD"}`},
		{"POST", "/v1/tools", `{"name":"charge","version":"1","endpoint":"stripe"}`},
		{"POST", "/v1/schedules", `{"name":"digest","cron":"@hourly","tool":"charge@1","overlap":"allow"}`},
	} {
		if status, body := f.call(t, r.method, r.path, r.body); status >= 300 {
			t.Fatalf("%s %s: %d %s", r.method, r.path, status, body)
		}
	}
	clk.Advance(time.Hour + 5*time.Second)
	if _, err := e.FireSchedules(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour + 25*time.Second) // the next tick is 30 s overdue; no ticker runs
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	scrape := rec.Body.String()
	for _, want := range []string{
		`ratchet_schedule_ticks_total{outcome="enqueued"} 1`,
		`ratchet_schedule_ticks_total{outcome="skipped"} 0`,
		`ratchet_schedule_ticks_total{outcome="failed"} 0`,
		`ratchet_schedule_ticks_missed_total 0`,
		`ratchet_schedule_tick_lag_seconds_sum 5`,
		`ratchet_schedule_tick_lag_seconds_count 1`,
		`ratchet_schedule_overdue_seconds{project="1",schedule="digest"} 30`,
	} {
		if !strings.Contains(scrape, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rules, _ := strings.Cut(string(doc), "## What to alert on\n")
	rules, _, _ = strings.Cut(rules, "\n## ")
	names := regexp.MustCompile(`ratchet_schedule_[a-z_]+`).FindAllString(rules, -1)
	if len(names) < 3 {
		t.Fatalf("the alert rules of operations.md name %d schedule metrics (%v), want the ticks, missed ticks and overdue schedules", len(names), names)
	}
	for _, n := range names {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(n) + `[{ ]`).MatchString(scrape) {
			t.Errorf("operations.md alerts on %s, which /metrics does not have", n)
		}
	}
}
