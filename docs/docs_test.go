package docs_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/docs"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
)

// The pages mark every runnable block in its info string:
//
//	```console test              lines "$ cmd" are run in order; the lines after
//	                             each are its expected output (<NAME> matches any text)
//	```sh test                   the block runs as one script; it must succeed
//	```go test file=w/main.go    the block is saved under that name (so is json, text)
//	```sh serve                  each `ratchet serve ...` line is started and stopped
//
// The blocks of one page run in order in one bash session, as a reader would
// type them: variables and the working directory carry over. The session
// has the built ratchet binary on PATH, RATCHET_SERVER and RATCHET_KEY (an
// owner key) set for a fresh server started with --dev-clock, PROVIDER_URL
// pointing at a stand-in provider (503 with Retry-After: 120 the first time
// it sees an Idempotency-Key, 200 after), and its working directory is a Go
// module that requires github.com/getratchet/ratchet from this checkout.

const ownerKey = "rk_docs_owner_key_0123456789abcdef"

type block struct {
	lang  string
	attrs map[string]string
	body  string
	line  int
}

var fence = regexp.MustCompile("^```([a-z]*)(.*)$")

func parseBlocks(src string) []block {
	var out []block
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := block{lang: m[1], attrs: map[string]string{}, line: i + 1}
		for _, f := range strings.Fields(m[2]) {
			k, v, _ := strings.Cut(f, "=")
			b.attrs[k] = v
		}
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		b.body = strings.Join(body, "\n")
		out = append(out, b)
	}
	return out
}

func pages(t *testing.T) map[string]string {
	t.Helper()
	names, err := fs.Glob(docs.FS, "*.md")
	if err != nil || len(names) == 0 {
		t.Fatalf("no pages: %v", err)
	}
	out := map[string]string{}
	for _, n := range names {
		b, err := fs.ReadFile(docs.FS, n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

// TestEveryCommandBlockRuns makes sure no command or code sample escapes
// the tests: every sh, console and go block is tagged.
func TestEveryCommandBlockRuns(t *testing.T) {
	for name, src := range pages(t) {
		for _, b := range parseBlocks(src) {
			switch b.lang {
			case "sh", "console", "go", "bash":
				_, test := b.attrs["test"]
				_, serve := b.attrs["serve"]
				if !test && !serve {
					t.Errorf("%s:%d: a ```%s block without the test tag is never run", name, b.line, b.lang)
				}
			}
		}
	}
}

func TestPages(t *testing.T) {
	bin := proctest.Binary(t)
	for name, src := range pages(t) {
		blocks := parseBlocks(src)
		t.Run(strings.TrimSuffix(name, ".md"), func(t *testing.T) {
			t.Parallel()
			runPage(t, bin, blocks)
		})
	}
}

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

func runPage(t *testing.T, bin string, blocks []block) {
	var runnable bool
	for _, b := range blocks {
		if _, ok := b.attrs["test"]; ok {
			runnable = true
		}
		if _, ok := b.attrs["serve"]; ok {
			runServeBlock(t, b)
		}
	}
	if !runnable {
		return
	}
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey, "--dev-clock")
	provider := flakyProvider(t)

	dir := t.TempDir()
	root := repoRoot(t)
	gomod := "module example.com/docs\n\ngo 1.26\n\nrequire github.com/getratchet/ratchet v0.0.0\n\nreplace github.com/getratchet/ratchet => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}

	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RATCHET_") && !strings.HasPrefix(kv, "GOFLAGS=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"RATCHET_SERVER="+srv.URL, "RATCHET_KEY="+ownerKey, "PROVIDER_URL="+provider.URL,
		"GOFLAGS=-mod=mod -buildvcs=false", "HOME="+dir)
	sh := startShell(t, dir, env)

	for _, b := range blocks {
		if _, ok := b.attrs["test"]; !ok {
			continue
		}
		if file := b.attrs["file"]; file != "" {
			p := filepath.Join(dir, file)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(b.body+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		switch b.lang {
		case "console":
			for _, c := range parseConsole(b.body) {
				out, status := sh.run(t, c.cmd, b.line)
				if status != 0 {
					t.Fatalf("line %d: %q exited %d:\n%s\nserver log:\n%s", b.line, c.cmd, status, out, srv.Output.String())
				}
				if !matchOutput(c.want, out) {
					t.Errorf("line %d: %q printed:\n%s\nthe page shows:\n%s", b.line, c.cmd, out, c.want)
				}
			}
		case "sh", "bash":
			out, status := sh.run(t, "set -e\n"+b.body+"\nset +e", b.line)
			if status != 0 {
				t.Fatalf("line %d: the block exited %d:\n%s\nserver log:\n%s", b.line, status, out, srv.Output.String())
			}
		default:
			t.Fatalf("line %d: a ```%s test block needs file=NAME", b.line, b.lang)
		}
	}
	sh.close(t)
}

type command struct{ cmd, want string }

// parseConsole splits a console block into commands ("$ " lines, with
// backslash continuations) and the output shown after each.
func parseConsole(body string) []command {
	var out []command
	lines := strings.Split(body, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "$ ") {
			if len(out) > 0 {
				out[len(out)-1].want += l + "\n"
			}
			continue
		}
		cmd := strings.TrimPrefix(l, "$ ")
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd += "\n" + lines[i]
		}
		out = append(out, command{cmd: cmd})
	}
	return out
}

var placeholder = regexp.MustCompile(`<[A-Z][A-Z_]*>`)

// matchOutput compares line by line, ignoring trailing spaces; <NAME> in
// the page matches any non-empty text (times, keys, tokens).
func matchOutput(want, got string) bool {
	wl := trimLines(want)
	gl := trimLines(got)
	if len(wl) != len(gl) {
		return false
	}
	for i := range wl {
		parts := placeholder.Split(wl[i], -1)
		for j := range parts {
			parts[j] = regexp.QuoteMeta(parts[j])
		}
		if !regexp.MustCompile("^" + strings.Join(parts, ".+?") + "$").MatchString(gl[i]) {
			return false
		}
	}
	return true
}

func trimLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, " \n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines
}

