package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/getratchet/ratchet/client"
)

// contract checks every response a test's clients receive against the
// server's own /openapi.json: the schema of that operation and status must
// accept the body. With the clients' strict decoding (unknown fields are
// errors) this proves the server, the document and the SDK's types agree.
type contract struct {
	t     *testing.T
	base  http.RoundTripper
	doc   map[string]any
	comp  *jsonschema.Compiler
	mu    sync.Mutex
	cache map[string]*jsonschema.Schema
	ops   []contractOp
	seen  map[string]int // "METHOD path status" → responses validated
}

type contractOp struct {
	method, template string
	re               *regexp.Regexp
}

// newContract reads the document the server at url serves.
func newContract(t *testing.T, url string) *contract {
	t.Helper()
	resp, err := http.Get(url + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	c := &contract{t: t, base: http.DefaultTransport, cache: map[string]*jsonschema.Schema{}, seen: map[string]int{}}
	if err := json.Unmarshal(raw, &c.doc); err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c.comp = jsonschema.NewCompiler()
	c.comp.DefaultDraft(jsonschema.Draft2020)
	if err := c.comp.AddResource("mem://openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	for path, item := range c.doc["paths"].(map[string]any) {
		pattern := "^" + regexp.MustCompile(`\\\{\w+\\\}`).ReplaceAllString(regexp.QuoteMeta(path), `[^/]+`) + "$"
		for method := range item.(map[string]any) {
			c.ops = append(c.ops, contractOp{strings.ToUpper(method), path, regexp.MustCompile(pattern)})
		}
	}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := 0
		for _, v := range c.seen {
			n += v
		}
		t.Logf("contract: %d responses of %d operation/status pairs validated against /openapi.json", n, len(c.seen))
	})
	return c
}

// client makes an SDK client whose responses are validated and decoded
// strictly.
func (c *contract) client(url, key string) *client.Client {
	return client.New(url, key, client.WithStrictDecoding(), client.WithHTTPClient(&http.Client{Transport: c}))
}

func pointer(parts ...string) string {
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1")
	}
	return "/" + strings.Join(parts, "/")
}

// RoundTrip validates the response body of every call.
func (c *contract) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := c.check(req.Method, req.URL.Path, resp.StatusCode, body); err != nil {
		c.t.Errorf("contract: %s %s answered %d: %v\nbody: %.600s", req.Method, req.URL.Path, resp.StatusCode, err, body)
	}
	return resp, nil
}

func (c *contract) check(method, path string, status int, body []byte) error {
	var op *contractOp
	for i := range c.ops {
		if c.ops[i].method == method && c.ops[i].re.MatchString(path) {
			// Prefer a literal segment over a parameter (/v1/jobs/count
			// over /v1/jobs/{id}).
			if op == nil || strings.Count(c.ops[i].template, "{") < strings.Count(op.template, "{") {
				op = &c.ops[i]
			}
		}
	}
	if op == nil {
		return fmt.Errorf("no operation in the document")
	}
	responses := c.doc["paths"].(map[string]any)[op.template].(map[string]any)[strings.ToLower(method)].(map[string]any)["responses"].(map[string]any)
	code := strconv.Itoa(status)
	r, ok := responses[code].(map[string]any)
	if !ok {
		return fmt.Errorf("status %d is not documented for %s %s", status, method, op.template)
	}
	c.mu.Lock()
	c.seen[method+" "+op.template+" "+code]++
	c.mu.Unlock()
	if r["content"] == nil {
		if len(bytes.TrimSpace(body)) > 0 {
			return fmt.Errorf("documented without a body, answered %d bytes", len(body))
		}
		return nil
	}
	loc := "mem://openapi.json#" + pointer("paths", op.template, strings.ToLower(method), "responses", code, "content", "application/json", "schema")
	c.mu.Lock()
	sch, ok := c.cache[loc]
	if !ok {
		var err error
		if sch, err = c.comp.Compile(loc); err != nil {
			c.mu.Unlock()
			return fmt.Errorf("compile %s: %w", loc, err)
		}
		c.cache[loc] = sch
	}
	c.mu.Unlock()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return sch.Validate(v)
}
