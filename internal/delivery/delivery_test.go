package delivery_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/api"
	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/delivery"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/sqlite"
	"github.com/getratchet/ratchet/internal/webhook"
	"github.com/getratchet/ratchet/wire"
)

var t0 = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

type env struct {
	dbPath string
	t      *testing.T
	ctx    context.Context
	e      *engine.Engine
	clk    *clock.Fake
	owner  *engine.Principal
	d      *delivery.Dispatcher
}

func newEnv(t *testing.T, allow []netip.Prefix) *env {
	t.Helper()
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "ratchet.db")
	st, err := sqlite.Open(ctx, dbPath, sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	v := &env{dbPath: dbPath, t: t, ctx: ctx, clk: clock.NewFake(t0)}
	pol := webhook.Policy{Allow: allow}
	v.e, err = engine.New(engine.Config{Store: st, Clock: v.clk, Rand: func() float64 { return 0.5 }, DeliveryPolicy: pol})
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := v.e.Bootstrap(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if v.owner, err = v.e.Authenticate(ctx, key); err != nil {
		t.Fatal(err)
	}
	v.d = delivery.New(delivery.Config{Engine: v.e, Policy: pol, Concurrency: 4})
	v.endpoint("provider", `{"preset":"CUSTOM","maxAttempts":3,"initialDelayMs":1000,"multiplier":2,"maxDelayMs":60000,"jitterPercent":0}`)
	return v
}

func (v *env) endpoint(name, body string) {
	v.t.Helper()
	fields, err := backoff.ReadObject([]byte(body), "endpoint")
	if err != nil {
		v.t.Fatal(err)
	}
	pol, err := api.DecodeEndpointPolicy(fields, false, nil)
	if err != nil {
		v.t.Fatal(err)
	}
	if _, err := v.e.CreateEndpoint(v.ctx, v.owner, name, pol); err != nil {
		v.t.Fatal(err)
	}
}

// publish publishes a delivered tool; delivery is the JSON of its target.
func (v *env) publish(name, delivery string, timeoutMs int) (*store.Tool, error) {
	spec, err := api.DecodeToolSpec([]byte(fmt.Sprintf(`{"name":%q,"version":"1","endpoint":"provider","timeoutMs":%d,"delivery":%s}`, name, timeoutMs, delivery)))
	if err != nil {
		return nil, err
	}
	return v.e.PublishTool(v.ctx, v.owner, spec)
}

func (v *env) tool(name, url string) {
	v.t.Helper()
	if _, err := v.publish(name, fmt.Sprintf(`{"url":%q}`, url), 2000); err != nil {
		v.t.Fatal(err)
	}
}

func (v *env) enqueue(tool, payload, key string) int64 {
	v.t.Helper()
	out, err := v.e.Enqueue(v.ctx, v.owner, engine.EnqueueRequest{Tool: tool + "@1", Payload: json.RawMessage(payload), IdempotencyKey: key})
	if err != nil {
		v.t.Fatal(err)
	}
	return out.Job.ID
}

// deliverOne claims one due delivery and delivers it, synchronously.
func (v *env) deliverOne() engine.Claimed {
	v.t.Helper()
	cs, err := v.e.ClaimDeliveries(v.ctx, "test-node", 1, 0)
	if err != nil || len(cs) != 1 {
		v.t.Fatalf("ClaimDeliveries = %d jobs, %v; want 1", len(cs), err)
	}
	v.d.Deliver(v.ctx, cs[0])
	return cs[0]
}

func (v *env) job(id int64) (*store.Job, []store.Attempt) {
	v.t.Helper()
	j, as, _, err := v.e.Job(v.ctx, v.owner, id)
	if err != nil {
		v.t.Fatal(err)
	}
	return j, as
}

func provider(t *testing.T, h http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestScriptedProvider runs one attempt against each provider script and
// checks its classification and schedule against the cases below, written
// from the decision table. The tie between internal/classify and the tables
// of docs/errors.md is checked by internal/classify/errors_doc_test.go.
func TestScriptedProvider(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	refused, _ := net.Listen("tcp", "127.0.0.1:0")
	closedURL := "http://" + refused.Addr().String() + "/"
	refused.Close()
	cases := []struct {
		name           string
		handler        http.HandlerFunc
		url            string
		classification string
		outcome        wire.AttemptOutcome
		state          wire.JobState
		status         int64
		retryAfterMs   [2]int64 // inclusive range; zero for none
		header         string   // a response header the attempt keeps
		message        string   // part of the attempt's message
		excerpt        string   // the excerpt's start
		excerptLen     int      // the excerpt's length, 0 to skip
	}{
		{name: "503 Retry-After seconds", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(503)
			io.WriteString(w, `{"error":"busy"}`)
		}, classification: "retry_after", outcome: wire.OutcomeFailed, state: wire.JobScheduled, status: 503, retryAfterMs: [2]int64{7000, 7000},
			header: "Retry-After", excerpt: `{"error":"busy"}`},
		{name: "503 Retry-After HTTP date", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", t0.Add(30*time.Second).Format(http.TimeFormat))
			w.WriteHeader(503)
		}, classification: "retry_after", outcome: wire.OutcomeFailed, state: wire.JobScheduled, status: 503, retryAfterMs: [2]int64{30000, 30000}, header: "Retry-After"},
		{name: "429", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-RateLimit-Reset", "1767000000")
			w.WriteHeader(429)
		}, classification: "throttled", outcome: wire.OutcomeFailed, state: wire.JobScheduled, status: 429, header: "X-RateLimit-Reset"},
		{name: "400", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(400)
			io.WriteString(w, "bad card \xff\x00number")
		}, classification: "client_error", outcome: wire.OutcomeFailed, state: wire.JobFailed, status: 400, excerpt: "bad card \uFFFDnumber"},
		{name: "timeout", handler: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // so the server notices the client leave
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}, classification: "network_timeout", outcome: wire.OutcomeFailed, state: wire.JobScheduled, message: "deadline exceeded"},
		{name: "connection refused", url: closedURL, classification: "network_connect", outcome: wire.OutcomeFailed, state: wire.JobScheduled, message: "refused"},
		{name: "slow body", handler: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(200)
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}, classification: "success", outcome: wire.OutcomeSucceeded, state: wire.JobSucceeded, status: 200, message: "not read in full", excerpt: "partial"},
		{name: "10 MB body", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(200)
			chunk := strings.Repeat("é", 512) // 1 KiB of two-byte characters
			for range 10 << 10 {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
		}, classification: "success", outcome: wire.OutcomeSucceeded, state: wire.JobSucceeded, status: 200, message: "longer than 65536 bytes", excerptLen: 1024},
		{name: "redirect to a private address", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://10.0.0.1/steal", http.StatusFound)
		}, classification: "redirect", outcome: wire.OutcomeFailed, state: wire.JobFailed, status: 302, header: "Location"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newEnv(t, loopback)
			url := c.url
			if url == "" {
				url = provider(t, c.handler).URL + "/charge"
			}
			v.tool("charge", url)
			id := v.enqueue("charge", `{"orderId":42}`, "")
			v.deliverOne()
			j, as := v.job(id)
			if len(as) != 1 {
				t.Fatalf("attempts = %+v, want 1", as)
			}
			a := as[0]
			t.Logf("attempt: %s %s status=%d retryAfter=%d message=%q headers=%s excerpt=%.40q requestMs=%d", a.Outcome, a.Classification, a.HTTPStatus, a.RetryAfterMs, a.Message, a.ResponseHeaders, a.ResponseExcerpt, a.RequestMs)
			if a.Classification != c.classification || a.Outcome != c.outcome || j.State != c.state || a.HTTPStatus != c.status {
				t.Errorf("attempt %s/%s status %d, job %s; want %s/%s status %d, job %s", a.Classification, a.Outcome, a.HTTPStatus, j.State,
					c.classification, c.outcome, c.status, c.state)
			}
			if a.RetryAfterMs < c.retryAfterMs[0] || a.RetryAfterMs > c.retryAfterMs[1] {
				t.Errorf("retryAfterMs = %d, want %v", a.RetryAfterMs, c.retryAfterMs)
			}
			if c.state == wire.JobScheduled {
				// The policy's first delay is 1 s; a Retry-After hint is the floor.
				want := max(int64(1000), a.RetryAfterMs)
				if got := j.DueAt - a.FinishedAt; got != want {
					t.Errorf("next attempt %d ms after the first, want %d", got, want)
				}
			}
			if c.header != "" && !strings.Contains(a.ResponseHeaders, `"`+c.header+`"`) {
				t.Errorf("response headers %s lack %s", a.ResponseHeaders, c.header)
			}
			if !strings.Contains(a.Message, c.message) {
				t.Errorf("message %q lacks %q", a.Message, c.message)
			}
			if !strings.HasPrefix(a.ResponseExcerpt, c.excerpt) {
				t.Errorf("excerpt %q, want it to start %q", a.ResponseExcerpt, c.excerpt)
			}
			if c.excerptLen > 0 && len(a.ResponseExcerpt) != c.excerptLen {
				t.Errorf("excerpt of %d bytes, want %d", len(a.ResponseExcerpt), c.excerptLen)
			}
			if a.RequestMs <= 0 {
				t.Errorf("requestMs = %d, want > 0", a.RequestMs)
			}
		})
	}
}

