package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// referenceEvents parses a whole event stream the plain way, to check the
// chunked parser against: cut the text into lines first, then read them.
func referenceEvents(text string) []StreamEvent {
	var lines []string
	for {
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			break // an unterminated last line is not a line yet
		}
		lines = append(lines, text[:i])
		if strings.HasPrefix(text[i:], "\r\n") {
			text = text[i+2:]
		} else {
			text = text[i+1:]
		}
	}
	var out []StreamEvent
	event, data, has := "", []string(nil), false
	for _, l := range lines {
		switch {
		case l == "":
			if has {
				name := event
				if name == "" {
					name = "message"
				}
				out = append(out, StreamEvent{Event: name, Data: []byte(strings.Join(data, "\n"))})
			}
			event, data, has = "", nil, false
		case l[0] == ':':
		default:
			name, value := l, ""
			if i := strings.IndexByte(l, ':'); i >= 0 {
				name, value = l[:i], strings.TrimPrefix(l[i+1:], " ")
			}
			if name == "event" {
				event = value
			} else if name == "data" {
				data, has = append(data, value), true
			}
		}
	}
	return out
}

func collect(t *testing.T, r io.Reader) []StreamEvent {
	t.Helper()
	var got []StreamEvent
	if err := readEvents(r, func(e StreamEvent) error { got = append(got, e); return nil }); err != nil {
		t.Fatalf("readEvents: %v", err)
	}
	return got
}

func sameEvents(a, b []StreamEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Event != b[i].Event || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

func TestReadEvents(t *testing.T) {
	cases := []struct {
		name, in string
		want     []StreamEvent
	}{
		{"server's own form", ": ping\n\nevent: job\ndata: {\"id\":1}\n\n", []StreamEvent{{"job", []byte(`{"id":1}`)}}},
		{"CRLF", "event: job\r\ndata: 1\r\n\r\n", []StreamEvent{{"job", []byte("1")}}},
		{"lone CR", "event: job\rdata: 1\r\rdata: 2\r\r", []StreamEvent{{"job", []byte("1")}, {"message", []byte("2")}}},
		{"data lines join", "data: [1,\ndata:2]\n\n", []StreamEvent{{"message", []byte("[1,\n2]")}}},
		{"one space taken", "event:  job\ndata:  1\n\n", []StreamEvent{{" job", []byte(" 1")}}},
		{"empty data dispatches", "data\n\n", []StreamEvent{{"message", []byte("")}}},
		{"event alone dispatches nothing", "event: job\n\ndata: 1\n\n", []StreamEvent{{"message", []byte("1")}}},
		{"unfinished event dropped", "data: 1\n\ndata: 2\n", []StreamEvent{{"message", []byte("1")}}},
		{"other fields ignored", "id: 7\nretry: 10\ndata: 1\n\n", []StreamEvent{{"message", []byte("1")}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := collect(t, strings.NewReader(c.in))
			if !sameEvents(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			if one := collect(t, iotest.OneByteReader(strings.NewReader(c.in))); !sameEvents(one, c.want) {
				t.Fatalf("byte by byte: got %q, want %q", one, c.want)
			}
		})
	}
}

func TestReadEventsBounds(t *testing.T) {
	long := "data: " + strings.Repeat("x", MaxEventBytes) + "\n\n"
	err := readEvents(strings.NewReader(long), func(StreamEvent) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("a line over the bound: err %v", err)
	}
	many := strings.Repeat("data: "+strings.Repeat("x", 1<<20)+"\n", 17) + "\n"
	err = readEvents(strings.NewReader(many), func(StreamEvent) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "data longer than") {
		t.Fatalf("data over the bound: err %v", err)
	}
	stop := errors.New("stop")
	n := 0
	err = readEvents(strings.NewReader("data: 1\n\ndata: 2\n\n"), func(StreamEvent) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("emit's error: err %v after %d events", err, n)
	}
}

// chunker hands out its text in pieces whose sizes come from the fuzzer.
type chunker struct {
	text  []byte
	sizes []byte
}

func (c *chunker) Read(p []byte) (int, error) {
	if len(c.text) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[0])%17 + 1
		c.sizes = c.sizes[1:]
	}
	n = min(n, len(p), len(c.text))
	copy(p, c.text[:n])
	c.text = c.text[n:]
	return n, nil
}

