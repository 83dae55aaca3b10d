package delivery_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/getratchet/ratchet/wire"
)

// TestPausedEndpointIsNotDelivered: while its endpoint is paused, a due
// delivery is not claimed by the dispatcher, the provider is not called and
// no attempt is spent; the job says the pause holds it. After resume it is
// delivered.
func TestPausedEndpointIsNotDelivered(t *testing.T) {
	v := newEnv(t, loopback)
	var calls atomic.Int64
	srv := provider(t, func(w http.ResponseWriter, _ *http.Request) { calls.Add(1) })
	v.tool("charge", srv.URL)
	id := v.enqueue("charge", `{}`, "")
	if _, err := v.e.PauseEndpoint(v.ctx, v.owner, "provider", "maintenance window"); err != nil {
		t.Fatal(err)
	}
	cs, err := v.e.ClaimDeliveries(v.ctx, "test-node", 10, 0)
	if err != nil || len(cs) != 0 {
		t.Fatalf("ClaimDeliveries on a paused endpoint = %d jobs, %v; want none", len(cs), err)
	}
	j, as := v.job(id)
	if j.State != wire.JobScheduled || j.Attempt != 0 || len(as) != 0 || calls.Load() != 0 {
		t.Fatalf("paused delivery: job %s attempt %d, %d attempts, %d calls", j.State, j.Attempt, len(as), calls.Load())
	}
	if h, err := v.e.Explain(v.ctx, v.owner, id); err != nil || h.Gate != wire.GatePaused {
		t.Fatalf("explain: %v %+v", err, h)
	}
	if _, err := v.e.ResumeEndpoint(v.ctx, v.owner, "provider"); err != nil {
		t.Fatal(err)
	}
	v.deliverOne()
	if j, _ := v.job(id); j.State != wire.JobSucceeded || calls.Load() != 1 {
		t.Fatalf("after resume: job %s, %d calls", j.State, calls.Load())
	}
}