// TestSignatureVerifiedIndependently checks a delivery's headers, and its
// signature with a verifier written here from the Standard Webhooks
// specification, not with the signer.
func TestSignatureVerifiedIndependently(t *testing.T) {
	v := newEnv(t, loopback)
	type seen struct {
		header http.Header
		body   []byte
	}
	got := make(chan seen, 1)
	srv := provider(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Header.Clone(), b}
	})
	tl, err := v.publish("hook", fmt.Sprintf(`{"url":%q,"method":"PUT","headers":{"Authorization":"Bearer t0k"},"generateSecret":true}`, srv.URL+"/orders/{orderId}?ref={ref}"), 5000)
	if err != nil {
		t.Fatal(err)
	}
	secret := tl.DeliverySecret
	id := v.enqueue("hook", `{"orderId":"A 1/2","ref":7,"amount":100}`, "order-42")
	v.deliverOne()
	s := <-got
	if j, _ := v.job(id); j.State != wire.JobSucceeded {
		t.Fatalf("job %s, want succeeded", j.State)
	}
	if k := s.header.Get("Idempotency-Key"); k != "order-42" {
		t.Errorf("Idempotency-Key %q", k)
	}
	if n := s.header.Get("Ratchet-Attempt"); n != "1" {
		t.Errorf("Ratchet-Attempt %q", n)
	}
	if a := s.header.Get("Authorization"); a != "Bearer t0k" {
		t.Errorf("static header Authorization %q", a)
	}
	if string(s.body) != `{"orderId":"A 1/2","ref":7,"amount":100}` {
		t.Errorf("body %s", s.body)
	}
	// The verifier: base64 of HMAC-SHA256 over "id.timestamp.body" with the
	// key bytes after "whsec_", compared with each "v1,..." of the header.
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q is not whsec_ + base64", secret)
	}
	msgID, ts := s.header.Get("webhook-id"), s.header.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		t.Fatalf("webhook-timestamp %q not within 5 minutes", ts)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + ts + "." + string(s.body)))
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	ok := false
	for _, sig := range strings.Fields(s.header.Get("webhook-signature")) {
		if v, found := strings.CutPrefix(sig, "v1,"); found && hmac.Equal([]byte(v), []byte(want)) {
			ok = true
		}
	}
	if !ok || msgID == "" {
		t.Errorf("signature %q (id %q) does not verify; want v1,%s", s.header.Get("webhook-signature"), msgID, want)
	}
}

