package client

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
)

// TestEventStreamVectors: the Go SDK's event-stream parser passes the
// vectors every parser of Ratchet shares (testdata/sse-vectors.json; the
// TypeScript SDK's and the dashboard's run them in
// sdk/typescript/test/sse-vectors.test.mjs), chunk by chunk as the stream
// arrives, as one read and one byte per read.
func TestEventStreamVectors(t *testing.T) {
	b, err := os.ReadFile("../testdata/sse-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Vectors []struct {
			Name   string   `json:"name"`
			Chunks []string `json:"chunks"`
			Events []struct {
				Event string `json:"event"`
				Data  string `json:"data"`
			} `json:"events"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Vectors) == 0 {
		t.Fatalf("read the vectors: %v", err)
	}
	for _, v := range doc.Vectors {
		var want []string
		for _, e := range v.Events {
			want = append(want, e.Event+" "+quote(e.Data))
		}
		whole := strings.Join(v.Chunks, "")
		for how, r := range map[string]io.Reader{"in its chunks": &chunkReader{chunks: v.Chunks}, "in one read": strings.NewReader(whole),
			"one byte per read": iotest.OneByteReader(strings.NewReader(whole))} {
			var got []string
			err := readEvents(r, func(e StreamEvent) error {
				got = append(got, e.Event+" "+quote(string(e.Data)))
				return nil
			})
			if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("%s, %s: got %q (%v), want %q", v.Name, how, got, err, want)
			}
		}
	}
}

// quote shows a data text unambiguously.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// chunkReader returns one chunk per Read, as a stream's reads arrive.
type chunkReader struct{ chunks []string }

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	if r.chunks[0] == "" {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}
