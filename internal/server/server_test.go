package server_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/getratchet/ratchet/internal/proctest"
)

func TestServeHealthz(t *testing.T) {
	s := proctest.Start(t, "", nil)
	resp, err := http.Get(s.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `{"status":"ok"}` {
		t.Errorf("healthz: %d %s", resp.StatusCode, body)
	}
	s.Stop(t)
	if !s.Exited() {
		t.Error("server still running after SIGTERM")
	}
	if _, ok := s.Line("shutting down", 0); !ok {
		t.Errorf("no graceful shutdown logged:\n%s", s.Output.String())
	}
}
