package delivery_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/api"
	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/delivery"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/postgres"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
	"github.com/getratchet/ratchet/internal/store/sqlite"
	"github.com/getratchet/ratchet/internal/webhook"
	"github.com/getratchet/ratchet/wire"
)

// received is one request a loopback sink got, and when.
type received struct {
	path   string
	header http.Header
	body   []byte
	at     time.Time
}

// sink is a loopback server that records every request; fail makes it
// answer 503 to the first n.
type sink struct {
	mu   sync.Mutex
	got  []received
	fail int
	url  string
	ch   map[string]chan received // by path
}

func newSink(t *testing.T) *sink {
	s := &sink{ch: map[string]chan received{}}
	for _, p := range []string{"/hook", "/slack", "/teams"} {
		s.ch[p] = make(chan received, 1000)
	}
	srv := provider(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc := received{r.URL.Path, r.Header.Clone(), b, time.Now()}
		s.mu.Lock()
		failing := s.fail > 0
		if failing {
			s.fail--
		}
		s.mu.Unlock()
		if failing {
			w.WriteHeader(503)
			return
		}
		s.mu.Lock()
		s.got = append(s.got, rc)
		s.mu.Unlock()
		s.ch[r.URL.Path] <- rc
		w.WriteHeader(204)
	})
	s.url = srv.URL
	return s
}

// next waits (at most 10 s, a hang guard, not a timing assertion) for the
// next request to path.
func (s *sink) next(t *testing.T, path string) received {
	t.Helper()
	select {
	case r := <-s.ch[path]:
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("no alert reached %s", path)
		return received{}
	}
}

// alertEnv is an engine on a store of the test's driver with a clock of
// its choice, an owner, an endpoint "flaky" (threshold 1, open 1 s) and a
// worker tool "call" on it.
type alertEnv struct {
	t     *testing.T
	ctx   context.Context
	e     *engine.Engine
	owner *engine.Principal
	s     *delivery.AlertSender
	probe []engine.Claimed
	st    store.Store
}

