package docs_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/getratchet/ratchet/docs"
	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/store/postgres/pgtest"
)

// The pages mark every runnable block in its info string:
//
//	```sh setup                  what the page needs, up front (below)
//	```console test              lines "$ cmd" are run in order; the lines after
//	                             each are its expected output (<NAME> matches any text;
//	                             docs.Examples says what the served page shows instead)
//	```sh test                   the block runs as one script; it must succeed
//	```go test file=w/main.go    the block is saved under that name (so is json, text)
//	```sh serve                  each `ratchet serve ...` line is started and stopped
//
// The blocks of one page run in order in one bash session, as a reader would
// type them: variables and the working directory carry over. The session
// has the built ratchet binary on PATH, and its working directory is a Go
// module that requires github.com/getratchet/ratchet from this checkout.
// Everything else comes from the page's setup block, and only from it: its
// `ratchet serve` line starts a server with those flags (and a
// bootstrap owner key; addresses are free loopback ports) that already
// holds jobs, as a reader's has after the README, so a page reads the ids
// of the jobs it makes instead of writing 1, 2, ...; its
// `go run ./examples/flaky-provider` line starts that provider with those
// flags, and each `export NAME=...` sets NAME to what the tests started
// (RATCHET_SERVER, RATCHET_KEY, RATCHET_METRICS with --metrics-addr,
// PROVIDER_URL, RATCHET_REPO: this checkout, GOFLAGS). A page that uses
// what it does not declare fails; without a serve line the CLI's default
// server is a port that refuses.

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
				_, setup := b.attrs["setup"]
				manual, isManual := b.attrs["manual"]
				if isManual && manualReasons[manual] == "" {
					t.Errorf("%s:%d: manual=%q is not a known reason a test cannot run a block (%v)", name, b.line, manual, slices.Sorted(maps.Keys(manualReasons)))
				}
				if !test && !serve && !setup && !isManual {
					t.Errorf("%s:%d: a ```%s block without the test tag is never run", name, b.line, b.lang)
				}
			}
		}
	}
}

// manualReasons are the only reasons a command block may go untested
// (```sh manual=REASON): what it needs is not on a test machine, nor may a
// test do it to the machine. What such a block installs is tested apart.
var manualReasons = map[string]string{
	// systemctl needs systemd as PID 1, and the block changes the host's
	// services; deploy/systemd_test.go checks the unit with systemd-analyze.
	"systemd": "a running systemd",
	// A container runtime; deploy/image_test.go reads the image and runs
	// its entrypoint without one.
	"container-runtime": "podman or docker",
}

// TestEveryPlaceholderHasAnExample: the served pages show docs.Examples in
// place of the placeholders the tests match, so each one needs an example.
func TestEveryPlaceholderHasAnExample(t *testing.T) {
	for name, src := range pages(t) {
		for _, m := range docs.Placeholder.FindAllString(src, -1) {
			if _, ok := docs.Examples[m[1:len(m)-1]]; !ok {
				t.Errorf("%s: %s has no entry in docs.Examples, so the served page would show it as it is", name, m)
			}
		}
		if m := docs.Placeholder.Find(docs.Readable([]byte(src))); m != nil {
			t.Errorf("%s: %s is left by docs.Readable", name, m)
		}
	}
}

func TestPages(t *testing.T) {
	bin := proctest.Binary(t)
	provider := buildProvider(t)
	for name, src := range pages(t) {
		blocks := parseBlocks(src)
		t.Run(strings.TrimSuffix(name, ".md"), func(t *testing.T) {
			t.Parallel()
			runPage(t, bin, provider, blocks)
		})
	}
}