// TestURLTemplate: the path and query are filled from the payload,
// escaped; a payload without the member fails the job, saying which.
func TestURLTemplate(t *testing.T) {
	v := newEnv(t, loopback)
	paths := make(chan string, 1)
	srv := provider(t, func(_ http.ResponseWriter, r *http.Request) { paths <- r.URL.RequestURI() })
	v.tool("charge", srv.URL+"/orders/{orderId}/charge?ref={ref}")
	v.enqueue("charge", `{"orderId":"A 1/2","ref":true}`, "")
	v.deliverOne()
	if p := <-paths; p != "/orders/A%201%2F2/charge?ref=true" {
		t.Errorf("request URI %q", p)
	}
	id := v.enqueue("charge", `{"ref":1}`, "")
	v.deliverOne()
	j, as := v.job(id)
	if j.State != wire.JobFailed || !strings.Contains(as[0].Message, `"orderId"`) {
		t.Errorf("job %s, message %q; want failed naming orderId", j.State, as[0].Message)
	}
	// A value of ".." would send the request to /charge?ref=1 (servers
	// resolve dot segments): the job fails, and the provider is not called.
	id = v.enqueue("charge", `{"orderId":"..","ref":1}`, "")
	v.deliverOne()
	j, as = v.job(id)
	if j.State != wire.JobFailed || !strings.Contains(as[0].Message, "dot segment") || len(paths) != 0 {
		t.Errorf("job %s, message %q, %d requests; want failed naming the dot segment, no request", j.State, as[0].Message, len(paths))
	}
}

