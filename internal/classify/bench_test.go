package classify_test

import (
	"testing"

	"github.com/getratchet/ratchet/internal/classify"
)

// BenchmarkClassify runs a mix the engine sees: a success, a plain 5xx, a
// throttle with a Retry-After date, a worker decision and a network error.
func BenchmarkClassify(b *testing.B) {
	reports := []classify.Report{
		{Success: true, HTTPStatus: 200, Headers: map[string]string{"Content-Type": "application/json"}},
		{HTTPStatus: 503, Headers: map[string]string{"Content-Type": "text/html", "Server": "nginx"}},
		{HTTPStatus: 429, Headers: map[string]string{"retry-after": "Sat, 14 Mar 2026 12:01:00 GMT", "X-Request-Id": "abc"}},
		{HTTPStatus: 404, Retryable: ptr(true), Headers: map[string]string{"Retry-After": "30"}},
		{ErrorKind: "timeout", Message: "context deadline exceeded"},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d := classify.Classify(reports[i%len(reports)], now)
		if d.Classification == "" {
			b.Fatal("empty classification")
		}
	}
}

func BenchmarkParseRetryAfter(b *testing.B) {
	for _, v := range []string{"120", "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "garbage"} {
		b.Run(v, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				classify.ParseRetryAfter(v, now)
			}
		})
	}
}

// BenchmarkReadQuota runs the header sets a provider sends on every
// answer: none, GitHub's, the IETF draft's, and a crowded response.
func BenchmarkReadQuota(b *testing.B) {
	sets := map[string]map[string]string{
		"none":   {"Content-Type": "application/json", "Retry-After": "1"},
		"github": {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4987", "X-RateLimit-Reset": "1773491400", "X-RateLimit-Used": "13"},
		"ietf":   {"RateLimit": `"burst";r=40;t=20, "daily";r=300;t=5000`, "RateLimit-Policy": `"burst";q=100;w=60, "daily";q=1000;w=86400`},
		"crowded": {"Content-Type": "text/html", "Server": "nginx", "Date": "Sat, 14 Mar 2026 12:00:00 GMT", "Cache-Control": "no-store",
			"X-Request-Id": "abc", "RateLimit-Limit": "100", "RateLimit-Remaining": "0", "RateLimit-Reset": "1", "Retry-After": "1"},
	}
	for name, h := range sets {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				classify.ReadQuota(h, now)
			}
		})
	}
}
