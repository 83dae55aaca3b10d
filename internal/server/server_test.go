package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
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
	// The version is the one `ratchet version` of the same binary prints,
	// in /healthz and in the info of /openapi.json.
	out, err := exec.Command(proctest.Binary(t), "version").Output()
	if err != nil {
		t.Fatalf("ratchet version: %v", err)
	}
	version := strings.Fields(string(out))[1]
	if want := `{"status":"ok","version":"` + version + `"}`; resp.StatusCode != 200 || string(body) != want {
		t.Errorf("healthz: %d %s, want %s", resp.StatusCode, body, want)
	}
	resp, err = http.Get(s.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info struct{ Version string } `json:"info"`
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil || doc.Info.Version != version {
		t.Errorf("/openapi.json info.version %q (%v), want %q", doc.Info.Version, err, version)
	}
	s.Stop(t)
	if !s.Exited() {
		t.Error("server still running after SIGTERM")
	}
	if _, ok := s.Line("shutting down", 0); !ok {
		t.Errorf("no graceful shutdown logged:\n%s", s.Output.String())
	}
}
