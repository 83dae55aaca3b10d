package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestKeysThatAreNotTextAreNotSent: a flow key, idempotency key or other
// identifier that is not valid UTF-8 is refused before the request is
// encoded, naming the field and the key as given; free text (a report's
// message and headers) is sent for the server to clean. Before,
// encoding/json wrote "acct\xff" and "acct\xfe" both as "acct\uFFFD" and
// the server saw one key.
func TestKeysThatAreNotTextAreNotSent(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c := New(srv.URL, "k")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		send func() error
		want string
	}{
		{"flowKey", func() error {
			_, _, err := c.Enqueue(ctx, EnqueueRequest{Tool: "charge@1", FlowKey: "acct\xff"})
			return err
		}, `flowKey: "acct\xff" is not allowed`},
		{"batch idempotencyKey", func() error {
			_, err := c.EnqueueBatch(ctx, []EnqueueRequest{{Tool: "charge@1"}, {Tool: "charge@1", IdempotencyKey: "idem\xfe"}})
			return err
		}, `jobs[1].idempotencyKey: "idem\xfe" is not allowed`},
		{"schedule flowKey", func() error {
			_, err := c.CreateSchedule(ctx, ScheduleCreate{Name: "s", Cron: "@hourly", Tool: "charge@1", FlowKey: "\xff"})
			return err
		}, `flowKey: "\xff" is not allowed`},
	} {
		err := tc.send()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "valid UTF-8 text") {
			t.Errorf("%s: %v, want an error with %s", tc.name, err, tc.want)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests with such keys were sent", n)
	}
	if _, err := c.ReportOne(ctx, Report{JobID: 1, LeaseToken: "t", HTTPStatus: 500, Message: "bad \xff byte", Headers: map[string]string{"X-\xff": "\xfe"}}); err != nil || hits.Load() != 1 {
		t.Errorf("a report with odd free text: %v, %d requests; want it sent", err, hits.Load())
	}
}
