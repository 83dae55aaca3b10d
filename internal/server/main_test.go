package server_test

import (
	"os"
	"testing"

	"github.com/getratchet/ratchet/internal/proctest"
)

// TestMain removes the ratchet binary the tests built once they all ran.
func TestMain(m *testing.M) { os.Exit(proctest.Main(m)) }
