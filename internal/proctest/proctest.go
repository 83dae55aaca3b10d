// Package proctest builds the real ratchet binary once per test process and
// starts it as a child process on a loopback port, so end-to-end tests talk
// to exactly what users run.
package proctest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/wire"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	inMain    bool
	prebuilt  string // PrebuiltEnv's binary, when Binary uses it
)

// Main runs a test package that starts servers with this package: it builds
// nothing itself, but removes the binary Binary built once every test of
// the package ran, so a passing run leaves nothing in the temporary
// directory. Call it from the package's TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(proctest.Main(m)) }
//
// m is the package's *testing.M, or a wrapper of it such as
// browsertest.Main's.
func Main(m interface{ Run() int }) int {
	inMain = true
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	return code
}

// Binary returns the path of a ratchet binary built from this checkout (with
// the race detector when the tests run with it), once per test binary.
func Binary(t testing.TB) string {
	t.Helper()
	if !inMain {
		t.Fatal("proctest: the package's TestMain must call proctest.Main, which removes the binary when the tests end")
	}
	buildOnce.Do(func() {
		// scripts/test builds the server once, before the suites start,
		// and names it here: linking it again in each test binary took
		// about 3 CPU seconds a package. Not under -race, whose binary is
		// another build. The binary is the caller's, left in place.
		if bin := os.Getenv(PrebuiltEnv); bin != "" && !raceEnabled {
			if _, err := os.Stat(bin); err != nil {
				buildErr = fmt.Errorf("%s=%s: %v", PrebuiltEnv, bin, err)
			} else if filepath.Base(bin) != "ratchet" {
				// The docs tests run it by name, from PATH, as a reader does.
				buildErr = fmt.Errorf("%s=%s: the binary must be named ratchet", PrebuiltEnv, bin)
			}
			prebuilt = bin
			return
		}
		dir, err := os.MkdirTemp("", "ratchet-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "ratchet")
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		args := []string{"build", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "./cmd/ratchet")...)
		cmd.Dir = root
		// One build at a time across test binaries: go test runs several
		// packages that start servers at once, and side by side they each
		// compiled the whole server (PostgreSQL and SQLite drivers
		// included) on a cold build cache; one after the other, all but
		// the first find it compiled and only link. The lock is this
		// source file: not go.mod, which the go command itself locks to
		// read (the build waited on the test's lock for ever).
		out, err := CombinedOutputExclusive(cmd, file)
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	if prebuilt != "" {
		return prebuilt
	}
	return binPath
}

// PrebuiltEnv names a ratchet binary (named ratchet) built from this checkout that Binary
// returns instead of building one (when the tests run without -race).
// scripts/test sets it to the binary it builds before the suites start.
const PrebuiltEnv = "RATCHET_TEST_SERVER_BIN"

// Server is a running `ratchet serve` child process.
type Server struct {
	URL string // http://127.0.0.1:PORT, or https:// with --tls-cert
	// MetricsURL is the base URL of the metrics listener (/metrics is
	// served there): Start always asks for one on a free loopback port.
	MetricsURL string
	Dir        string // working directory (holds the SQLite file by default)
	Output     *SyncBuffer
	cmd        *exec.Cmd
	done       chan struct{}
}

var (
	listenRE  = regexp.MustCompile(`listening on (https?://\S+)`)
	metricsRE = regexp.MustCompile(`metrics on (http://\S+)/metrics`)
)

// Start runs `ratchet serve --addr 127.0.0.1:0 args...` in dir (a new temp
// dir when empty) and waits until it prints its address. The process is
// stopped when the test ends.
func Start(t testing.TB, dir string, env []string, args ...string) *Server {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	bin := Binary(t)
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	s := &Server{Dir: dir, Output: &SyncBuffer{}, cmd: cmd, done: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = s.Output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlCh := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		found, metricsURL := false, ""
		for sc.Scan() {
			line := sc.Text()
			s.Output.Write([]byte(line + "\n"))
			if m := metricsRE.FindStringSubmatch(line); m != nil {
				metricsURL = m[1] // printed before the listening line
			}
			if m := listenRE.FindStringSubmatch(line); m != nil && !found {
				found = true
				urlCh <- [2]string{m[1], metricsURL}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { s.Stop(t) })
	select {
	case u := <-urlCh:
		s.URL, s.MetricsURL = u[0], u[1]
	case <-s.done:
		t.Fatalf("ratchet serve exited before listening:\n%s", s.Output.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("ratchet serve did not print its address within 60 s:\n%s", s.Output.String())
	}
	return s
}

// Stop sends SIGTERM and waits for a graceful exit (SIGKILL after 15 s).
func (s *Server) Stop(t testing.TB) {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		t.Errorf("ratchet serve did not stop within 15 s of SIGTERM")
	}
}

// Signal sends sig to the process (SIGHUP, to reload the TLS pair).
func (s *Server) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// Kill sends SIGKILL, as a crash would, and waits for the process to go.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Pid is the process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// DeliveryWorkerID is the worker id the node's HTTP deliveries carry
// ("ratchet-delivery/<host>/<hash>", the same across restarts of one
// node), from the line the server prints at start.
func (s *Server) DeliveryWorkerID(t testing.TB) string {
	t.Helper()
	const prefix = "Ratchet delivers HTTP tools as worker "
	l, ok := s.Line(prefix, 10*time.Second)
	if !ok {
		t.Fatalf("the server printed no %q line:\n%s", prefix, s.Output.String())
	}
	return strings.TrimSpace(strings.TrimPrefix(l, prefix))
}

// Exited reports whether the process has ended.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Line returns the first output line containing substr, waiting up to d.
func (s *Server) Line(substr string, d time.Duration) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		for _, l := range strings.Split(s.Output.String(), "\n") {
			if strings.Contains(l, substr) {
				return l, true
			}
		}
		select {
		case <-ctx.Done():
			return "", false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// SyncBuffer is a goroutine-safe bytes buffer for process output.
type SyncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Metrics scrapes the server's /metrics once and returns the text.
func (s *Server) Metrics(t testing.TB) string {
	t.Helper()
	resp, err := http.Get(s.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// WaitForMetric scrapes /metrics until one of its lines equals line, and
// fails the test after 10 s showing the lines of that metric.
func (s *Server) WaitForMetric(t testing.TB, line string) {
	t.Helper()
	name, _, _ := strings.Cut(line, " ")
	name, _, _ = strings.Cut(name, "{")
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := s.Metrics(t)
		var of []string
		for _, l := range strings.Split(m, "\n") {
			if l == line {
				return
			}
			if strings.HasPrefix(l, name) {
				of = append(of, l)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in /metrics after 10 s; %s is:\n%s", line, name, strings.Join(of, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// FirstEvent opens GET /v1/stream?query with key, reads the stream's first
// event and closes the stream: what a page opened now is shown first. It
// fails the test on any other answer than a stream, or after d.
func (s *Server) FirstEvent(t testing.TB, key, query string, d time.Duration) (event, data string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	resp := s.openStream(t, ctx, key, query)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" && event != "":
			return event, data
		case strings.HasPrefix(line, "event: "):
			event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data += line[len("data: "):]
		}
	}
	t.Fatalf("stream %s ended before its first event: %v", query, sc.Err())
	return "", ""
}

// openStream sends GET /v1/stream?query with key and fails the test on any
// answer but a stream.
func (s *Server) openStream(t testing.TB, ctx context.Context, key, query string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+"/v1/stream?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("open stream %s: %v", query, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		t.Fatalf("open stream %s: %s %s", query, resp.Status, b)
	}
	return resp
}

// HoldStream opens GET /v1/stream?query with key and reads it until the
// test ends, as a dashboard tab left open does; it returns once the first
// event arrived.
func (s *Server) HoldStream(t testing.TB, key, query string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp := s.openStream(t, ctx, key, query)
	first := make(chan struct{})
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		seen := false
		for sc.Scan() {
			if !seen && strings.HasPrefix(sc.Text(), "event: ") {
				close(first)
				seen = true
			}
		}
	}()
	select {
	case <-first:
	case <-time.After(10 * time.Second):
		t.Fatalf("stream %s: no first event within 10 s", query)
	}
}

// CheckOverviewFollowsPauses pauses and resumes endpoint name through owner
// twenty times, each time opening an overview on reader at once and
// checking that its first event shows the write, while a stream held open
// on each of warm (as a dashboard tab left open) keeps that node's shared
// overview read fresh.
func CheckOverviewFollowsPauses(t testing.TB, owner *client.Client, key, name string, reader *Server, warm ...*Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, w := range warm {
		w.HoldStream(t, key, "view=overview")
	}
	stale := 0
	for i := range 20 {
		pause := i%2 == 0
		var err error
		if pause {
			_, err = owner.PauseEndpoint(ctx, name, "incident")
		} else {
			_, err = owner.ResumeEndpoint(ctx, name)
		}
		if err != nil {
			t.Fatal(err)
		}
		event, data := reader.FirstEvent(t, key, "view=overview", 10*time.Second)
		var o wire.Overview
		if err := json.Unmarshal([]byte(data), &o); err != nil || event != "overview" {
			t.Fatalf("first event %q %s: %v", event, data, err)
		}
		found := false
		for _, ep := range o.Endpoints {
			if ep.Name != name {
				continue
			}
			found = true
			if (ep.Paused != nil) != pause {
				stale++
				t.Errorf("write %d: paused=%v, then an overview opened at once shows paused=%v", i+1, pause, ep.Paused != nil)
			}
		}
		if !found {
			t.Fatalf("the overview has no endpoint %q: %s", name, data)
		}
	}
	if stale > 0 {
		t.Errorf("%d of 20 overviews opened right after a write were stale", stale)
	}
}

// Now is the time on the clock of the servers a test starts: the machine's,
// shifted by clock.TestOffsetEnv when the test script moves every clock to
// another hour. A test that sends or checks a time of day (runAt, a due
// time) takes it from here, never from time.Now; elapsed times and
// deadlines may stay on time.Now.
func Now() time.Time {
	c, err := clock.System()
	if err != nil {
		panic(err) // the variable is the test script's; a bad value is its bug
	}
	return c.Now()
}

// CombinedOutputExclusive runs cmd, as cmd.CombinedOutput, holding an
// exclusive flock on the existing file lock, so commands that name the
// same file run one after another, across test binaries. The tests that
// run scripts/release lock the script itself: run at once by two packages,
// the two release builds compiled everything twice side by side; one after
// the other, the second finds the first's compiled packages in the build
// cache and only links.
func CombinedOutputExclusive(cmd *exec.Cmd, lock string) ([]byte, error) {
	f, err := os.Open(lock)
	if err != nil {
		return nil, err
	}
	defer f.Close() // and so unlocks
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("flock %s: %w", lock, err)
	}
	return cmd.CombinedOutput()
}
