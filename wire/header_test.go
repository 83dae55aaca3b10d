package wire_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/getratchet/ratchet/wire"
)

func TestHeaderValueOK(t *testing.T) {
	for s, want := range map[string]bool{
		"": true, "order-42": true, "a b": true, "ключ-7": true, "x:y/z=1;q": true,
		"a\x01b": false, "a\rb": false, "a\nb": false, "a\tb": false, "a\x7fb": false, "a\x00": false,
		" lead": false, "trail ": false, "\xff": false, "a\u0085b": false,
	} {
		if got := wire.HeaderValueOK(s); got != want {
			t.Errorf("HeaderValueOK(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzHeaderValueOK: every value HeaderValueOK accepts is sent by net/http
// as an Idempotency-Key header and arrives unchanged.
func FuzzHeaderValueOK(f *testing.F) {
	for _, s := range []string{"order-42", "a\x01b", " x", "ключ", "a\rb", "\x7f"} {
		f.Add(s)
	}
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get("Idempotency-Key") }))
	f.Cleanup(srv.Close)
	f.Fuzz(func(t *testing.T, s string) {
		if !wire.HeaderValueOK(s) || len(s) > wire.MaxIdempotencyKeyLen {
			return
		}
		req, err := http.NewRequest("POST", srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Idempotency-Key", s)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("HeaderValueOK(%q) is true but net/http cannot send it: %v", s, err)
		}
		resp.Body.Close()
		if g := <-got; g != s {
			t.Fatalf("sent %q, the server read %q", s, g)
		}
	})
}
