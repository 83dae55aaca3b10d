package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

var errStop = errors.New("stop")

// sse is one server-sent event, or a comment (Event "" and Comment set).
type sse struct {
	Event, Data, Comment string
	At                   time.Time
}

// openStream starts GET /v1/stream?query and sends what it reads to the
// returned channel, closed when the stream ends.
func openStream(t *testing.T, base, key, query string) (*http.Response, <-chan sse) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/v1/stream?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan sse, 64)
	if resp.StatusCode != 200 {
		close(ch)
		return resp, ch
	}
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var cur sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur.Event != "" || cur.Comment != "" {
					cur.At = time.Now()
					ch <- cur
				}
				cur = sse{}
			case strings.HasPrefix(line, ":"):
				cur.Comment = strings.TrimSpace(line[1:])
			case strings.HasPrefix(line, "event: "):
				cur.Event = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				cur.Data += line[len("data: "):]
			}
		}
	}()
	return resp, ch
}

// nextEvent returns the next event that is not a comment, or fails after d.
func nextEvent(t *testing.T, ch <-chan sse, d time.Duration) sse {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatal("the stream ended")
			}
			if e.Event != "" {
				return e
			}
		case <-timeout:
			t.Fatalf("no event within %s", d)
		}
	}
}

// TestStream drives GET /v1/stream on the real binary: the first event is
// the view as it is, a report makes the next one, nothing but pings comes
// while nothing changes, the ninth stream of a key is refused with 429,
// and SIGTERM ends open streams at once instead of holding the shutdown.
func TestStream(t *testing.T) {
	srv := proctest.Start(t, "", []string{"RATCHET_STREAM_INTERVAL=50ms", "RATCHET_STREAM_PING=200ms"}, "--bootstrap-key", ownerKey)
	c := ctx(t)
	owner := client.New(srv.URL, ownerKey)
	if _, err := owner.CreateEndpoint(c, "stripe", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Standard}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 30000, MaxConcurrent: 10}}); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.PublishTool(c, client.ToolSpec{Name: "charge", Version: "1", Endpoint: "stripe"}); err != nil {
		t.Fatal(err)
	}
	job, _, err := owner.Enqueue(c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":1}`)})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("job event after a report", func(t *testing.T) {
		resp, ch := openStream(t, srv.URL, ownerKey, "job="+itoa(job.ID))
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("GET /v1/stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		first := nextEvent(t, ch, 10*time.Second)
		var j wire.Job
		if err := json.Unmarshal([]byte(first.Data), &j); err != nil || first.Event != "job" || j.State != wire.JobScheduled {
			t.Fatalf("first event %q %q: %v", first.Event, first.Data, err)
		}
		claimed, err := owner.Claim(c, client.ClaimRequest{WorkerID: "w1", Tools: []string{"charge@1"}})
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claim: %v %d", err, len(claimed))
		}
		running := nextEvent(t, ch, 10*time.Second)
		_ = json.Unmarshal([]byte(running.Data), &j)
		if j.State != wire.JobRunning || len(j.Attempts) != 1 {
			t.Fatalf("after the claim: %s with %d attempts", j.State, len(j.Attempts))
		}
		sent := time.Now()
		if _, err := owner.ReportOne(c, client.Report{JobID: job.ID, LeaseToken: claimed[0].LeaseToken, Success: true, HTTPStatus: 200}); err != nil {
			t.Fatal(err)
		}
		done := nextEvent(t, ch, 10*time.Second)
		t.Logf("the report reached the stream %s after it was answered (interval 50ms)", done.At.Sub(sent).Round(time.Millisecond))
		_ = json.Unmarshal([]byte(done.Data), &j)
		if j.State != wire.JobSucceeded || j.Attempts[0].Outcome != "succeeded" {
			t.Fatalf("after the report: %s, attempt %+v", j.State, j.Attempts)
		}
		// Nothing changes now: for a second (20 re-reads, 5 pings) only
		// pings arrive.
		quiet := time.After(time.Second)
		pings := 0
	wait:
		for {
			select {
			case e, ok := <-ch:
				if !ok {
					t.Fatal("the stream ended")
				}
				if e.Event != "" {
					t.Fatalf("an event although nothing changed: %s %s", e.Event, e.Data)
				}
				if e.Comment == "ping" {
					pings++
				}
			case <-quiet:
				break wait
			}
		}
		if pings == 0 {
			t.Error("no ping in a second with a 200ms ping interval")
		}
	})

	t.Run("jobs and overview views", func(t *testing.T) {
		_, jobs := openStream(t, srv.URL, ownerKey, "view=jobs&state=scheduled&endpoint=stripe")
		first := nextEvent(t, jobs, 10*time.Second)
		var sj wire.StreamJobs
		if err := json.Unmarshal([]byte(first.Data), &sj); err != nil || first.Event != "jobs" || sj.Changed || sj.Counts[wire.JobSucceeded] != 1 || sj.Total != 1 {
			t.Fatalf("first jobs event %s %s", first.Event, first.Data)
		}
		_, ov := openStream(t, srv.URL, ownerKey, "view=overview")
		o := nextEvent(t, ov, 10*time.Second)
		if o.Event != "overview" || !strings.Contains(o.Data, `"stripe"`) {
			t.Fatalf("overview event %s %s", o.Event, o.Data)
		}
		if _, _, err := owner.Enqueue(c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":2}`)}); err != nil {
			t.Fatal(err)
		}
		next := nextEvent(t, jobs, 10*time.Second)
		_ = json.Unmarshal([]byte(next.Data), &sj)
		if !sj.Changed || sj.Counts[wire.JobScheduled] != 1 || sj.Total != 2 {
			t.Fatalf("after an enqueue: %s", next.Data)
		}
		if o2 := nextEvent(t, ov, 10*time.Second); !strings.Contains(o2.Data, `"scheduled":1`) {
			t.Fatalf("overview after an enqueue: %s", o2.Data)
		}
	})

	t.Run("bad queries name the field", func(t *testing.T) {
		for q, fieldName := range map[string]string{"": "job", "view=nope": "view", "job=x": "job", "view=overview&state=failed": "state", "view=jobs&cursor=5": "cursor", "job=1&view=jobs": "view"} {
			resp, _ := openStream(t, srv.URL, ownerKey, q)
			var eb wire.ErrorBody
			_ = json.NewDecoder(resp.Body).Decode(&eb)
			resp.Body.Close()
			if resp.StatusCode != 400 || len(eb.Error.Fields) == 0 || eb.Error.Fields[0].Field != fieldName {
				t.Errorf("?%s: %d %+v", q, resp.StatusCode, eb.Error)
			}
		}
		resp, _ := openStream(t, srv.URL, ownerKey, "job=999999")
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("an unknown job: %d", resp.StatusCode)
		}
	})

	t.Run("eight streams per key, then 429", func(t *testing.T) {
		k, err := owner.CreateKey(c, "streams", "producer", nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			resp, ch := openStream(t, srv.URL, k.Secret, "view=overview")
			if resp.StatusCode != 200 {
				t.Fatalf("stream %d: %d", i+1, resp.StatusCode)
			}
			nextEvent(t, ch, 10*time.Second)
		}
		resp, _ := openStream(t, srv.URL, k.Secret, "view=overview")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "too_many_streams") {
			t.Fatalf("the ninth stream: %d %s", resp.StatusCode, body)
		}
		// Another key is not held back by this one.
		resp, ch := openStream(t, srv.URL, ownerKey, "view=overview")
		if resp.StatusCode != 200 {
			t.Fatalf("another key's stream: %d", resp.StatusCode)
		}
		nextEvent(t, ch, 10*time.Second)
		// The node's gauge counts them (streams of earlier subtests are
		// given back once the server notices their client went, within a
		// ping).
		srv.WaitForMetric(t, "ratchet_streams_open 9")
	})
	srv.WaitForMetric(t, "ratchet_streams_open 0")

	t.Run("the Go SDK follows a stream", func(t *testing.T) {
		j2, _, err := owner.Enqueue(c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":5}`)})
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithTimeout(c, 30*time.Second)
		defer cancel()
		var states []wire.JobState
		err = owner.Stream(sctx, j2.ID, "", client.JobFilter{}, func(e client.StreamEvent) error {
			if e.Event != "job" {
				return fmt.Errorf("event %q: %s", e.Event, e.Data)
			}
			var j wire.Job
			if err := json.Unmarshal(e.Data, &j); err != nil {
				return err
			}
			states = append(states, j.State)
			switch {
			case len(states) == 1:
				// The job as it is; now a worker runs it and reports.
				cl, err := owner.Claim(c, client.ClaimRequest{WorkerID: "go-stream", Tools: []string{"charge@1"}, Max: 10})
				if err != nil {
					return err
				}
				for _, cj := range cl {
					if cj.ID == j2.ID {
						_, err := owner.ReportOne(c, client.Report{JobID: cj.ID, LeaseToken: cj.LeaseToken, Success: true})
						return err
					}
				}
				return fmt.Errorf("job %d was not claimed", j2.ID)
			case j.State == wire.JobSucceeded:
				return errStop
			}
			return nil
		})
		if !errors.Is(err, errStop) {
			t.Fatalf("Stream: %v (states %v)", err, states)
		}
		if states[0] != wire.JobScheduled || states[len(states)-1] != wire.JobSucceeded {
			t.Fatalf("states seen: %v", states)
		}
		var ce *client.Error
		if err := owner.Stream(c, 0, "bogus", client.JobFilter{}, func(client.StreamEvent) error { return nil }); !errors.As(err, &ce) || ce.Status != 400 {
			t.Fatalf("a bad view: %v", err)
		}
	})

	t.Run("a revoked key's stream ends", func(t *testing.T) {
		k, err := owner.CreateKey(c, "revoked-stream", "producer", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, ch := openStream(t, srv.URL, k.Secret, "view=overview")
		if resp.StatusCode != 200 {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
		nextEvent(t, ch, 10*time.Second)
		if err := owner.RevokeKey(c, k.ID); err != nil {
			t.Fatal(err)
		}
		// The stream checks its key every ten intervals (500 ms here): it
		// says why in an error event and ends.
		e := nextEvent(t, ch, 10*time.Second)
		for e.Event == "overview" {
			e = nextEvent(t, ch, 10*time.Second)
		}
		if e.Event != "error" || !strings.Contains(e.Data, "unauthenticated") {
			t.Fatalf("after the revoke: event %q %s", e.Event, e.Data)
		}
		end := time.After(10 * time.Second)
		for open := true; open; {
			select {
			case _, open = <-ch:
			case <-end:
				t.Fatal("the stream of a revoked key stayed open")
			}
		}
	})

	t.Run("SIGTERM ends the streams", func(t *testing.T) {
		_, ch := openStream(t, srv.URL, ownerKey, "job="+itoa(job.ID))
		nextEvent(t, ch, 10*time.Second)
		start := time.Now()
		srv.Stop(t)
		took := time.Since(start)
		for range ch {
		}
		t.Logf("the server stopped %s after SIGTERM with open streams", took.Round(time.Millisecond))
		if _, ok := srv.Line("stopped", 0); !ok {
			t.Errorf("no clean stop logged (the shutdown timed out on open streams?):\n%s", srv.Output.String())
		}
		if strings.Contains(srv.Output.String(), "shutdown: context deadline exceeded") {
			t.Errorf("the shutdown waited for the streams until its timeout")
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
