// Command flaky-provider is a stand-in for an unreliable API, for trying
// Ratchet locally: the first request for each Idempotency-Key is answered
// 503 with Retry-After, every later one 200. Loopback only.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"sync"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "listen address")
	retryAfter := flag.Int("retry-after", 2, "seconds to ask for in Retry-After on the first request")
	flag.Parse()
	var mu sync.Mutex
	seen := map[string]bool{}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		first := !seen[key]
		seen[key] = true
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", strconv.Itoa(*retryAfter))
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "busy, come back later")
			log.Printf("%s: 503 Retry-After %d", key, *retryAfter)
			return
		}
		fmt.Fprintln(w, "ok")
		log.Printf("%s: 200", key)
	})
	log.Printf("flaky provider on http://%s/", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
