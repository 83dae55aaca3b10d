package api_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/api"
)

// TestOversizedBodyIs413: a body over MaxBodyBytes is answered 413
// request_too_large on every route that reads one, naming the body and
// the limit, and the route's documented responses list the 413. Before,
// a 9 MB body was a 400, as if its JSON were wrong.
func TestOversizedBodyIs413(t *testing.T) {
	f := newFixture(t)
	big := `{"tool":"charge@1","payload":"` + strings.Repeat("x", api.MaxBodyBytes) + `"}`
	param := regexp.MustCompile(`\{\w+\}`)
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]any `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(document(t), &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range f.api.Routes() {
		if r.Method == "GET" {
			continue
		}
		n++
		path := param.ReplaceAllString(r.Path, "1")
		req, _ := http.NewRequest(r.Method, f.srv.URL+path, strings.NewReader(big))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", r.Method, path, err)
		}
		var e struct {
			Error struct {
				Code    string              `json:"code"`
				Message string              `json:"message"`
				Fields  []map[string]string `json:"fields"`
			} `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge || e.Error.Code != "request_too_large" ||
			!strings.Contains(e.Error.Message, "8 MiB (8388608 bytes)") || len(e.Error.Fields) != 1 ||
			e.Error.Fields[0]["field"] != "body" || e.Error.Fields[0]["allowed"] != "must be at most 8 MiB (8388608 bytes)" {
			t.Errorf("%s %s with %d bytes: %d %+v (%v), want 413 request_too_large naming the body and the limit", r.Method, path, len(big), resp.StatusCode, e, err)
		}
		if _, ok := doc.Paths[r.Path][strings.ToLower(r.Method)].Responses["413"]; !ok {
			t.Errorf("%s %s: openapi.json lists no 413", r.Method, r.Path)
		}
	}
	if n < 10 {
		t.Fatalf("only %d routes take a body: the route walk is broken", n)
	}
}
