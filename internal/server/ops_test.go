package server_test

import (
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/proctest"
)

// TestMetricsApartAccessLogAndBootstrapKey: /metrics is served only on the
// metrics address (it names every project's endpoints, and was open to
// anyone on the API's address before), --access-log logs each request, and
// none of a chosen bootstrap key is stored in plain text (its first ten
// characters were) while a short one is refused.
func TestMetricsApartAccessLogAndBootstrapKey(t *testing.T) {
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey, "--access-log")
	k := newContract(t, srv.URL)
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := get(srv.URL + "/metrics"); status != 404 || !strings.Contains(body, "--metrics-addr") {
		t.Errorf("API address /metrics: %d %s", status, body)
	}
	if srv.MetricsURL == "" {
		t.Fatal("the server printed no metrics address")
	}
	if status, body := get(srv.MetricsURL + "/metrics"); status != 200 || !strings.Contains(body, "ratchet_jobs{") {
		t.Errorf("metrics address: %d %.200s", status, body)
	}
	keys, err := k.client(srv.URL, ownerKey).ListKeys(ctx(t))
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys: %v %v", keys, err)
	}
	if strings.Contains(keys[0].Prefix, ownerKey[:5]) {
		t.Errorf("the chosen key's prefix %q shows part of it", keys[0].Prefix)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(srv.Output.String(), "path=/v1/keys status=200") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(srv.Output.String(), "msg=request method=GET path=/v1/keys status=200") {
		t.Errorf("no access log line for GET /v1/keys in:\n%s", srv.Output.String())
	}

	cmd := exec.Command(proctest.Binary(t), "serve", "--addr", "127.0.0.1:0", "--bootstrap-key", "rk_short_key_123")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "at least 24 characters") {
		t.Errorf("a short bootstrap key: %v, %s", err, out)
	}
}