// FuzzReadEvents: whatever the bytes and however they are split, the
// chunked parser gives what the whole-text reference gives, never panics,
// and events written by the server's form come back as they were.
func FuzzReadEvents(f *testing.F) {
	f.Add([]byte(": ping\n\nevent: job\ndata: {\"id\":1}\n\n"), []byte{3, 1, 4})
	f.Add([]byte("event: a\r\ndata: 1\r\n\r\ndata:\rdata\r\r"), []byte{0, 0, 1})
	f.Add([]byte("data: \xff\xfe\n\n:\r\n\nevent\n\n"), []byte{16})
	f.Fuzz(func(t *testing.T, text, sizes []byte) {
		want := referenceEvents(string(text))
		got := collect(t, &chunker{text: text, sizes: sizes})
		if !sameEvents(got, want) {
			t.Fatalf("chunked %q, reference %q", got, want)
		}
		// The server's form: one event per name and data with no line breaks.
		var sb strings.Builder
		var sent []StreamEvent
		for i, part := range strings.FieldsFunc(string(text), func(r rune) bool { return r == '\n' || r == '\r' }) {
			name := fmt.Sprintf("e%d", i)
			fmt.Fprintf(&sb, ": ping\n\nevent: %s\ndata: %s\n\n", name, part)
			sent = append(sent, StreamEvent{name, []byte(part)})
		}
		if back := collect(t, &chunker{text: []byte(sb.String()), sizes: sizes}); !sameEvents(back, sent) {
			t.Fatalf("round trip: got %q, sent %q", back, sent)
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"120": 2 * time.Minute, " 5\t": 5 * time.Second, "99999999999999999999": time.Hour, "0": 0,
		"+5": 0, "-1": 0, "5s": 0, "": 0, "²": 0,
		"Thu, 03 Dec 2026 08:00:30 GMT": 30 * time.Second, "Thu, 03 Dec 2026 07:00:00 GMT": 0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

// FuzzParseRetryAfter: the SDK's reading of Retry-After never panics and
// stays between 0 and an hour.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "120", " 5 ", "-1", "99999999999999999999", "Wed, 21 Oct 2015 07:28:00 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", "soon"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d := parseRetryAfter(v, now)
		if d < 0 || d > time.Hour {
			t.Fatalf("parseRetryAfter(%q) = %v, want 0..1h", v, d)
		}
		if d > 0 && strings.ContainsAny(v, "+-") && !strings.Contains(v, "GMT") {
			t.Fatalf("parseRetryAfter(%q) = %v: a sign makes no delta-seconds", v, d)
		}
	})
}

// TestStreamSilence: a stream whose server goes quiet without closing ends
// with ErrStreamSilent after the silence; pings keep a stream alive, and
// the time fn takes does not count as silence.
func TestStreamSilence(t *testing.T) {
	quit := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: job\ndata: {\"id\":1}\n\n")
		w.(http.Flusher).Flush()
		if r.URL.Query().Get("view") == "overview" { // pings, then one event, then the end
			for range 8 {
				time.Sleep(100 * time.Millisecond)
				fmt.Fprint(w, ": ping\n\n")
				w.(http.Flusher).Flush()
			}
			fmt.Fprint(w, "event: overview\ndata: {}\n\n")
			return
		}
		select { // silent, the connection left open
		case <-quit:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(quit)
	c := New(srv.URL, "k", WithStreamSilence(300*time.Millisecond))

	var got []string
	start := time.Now()
	err := c.Stream(t.Context(), 1, "", JobFilter{}, func(e StreamEvent) error { got = append(got, e.Event); return nil })
	if !errors.Is(err, ErrStreamSilent) || len(got) != 1 {
		t.Fatalf("a silent server: err %v after events %v", err, got)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Fatalf("ended after %v, before the silence", waited)
	}

	got = nil
	err = c.Stream(t.Context(), 0, "overview", JobFilter{}, func(e StreamEvent) error {
		got = append(got, e.Event)
		if e.Event == "job" {
			time.Sleep(500 * time.Millisecond) // a slow fn is not silence
		}
		return nil
	})
	if err != nil || strings.Join(got, ",") != "job,overview" {
		t.Fatalf("pings and a slow fn: err %v, events %v", err, got)
	}
}
