package web_test

import (
	"os"
	"testing"

	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestMain stops the browser the tests shared and removes the ratchet
// binary they built once they all ran.
func TestMain(m *testing.M) { os.Exit(proctest.Main(browsertest.Main(m))) }
