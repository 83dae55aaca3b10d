package web_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/getratchet/ratchet/internal/web"
)

var update = flag.Bool("update", false, "rewrite assets/limits.js")

// TestLimitsJSIsCurrent fails when a limit, preset or enum changed in Go and
// assets/limits.js was not regenerated.
func TestLimitsJSIsCurrent(t *testing.T) {
	path := filepath.Join("assets", "limits.js")
	got := web.LimitsJS()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("assets/limits.js is not what the Go constants generate (%v); run\n\tgo test ./internal/web -run TestLimitsJSIsCurrent -update", err)
	}
}
