// Command flaky-provider is a stand-in for an unreliable API, for trying
// Ratchet locally: the first request for each Idempotency-Key is answered
// 503 with Retry-After, every later one 200. Loopback only.
//
//	go run ./examples/flaky-provider --addr 127.0.0.1:9000 &
//	go run ./examples/flaky-provider --addr 127.0.0.1:9000 --wait
//
// The second line returns once the first one answers, so a job enqueued
// after it never meets a provider that is still compiling or starting.
// Jobs' attempts then see exactly the 503 and the 200 described above.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "listen address (port 0 picks a free port; the address is printed)")
	retryAfter := flag.Int("retry-after", 2, "seconds to ask for in Retry-After on the first request")
	wait := flag.Bool("wait", false, "do not serve: wait until a flaky provider answers at --addr, then exit (1 after --wait-timeout)")
	waitTimeout := flag.Duration("wait-timeout", 2*time.Minute, "how long --wait waits")
	flag.Parse()
	if *wait {
		if err := waitFor(*addr, *waitTimeout); err != nil {
			fmt.Fprintln(os.Stderr, "flaky-provider:", err)
			os.Exit(1)
		}
		return
	}
	// Listen before saying so: a script may start the next step as soon
	// as the line below is printed.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("flaky provider on http://%s/", ln.Addr())
	log.Fatal(http.Serve(ln, handler(*retryAfter, log.Default())))
}

// handler answers 503 with Retry-After the first time it sees an
// Idempotency-Key and 200 after. GET /healthz answers 200 and is not
// counted, so --wait does not use up a key's first answer.
func handler(retryAfter int, logger *log.Logger) http.Handler {
	var mu sync.Mutex
	seen := map[string]bool{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"flakyProvider":true}`+"\n")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		first := !seen[key]
		seen[key] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if first {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":"busy"}`)
			logger.Printf("%s %s (Idempotency-Key %q): 503 Retry-After %d", r.Method, r.URL.Path, key, retryAfter)
			return
		}
		io.WriteString(w, `{"ok":true}`)
		logger.Printf("%s %s (Idempotency-Key %q): 200", r.Method, r.URL.Path, key)
	})
	return mux
}

// waitFor asks http://addr/healthz until a flaky provider answers it. Any
// other answer (another program on the port) is an error at once: waiting
// would not change it.
func waitFor(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	c := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := c.Get("http://" + addr + "/healthz")
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(b) == `{"flakyProvider":true}`+"\n" {
				return nil
			}
			return fmt.Errorf("%s is held by something else: GET /healthz answered %d %q", addr, resp.StatusCode, b)
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("no flaky provider answered at %s within %s", addr, timeout), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