func newAlertEnv(t *testing.T, driver string, clk clock.Clock) *alertEnv {
	t.Helper()
	ctx := context.Background()
	var st store.Store
	var err error
	if driver == "postgres" {
		st, err = postgres.Open(ctx, pgtest.URL(t), postgres.Options{})
	} else {
		st, err = sqlite.Open(ctx, filepath.Join(t.TempDir(), "ratchet.db"), sqlite.Options{Synchronous: "NORMAL"})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	pol := webhook.Policy{Allow: loopback}
	v := &alertEnv{t: t, ctx: ctx, st: st}
	v.e, err = engine.New(engine.Config{Store: st, Clock: clk, Rand: func() float64 { return 0.5 }, DeliveryPolicy: pol,
		PublicURL: "https://ratchet.example.com", AlertInterval: 50 * time.Millisecond})
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
	v.s = delivery.NewAlertSender(v.e, pol, nil, "Ratchet/test", 50*time.Millisecond)
	fields, err := backoff.ReadObject([]byte(`{"preset":"STANDARD","circuitFailureThreshold":1,"circuitOpenMs":1000}`), "endpoint")
	if err != nil {
		t.Fatal(err)
	}
	pp, err := api.DecodeEndpointPolicy(fields, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.CreateEndpoint(ctx, v.owner, "flaky", pp); err != nil {
		t.Fatal(err)
	}
	spec, err := api.DecodeToolSpec([]byte(`{"name":"call","version":"1","endpoint":"flaky"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.PublishTool(ctx, v.owner, spec); err != nil {
		t.Fatal(err)
	}
	return v
}

func (v *alertEnv) sink(name string, kind wire.AlertSinkKind, url string) *store.AlertSink {
	v.t.Helper()
	k, err := v.e.CreateAlertSink(v.ctx, v.owner, wire.AlertSinkCreate{Name: name, Kind: kind, URL: url})
	if err != nil {
		v.t.Fatal(err)
	}
	return k
}

// attempt enqueues a job, claims it and reports it: a 503 or a success.
func (v *alertEnv) attempt(ok bool) {
	v.t.Helper()
	if _, err := v.e.Enqueue(v.ctx, v.owner, engine.EnqueueRequest{Tool: "call@1", Payload: json.RawMessage(`{}`)}); err != nil {
		v.t.Fatal(err)
	}
	v.claimReport(ok)
}

func (v *alertEnv) claimReport(ok bool) {
	v.t.Helper()
	cs, err := v.e.Claim(v.ctx, v.owner, engine.ClaimRequest{WorkerID: "w", Tools: []string{"call@1"}, Max: 1})
	if err != nil || len(cs) != 1 {
		v.t.Fatalf("claim: %v, %d jobs", err, len(cs))
	}
	rep := classify.Report{HTTPStatus: 503}
	if ok {
		rep = classify.Report{Success: true, HTTPStatus: 200}
	}
	if _, err := v.e.Report(v.ctx, v.owner, engine.ReportRequest{JobID: cs[0].Job.ID, LeaseToken: cs[0].LeaseToken, Report: rep}); err != nil {
		v.t.Fatal(err)
	}
}

// testAlertsReachSinks: on the real clock, with the engine's duties and
// the alert sender running, each transition of a circuit (opened by a
// 503, half-open by the probe's claim, closed by its success) reaches a
// webhook, a Slack and a Teams sink on loopback; the time from the
// transition to the sink is printed (not asserted). Each alert carries
// its arithmetic and the console link; the webhook deliveries verify
// with the official Standard Webhooks library.
func testAlertsReachSinks(t *testing.T, driver string) {
	// Real timers (the engine's duties and the sender run on their own),
	// a clock moved past the circuit's open time instead of a sleep.
	clk := clock.NewOffset(0)
	v := newAlertEnv(t, driver, clk)
	sk := newSink(t)
	hook := v.sink("pager", wire.SinkWebhook, sk.url+"/hook")
	v.sink("chat", wire.SinkSlack, sk.url+"/slack")
	v.sink("team", wire.SinkTeams, sk.url+"/teams")
	ctx, cancel := context.WithCancel(v.ctx)
	defer cancel()
	done := make(chan struct{}, 2)
	go func() { v.e.Run(ctx); done <- struct{}{} }()
	go func() { v.s.Run(ctx); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()

	var hooks []received
	step := func(name string, kind wire.AlertKind, act func()) map[string]any {
		start := time.Now()
		act()
		h := sk.next(t, "/hook")
		sl, tm := sk.next(t, "/slack"), sk.next(t, "/teams")
		t.Logf("%s: webhook %v, slack %v, teams %v after the transition", name, h.at.Sub(start).Round(time.Millisecond),
			sl.at.Sub(start).Round(time.Millisecond), tm.at.Sub(start).Round(time.Millisecond))
		hooks = append(hooks, h)
		var msg struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(h.body, &msg); err != nil || msg.Type != "ratchet.alert."+string(kind) {
			t.Fatalf("%s: webhook body %s", name, h.body)
		}
		if link := msg.Data["link"]; link != "https://ratchet.example.com/endpoints/flaky" {
			t.Errorf("%s: link %v", name, link)
		}
		var slack struct {
			Text   string           `json:"text"`
			Blocks []map[string]any `json:"blocks"`
		}
		if err := json.Unmarshal(sl.body, &slack); err != nil || !strings.Contains(slack.Text, "flaky") || len(slack.Blocks) < 3 {
			t.Errorf("%s: slack body %s", name, sl.body)
		}
		var teams struct {
			Type        string `json:"type"`
			Attachments []struct {
				ContentType string         `json:"contentType"`
				Content     map[string]any `json:"content"`
			} `json:"attachments"`
		}
		if err := json.Unmarshal(tm.body, &teams); err != nil || teams.Type != "message" || len(teams.Attachments) != 1 ||
			teams.Attachments[0].ContentType != "application/vnd.microsoft.card.adaptive" || teams.Attachments[0].Content["type"] != "AdaptiveCard" {
			t.Errorf("%s: teams body %s", name, tm.body)
		}
		return msg.Data
	}
	opened := step("circuit opened", wire.AlertCircuitOpened, func() { v.attempt(false) })
	if opened["failures"] != 1.0 || opened["threshold"] != 1.0 || opened["openedAt"] == nil || opened["nextProbeAt"] == nil || opened["heldJobs"] != 0.0 {
		t.Errorf("circuit_opened data: %v", opened)
	}
	if _, err := v.e.Enqueue(v.ctx, v.owner, engine.EnqueueRequest{Tool: "call@1", Payload: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	var probeJobs int
	half := step("circuit half-open", wire.AlertCircuitHalfOpen, func() {
		cs, err := v.e.Claim(v.ctx, v.owner, engine.ClaimRequest{WorkerID: "w", Tools: []string{"call@1"}, Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		probeJobs, v.probe = len(cs), cs
	})
	if probeJobs != 1 || !strings.Contains(half["detail"].(string), "probes the provider") {
		t.Errorf("half-open: %d jobs claimed, data %v", probeJobs, half)
	}
	closed := step("circuit closed", wire.AlertCircuitClosed, func() {
		c := v.probe[0]
		if _, err := v.e.Report(v.ctx, v.owner, engine.ReportRequest{JobID: c.Job.ID, LeaseToken: c.LeaseToken, Report: classify.Report{Success: true, HTTPStatus: 200}}); err != nil {
			t.Fatal(err)
		}
	})
	if !strings.Contains(closed["summary"].(string), "Circuit closed") {
		t.Errorf("closed: %v", closed)
	}
	verifyStandardWebhooks(t, hook.Secret, hooks)
}

// verifyStandardWebhooks runs scripts/standardwebhooks/verify.mjs, which
// verifies each delivery with the npm package standardwebhooks.
func verifyStandardWebhooks(t *testing.T, secret string, hooks []received) {
	t.Helper()
	dir := filepath.Join("..", "..", "scripts", "standardwebhooks")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the signatures are not verified with the official Standard Webhooks library")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks")); err != nil {
		if _, err := exec.LookPath("npm"); err != nil {
			t.Skip("npm is not installed: cannot install standardwebhooks to verify the signatures")
		}
		if out, err := exec.Command("npm", "ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error").CombinedOutput(); err != nil {
			t.Skipf("npm ci in %s failed (offline?): %v\n%s", dir, err, out)
		}
	}
	type del struct {
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	in := struct {
		Secret     string `json:"secret"`
		Deliveries []del  `json:"deliveries"`
	}{Secret: secret}
	for _, h := range hooks {
		in.Deliveries = append(in.Deliveries, del{Headers: map[string]string{"webhook-id": h.header.Get("webhook-id"),
			"webhook-timestamp": h.header.Get("webhook-timestamp"), "webhook-signature": h.header.Get("webhook-signature")}, Body: string(h.body)})
	}
	b, _ := json.Marshal(in)
	cmd := exec.Command("node", filepath.Join(dir, "verify.mjs"))
	cmd.Stdin = strings.NewReader(string(b))
	out, err := cmd.CombinedOutput()
	t.Logf("standardwebhooks (npm) verify:\n%s", out)
	if err != nil || strings.Count(string(out), "ok alert_") != len(hooks) {
		t.Fatalf("the official library did not verify every delivery: %v", err)
	}
}

func TestAlertsReachSinks(t *testing.T) { testAlertsReachSinks(t, "sqlite") }
func TestAlertsReachSinksPostgres(t *testing.T) {
	if !pgtest.Available() {
		t.Skip("PostgreSQL not reachable: set RATCHET_TEST_POSTGRES_URL")
	}
	testAlertsReachSinks(t, "postgres")
}

// testFlappingIsCapped: a provider that flaps 20 times in a minute (on
// the fake clock: a 503 opens the circuit, its probe's claim half-opens
// it, the probe's success closes it) writes 20 events, and the sink gets
// maxPerWindow alerts (5) and, at the window's end, one alert counting
// the 15 suppressed: never more than the cap and its summary.
func testFlappingIsCapped(t *testing.T, driver string) {
	clk := clock.NewFake(time.Now().Truncate(10 * time.Minute))
	v := newAlertEnv(t, driver, clk)
	sk := newSink(t)
	v.sink("pager", wire.SinkWebhook, sk.url+"/hook")
	transitions := 0
	for transitions < 20 {
		v.attempt(false) // opens
		transitions++
		clk.Advance(time.Second)
		if _, err := v.e.Enqueue(v.ctx, v.owner, engine.EnqueueRequest{Tool: "call@1", Payload: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		cs, err := v.e.Claim(v.ctx, v.owner, engine.ClaimRequest{WorkerID: "w", Tools: []string{"call@1"}, Max: 1}) // half-opens
		if err != nil || len(cs) != 1 {
			t.Fatalf("probe claim: %v %d", err, len(cs))
		}
		transitions++
		if transitions == 20 {
			break
		}
		if _, err := v.e.Report(v.ctx, v.owner, engine.ReportRequest{JobID: cs[0].Job.ID, LeaseToken: cs[0].LeaseToken,
			Report: classify.Report{Success: true, HTTPStatus: 200}}); err != nil { // closes
			t.Fatal(err)
		}
		transitions++
		clk.Advance(time.Second)
	}
	all, err := v.e.EndpointEvents(v.ctx, v.owner, "flaky", 0, 0, 100)
	var evs []store.EndpointEvent // the circuit's transitions; each close also starts a recovery ramp
	for _, ev := range all {
		if strings.HasPrefix(string(ev.Kind), "circuit_") {
			evs = append(evs, ev)
		}
	}
	if err != nil || len(evs) != 20 {
		t.Fatalf("%d circuit events, want the 20 transitions (%v)", len(evs), err)
	}
	flapped := time.Duration(evs[0].At-evs[19].At) * time.Millisecond
	clk.Advance(time.Second) // on PostgreSQL the feed reads events once they settle (half a second)
	if _, err := v.e.RaiseAlerts(v.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.RaiseAlerts(v.ctx); err != nil { // a second pass reads nothing again
		t.Fatal(err)
	}
	if _, err := v.s.Pass(v.ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(sk.got); n != wire.DefaultAlertMaxPerWindow {
		t.Fatalf("%d alerts during the window, want the cap %d", n, wire.DefaultAlertMaxPerWindow)
	}
	clk.Advance(10 * time.Minute)
	if _, err := v.s.Pass(v.ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(sk.got); n != wire.DefaultAlertMaxPerWindow+1 {
		t.Fatalf("%d alerts after the window, want the cap and one summary", n)
	}
	var last struct {
		Type string     `json:"type"`
		Data wire.Alert `json:"data"`
	}
	if err := json.Unmarshal(sk.got[len(sk.got)-1].body, &last); err != nil || last.Type != "ratchet.alert.suppressed" || last.Data.Count != 15 {
		t.Errorf("summary: %s", sk.got[len(sk.got)-1].body)
	}
	t.Logf("20 transitions in %v of fake time: %d alerts sent (cap %d), the summary counts %d suppressed", flapped,
		len(sk.got), wire.DefaultAlertMaxPerWindow, last.Data.Count)
}

func TestFlappingIsCapped(t *testing.T) { testFlappingIsCapped(t, "sqlite") }
func TestFlappingIsCappedPostgres(t *testing.T) {
	if !pgtest.Available() {
		t.Skip("PostgreSQL not reachable: set RATCHET_TEST_POSTGRES_URL")
	}
	testFlappingIsCapped(t, "postgres")
}

// TestAlertRetriedAcrossARestart: a sink answering 503 is retried with
// backoff (not before its delay), by another engine on the same database
// (a restart: the outbox is in the database), until it answers 2xx; the
// delivery then reads delivered after 3 attempts.
func TestAlertRetriedAcrossARestart(t *testing.T) {
	clk := clock.NewFake(time.Now())
	v := newAlertEnv(t, "sqlite", clk)
	sk := newSink(t)
	sk.fail = 2
	v.sink("pager", wire.SinkSlack, sk.url+"/slack")
	if _, err := v.e.TestAlert(v.ctx, v.owner, "pager"); err != nil {
		t.Fatal(err)
	}
	if n, err := v.s.Pass(v.ctx); n != 1 || err != nil {
		t.Fatalf("first pass: %d %v", n, err)
	}
	if n, _ := v.s.Pass(v.ctx); n != 0 {
		t.Fatalf("a failed alert was sent again before its backoff")
	}
	// A restart: a new engine and sender on the same database.
	pol := webhook.Policy{Allow: loopback}
	e2, err := engine.New(engine.Config{Store: v.st, Clock: clk, Rand: func() float64 { return 0.5 }, DeliveryPolicy: pol})
	if err != nil {
		t.Fatal(err)
	}
	v.e, v.s = e2, delivery.NewAlertSender(e2, pol, nil, "Ratchet/test", time.Second)
	clk.Advance(3 * time.Second) // 2 s ±50 %
	if n, _ := v.s.Pass(v.ctx); n != 1 {
		t.Fatalf("the retry did not go after its backoff")
	}
	clk.Advance(6 * time.Second) // 4 s ±50 %
	if n, _ := v.s.Pass(v.ctx); n != 1 || len(sk.got) != 1 {
		t.Fatalf("third attempt: %d sent, %d received", n, len(sk.got))
	}
	ds, err := v.e.AlertDeliveries(v.ctx, v.owner, 10)
	if err != nil || len(ds) != 1 || ds[0].State != wire.AlertDelivered || ds[0].Attempts != 3 || ds[0].LastStatus != 204 {
		t.Fatalf("delivery: %v %+v", err, ds)
	}
}
