package server_test

import (
	"testing"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestOverviewShowsOperatorWrites: an overview opened right after an
// operator paused or resumed an endpoint shows it, twenty times in a row,
// although a dashboard tab held open keeps the node's shared overview read
// fresh (that shared read once served the state from before the pause for
// up to an interval).
func TestOverviewShowsOperatorWrites(t *testing.T) {
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey)
	owner := client.New(srv.URL, ownerKey)
	if _, err := owner.CreateEndpoint(ctx(t), "stripe", client.EndpointPolicy{EndpointSettings: client.EndpointSettings{MaxConcurrent: 10}}); err != nil {
		t.Fatal(err)
	}
	proctest.CheckOverviewFollowsPauses(t, owner, ownerKey, "stripe", srv, srv)
}
