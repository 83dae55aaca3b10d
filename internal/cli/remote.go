package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/getratchet/ratchet/client"
)

// The client commands (endpoints, tools, jobs, runs, keys) talk to a server
// through the Go SDK only. Each prints a readable table or summary, or with
// --json the API's own JSON response, unchanged but indented.

// remote is one client command's connection and output settings.
type remote struct {
	c      *client.Client
	cap    *captureTransport
	asJSON bool
	out    io.Writer
}

// remoteFlags adds the flags every client command shares.
type remoteFlags struct {
	server, key *string
	asJSON      *bool
}

func addRemoteFlags(f *flagSet, env *Env) remoteFlags {
	return remoteFlags{
		server: f.String("server", envOr(env, "RATCHET_SERVER", "http://127.0.0.1:8080"), "server URL (RATCHET_SERVER)"),
		key:    f.String("key", envOr(env, "RATCHET_KEY", ""), "API key (RATCHET_KEY)"),
		asJSON: f.Bool("json", "print the API's JSON response instead of a table"),
	}
}

func (rf remoteFlags) connect(f *flagSet, env *Env) (*remote, error) {
	s := strings.TrimSpace(*rf.server)
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		f.fail("server", s, "must be an http:// or https:// URL, e.g. http://127.0.0.1:8080")
	}
	if *rf.key == "" {
		f.fail("key", "", "required: an API key, with --key or RATCHET_KEY")
	}
	if err := f.done(); err != nil {
		return nil, err
	}
	tr := &captureTransport{next: http.DefaultTransport}
	return &remote{c: client.New(s, *rf.key, client.WithHTTPClient(&http.Client{Transport: tr})), cap: tr, asJSON: *rf.asJSON, out: env.Stdout}, nil
}

// captureTransport keeps the body of the last response so --json can print
// exactly what the API said.
type captureTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	last []byte
}

func (t *captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.last = body
	t.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// printJSON prints the last response body, indented.
func (r *remote) printJSON() error {
	r.cap.mu.Lock()
	body := r.cap.last
	r.cap.mu.Unlock()
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err != nil {
		_, err = r.out.Write(body)
		return err
	}
	b.WriteByte('\n')
	_, err := r.out.Write(b.Bytes())
	return err
}

// show prints the JSON with --json, or runs the readable printer.
func (r *remote) show(readable func(w io.Writer)) error {
	if r.asJSON {
		return r.printJSON()
	}
	tw := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	readable(tw)
	return tw.Flush()
}

// apiErr turns an SDK error into what the person reads: the server's
// message and every field it rejected. Transport errors say which server
// could not be reached.
func apiErr(err error, server string) error {
	if err == nil {
		return nil
	}
	var ae *client.Error
	if !errors.As(err, &ae) {
		return fmt.Errorf("cannot reach the Ratchet server at %s: %w", server, err)
	}
	msg := ae.Message
	if len(ae.Fields) > 0 && strings.HasPrefix(msg, "invalid request: ") {
		msg = "invalid request" // the fields follow, one a line
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (HTTP %d, %s)", msg, ae.Status, ae.Code)
	for _, f := range ae.Fields {
		b.WriteString("\n  " + f.Field)
		if f.Value != "" {
			b.WriteString(" = " + f.Value)
		}
		if f.Allowed != "" {
			b.WriteString(": " + f.Allowed)
		} else if f.Message != "" {
			b.WriteString(": " + f.Message)
		}
	}
	return errors.New(b.String())
}

// subcommand splits "sub [POSITIONAL] --flags..." and checks sub is known.
func subcommand(cmd string, args []string, usage string, subs ...string) (string, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return "", nil, usagef("usage:\n%s", usage)
		}
		return "", nil, usagef("%s needs a subcommand: %s\nusage:\n%s", cmd, strings.Join(subs, ", "), usage)
	}
	for _, s := range subs {
		if s == args[0] {
			return s, args[1:], nil
		}
	}
	return "", nil, usagef("%s subcommand %q is not known; use %s", cmd, args[0], strings.Join(subs, ", "))
}

// positional takes the one argument (a name or id) that follows a
// subcommand.
func positional(cmd, what string, args []string) (string, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return "", nil, usagef("ratchet %s needs %s", cmd, what)
	}
	return args[0], args[1:], nil
}

func positionalID(cmd string, args []string) (int64, []string, error) {
	s, rest, err := positional(cmd, "an ID", args)
	if err != nil {
		return 0, nil, err
	}
	id, perr := strconv.ParseInt(s, 10, 64)
	if perr != nil || id < 1 {
		return 0, nil, usagef("ratchet %s: ID %s is not allowed; must be a positive integer", cmd, quoteValue(s))
	}
	return id, rest, nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func intOrDash(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}