// TestSchedulesPageAtAnyMinute runs the schedules page with the server's
// clock at minutes of the hour where the page's clock move once passed two
// of the schedule's hourly fire times (the catch-up policy then recorded a
// tick as missed, and the page's output differed): at 58:30, in that
// window, and at 05:16, just after the fire time, where the move falls a
// few seconds short of the next one. TestPages runs it at the machine's
// minute, which failed it one run in six.
func TestSchedulesPageAtAnyMinute(t *testing.T) {
	bin := proctest.Binary(t)
	provider := buildProvider(t)
	blocks := parseBlocks(pages(t)["schedules.md"])
	for _, at := range []time.Duration{58*time.Minute + 30*time.Second, 5*time.Minute + 16*time.Second} {
		t.Run(fmt.Sprintf("at minute %s of the hour", at), func(t *testing.T) {
			now := time.Now()
			target := now.Truncate(time.Hour).Add(at)
			if target.Before(now) {
				target = target.Add(time.Hour)
			}
			t.Setenv(clock.TestOffsetEnv, target.Sub(now).Round(time.Second).String())
			runPage(t, bin, provider, blocks)
		})
	}
}

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// setup is what a page's ```sh setup block asks for: the reader runs it
// before the page's examples, and the tests build exactly that, so a page
// that uses a flag, a provider or a variable it does not declare fails.
type setup struct {
	serve    []string // the flags of its `ratchet serve` line; nil: no server
	hasServe bool
	metrics  bool     // its serve line has --metrics-addr
	provider []string // the flags of its flaky-provider line; nil: no provider
	exports  []string // the variables it exports
}

// Lines of a setup block the harness does itself, in its own way: it makes
// the working directory a Go module that requires the checkout (with the
// checkout's go.sum), as the page's mkdir, cd, go mod and cp lines do.
var setupByHarness = regexp.MustCompile(`^(mkdir|cd|go mod|cp) `)

func parseSetup(t *testing.T, b block) setup {
	var s setup
	for _, l := range strings.Split(b.body, "\n") {
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		l = strings.TrimSuffix(strings.TrimSpace(l), "&")
		f := strings.Fields(l)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case len(f) >= 2 && f[0] == "ratchet" && f[1] == "serve":
			s.hasServe = true
			s.metrics = slices.Contains(f, "--metrics-addr")
			s.serve = withoutFlags(f[2:], "--addr", "--metrics-addr")
		case len(f) >= 3 && f[0] == "go" && f[1] == "run" && f[2] == "./examples/flaky-provider":
			if slices.Contains(f, "--wait") {
				continue // the harness reads the address the provider prints instead
			}
			s.provider = append([]string{}, withoutFlags(f[3:], "--addr")...)
		case f[0] == "export" && len(f) == 2 && strings.Contains(f[1], "="):
			name, _, _ := strings.Cut(f[1], "=")
			s.exports = append(s.exports, name)
		case setupByHarness.MatchString(l):
		default:
			t.Fatalf("line %d: the tests do not know how to set up %q (a setup block holds ratchet serve, go run ./examples/flaky-provider, export NAME=VALUE, and the module lines mkdir, cd, go mod, cp)", b.line, l)
		}
	}
	return s
}

