package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
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
	server string // as given, for the message when it cannot be reached
}

// remoteFlags adds the flags every client command shares.
type remoteFlags struct {
	server, key, caCert *string
	asJSON              *bool
}

func addRemoteFlags(f *flagSet, env *Env) remoteFlags {
	return remoteFlags{
		server: f.String("server", envOr(env, "RATCHET_SERVER", "http://127.0.0.1:8080"), "server URL (RATCHET_SERVER)"),
		key:    f.String("key", envOr(env, "RATCHET_KEY", ""), "API key (RATCHET_KEY)"),
		caCert: f.String("ca-cert", envOr(env, "RATCHET_CA_CERT", ""), "an https:// server's certificate is checked against the CAs of this PEM file instead of the system's (RATCHET_CA_CERT)"),
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
	base := http.DefaultTransport.(*http.Transport).Clone()
	if *rf.caCert != "" {
		pool, err := loadCAs(*rf.caCert)
		if err != nil {
			f.fail("ca-cert", *rf.caCert, "must be a readable PEM file of CA certificates: "+err.Error())
		}
		base.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if err := f.done(); err != nil {
		return nil, err
	}
	tr := &captureTransport{next: base}
	return &remote{c: client.New(s, *rf.key, client.WithHTTPClient(&http.Client{Transport: tr})), cap: tr, asJSON: *rf.asJSON, out: env.Stdout, server: *rf.server}, nil
}

// loadCAs reads a PEM file of CA certificates into a pool of its own: with
// --ca-cert the server's certificate must chain to one of them (as with
// curl --cacert), not to the system's roots.
func loadCAs(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("it holds no PEM certificate")
	}
	return pool, nil
}

// commonFlagsHelp ends the help of every client group: the flags
// addRemoteFlags registers, documented once rather than per subcommand.
const commonFlagsHelp = "common flags: --server URL (RATCHET_SERVER) --key KEY (RATCHET_KEY) --ca-cert FILE (RATCHET_CA_CERT) --json"

// clientFlags starts the flags of one client subcommand with the shared
// ones. Its --help shows the whole group's help, where the shared flags and
// the sibling subcommands are described.
func clientFlags(g *group, sub string, env *Env) (*flagSet, remoteFlags) {
	f := newFlagSet(g.name+" "+sub, g.name+" "+sub+"\n"+clientHelp(g), env.Stderr)
	return f, addRemoteFlags(f, env)
}

// connectClient parses the flags of a client subcommand that validates
// nothing of its own, and connects. more registers flags the subcommand
// accepts besides the shared ones; nil for none.
func connectClient(g *group, sub string, env *Env, args []string, more func(*flagSet)) (*remote, error) {
	f, rf := clientFlags(g, sub, env)
	if more != nil {
		more(f)
	}
	if err := f.parse(args); err != nil {
		return nil, err
	}
	return rf.connect(f, env)
}

// connectID is connectClient for a subcommand addressed by ID (jobs get,
// keys revoke): the ID comes first, then the flags.
func connectID(g *group, sub string, env *Env, args []string, more func(*flagSet)) (int64, *remote, error) {
	id, args, err := positionalID(g.name+" "+sub, args)
	if err != nil {
		return 0, nil, err
	}
	r, err := connectClient(g, sub, env, args, more)
	return id, r, err
}

// fail is apiErr for this connection.
func (r *remote) fail(err error) error { return apiErr(err, r.server) }

// captureTransport keeps the body of the last response so --json can print
// exactly what the API said.
type captureTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	last []byte
}

// RoundTrip reads the whole body, keeps it and hands the SDK a copy.
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
		var unknownCA x509.UnknownAuthorityError
		if errors.As(err, &unknownCA) {
			return fmt.Errorf("cannot reach the Ratchet server at %s: %w (give the CA that signed its certificate with --ca-cert FILE or RATCHET_CA_CERT)", server, err)
		}
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
		}
	}
	return errors.New(b.String())
}

// clientHelp lists the synopsis of every row of a client group's table,
// then what its subcommands share.
func clientHelp(g *group) string {
	var b strings.Builder
	for _, s := range g.subs {
		b.WriteString("  ratchet " + g.synopsis(s.name) + "\n")
	}
	b.WriteString(g.footer)
	return b.String()
}

// runClientGroup dispatches "GROUP SUB [POSITIONAL] --flags..." for the
// client groups. A missing subcommand and --help are both usage errors that
// print the group's help.
func runClientGroup(ctx context.Context, env *Env, g *group, args []string) error {
	names := strings.Join(g.names(), ", ")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return usagef("usage:\n%s", clientHelp(g))
		}
		return usagef("%s needs a subcommand: %s\nusage:\n%s", g.name, names, clientHelp(g))
	}
	s, ok := g.find(args[0])
	if !ok {
		return usagef("%s subcommand %q is not known; use %s", g.name, args[0], names)
	}
	return s.cmd.Run(ctx, env, args[1:])
}

// positional takes the one argument (a name or id) that follows a
// subcommand.
func positional(cmd, what string, args []string) (string, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return "", nil, usagef("ratchet %s needs %s", cmd, what)
	}
	return args[0], args[1:], nil
}

// positionalID is positional for a positive integer ID.
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

// readFileOrStdin reads a file named by a flag; "-" is standard input.
func readFileOrStdin(env *Env, path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(env.Stdin)
	}
	return os.ReadFile(path)
}

// stringList is a repeatable string flag.
type stringList []string

// String joins the values given; with none it is empty, so --help prints
// no default.
func (s *stringList) String() string { return strings.Join(*s, ",") }

// Set appends, so each --tool adds one.
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
