package delivery

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/webhook"
)

// AlertSender sends the alert outbox (docs/alerts.md): it leases due
// alert deliveries from the engine (engine.DueAlerts), posts each to its
// sink with the deliveries' own client (the address policy of
// --delivery-allow, no redirects, no proxy) and reports the answer
// (engine.AlertSent), which retries failures with backoff and jitter.
// Alerts are not jobs: no gate of any endpoint holds them. Run it once
// per node; nodes lease rows, so each is sent by one at a time.
type AlertSender struct {
	eng       *engine.Engine
	client    *http.Client
	log       *slog.Logger
	every     time.Duration
	userAgent string
}

// alertTimeout bounds one alert request.
const alertTimeout = 10 * time.Second

// NewAlertSender builds a sender that looks for due alerts every every
// (default 200 ms).
func NewAlertSender(eng *engine.Engine, policy webhook.Policy, log *slog.Logger, userAgent string, every time.Duration) *AlertSender {
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &AlertSender{eng: eng, client: NewClient(policy, 4), log: log, every: every, userAgent: userAgent}
}

// Run sends until ctx ends.
func (s *AlertSender) Run(ctx context.Context) {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		if _, err := s.Pass(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("alert delivery pass failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Pass sends the alerts due now, side by side, and returns how many.
func (s *AlertSender) Pass(ctx context.Context) (int, error) {
	reqs, err := s.eng.DueAlerts(ctx, 50)
	if err != nil || len(reqs) == 0 {
		return 0, err
	}
	var wg sync.WaitGroup
	for i := range reqs {
		wg.Go(func() {
			status, retryAfter, errText := s.send(ctx, &reqs[i])
			if err := s.eng.AlertSent(context.WithoutCancel(ctx), &reqs[i], status, errText, retryAfter); err != nil {
				s.log.Warn("recording an alert delivery failed", "delivery", reqs[i].Delivery.ID, "err", err)
			}
		})
	}
	wg.Wait()
	return len(reqs), nil
}

// send posts one alert; it returns the status (0 for no answer), the
// answer's Retry-After in ms and what went wrong.
func (s *AlertSender) send(ctx context.Context, r *engine.AlertRequest) (int, int64, string) {
	ctx, cancel := context.WithTimeout(ctx, alertTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return 0, 0, err.Error()
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", s.userAgent)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	var retryAfter int64
	if v := resp.Header.Get("Retry-After"); v != "" {
		retryAfter, _ = classify.ParseRetryAfter(v, time.Now())
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, 0, ""
	}
	return resp.StatusCode, retryAfter, "HTTP " + strconv.Itoa(resp.StatusCode) + ": " + string(body)
}
