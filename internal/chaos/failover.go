package chaos

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/getratchet/ratchet/client"
)

// failover is the load balancer in front of the nodes, inside each client
// of the run: each request goes to the next node in turn, and one that
// cannot be connected to (killed, restarting) is skipped. A request that
// reached a node is never sent again here: the SDK decides, as it would
// behind any load balancer.
type failover struct {
	nodes []*url.URL
	next  atomic.Uint32
	base  http.RoundTripper
}

// newFailoverClient is an SDK client whose requests go to any of the
// nodes' base URLs.
func newFailoverClient(nodes []string, key string) (*client.Client, error) {
	f := &failover{}
	for _, n := range nodes {
		u, err := url.Parse(n)
		if err != nil {
			return nil, err
		}
		f.nodes = append(f.nodes, u)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tr.DialContext = (&net.Dialer{Timeout: 2 * time.Second}).DialContext
	f.base = tr
	// Every node answers the same API; the base URL only names the scheme.
	return client.New(nodes[0], key, client.WithHTTPClient(&http.Client{Transport: f})), nil
}

func (f *failover) RoundTrip(req *http.Request) (*http.Response, error) {
	first := int(f.next.Add(1))
	var err error
	for i := range f.nodes {
		u := f.nodes[(first+i)%len(f.nodes)]
		r := req.Clone(req.Context())
		r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
		if req.GetBody != nil {
			if r.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
		var resp *http.Response
		resp, err = f.base.RoundTrip(r)
		if err == nil || !refused(err) || req.Context().Err() != nil {
			return resp, err
		}
	}
	return nil, err
}

// refused reports an error of a connection that was never made: the
// request did not reach the node.
func refused(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op) && op.Op == "dial"
}
