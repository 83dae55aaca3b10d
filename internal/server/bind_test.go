package server_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/proctest"
)

// TestServeBindsFirst: on a busy port `ratchet serve` fails before it
// opens or creates anything, so it never prints the once-only owner key of
// a project it then cannot serve; the error names the address. (It used to
// bootstrap, print the key, then fail to bind.)
func TestServeBindsFirst(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for _, flag := range []string{"--addr", "--metrics-addr"} {
		dir := t.TempDir()
		args := []string{"serve", "--addr", "127.0.0.1:0", flag, held.Addr().String()}
		cmd := exec.Command(proctest.Binary(t), args...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("serve %s on a busy port: %v; want it to exit with an error", flag, err)
		}
		if strings.Contains(stdout.String(), "rk_") || strings.Contains(stdout.String(), "owner key") {
			t.Errorf("serve %s on a busy port printed an owner key:\n%s", flag, stdout.String())
		}
		if !strings.Contains(stderr.String(), held.Addr().String()) || !strings.Contains(stderr.String(), flag) {
			t.Errorf("serve %s on a busy port said %q; want the address and the flag named", flag, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "ratchet.db")); !os.IsNotExist(err) {
			t.Errorf("serve %s on a busy port created ratchet.db (stat: %v)", flag, err)
		}
	}
}