// shell is one bash process fed commands on standard input.
type shell struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	buf   strings.Builder
	done  chan struct{}
	n     int
}

func startShell(t *testing.T, dir string, env []string) *shell {
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir, cmd.Env = dir, env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	s := &shell{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadString('\n')
			s.mu.Lock()
			s.buf.WriteString(line)
			s.mu.Unlock()
			if err != nil {
				close(s.done)
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-s.done
		_ = cmd.Wait()
	})
	s.run(t, "exec 2>&1", 0)
	return s
}

var endMark = regexp.MustCompile(`\n?__DOC_END_(\d+)__ (\d+)\n`)

// run sends one command or script and returns what it printed and its
// exit status.
func (s *shell) run(t *testing.T, script string, line int) (string, int) {
	t.Helper()
	s.n++
	id := s.n
	s.mu.Lock()
	start := s.buf.Len()
	s.mu.Unlock()
	if _, err := fmt.Fprintf(s.stdin, "%s\nprintf '\\n__DOC_END_%d__ %%s\\n' \"$?\"\n", script, id); err != nil {
		t.Fatalf("line %d: write to the shell: %v", line, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for {
		s.mu.Lock()
		out := s.buf.String()[start:]
		s.mu.Unlock()
		if m := endMark.FindStringSubmatchIndex(out); m != nil && out[m[2]:m[3]] == fmt.Sprint(id) {
			status := 0
			fmt.Sscan(out[m[4]:m[5]], &status)
			return out[:m[0]], status
		}
		select {
		case <-s.done:
			return out, -1
		case <-ctx.Done():
			t.Fatalf("line %d: no end after 4 minutes:\n%s", line, out)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (s *shell) close(t *testing.T) {
	_ = s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Errorf("the shell did not exit after its input ended")
	}
}

// flakyProvider stands in for a provider: the first call with an
// Idempotency-Key answers 503 with Retry-After: 120, later ones 200.
func flakyProvider(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		seen[key]++
		n := seen[key]
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":"busy"}`)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// runServeBlock starts each `ratchet serve` line of the block on a free
// port and stops it again. PostgreSQL lines run against a schema of the
// test suite's PostgreSQL server (pgtest), and skip where there is none.
func runServeBlock(t *testing.T, b block) {
	for _, l := range strings.Split(b.body, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		var env []string
		fields := strings.Fields(l)
		for len(fields) > 0 && strings.Contains(fields[0], "=") {
			env = append(env, fields[0])
			fields = fields[1:]
		}
		if len(fields) < 2 || fields[0] != "ratchet" || fields[1] != "serve" {
			t.Fatalf("line %d: a serve block holds only `ratchet serve` lines, not %q", b.line, l)
		}
		var args []string
		pg := false
		for i := 2; i < len(fields); i++ {
			f := fields[i]
			if f == "--addr" {
				i++
				continue
			}
			if strings.HasPrefix(f, "postgres://") {
				pg = true
			}
			args = append(args, f)
		}
		for _, e := range env {
			if strings.Contains(e, "postgres://") {
				pg = true
			}
		}
		t.Run(fmt.Sprintf("line_%d", b.line), func(t *testing.T) {
			if pg {
				u := pgtest.URL(t) // a schema of its own; skips without a server
				for i, a := range args {
					if strings.HasPrefix(a, "postgres://") {
						args[i] = u
					}
				}
				for i, e := range env {
					if k, v, _ := strings.Cut(e, "="); strings.HasPrefix(v, "postgres://") {
						env[i] = k + "=" + u
					}
				}
			}
			srv := proctest.Start(t, "", env, args...)
			resp, err := http.Get(srv.URL + "/readyz")
			if err != nil {
				t.Fatalf("line %d: %q: %v", b.line, l, err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("line %d: %q: /readyz answered %d", b.line, l, resp.StatusCode)
			}
			srv.Stop(t)
		})
	}
}

// TestOperationsCoversConfiguration reads the flags of `ratchet serve` from
// its --help and every RATCHET_ variable from the code, and checks that the
// configuration reference of operations.md has each in a table row, the
// serve flags with their defaults.
func TestOperationsCoversConfiguration(t *testing.T) {
	page := pages(t)["operations.md"]
	rows := map[string]string{}
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, "| `") {
			first := strings.Split(l, "|")[1]
			rows[strings.Trim(strings.TrimSpace(first), "`")] = l
		}
	}
	cmd := exec.Command(proctest.Binary(t), "serve", "--help")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RATCHET_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, _ := cmd.CombinedOutput()
	flagRE := regexp.MustCompile(`(?m)^  -([a-z-]+)( string)?\n\s+(.*)$`)
	defRE := regexp.MustCompile(`\(default "([^"]*)"\)$`)
	found := 0
	for _, m := range flagRE.FindAllStringSubmatch(string(out), -1) {
		found++
		name, usage := "--"+m[1], m[3]
		def := "false"
		if m[2] != "" {
			def = `""`
			if d := defRE.FindStringSubmatch(usage); d != nil {
				def = d[1]
			}
		}
		row, ok := rows[name]
		if !ok {
			t.Errorf("operations.md: no row for serve flag %s", name)
			continue
		}
		if !strings.Contains(row, "`"+def+"`") {
			t.Errorf("operations.md: row of %s does not give the default `%s`:\n%s", name, def, row)
		}
		if v := regexp.MustCompile(`\((RATCHET_[A-Z_]+)\)`).FindStringSubmatch(usage); v != nil && !strings.Contains(row, "`"+v[1]+"`") {
			t.Errorf("operations.md: row of %s does not name %s", name, v[1])
		}
	}
	if found < 8 {
		t.Fatalf("read only %d flags from ratchet serve --help:\n%s", found, out)
	}

	vars := map[string]bool{}
	varRE := regexp.MustCompile(`"(RATCHET_[A-Z0-9_]+)"`)
	root := repoRoot(t)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range varRE.FindAllStringSubmatch(string(b), -1) {
			vars[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for v := range vars {
		ok := false
		for _, row := range rows {
			if strings.Contains(row, "`"+v+"`") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("operations.md: the variable %s (read by the code) has no row in a configuration table", v)
		}
	}
}
