package main

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url, key string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"orderId":42}`))
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

// TestFirstAnswerPerKey: 503 with Retry-After the first time a key is
// seen, 200 after; /healthz (what --wait asks) does not use up a key.
func TestFirstAnswerPerKey(t *testing.T) {
	srv := httptest.NewServer(handler(2, log.New(io.Discard, "", 0)))
	defer srv.Close()
	if err := waitFor(strings.TrimPrefix(srv.URL, "http://"), time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key, retryAfter, body string
		status                int
	}{
		{"", "2", `{"error":"busy"}`, 503}, // the health check above did not count for the empty key
		{"order-42", "2", `{"error":"busy"}`, 503},
		{"order-42", "", `{"ok":true}`, 200},
		{"order-43", "2", `{"error":"busy"}`, 503},
		{"order-42", "", `{"ok":true}`, 200},
		{"", "", `{"ok":true}`, 200},
	} {
		status, ra, body := post(t, srv.URL+"/orders/42", c.key)
		if status != c.status || ra != c.retryAfter || body != c.body {
			t.Errorf("key %q: %d, Retry-After %q, %q; want %d, %q, %q", c.key, status, ra, body, c.status, c.retryAfter, c.body)
		}
	}
}

// TestWaitRefusesAnotherProgram: --wait fails at once when the port
// answers but is not a flaky provider, and when nothing answers in time.
func TestWaitRefusesAnotherProgram(t *testing.T) {
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	err := waitFor(strings.TrimPrefix(other.URL, "http://"), time.Hour)
	if err == nil || !strings.Contains(err.Error(), "held by something else") {
		t.Errorf("waitFor on another server: %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens here now
	err = waitFor(addr, 0)
	if err == nil || !strings.Contains(err.Error(), "no flaky provider answered at "+addr) {
		t.Errorf("waitFor on a closed port: %v", err)
	}
}
