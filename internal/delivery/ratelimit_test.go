package delivery_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/delivery"
)

// TestRateLimitHeadersKept: a loopback provider throttles with every
// rate-limit header ReadQuota reads; the attempt keeps each of them, and
// nothing else the provider sent, so the limit can be read back from it.
func TestRateLimitHeadersKept(t *testing.T) {
	v := newEnv(t, loopback)
	sent := map[string]string{
		"RateLimit": `"default";r=0;t=5`, "RateLimit-Policy": `"default";q=100;w=60`,
		"RateLimit-Limit": "100", "RateLimit-Remaining": "0", "RateLimit-Reset": "5",
		"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "5", "X-RateLimit-Reset-After": "5",
		"X-Rate-Limit-Limit": "100", "X-Rate-Limit-Remaining": "0", "X-Rate-Limit-Reset": "5",
	}
	for _, n := range classify.QuotaHeaders() {
		if _, ok := sent[n]; !ok {
			t.Fatalf("the provider does not send %s, which ReadQuota reads", n)
		}
	}
	srv := provider(t, func(w http.ResponseWriter, _ *http.Request) {
		for k, val := range sent {
			w.Header()[k] = []string{val} // the spelling as written, as many providers send it
		}
		w.Header().Set("X-Internal-Token", "not for Ratchet")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	v.tool("throttled", srv.URL)
	id := v.enqueue("throttled", `{}`, "k")
	v.deliverOne()
	_, as := v.job(id)
	if len(as) != 1 {
		t.Fatalf("%d attempts, want 1", len(as))
	}
	var kept map[string]string
	if err := json.Unmarshal([]byte(as[0].ResponseHeaders), &kept); err != nil {
		t.Fatalf("attempt headers %q: %v", as[0].ResponseHeaders, err)
	}
	for k, val := range sent {
		if kept[k] != val {
			t.Errorf("the attempt kept %s: %q, want %q", k, kept[k], val)
		}
	}
	if _, ok := kept["X-Internal-Token"]; ok {
		t.Errorf("the attempt kept a header nothing reads: %v", kept)
	}
	q, ok, ignored := classify.ReadQuota(kept, v.clk.Now())
	want := classify.Quota{Limit: 100, WindowMs: 60_000, Remaining: 0, ResetMs: 5000, Source: classify.QuotaSourceIETF}
	if !ok || q != want || len(ignored) != 0 {
		t.Errorf("ReadQuota of the kept headers = %+v, %v, %q; want %+v", q, ok, ignored, want)
	}
}

// TestResponseHeadersBounded: one key per name (engine.DeliveryHeaders
// keeps RateLimit-Reset too), several values joined, and a value over the reader's bound cut
// one byte past it, so that the reader still refuses it as too large.
func TestResponseHeadersBounded(t *testing.T) {
	h := http.Header{}
	h.Add("Ratelimit-Reset", "7")
	h.Add("Ratelimit-Reset", "8")
	h.Set("RateLimit", `"d";r=1;x="`+strings.Repeat("a", 20_000)+`"`)
	h.Set("Set-Cookie", "s=1")
	got := delivery.ResponseHeaders(h)
	for _, n := range []string{"RateLimit-Reset", "RateLimit"} {
		var keys []string
		for k := range got {
			if strings.EqualFold(k, n) {
				keys = append(keys, k)
			}
		}
		if len(keys) != 1 {
			t.Errorf("%s is kept under %q, want one key", n, keys)
		}
	}
	if got["RateLimit-Reset"] != "7, 8" {
		t.Errorf("RateLimit-Reset = %q, want the two values joined", got["RateLimit-Reset"])
	}
	if len(got["RateLimit"]) != classify.MaxQuotaHeaderBytes+1 {
		t.Errorf("RateLimit kept %d bytes, want %d", len(got["RateLimit"]), classify.MaxQuotaHeaderBytes+1)
	}
	if _, ok := got["Set-Cookie"]; ok {
		t.Errorf("kept Set-Cookie: %v", got)
	}
	if _, ok, ignored := classify.ReadQuota(map[string]string{"RateLimit": got["RateLimit"]}, t0); ok || len(ignored) != 1 || ignored[0] != classify.QuotaTooLarge {
		t.Errorf("ReadQuota of the cut value: %v, %q; want refused as too_large", ok, ignored)
	}
}
