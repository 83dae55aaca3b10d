package main_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestExampleWorker builds the example, runs it against the real server and
// a local provider that answers 503 once, and sees the job retried and
// succeeded. The server's development clock skips the backoff wait.
func TestExampleWorker(t *testing.T) {
	const owner = "rk_example_owner_key_0123456789"
	srv := proctest.Start(t, "", nil, "--bootstrap-key", owner, "--dev-clock")
	ctx := context.Background()
	c := client.New(srv.URL, owner)
	if _, err := c.CreateEndpoint(ctx, "provider", client.EndpointPolicy{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PublishTool(ctx, client.ToolSpec{Name: "charge", Version: "1", Endpoint: "provider"}); err != nil {
		t.Fatal(err)
	}
	wk, err := c.CreateKey(ctx, "example", "worker", []string{"charge@1"})
	if err != nil {
		t.Fatal(err)
	}

	var calls atomic.Int32
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer provider.Close()

	bin := filepath.Join(t.TempDir(), "worker")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--server", srv.URL, "--tool", "charge@1", "--target", provider.URL+"/charge")
	cmd.Env = append(cmd.Environ(), "RATCHET_KEY="+wk.Secret)
	var logs proctest.SyncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()

	job, _, err := c.Enqueue(ctx, client.EnqueueRequest{Tool: "charge@1", IdempotencyKey: "order-42"})
	if err != nil {
		t.Fatal(err)
	}
	wait := func(what string, ok func(*client.Job) bool) *client.Job {
		t.Helper()
		for range 600 { // waits for an event, bounded; never asserts on speed
			j, err := c.GetJob(ctx, job.ID)
			if err != nil {
				t.Fatal(err)
			}
			if ok(j) {
				return j
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("job never %s; worker output:\n%s", what, logs.String())
		return nil
	}
	j := wait("failed its first attempt", func(j *client.Job) bool {
		return j.State == "scheduled" && len(j.Attempts) == 1 && j.Attempts[0].FinishedAt != ""
	})
	a := j.Attempts[0]
	if a.HTTPStatus == nil || *a.HTTPStatus != 503 || a.RetryAfterMs == nil || *a.RetryAfterMs != 120_000 || a.SelectedDelayMs == nil || *a.SelectedDelayMs < 120_000 {
		t.Fatalf("first attempt %+v", a)
	}
	if err := c.AdvanceClock(ctx, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	j = wait("succeeded", func(j *client.Job) bool { return j.State == "succeeded" })
	if len(j.Attempts) != 2 || calls.Load() != 2 {
		t.Errorf("attempts %d, provider calls %d", len(j.Attempts), calls.Load())
	}
}
