package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getratchet/ratchet/client"
)

// WorkerConfig is one worker process of a chaos run (`ratchet chaos
// worker`, started by the run, which kills it with SIGKILL now and then).
type WorkerConfig struct {
	Nodes       []string // the nodes' base URLs; requests go to any that answers
	Key         string   // an owner or worker key
	Provider    string   // the test provider's base URL
	ID          string   // the worker id on attempts
	Concurrency int      // handlers at once; default 8
	Tools       []string // the tool@version refs to run
}

// Validate names the first field that is wrong.
func (c WorkerConfig) Validate() error {
	switch {
	case len(c.Nodes) == 0:
		return errors.New("worker: Nodes is empty; give at least one node URL")
	case c.Key == "":
		return errors.New("worker: Key is empty")
	case !strings.HasPrefix(c.Provider, "http://127.0.0.1:"):
		return fmt.Errorf("worker: Provider %q must be http://127.0.0.1:PORT: the chaos run talks to loopback only", c.Provider)
	case c.ID == "":
		return errors.New("worker: ID is empty")
	case len(c.Tools) == 0:
		return errors.New("worker: Tools is empty")
	case c.Concurrency < 0 || c.Concurrency > 256:
		return fmt.Errorf("worker: Concurrency %d must be from 1 through 256 (0: 8)", c.Concurrency)
	}
	for _, n := range c.Nodes {
		if !strings.HasPrefix(n, "http://127.0.0.1:") {
			return fmt.Errorf("worker: node %q must be http://127.0.0.1:PORT", n)
		}
	}
	return nil
}

// RunWorker runs an SDK worker that calls the provider for each job until
// ctx ends, then stops gracefully (running handlers finish and report).
// Errors the SDK retries by itself are written to log, one line each.
func RunWorker(ctx context.Context, cfg WorkerConfig, log io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 8
	}
	c, err := newFailoverClient(cfg.Nodes, cfg.Key)
	if err != nil {
		return err
	}
	var logMu sync.Mutex
	w := client.NewWorker(c, client.WorkerOptions{ID: cfg.ID, Concurrency: cfg.Concurrency, Wait: 5 * time.Second,
		OnError: func(err error) {
			logMu.Lock()
			fmt.Fprintf(log, "%s %s: %v\n", time.Now().UTC().Format("15:04:05.000"), cfg.ID, err)
			logMu.Unlock()
		}})
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2 * cfg.Concurrency
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	call := func(ctx context.Context, j *client.ClaimedJob) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.Provider+"/"+j.Endpoint, bytes.NewReader(j.Payload))
		if err != nil {
			return client.Permanent(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", j.IdempotencyKey)
		req.Header.Set("X-Ratchet-Job", strconv.FormatInt(j.ID, 10))
		req.Header.Set("X-Ratchet-Attempt", strconv.FormatInt(j.Attempt, 10))
		req.Header.Set("X-Ratchet-Worker", cfg.ID)
		if j.FlowKey != "" {
			req.Header.Set("X-Ratchet-Flow-Key", j.FlowKey)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return client.CheckResponse(resp)
	}
	for _, t := range cfg.Tools {
		w.Handle(t, call)
	}
	return w.Run(ctx)
}