// withoutFlags drops the flags the harness sets itself (addresses: every
// server and provider gets a free loopback port).
func withoutFlags(args []string, drop ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if slices.Contains(drop, args[i]) {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func runPage(t *testing.T, bin, providerBin string, blocks []block) {
	var runnable, hasSetup bool
	var need setup
	for _, b := range blocks {
		if _, ok := b.attrs["test"]; ok {
			runnable = true
		}
		if _, ok := b.attrs["serve"]; ok {
			runServeBlock(t, b)
		}
		if _, ok := b.attrs["setup"]; ok {
			if hasSetup {
				t.Fatalf("line %d: a second setup block; a page says what it needs once, up front", b.line)
			}
			if runnable {
				t.Fatalf("line %d: the setup block comes after a test block; say what the page needs before its first example", b.line)
			}
			hasSetup = true
			need = parseSetup(t, b)
		}
	}
	if !runnable {
		return
	}
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

	// What the page may export, and the value the harness gives it.
	values := map[string]string{"RATCHET_REPO": root, "GOFLAGS": "-mod=mod -buildvcs=false"}
	var srv *proctest.Server
	if need.hasServe {
		srv = proctest.Start(t, "", nil, append([]string{"--bootstrap-key", ownerKey}, need.serve...)...)
		values["RATCHET_SERVER"], values["RATCHET_KEY"] = srv.URL, ownerKey
		seedLikeREADME(t, bin, dir, srv.URL)
		if need.metrics {
			values["RATCHET_METRICS"] = srv.MetricsURL
		}
	}
	if need.provider != nil {
		values["PROVIDER_URL"] = startProvider(t, providerBin, need.provider)
	}

	// A page that installs a release downloads it from a server of the
	// test's, which serves what scripts/release built; it installs under
	// a PREFIX of its own.
	if slices.Contains(need.exports, "RELEASE_URL") {
		values["RELEASE_URL"] = serveRelease(t, root)
	}
	values["PREFIX"] = filepath.Join(dir, "prefix")

	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RATCHET_") && !strings.HasPrefix(kv, "GOFLAGS=") {
			env = append(env, kv)
		}
	}
	// Without a declared server the CLI's default must not reach one
	// that happens to run on this machine: port 1 refuses.
	env = append(env, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"RATCHET_SERVER=http://127.0.0.1:1", "GOFLAGS=-buildvcs=false", "HOME="+dir)
	// HOME is the page's directory, but Go's caches stay where they are:
	// under a new HOME every page downloaded every module and compiled
	// the standard library again.
	env = append(env, goCaches(t)...)
	for _, name := range need.exports {
		v, ok := values[name]
		if !ok {
			t.Fatalf("the setup block exports %s, which the tests cannot give a value (known: %v, the server's only with a ratchet serve line, PROVIDER_URL only with a flaky-provider line)", name, slices.Sorted(maps.Keys(values)))
		}
		env = append(env, name+"="+v)
	}
	serverLog := func() string {
		if srv == nil {
			return "(no server: the page's setup starts none)"
		}
		return srv.Output.String()
	}
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
					t.Fatalf("line %d: %q exited %d:\n%s\nserver log:\n%s", b.line, c.cmd, status, out, serverLog())
				}
				if !matchOutput(c.want, out) {
					t.Errorf("line %d: %q printed:\n%s\nthe page shows:\n%s", b.line, c.cmd, out, c.want)
				}
			}
		case "sh", "bash":
			out, status := sh.run(t, "set -e\n"+b.body+"\nset +e", b.line)
			if status != 0 {
				t.Fatalf("line %d: the block exited %d:\n%s\nserver log:\n%s", b.line, status, out, serverLog())
			}
		default:
			t.Fatalf("line %d: a ```%s test block needs file=NAME", b.line, b.lang)
		}
	}
	sh.close(t)
}

