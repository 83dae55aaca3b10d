package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

const ownerKey = "rk_test_owner_key_0123456789abcdef"

// ctx bounds a test's calls: 5 minutes, as a loaded machine took over
// 2 for TestWorkerUnderFaultsAndKill, whose own deadlines are tighter.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return c
}

func apiErr(t *testing.T, err error, status int) *client.Error {
	t.Helper()
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != status {
		t.Fatalf("want HTTP %d, got %v", status, err)
	}
	return ae
}

// TestWalkThroughHTTP drives the real binary only over HTTP: owner key →
// endpoint → tool → enqueue → claim → failure with Retry-After: 120 → the
// next due time honours it → success; plus the version guard, scopes,
// project isolation and stale leases.
func TestWalkThroughHTTP(t *testing.T) {
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey, "--dev-clock")
	k := newContract(t, srv.URL)
	c := ctx(t)
	owner := k.client(srv.URL, ownerKey)
	ep, err := owner.CreateEndpoint(c, "stripe", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 6, InitialDelayMs: 10000, Multiplier: 2, MaxDelayMs: 600000, JitterPercent: 20}}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 30000, MaxConcurrent: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.PublishTool(c, client.ToolSpec{Name: "charge", Version: "1", Endpoint: "stripe", Description: "charge a card",
		PayloadSchema: json.RawMessage(`{"type":"object","required":["amount"]}`)}); err != nil {
		t.Fatal(err)
	}
	pk, err := owner.CreateKey(c, "producer", "producer", nil)
	if err != nil {
		t.Fatal(err)
	}
	wk, err := owner.CreateKey(c, "worker", "worker", []string{"charge@1"})
	if err != nil {
		t.Fatal(err)
	}
	producer, worker := k.client(srv.URL, pk.Secret), k.client(srv.URL, wk.Secret)

	job, created, err := producer.Enqueue(c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":4200}`), IdempotencyKey: "order-42"})
	if err != nil || !created {
		t.Fatalf("enqueue: %v created=%v", err, created)
	}
	again, created, err := producer.Enqueue(c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":4200}`), IdempotencyKey: "order-42"})
	if err != nil || created || again.ID != job.ID {
		t.Fatalf("repeated idempotency key: %v created=%v id %d vs %d", err, created, again.ID, job.ID)
	}

	claimed, err := worker.Claim(c, client.ClaimRequest{WorkerID: "w1", Max: 5})
	if err != nil || len(claimed) != 1 || claimed[0].IdempotencyKey != "order-42" || claimed[0].Attempt != 1 {
		t.Fatalf("claim: %v %+v", err, claimed)
	}
	lease := claimed[0].LeaseToken
	before := proctest.Now()
	res, err := worker.ReportOne(c, client.Report{JobID: job.ID, LeaseToken: lease, HTTPStatus: 503, Headers: map[string]string{"Retry-After": "120"}})
	if err != nil {
		t.Fatal(err)
	}
	due, _ := time.Parse(time.RFC3339, res.Job.DueAt)
	if res.Job.State != "scheduled" || due.Before(before.Add(120*time.Second-time.Second)) || due.After(proctest.Now().Add(121*time.Second)) {
		t.Fatalf("after Retry-After: 120 the job is %s due %s (reported at %s)", res.Job.State, res.Job.DueAt, before)
	}
	got, err := producer.GetJob(c, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	a := got.Attempts[0]
	if *a.RetryAfterMs != 120000 || *a.SelectedDelayMs != 120000 || *a.MinDelayMs != 8000 || *a.MaxDelayMs != 12000 || *a.BaseDelayMs != 10000 || got.HeldBy.Gate != "due_time" {
		t.Fatalf("attempt arithmetic: %+v held %+v", a, got.HeldBy)
	}
	// A report with the now-stale lease is refused and changes nothing.
	_, err = worker.ReportOne(c, client.Report{JobID: job.ID, LeaseToken: lease, Success: true})
	apiErr(t, err, http.StatusConflict)
	_, err = worker.ReportOne(c, client.Report{JobID: job.ID, LeaseToken: "not-a-lease", Success: true})
	apiErr(t, err, http.StatusConflict)
	if j, _ := producer.GetJob(c, job.ID); j.State != "scheduled" || j.DueAt != res.Job.DueAt {
		t.Fatalf("a refused report changed the job: %+v", j)
	}

	// Not claimable before the hint has passed, claimable after.
	if err := owner.AdvanceClock(c, 110*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, _ := worker.Claim(c, client.ClaimRequest{WorkerID: "w1"}); len(got) != 0 {
		t.Fatalf("claimed %d jobs before the Retry-After passed", len(got))
	}
	if err := owner.AdvanceClock(c, 11*time.Second); err != nil {
		t.Fatal(err)
	}
	claimed, err = worker.Claim(c, client.ClaimRequest{WorkerID: "w1", WaitMs: 2000})
	if err != nil || len(claimed) != 1 || claimed[0].Attempt != 2 {
		t.Fatalf("claim after the hint: %v %+v", err, claimed)
	}
	res, err = worker.ReportOne(c, client.Report{JobID: job.ID, LeaseToken: claimed[0].LeaseToken, Success: true, HTTPStatus: 200})
	if err != nil || res.Job.State != "succeeded" {
		t.Fatalf("success: %v %+v", err, res)
	}

	// The version guard: a stale expectedVersion is a 409 carrying the
	// current endpoint, and nothing changes.
	upd := client.EndpointPolicy{Policy: client.Policy{Preset: "AGGRESSIVE"}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 20000, MaxConcurrent: 3}}
	ep2, err := owner.UpdateEndpointPolicy(c, "stripe", ep.Version, upd)
	if err != nil || ep2.Version != ep.Version+1 {
		t.Fatalf("update: %v %+v", err, ep2)
	}
	_, err = owner.UpdateEndpointPolicy(c, "stripe", ep.Version, client.EndpointPolicy{Policy: client.Policy{Preset: "RELAXED"}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 20000, MaxConcurrent: 9}})
	ae := apiErr(t, err, http.StatusConflict)
	if cur := ae.Current; cur == nil || cur.Version != ep2.Version || cur.MaxConcurrent != 3 {
		t.Fatalf("409 body current: %+v", ae.Current)
	}
	if now, _ := owner.GetEndpoint(c, "stripe"); now.Version != ep2.Version || now.MaxConcurrent != 3 || now.Policy.Preset != backoff.Aggressive {
		t.Fatalf("stale update changed the endpoint: %+v", now)
	}

	// Scopes: 403 for the wrong key.
	_, _, err = worker.Enqueue(c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":1}`)})
	apiErr(t, err, http.StatusForbidden)
	_, err = producer.Claim(c, client.ClaimRequest{WorkerID: "p", Tools: []string{"charge@1"}})
	apiErr(t, err, http.StatusForbidden)
	_, err = producer.UpdateEndpointPolicy(c, "stripe", ep2.Version, upd)
	apiErr(t, err, http.StatusForbidden)
	_, err = k.client(srv.URL, "rk_wrong").GetJob(c, job.ID)
	apiErr(t, err, http.StatusUnauthorized)

	// Bad input: 400 naming the field, the value and what is allowed.
	_, _, err = producer.Enqueue(c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":1}`), MaxAttempts: ptr(int64(11))})
	ae = apiErr(t, err, http.StatusBadRequest)
	if len(ae.Fields) != 1 || ae.Fields[0].Field != "maxAttempts" || ae.Fields[0].Value != "11" || !strings.Contains(ae.Fields[0].Allowed, "1 through 10") {
		t.Fatalf("400 fields: %+v", ae.Fields)
	}

	// Another project's ids are 404, not 403.
	out, err := exec.Command(proctest.Binary(t), "project", "create", "--name", "other", "--plan", "PRO", "--database", filepath.Join(srv.Dir, "ratchet.db")).CombinedOutput()
	if err != nil {
		t.Fatalf("project create: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`owner key: (rk_\w+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no key in %s", out)
	}
	other := k.client(srv.URL, string(m[1]))
	_, err = other.GetJob(c, job.ID)
	apiErr(t, err, http.StatusNotFound)
	_, err = other.CancelJob(c, job.ID)
	apiErr(t, err, http.StatusNotFound)
	_, err = other.GetEndpoint(c, "stripe")
	apiErr(t, err, http.StatusNotFound)
	if page, err := other.ListJobs(c, client.JobFilter{}); err != nil || len(page.Jobs) != 0 {
		t.Fatalf("other project sees %d jobs (%v)", len(page.Jobs), err)
	}
}

func ptr[T any](v T) *T { return &v }

// freeAddr finds a loopback port to reuse across a restart.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// outcome decides deterministically what the handler does with attempt n
// of job id: succeed, fail retryably (503), fail for good (400), or crash.
func outcome(id, attempt int64) string {
	switch id % 25 {
	case 7: // some jobs always fail retryably: they must end exhausted
		return "503"
	case 11: // and some fail for good at their first attempt
		return "400"
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%d/%d", id, attempt)
	switch v := h.Sum32() % 100; {
	case v < 45:
		return "ok"
	case v < 85:
		return "503"
	case v < 92:
		return "400"
	default:
		return "lost" // the worker never reports: the lease must expire
	}
}

// TestWorkerUnderFaultsAndKill runs an SDK worker against a handler that
// fails at random and sometimes abandons its lease, kills the server with
// SIGKILL in the middle, restarts it on the same database, and checks that
// every job ends exactly as its policy says.
func TestWorkerUnderFaultsAndKill(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	args := []string{"--bootstrap-key", ownerKey, "--addr", addr}
	srv := proctest.Start(t, dir, nil, args...)
	k := newContract(t, srv.URL)
	c := ctx(t)
	owner := k.client(srv.URL, ownerKey)
	if _, err := owner.CreateEndpoint(c, "flaky", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 4, InitialDelayMs: 1000, Multiplier: 1, MaxDelayMs: 1000, JitterPercent: 0}}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 1000, MaxConcurrent: 64, CircuitFailureThreshold: 1000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.PublishTool(c, client.ToolSpec{Name: "call", Version: "1", Endpoint: "flaky"}); err != nil {
		t.Fatal(err)
	}
	const n = 150
	reqs := make([]client.EnqueueRequest, n)
	for i := range reqs {
		reqs[i] = client.EnqueueRequest{Tool: "call@1", Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
	}
	if _, err := owner.EnqueueBatch(c, reqs); err != nil {
		t.Fatal(err)
	}

	var handled atomic.Int64
	w := client.NewWorker(k.client(srv.URL, ownerKey), client.WorkerOptions{ID: "sdk", Concurrency: 16, Wait: 500 * time.Millisecond})
	w.Handle("call@1", func(ctx context.Context, j *client.ClaimedJob) error {
		handled.Add(1)
		switch outcome(j.ID, j.Attempt) {
		case "ok":
			return nil
		case "503":
			return &client.ResponseError{Status: 503}
		case "400":
			return &client.ResponseError{Status: 400}
		}
		// Hang for a while, then fail; heartbeats keep the lease alive.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(1500 * time.Millisecond):
			return &client.ResponseError{Status: 504}
		}
	})
	// A crashing worker: it claims jobs and never reports, so their leases
	// expire and the server turns them into timed_out attempts.
	rogueCtx, stopRogue := context.WithCancel(context.Background())
	rogueDone := make(chan struct{})
	go func() {
		defer close(rogueDone)
		rogue := k.client(srv.URL, ownerKey)
		for rogueCtx.Err() == nil {
			_, _ = rogue.Claim(rogueCtx, client.ClaimRequest{WorkerID: "crashing", Tools: []string{"call@1"}, Max: 2})
			select {
			case <-rogueCtx.Done():
			case <-time.After(400 * time.Millisecond):
			}
		}
	}()
	wctx, stopWorker := context.WithCancel(context.Background())
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(wctx) }()
	defer func() { stopWorker(); <-workerDone }()

	// Kill the server hard once the worker is well into the load.
	deadline := time.Now().Add(30 * time.Second)
	for handled.Load() < n/2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	srv.Kill()
	stopRogue()
	<-rogueDone
	time.Sleep(300 * time.Millisecond)
	proctest.Start(t, dir, nil, args...)

	// Every job reaches a final state.
	final := map[wire.JobState]bool{"succeeded": true, "failed": true, "exhausted": true}
	var jobs []client.Job
	for finishBy := time.Now().Add(90 * time.Second); ; {
		jobs = jobs[:0]
		cursor := ""
		for {
			page, err := owner.ListJobs(c, client.JobFilter{Limit: 500, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, page.Jobs...)
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		done := 0
		for _, j := range jobs {
			if final[j.State] {
				done++
			}
		}
		if done == n {
			break
		}
		if time.Now().After(finishBy) {
			t.Fatalf("only %d of %d jobs finished", done, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(jobs) != n {
		t.Fatalf("%d jobs listed, want %d", len(jobs), n)
	}
	counts := map[wire.JobState]int{}
	timedOut := 0
	for _, lj := range jobs {
		j, err := owner.GetJob(c, lj.ID)
		if err != nil {
			t.Fatal(err)
		}
		counts[j.State]++
		for _, a := range j.Attempts {
			if a.Outcome == "timed_out" {
				timedOut++
			}
		}
		if !final[j.State] {
			t.Errorf("job %d is %s", j.ID, j.State)
			continue
		}
		checkAgainstPolicy(t, j)
	}
	t.Logf("after SIGKILL and restart: %v (handler ran %d times, %d leases expired)", counts, handled.Load(), timedOut)
	if counts["succeeded"] == 0 || counts["exhausted"] == 0 || counts["failed"] == 0 {
		t.Errorf("the fault mix did not exercise every ending: %v", counts)
	}
	if timedOut == 0 {
		t.Error("no lease expired: the crashing worker did not exercise the rescue")
	}
}

// checkAgainstPolicy: the job's ending follows from its attempts and its
// policy of 4 attempts.
func checkAgainstPolicy(t *testing.T, j *client.Job) {
	t.Helper()
	last := j.Attempts[len(j.Attempts)-1]
	for i, a := range j.Attempts[:len(j.Attempts)-1] {
		if a.Outcome == "succeeded" || a.Classification == "client_error" {
			t.Errorf("job %d: attempt %d (%s/%s) should have ended the job", j.ID, i+1, a.Outcome, a.Classification)
		}
	}
	switch j.State {
	case "succeeded":
		if last.Outcome != "succeeded" {
			t.Errorf("job %d succeeded but its last attempt is %s", j.ID, last.Outcome)
		}
	case "failed":
		if last.Classification != "client_error" {
			t.Errorf("job %d failed after a %s attempt", j.ID, last.Classification)
		}
	case "exhausted":
		if len(j.Attempts) != 4 || last.Outcome == "succeeded" || last.Classification == "client_error" {
			t.Errorf("job %d exhausted after %d attempts, last %s/%s", j.ID, len(j.Attempts), last.Outcome, last.Classification)
		}
	}
	if int64(len(j.Attempts)) > j.MaxAttempts {
		t.Errorf("job %d has %d attempts, max %d", j.ID, len(j.Attempts), j.MaxAttempts)
	}
}

// TestDurabilityAfterKill: a producer enqueues and a worker reports while
// the server is killed with SIGKILL; after a restart every acknowledged
// enqueue and report is intact and no job is lost.
func TestDurabilityAfterKill(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	args := []string{"--bootstrap-key", ownerKey, "--addr", addr}
	srv := proctest.Start(t, dir, nil, args...)
	k := newContract(t, srv.URL)
	c := ctx(t)
	owner := k.client(srv.URL, ownerKey)
	if _, err := owner.CreateEndpoint(c, "api", client.EndpointPolicy{EndpointSettings: wire.EndpointSettings{MaxConcurrent: 1000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.PublishTool(c, client.ToolSpec{Name: "call", Version: "1", Endpoint: "api"}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	enqueued := map[int64]bool{}
	reported := map[int64]bool{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // producer
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			j, _, err := owner.Enqueue(context.Background(), client.EnqueueRequest{Tool: "call@1", IdempotencyKey: fmt.Sprintf("k%d", i)})
			if err != nil {
				continue
			}
			mu.Lock()
			enqueued[j.ID] = true
			mu.Unlock()
		}
	}()
	go func() { // worker
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			cs, err := owner.Claim(context.Background(), client.ClaimRequest{WorkerID: "w", Tools: []string{"call@1"}, Max: 20})
			if err != nil {
				continue
			}
			rs := make([]client.Report, len(cs))
			for i, j := range cs {
				rs[i] = client.Report{JobID: j.ID, LeaseToken: j.LeaseToken, Success: true}
			}
			if len(rs) == 0 {
				continue
			}
			res, err := owner.ReportBatch(context.Background(), rs)
			if err != nil {
				continue
			}
			mu.Lock()
			for _, r := range res {
				if r.OK {
					reported[r.JobID] = true
				}
			}
			mu.Unlock()
		}
	}()
	for {
		mu.Lock()
		k := len(reported)
		mu.Unlock()
		if k >= 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.Kill() // while both are mid-request
	close(stop)
	wg.Wait()
	proctest.Start(t, dir, nil, args...)
	mu.Lock()
	defer mu.Unlock()
	lost := 0
	for id := range enqueued {
		j, err := owner.GetJob(c, id)
		if err != nil {
			lost++
			continue
		}
		if reported[id] && (j.State != "succeeded" || j.Attempts[len(j.Attempts)-1].Outcome != "succeeded") {
			t.Errorf("acknowledged success of job %d lost: %s", id, j.State)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged enqueues lost", lost, len(enqueued))
	}
	t.Logf("checked %d acknowledged enqueues and %d acknowledged reports after SIGKILL", len(enqueued), len(reported))
}
