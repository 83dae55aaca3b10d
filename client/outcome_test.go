package client_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/client"
)

// quotaHeaders reads the rate-limit headers Ratchet reads and the bound on
// a value from testdata/quota-headers.json (checked against the server's
// reader by internal/classify's TestQuotaHeadersFile).
func quotaHeaders(t *testing.T) ([]string, int) {
	t.Helper()
	b, err := os.ReadFile("../testdata/quota-headers.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Headers       []string `json:"headers"`
		MaxValueBytes int      `json:"maxValueBytes"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Headers) == 0 {
		t.Fatalf("read testdata/quota-headers.json: %v", err)
	}
	return doc.Headers, doc.MaxValueBytes
}

// answer gets one response from a loopback provider that sets headers and
// status.
func answer(t *testing.T, status int, headers http.Header) *http.Response {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, vs := range headers {
			w.Header()[k] = vs
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestResponseHeadersReachTheReport: a provider's throttle carries every
// rate-limit header and Retry-After into the report, several values of
// one joined, and nothing else it sent.
func TestResponseHeadersReachTheReport(t *testing.T) {
	names, _ := quotaHeaders(t)
	sent := http.Header{"Retry-After": {"3"}, "X-Internal-Token": {"secret"}}
	for i, n := range names {
		sent[n] = []string{"v" + string(rune('a'+i))}
	}
	sent["RateLimit"] = []string{`"burst";r=0;t=3`, `"daily";r=10`}
	r := client.ToReport(client.CheckResponse(answer(t, 429, sent)))
	if r.Success || r.HTTPStatus != 429 {
		t.Fatalf("report %+v, want a failure with HTTP 429", r)
	}
	for _, n := range append(names, "Retry-After") {
		if want := strings.Join(sent[n], ", "); r.Headers[n] != want {
			t.Errorf("report header %s = %q, want %q", n, r.Headers[n], want)
		}
	}
	if _, ok := r.Headers["X-Internal-Token"]; ok || len(r.Headers) != len(names)+1 {
		t.Errorf("report headers %v: want only Retry-After and the rate-limit headers", r.Headers)
	}
}

// TestSuccessCarriesRateLimitHeaders: FromResponse of a 2xx returned from a
// handler is a success that still passes the provider's limit on; with an
// explicit decision it is not a success; CheckResponse of a 2xx is nil.
func TestSuccessCarriesRateLimitHeaders(t *testing.T) {
	resp := answer(t, 200, http.Header{"RateLimit": {`"default";r=4;t=1`}, "RateLimit-Policy": {`"default";q=5;w=1`}})
	r := client.ToReport(client.FromResponse(resp))
	if !r.Success || r.HTTPStatus != 200 || r.Headers["RateLimit"] != `"default";r=4;t=1` || r.Headers["RateLimit-Policy"] != `"default";q=5;w=1` {
		t.Errorf("report %+v, want a success with the rate-limit headers", r)
	}
	if r := client.ToReport(client.Permanent(client.FromResponse(resp))); r.Success {
		t.Errorf("Permanent(FromResponse(200)) gave a success: %+v", r)
	}
	if err := client.CheckResponse(resp); err != nil {
		t.Errorf("CheckResponse(200) = %v, want nil", err)
	}
}

// TestResponseHeaderValuesBounded: a value longer than Ratchet reads is cut
// one byte past the bound, so the server refuses it as too large.
func TestResponseHeaderValuesBounded(t *testing.T) {
	_, maxBytes := quotaHeaders(t)
	if maxBytes != client.MaxHeaderValueBytes {
		t.Fatalf("MaxHeaderValueBytes = %d; testdata/quota-headers.json says %d", client.MaxHeaderValueBytes, maxBytes)
	}
	long := strings.Repeat("9", 20_000)
	var re *client.ResponseError
	if !errors.As(client.CheckResponse(answer(t, 503, http.Header{"X-RateLimit-Reset": {long}})), &re) {
		t.Fatal("CheckResponse(503) is not a ResponseError")
	}
	if got := re.Headers["X-RateLimit-Reset"]; got != long[:maxBytes] {
		t.Errorf("kept %d bytes, want %d", len(got), maxBytes)
	}
}