// TestUnsendableRequest: a job whose request cannot be built — here an
// idempotency key with a control character, stored before enqueue refused
// such keys — is one attempt, failed at once as request_invalid, and the
// provider never hears of it. (Each attempt used to be recorded as a
// retryable network error until the job was exhausted.) Enqueue refuses
// the key today, naming the field.
func TestUnsendableRequest(t *testing.T) {
	v := newEnv(t, loopback)
	requests := make(chan string, 8)
	srv := provider(t, func(_ http.ResponseWriter, r *http.Request) { requests <- r.Header.Get("Idempotency-Key") })
	v.tool("charge", srv.URL)
	for _, bad := range []string{"order\x0142", "order\r\nX-Evil: 1", "tab\tkey", "del\x7f", " lead"} {
		_, err := v.e.Enqueue(v.ctx, v.owner, engine.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{}`), IdempotencyKey: bad})
		fe, ok := field.As(err)
		if !ok || len(fe) != 1 || fe[0].Field != "idempotencyKey" || fe[0].Value != strconv.QuoteToASCII(bad) || !strings.Contains(fe[0].Allowed, "header value") {
			t.Errorf("enqueue with key %q: %v; want a field error naming idempotencyKey, the value and what is allowed", bad, err)
		}
	}
	id := v.enqueue("charge", `{}`, "placeholder")
	db, err := sql.Open("sqlite", v.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE jobs SET idempotency_key = ? WHERE id = ?`, "order\x0142", id); err != nil {
		t.Fatal(err)
	}
	v.deliverOne()
	j, as := v.job(id)
	if j.State != wire.JobFailed || len(as) != 1 || as[0].Classification != classify.CodeRequestInvalid ||
		!strings.Contains(as[0].Message, "idempotency key") {
		t.Errorf("job %s after one delivery, attempts %+v; want failed, one request_invalid attempt", j.State, as)
	}
	select {
	case k := <-requests:
		t.Errorf("the provider received a request (key %q)", k)
	default:
	}
}

// TestUnsendableProbeKeepsCircuitHalfOpen: a half-open circuit's probe
// whose request cannot be built tells nothing of the provider, so the
// circuit stays half-open and the next job is the probe. (Any other
// failure that does not count would close it: the provider answered.)
func TestUnsendableProbeKeepsCircuitHalfOpen(t *testing.T) {
	v := newEnv(t, loopback)
	var hits atomic.Int64
	srv := provider(t, func(http.ResponseWriter, *http.Request) { hits.Add(1) })
	v.tool("charge", srv.URL)
	bad := v.enqueue("charge", `{}`, "placeholder")
	v.clk.Advance(time.Millisecond)
	good := v.enqueue("charge", `{}`, "order-1")
	db, err := sql.Open("sqlite", v.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE jobs SET idempotency_key = ? WHERE id = ?`, "order\x01", bad); err != nil {
		t.Fatal(err)
	}
	ep, err := v.e.OpenCircuit(v.ctx, v.owner, "provider")
	if err != nil {
		t.Fatal(err)
	}
	v.clk.Advance(time.Duration(ep.CircuitOpenMs) * time.Millisecond)
	if c := v.deliverOne(); c.Job.ID != bad {
		t.Fatalf("the probe is job %d, want the unsendable job %d", c.Job.ID, bad)
	}
	if ep, _ = v.e.Endpoint(v.ctx, v.owner, "provider"); ep.CircuitState != wire.CircuitHalfOpen || ep.CircuitProbeJob != 0 {
		t.Fatalf("after the unsendable probe: circuit %s, probe job %d; want half_open without a probe", ep.CircuitState, ep.CircuitProbeJob)
	}
	if _, as := v.job(bad); len(as) != 1 || as[0].Classification != classify.CodeRequestInvalid || hits.Load() != 0 {
		t.Fatalf("unsendable job attempts %+v, provider hits %d", as, hits.Load())
	}
	if c := v.deliverOne(); c.Job.ID != good {
		t.Fatalf("the next probe is job %d, want %d", c.Job.ID, good)
	}
	if ep, _ = v.e.Endpoint(v.ctx, v.owner, "provider"); ep.CircuitState != wire.CircuitClosed || hits.Load() != 1 {
		t.Errorf("after the good probe: circuit %s, provider hits %d; want closed after one request", ep.CircuitState, hits.Load())
	}
}

// TestRetryAfterThenSuccess: 503 with Retry-After, then 200; the second
// attempt waits for the hint and succeeds.
func TestRetryAfterThenSuccess(t *testing.T) {
	v := newEnv(t, loopback)
	var mu sync.Mutex
	n := 0
	srv := provider(t, func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(503)
			return
		}
		io.WriteString(w, `{"charged":true}`)
	})
	v.tool("charge", srv.URL)
	id := v.enqueue("charge", `{}`, "k")
	v.deliverOne()
	if cs, _ := v.e.ClaimDeliveries(v.ctx, "n", 1, 0); len(cs) != 0 {
		t.Fatalf("claimed %d jobs before the Retry-After passed", len(cs))
	}
	v.clk.Advance(2 * time.Second)
	v.deliverOne()
	j, as := v.job(id)
	if j.State != wire.JobSucceeded || len(as) != 2 || as[0].Classification != "retry_after" || as[1].Classification != "success" || as[1].ResponseExcerpt != `{"charged":true}` {
		t.Errorf("job %s, attempts %+v", j.State, as)
	}
}

// TestWorkersDoNotClaimDeliveredTools: a worker key for the tool finds
// nothing; the dispatcher does.
func TestWorkersDoNotClaimDeliveredTools(t *testing.T) {
	v := newEnv(t, loopback)
	srv := provider(t, func(http.ResponseWriter, *http.Request) {})
	v.tool("charge", srv.URL)
	v.enqueue("charge", `{}`, "")
	cs, err := v.e.Claim(v.ctx, v.owner, engine.ClaimRequest{WorkerID: "w", Tools: []string{"charge@1"}})
	if err != nil || len(cs) != 0 {
		t.Fatalf("worker claim = %d jobs, %v; want none", len(cs), err)
	}
	v.deliverOne()
}

// TestAddressPolicy: every refused class of IP literal is refused at
// publish, naming the field and the flag; a name that resolves to loopback
// is refused at connect time (so DNS rebinding cannot reach it), and the
// job fails saying why.
func TestAddressPolicy(t *testing.T) {
	v := newEnv(t, nil)
	for _, u := range []string{"http://127.0.0.1:9/", "http://[::1]/", "http://10.1.2.3/", "http://172.16.0.1/", "http://192.168.1.1/",
		"http://[fc00::1]/", "http://169.254.169.254/latest/meta-data", "http://169.254.1.1/", "http://[fe80::1]/", "http://0.0.0.0/",
		"http://[::]/", "http://224.0.0.1/", "http://100.64.0.1/", "http://[::ffff:127.0.0.1]/",
		// A zone once hid a link-local address from every class; ::a.b.c.d
		// embeds an IPv4 address.
		"http://[fe80::1%25eth0]/", "http://[fe80::a9fe:a9fe%251]/", "http://[::127.0.0.1]/", "http://[::10.0.0.1]/"} {
		_, err := v.publish("t", fmt.Sprintf(`{"url":%q}`, u), 2000)
		fs, ok := field.As(err)
		if !ok || len(fs) != 1 || fs[0].Field != "delivery.url" || !strings.Contains(fs[0].Allowed, "--delivery-allow") {
			t.Errorf("publish %s: %v; want a delivery.url error naming --delivery-allow", u, err)
		}
	}
	var hits atomic.Int64
	srv := provider(t, func(http.ResponseWriter, *http.Request) { hits.Add(1) })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	v.tool("local", "http://localhost:"+strconv.Itoa(port)+"/")
	id := v.enqueue("local", `{}`, "")
	v.deliverOne()
	j, as := v.job(id)
	if j.State != wire.JobFailed || !strings.Contains(as[0].Message, "loopback") || !strings.Contains(as[0].Message, "--delivery-allow") || hits.Load() != 0 {
		t.Errorf("job %s, message %q, provider hits %d; want failed, refused as loopback, no request", j.State, as[0].Message, hits.Load())
	}
	var re *webhook.RefusedError
	if err := (webhook.Policy{}).Check(netip.MustParseAddr("127.0.0.1")); !errors.As(err, &re) || re.Class != "loopback" {
		t.Errorf("Check(127.0.0.1) = %v", err)
	}
}

// TestSecretsShownOnce: a bad secret is refused without echoing it.
func TestSecretNeverEchoed(t *testing.T) {
	v := newEnv(t, loopback)
	_, err := v.publish("t", `{"url":"https://example.com/","secret":"whsec_not base64 s3cr3t"}`, 2000)
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("publish with a bad secret: %v; want an error without the value", err)
	}
}

// TestShutdownLeavesTheLease: a request in flight when the dispatcher is
// abandoned is not reported; its lease expires and the rescue records the
// attempt as timed out and schedules the retry.
func TestShutdownLeavesTheLease(t *testing.T) {
	v := newEnv(t, loopback)
	started := make(chan struct{})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := provider(t, func(_ http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		close(started)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	v.tool("charge", srv.URL)
	id := v.enqueue("charge", `{}`, "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.d.Run(ctx); close(done) }()
	<-started
	v.d.Stop()
	cancel()
	<-done
	j, _ := v.job(id)
	if j.State != wire.JobRunning {
		t.Fatalf("job %s after shutdown, want still running on its lease", j.State)
	}
	v.clk.Advance(2 * time.Second)
	if n, err := v.e.Rescue(v.ctx); err != nil || n != 1 {
		t.Fatalf("Rescue = %d, %v", n, err)
	}
	j, as := v.job(id)
	if j.State != wire.JobScheduled || as[0].Outcome != wire.OutcomeTimedOut {
		t.Errorf("job %s, attempt %s; want scheduled after a timed_out attempt", j.State, as[0].Outcome)
	}
}
