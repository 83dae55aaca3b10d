package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSlowBodiesAreCut: a client that trickles a body is answered 408 once
// the body deadline passes and its connection is closed, however many do
// it at once, while other requests are served. Before, there was no body
// deadline: 300 connections trickling into POST /api/simulate exhausted the
// server's file handles.
func TestSlowBodiesAreCut(t *testing.T) {
	f := newFixture(t)
	f.api.SetBodyTimeout(300 * time.Millisecond)
	addr := strings.TrimPrefix(f.srv.URL, "http://")
	const slow = 60
	var wg sync.WaitGroup
	statuses := make(chan string, slow)
	for i := range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/api/simulate"
			if i%2 == 1 {
				path = "/v1/jobs"
			}
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				statuses <- "dial: " + err.Error()
				return
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"to\":", path, key)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				statuses <- "read: " + err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			statuses <- fmt.Sprintf("%d %s", resp.StatusCode, b)
		}()
	}
	// Meanwhile the server answers others.
	time.Sleep(50 * time.Millisecond)
	if status, body := f.call(t, "GET", "/v1/me", ""); status != 200 {
		t.Errorf("with %d slow bodies open: GET /v1/me %d %s", slow, status, body)
	}
	wg.Wait()
	close(statuses)
	n := 0
	for s := range statuses {
		n++
		if !strings.HasPrefix(s, "408 ") || !strings.Contains(s, `"code":"request_timeout"`) {
			t.Errorf("slow body: %s, want 408 request_timeout", s)
		}
	}
	if n != slow {
		t.Errorf("%d answers for %d slow bodies", n, slow)
	}
}

// TestErrorBodiesAreBounded: a batch of a thousand bad jobs, each with
// several bad fields, answers with the first 20 problems and a count of the
// rest; a batch over the cap answers at once without looking at the items;
// a huge bad name is clipped. Before, a 7 MB bad batch answered with a 73 MB
// error and every value was echoed whole, three times.
func TestErrorBodiesAreBounded(t *testing.T) {
	f := newFixture(t)
	bad := `{"tool":"nope","maxAttempts":99,"runAt":"yesterday","idempotencyKey":"` + strings.Repeat("k", 300) + `"}`
	batch := `{"jobs":[` + strings.Repeat(bad+",", 999) + bad + `]}`
	status, body := f.call(t, "POST", "/v1/jobs/batch", batch)
	var e struct {
		Error struct {
			Message       string            `json:"message"`
			Fields        []json.RawMessage `json:"fields"`
			FieldsOmitted int               `json:"fieldsOmitted"`
		} `json:"error"`
	}
	if status != 400 || json.Unmarshal([]byte(body), &e) != nil {
		t.Fatalf("bad batch: %d %.300s", status, body)
	}
	if len(e.Error.Fields) != 20 || e.Error.FieldsOmitted != 980 || len(body) > 16<<10 || !strings.Contains(e.Error.Message, "more") {
		t.Errorf("bad batch of %d bytes: %d fields, %d omitted, answer of %d bytes, message %.200q", len(batch), len(e.Error.Fields), e.Error.FieldsOmitted, len(body), e.Error.Message)
	}
	over := `{"jobs":[` + strings.Repeat(bad+",", 1000) + bad + `]}`
	status, body = f.call(t, "POST", "/v1/jobs/batch", over)
	if status != 400 || len(body) > 2<<10 || !strings.Contains(body, "1001 jobs") {
		t.Errorf("batch over the cap: %d, %d bytes: %.300s", status, len(body), body)
	}
	name := strings.Repeat("N", 100_000)
	status, body = f.call(t, "POST", "/v1/endpoints", `{"name":"`+name+`"}`)
	if status != 400 || len(body) > 4<<10 {
		t.Errorf("huge bad name: %d, an answer of %d bytes", status, len(body))
	}
}

// TestSmallBoundaryFindings covers the smaller findings: each answered
// wrongly before (a null or empty tool name accepted, the last owner key
// revocable, 404 for a wrong method, no WWW-Authenticate, a body on
// cancel ignored, waitMs over the limit accepted, "a owner key").
func TestSmallBoundaryFindings(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/v1/tools", `{"name":null,"version":"1","endpoint":"stripe"}`, 400, `"field":"name"`},
		{"POST", "/v1/tools", `{"name":"","version":"1","endpoint":"stripe"}`, 400, `"field":"name"`},
		{"POST", "/v1/tools", `{"name":"t","version":"","endpoint":"stripe"}`, 400, `"field":"version"`},
		{"POST", "/v1/tools", `{"name":"t","version":null,"endpoint":"stripe"}`, 400, `"field":"version"`},
		{"POST", "/v1/jobs/1/cancel", `{not json`, 400, `"field":"body"`},
		{"POST", "/v1/runs/1/finish", `{"x":1}`, 400, `"field":"body"`},
		{"POST", "/v1/claims", `{"workerId":"w","tools":["charge@1"],"waitMs":30001}`, 400, `"field":"waitMs"`},
		{"DELETE", "/v1/jobs", ``, 405, `"code":"method_not_allowed"`},
		{"PATCH", "/v1/jobs/1", ``, 405, `"code":"method_not_allowed"`},
	} {
		status, body := f.call(t, c.method, c.path, c.body)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s %s %s: %d %.300s, want %d with %s", c.method, c.path, c.body, status, body, c.status, c.want)
		}
	}
	req, _ := http.NewRequest("PUT", f.srv.URL+"/v1/jobs/1", nil)
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if allow := resp.Header.Get("Allow"); resp.StatusCode != 405 || allow != "GET" {
		t.Errorf("PUT /v1/jobs/1: %d Allow %q, want 405 Allow GET", resp.StatusCode, allow)
	}
	resp, err = http.Get(f.srv.URL + "/v1/me")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no key: %d WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	// The project's only owner key cannot be revoked; with a second owner
	// key it can.
	var me struct {
		Key struct{ ID int64 } `json:"key"`
	}
	_, body := f.call(t, "GET", "/v1/me", "")
	_ = json.Unmarshal([]byte(body), &me)
	if status, body := f.call(t, "DELETE", fmt.Sprintf("/v1/keys/%d", me.Key.ID), ""); status != 409 || !strings.Contains(body, "last owner key") {
		t.Errorf("revoke the last owner key: %d %s", status, body)
	}
	status, body := f.call(t, "POST", "/v1/keys", `{"name":"spare","scope":"owner"}`)
	if status != 201 {
		t.Fatalf("second owner key: %d %s", status, body)
	}
	if status, body := f.call(t, "DELETE", fmt.Sprintf("/v1/keys/%d", me.Key.ID), ""); status != 204 {
		t.Errorf("revoke an owner key with another left: %d %s", status, body)
	}

	// A producer key asking for an owner route is told it needs "an owner key".
	g := newFixture(t)
	_, pk := g.call(t, "POST", "/v1/keys", `{"name":"p","scope":"producer"}`)
	var prod struct{ Key string }
	_ = json.Unmarshal([]byte(pk), &prod)
	req, _ = http.NewRequest("GET", g.srv.URL+"/v1/keys", nil)
	req.Header.Set("Authorization", "Bearer "+prod.Key)
	resp, err = g.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(b), "needs an owner key") {
		t.Errorf("producer on an owner route: %d %s", resp.StatusCode, b)
	}
}
