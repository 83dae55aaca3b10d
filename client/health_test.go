package client

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/getratchet/ratchet/wire"
)

// TestHealthAndReadiness: Healthz and Readyz decode the typed answers, and
// Readyz returns a 503 (the store does not answer) as its answer, once,
// while Healthz's 503 is an error.
func TestHealthAndReadiness(t *testing.T) {
	var ready atomic.Bool
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/healthz" && ready.Load():
			w.Write([]byte(`{"status":"ok"}`))
		case r.URL.Path == "/readyz" && ready.Load():
			w.Write([]byte(`{"status":"ready","store":"sqlite"}`))
		case r.URL.Path == "/readyz":
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"status":"unavailable","store":"postgres"}`))
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"code":"unavailable","message":"down"}}`))
		}
	}))
	defer srv.Close()
	c := New(srv.URL, "")
	ctx := t.Context()
	r, err := c.Readyz(ctx)
	if err != nil || *r != (wire.Readiness{Status: wire.ReadinessUnavailable, Store: "postgres"}) {
		t.Errorf("Readyz on a 503 = %+v, %v", r, err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("Readyz on a 503 sent %d requests, want 1", n)
	}
	if _, err := c.Healthz(ctx); err == nil {
		t.Error("Healthz on a 503 returned no error")
	}
	ready.Store(true)
	if h, err := c.Healthz(ctx); err != nil || h.Status != wire.HealthOK {
		t.Errorf("Healthz = %+v, %v", h, err)
	}
	if r, err := c.Readyz(ctx); err != nil || *r != (wire.Readiness{Status: wire.ReadinessReady, Store: "sqlite"}) {
		t.Errorf("Readyz = %+v, %v", r, err)
	}
}
