package web_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/getratchet/ratchet/internal/web"
)

// TestLimitsJSIsCurrent fails when a limit, preset or enum changed in Go and
// assets/limits.js was not regenerated with scripts/generate.
func TestLimitsJSIsCurrent(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("assets", "limits.js"))
	if err != nil {
		t.Fatalf("read internal/web/assets/limits.js: %v; run scripts/generate (or go generate ./...) to write it", err)
	}
	if !bytes.Equal(web.LimitsJS(), want) {
		t.Fatalf("internal/web/assets/limits.js is stale: it is not what the Go constants generate; run\n\tscripts/generate\n(or go generate ./...) and commit the result")
	}
}