// seedLikeREADME enqueues jobs before the page runs, as a reader who
// followed the README first has them on the same server: a page that
// wrote a job id it did not read (job 1 being its own) fails. The jobs are
// on an endpoint and tool of their own, with no worker, so they stay
// scheduled and no page's claims or per-endpoint counts see them.
func seedLikeREADME(t *testing.T, bin, dir, server string) {
	t.Helper()
	seedDir := filepath.Join(dir, ".seed")
	if err := os.MkdirAll(seedDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seedDir, "tool.json"), []byte(`{"name": "readme-seed", "version": "1", "endpoint": "readme-seed"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"endpoints", "create", "readme-seed", "--json"},
		{"tools", "publish", "--file", "tool.json", "--json"},
		{"jobs", "enqueue", "--tool", "readme-seed@1"},
		{"jobs", "enqueue", "--tool", "readme-seed@1"},
		{"jobs", "enqueue", "--tool", "readme-seed@1"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = seedDir
		cmd.Env = append(os.Environ(), "RATCHET_SERVER="+server, "RATCHET_KEY="+ownerKey)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("seeding the README's jobs: ratchet %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
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

// matchOutput compares line by line, ignoring trailing spaces; <NAME> in
// the page matches any non-empty text (times, keys, tokens).
func matchOutput(want, got string) bool {
	wl := trimLines(want)
	gl := trimLines(got)
	if len(wl) != len(gl) {
		return false
	}
	for i := range wl {
		parts := docs.Placeholder.Split(wl[i], -1)
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
	// A group of its own, so what a page starts in the background (a
	// worker, a provider, and the children `go run` starts) ends with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
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

var (
	goCachesOnce sync.Once
	goCachesEnv  []string
	goCachesErr  error
)

// goCaches returns GOCACHE and GOMODCACHE as the go command sees them.
func goCaches(t *testing.T) []string {
	goCachesOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
		if err != nil {
			goCachesErr = fmt.Errorf("go env: %w", err)
			return
		}
		l := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(l) != 2 {
			goCachesErr = fmt.Errorf("go env GOCACHE GOMODCACHE printed %q", out)
			return
		}
		goCachesEnv = []string{"GOCACHE=" + l[0], "GOMODCACHE=" + l[1]}
	})
	if goCachesErr != nil {
		t.Fatal(goCachesErr)
	}
	return goCachesEnv
}

// buildProvider builds examples/flaky-provider, which the setup blocks
// tell readers to run as their provider.
func buildProvider(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "flaky-provider")
	cmd := exec.Command("go", "build", "-o", bin, "./examples/flaky-provider")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/flaky-provider: %v\n%s", err, out)
	}
	return bin
}

var providerAddr = regexp.MustCompile(`flaky provider on (http://\S+)/`)

// startProvider starts the flaky provider with a page's flags on a free
// loopback port and returns its URL once it listens (it prints the
// address only then).
func startProvider(t *testing.T, bin string, args []string) string {
	cmd := exec.Command(bin, append([]string{"--addr", "127.0.0.1:0"}, args...)...)
	out := &proctest.SyncBuffer{}
	cmd.Stdout = out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			out.Write([]byte(sc.Text() + "\n"))
			if m := providerAddr.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			t.Fatalf("flaky-provider %v exited before listening:\n%s", args, out.String())
		}
		return u
	case <-time.After(time.Minute):
		t.Fatalf("flaky-provider %v printed no address within a minute:\n%s", args, out.String())
	}
	return ""
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
	// The test suite's own variables are listed in TESTING.md.
	suite, err := os.ReadFile(filepath.Join(root, "TESTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(suite), "\n") {
		if strings.HasPrefix(l, "| `") {
			rows["TESTING.md "+strings.Split(l, "|")[1]] = l
		}
	}
	for v := range vars {
		ok := false
		for _, row := range rows {
			if strings.Contains(row, "`"+v+"`") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("the variable %s (read by the code) has no row in a configuration table of operations.md or TESTING.md", v)
		}
	}
}

// releaseVersion is the version of the release deploy.md installs.
const releaseVersion = "0.1.0"

// serveRelease runs scripts/release for this machine's linux target (no
// SDK packages) and serves its folder over HTTP, as a release page would.
func serveRelease(t *testing.T, root string) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("deploy.md installs the linux/amd64 release")
	}
	dist := t.TempDir()
	script := filepath.Join(root, "scripts", "release")
	cmd := exec.Command(script, releaseVersion)
	cmd.Env = append(os.Environ(), "RATCHET_RELEASE_DIST="+dist, "RATCHET_RELEASE_TARGETS=linux/amd64", "RATCHET_RELEASE_SDKS=0")
	if out, err := proctest.CombinedOutputExclusive(cmd, script); err != nil {
		t.Fatalf("scripts/release %s: %v\n%s", releaseVersion, err, out)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dist)))
	t.Cleanup(srv.Close)
	return srv.URL
}
