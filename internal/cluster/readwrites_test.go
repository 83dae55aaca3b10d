package cluster_test

import (
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
)

// TestOverviewShowsWritesOfAnotherNode: an operator pauses and resumes an
// endpoint through node A; an overview opened on node B at once shows each
// write, twenty times in a row, while tabs held open on both nodes keep
// their shared overview reads fresh.
func TestOverviewShowsWritesOfAnotherNode(t *testing.T) {
	dbURL := pgtest.URL(t)
	nodes := startNodes(t, dbURL, 2)
	a := client.New(nodes[0].URL, ownerKey)
	if _, err := a.CreateEndpoint(testCtx(t, time.Minute), "stripe", client.EndpointPolicy{EndpointSettings: client.EndpointSettings{MaxConcurrent: 10}}); err != nil {
		t.Fatal(err)
	}
	proctest.CheckOverviewFollowsPauses(t, a, ownerKey, "stripe", nodes[1], nodes[0], nodes[1])
}
