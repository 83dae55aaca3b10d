package bench

import (
	"io"
	"net/http"
	"sync/atomic"
)

// wireCount counts what the Go SDK sends and receives for claims and
// batch reports: requests and the bytes of their bodies (headers are not
// counted), so a run can say how many round trips and how many bytes on
// the wire a job costs.
type wireCount struct {
	ClaimRequests, ClaimSent, ClaimReceived    atomic.Int64
	ReportRequests, ReportSent, ReportReceived atomic.Int64
}

// countingTransport is an http.RoundTripper that adds what passes through
// it to a wireCount and hands the request to next unchanged.
type countingTransport struct {
	next http.RoundTripper
	n    *wireCount
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var requests, sent, received *atomic.Int64
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/claims":
		requests, sent, received = &t.n.ClaimRequests, &t.n.ClaimSent, &t.n.ClaimReceived
	case r.Method == http.MethodPost && r.URL.Path == "/v1/reports":
		requests, sent, received = &t.n.ReportRequests, &t.n.ReportSent, &t.n.ReportReceived
	default:
		return t.next.RoundTrip(r)
	}
	requests.Add(1)
	if r.ContentLength > 0 {
		sent.Add(r.ContentLength)
	}
	resp, err := t.next.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: received}
	}
	return resp, err
}

// countingBody adds the bytes read from a response body to n.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	k, err := b.ReadCloser.Read(p)
	b.n.Add(int64(k))
	return k, err
}

// countedClient is the Go SDK's default HTTP client with its traffic
// counted in n.
func countedClient(n *wireCount) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64 // as client.New's own
	return &http.Client{Transport: countingTransport{next: tr, n: n}}
}

// WireFigures is what a burn-down over HTTP sent and received, per job.
type WireFigures struct {
	ClaimRequests, ReportRequests int64
	// Bytes of bodies per job.
	ClaimSent, ClaimReceived, ReportSent, ReportReceived float64
}

func (n *wireCount) figures(jobs int) *WireFigures {
	per := func(v *atomic.Int64) float64 { return float64(v.Load()) / float64(max(jobs, 1)) }
	return &WireFigures{ClaimRequests: n.ClaimRequests.Load(), ReportRequests: n.ReportRequests.Load(),
		ClaimSent: per(&n.ClaimSent), ClaimReceived: per(&n.ClaimReceived), ReportSent: per(&n.ReportSent), ReportReceived: per(&n.ReportReceived)}
}

// reset zeroes the counts (after the set-up and the enqueue).
func (n *wireCount) reset() {
	for _, v := range []*atomic.Int64{&n.ClaimRequests, &n.ClaimSent, &n.ClaimReceived, &n.ReportRequests, &n.ReportSent, &n.ReportReceived} {
		v.Store(0)
	}
}
