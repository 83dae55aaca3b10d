package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/wire"
)

// TestEndpointEventsRoute: a pause and a resume are in the endpoint's
// event log, newest first, with the actor and the facts; the page is cut
// by limit with a cursor; bad input is a 400 naming the field, an unknown
// endpoint a 404.
func TestEndpointEventsRoute(t *testing.T) {
	f := newFixture(t)
	for _, c := range [][2]string{{"/v1/endpoints/stripe/pause", `{}`}, {"/v1/endpoints/stripe/resume", ``}} {
		if status, body := f.call(t, "POST", c[0], c[1]); status != 200 {
			t.Fatalf("%s: %d %s", c[0], status, body)
		}
	}
	status, body := f.call(t, "GET", "/v1/endpoints/stripe/events", "")
	var l wire.EndpointEventList
	if err := json.Unmarshal([]byte(body), &l); status != 200 || err != nil || len(l.Events) != 3 || l.NextCursor != nil {
		t.Fatalf("events: %d %v %s", status, err, body)
	}
	// Newest first: the ramp the resume started, the resume, the pause.
	if rs := l.Events[0]; rs.Kind != wire.EndpointRecoveryStarted || rs.Facts["ratePerSecondMilli"] != 1000 {
		t.Errorf("recovery_started: %s", body)
	}
	if r, p := l.Events[1], l.Events[2]; r.Kind != wire.EndpointResumed || p.Kind != wire.EndpointPaused || r.Actor == "" || r.Endpoint != "stripe" ||
		r.OpenedAt != nil || r.Facts == nil || r.Threshold == 0 {
		t.Errorf("events: %s", body)
	}
	_, body = f.call(t, "GET", "/v1/endpoints/stripe/events?limit=1", "")
	if err := json.Unmarshal([]byte(body), &l); err != nil || len(l.Events) != 1 || l.NextCursor == nil {
		t.Fatalf("first page: %s", body)
	}
	_, body = f.call(t, "GET", "/v1/endpoints/stripe/events?limit=1&cursor="+*l.NextCursor, "")
	if err := json.Unmarshal([]byte(body), &l); err != nil || len(l.Events) != 1 || l.Events[0].Kind != wire.EndpointResumed {
		t.Fatalf("second page: %s", body)
	}
	for _, c := range []struct{ path, want string }{
		{"/v1/endpoints/stripe/events?since=yesterday", `"field":"since","value":"\"yesterday\"","allowed":"must be an RFC 3339 time`},
		{"/v1/endpoints/stripe/events?limit=501", `"field":"limit","value":"\"501\"","allowed":"must be an integer from 1 through 500"`},
		{"/v1/endpoints/stripe/events?cursor=x", `"field":"cursor"`},
	} {
		if status, body := f.call(t, "GET", c.path, ""); status != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s (want 400 with %s)", c.path, status, body, c.want)
		}
	}
	if status, _ := f.call(t, "GET", "/v1/endpoints/nope/events", ""); status != 404 {
		t.Errorf("unknown endpoint: %d", status)
	}
}
