// Command worker is a complete Ratchet worker: it claims jobs of one tool,
// calls an HTTP endpoint with each job's payload, and lets Ratchet decide
// about retries from the response (status and Retry-After) or the network
// error.
//
//	RATCHET_KEY=rk_... go run ./examples/worker --tool charge@1 --target http://127.0.0.1:9000/charge
package main

import (
	"bytes"
	"context"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/getratchet/ratchet/client"
)

func main() {
	server := flag.String("server", envOr("RATCHET_SERVER", "http://127.0.0.1:8080"), "Ratchet server URL")
	tool := flag.String("tool", "charge@1", "the tool@version this worker runs")
	target := flag.String("target", "http://127.0.0.1:9000/charge", "the HTTP endpoint each job's payload is POSTed to")
	concurrency := flag.Int("concurrency", 8, "jobs run at once")
	flag.Parse()

	c := client.New(*server, os.Getenv("RATCHET_KEY"))
	w := client.NewWorker(c, client.WorkerOptions{Concurrency: *concurrency, OnError: func(err error) { log.Print(err) }})
	provider := &http.Client{Timeout: 10 * time.Second}

	w.Handle(*tool, func(ctx context.Context, job *client.ClaimedJob) error {
		req, err := http.NewRequestWithContext(ctx, "POST", *target, bytes.NewReader(job.Payload))
		if err != nil {
			return client.Permanent(err) // a bad target URL will not get better
		}
		req.Header.Set("Content-Type", "application/json")
		// The destination deduplicates repeated deliveries with this key.
		req.Header.Set("Idempotency-Key", job.IdempotencyKey)
		resp, err := provider.Do(req)
		if err != nil {
			return err // dns, connect, timeout, reset: Ratchet retries these
		}
		defer resp.Body.Close()
		log.Printf("job %d attempt %d: %s answered %d", job.ID, job.Attempt, *target, resp.StatusCode)
		return client.CheckResponse(resp) // 2xx succeeds; status and Retry-After go to Ratchet
	})

	// Ctrl-C or SIGTERM stops claiming; running jobs finish and report.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Printf("worker for %s calling %s (server %s)", *tool, *target, *server)
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
