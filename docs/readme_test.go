package docs_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestReadmeQuickStarts runs the ```sh blocks of README.md in order in one
// bash session, as a new user would type them from a clone, and checks
// what the text promises of both quick starts: the job the page enqueues
// fails its first attempt with 503 and Retry-After: 2, succeeds on its
// second, and the `ratchet jobs get` the page runs names that job and
// shows it succeeded — after the page's own wait, not a longer one.
//
// The blocks run as written except for what a test must substitute:
//
//   - the working directory is a temporary "clone": symbolic links to the
//     checkout's directories, go.mod and go.sum, so the files the page
//     writes (charge.json, ratchet.db, the ratchet binary) stay out of the
//     checkout;
//   - `go build -o ratchet ./cmd/ratchet` copies the binary the tests built
//     from this checkout (proctest) instead of building it a second time;
//   - a `serve` line (`go run ./cmd/ratchet serve ...` or `ratchet serve
//     ...`) stops the server a previous one started, as Ctrl-C in its
//     terminal would, and starts the built binary with the line's flags in
//     the working directory, on a free port instead of 127.0.0.1:8080;
//     RATCHET_SERVER names that port, as the CLI's and the workers'
//     default names 8080;
//   - `rk_...` is the owner key the first serve printed;
//   - every other 127.0.0.1 port is a free port of its own, and a
//     flaky-provider line without --addr gets its default, 127.0.0.1:9000,
//     spelled out so that it can be moved too;
//   - `./scripts/test` (the whole suite) is not run from inside it.
//
// Each line runs as a command of its own, and every one must exit 0.
func TestReadmeQuickStarts(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	src, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []block
	for _, b := range parseBlocks(string(src)) {
		if b.lang == "sh" {
			blocks = append(blocks, b)
		}
	}
	r := newReadmeRun(t, root)
	var checked int
	for _, b := range blocks {
		for _, l := range r.lines(t, b) {
			out := r.run(t, l)
			if enq := enqueueLine.FindStringSubmatch(l.text); enq != nil {
				r.enqueued = append(r.enqueued, enqueued{tool: enq[1], key: enq[2], line: l.line})
			}
			if m := jobsGetLine.FindStringSubmatch(l.text); m != nil {
				r.checkJobsGet(t, l, m[1], out)
				checked++
			}
		}
	}
	// Two quick starts: the worker and the delivery.
	if checked != 2 {
		t.Errorf("README.md: %d `ratchet jobs get` lines checked; the two quick starts have one each", checked)
	}
}

var (
	serveLine   = regexp.MustCompile(`^(?:go run \./cmd/ratchet|ratchet) serve\b([^#]*)`)
	buildLine   = "go build -o ratchet ./cmd/ratchet"
	enqueueLine = regexp.MustCompile(`ratchet jobs enqueue --tool (\S+) .*--idempotency-key (\S+)`)
	jobsGetLine = regexp.MustCompile(`ratchet jobs get (\d+)`)
	loopback    = regexp.MustCompile(`127\.0\.0\.1:(\d+)`)
	keyInOutput = regexp.MustCompile(`\brk_[0-9a-f]{16,}`)
)

type enqueued struct {
	tool, key string
	line      int
}

type readmeLine struct {
	text    string
	line    int
	serve   []string // the flags of a serve line; nil for a shell line
	isServe bool     // a serve line
}

type readmeRun struct {
	root, dir, bin string
	serverAddr     string         // 127.0.0.1:PORT for every serve
	ports          map[string]int // README port → free port
	srv            *proctest.Server
	key            string
	sh             *shell
	enqueued       []enqueued
}

func newReadmeRun(t *testing.T, root string) *readmeRun {
	r := &readmeRun{root: root, dir: t.TempDir(), bin: proctest.Binary(t), ports: map[string]int{}}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if (e.IsDir() && !strings.HasPrefix(e.Name(), ".")) || e.Name() == "go.mod" || e.Name() == "go.sum" {
			if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(r.dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.serverAddr = "127.0.0.1:" + strconv.Itoa(freePort(t))
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RATCHET_") && !strings.HasPrefix(kv, "GOFLAGS=") {
			env = append(env, kv)
		}
	}
	env = append(env, "RATCHET_SERVER=http://"+r.serverAddr)
	r.sh = startShell(t, r.dir, env)
	// A reader's `go build ./cmd/ratchet` has compiled what the examples
	// import; this "clone" is a new directory to Go's build cache, so
	// compile them once here, or the page's waits would time the compiler.
	if out, status := r.sh.run(t, "go build ./examples/worker ./examples/flaky-provider", 0); status != 0 {
		t.Fatalf("go build of the examples exited %d:\n%s", status, out)
	}
	return r
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lines applies the substitutions listed on TestReadmeQuickStarts to one
// block.
func (r *readmeRun) lines(t *testing.T, b block) []readmeLine {
	var out []readmeLine
	for i, text := range strings.Split(b.body, "\n") {
		n := b.line + 1 + i
		trimmed := strings.TrimSpace(text)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "./scripts/test") {
			continue
		}
		if m := serveLine.FindStringSubmatch(trimmed); m != nil {
			out = append(out, readmeLine{text: trimmed, line: n, serve: strings.Fields(m[1]), isServe: true})
			continue
		}
		text = strings.Replace(text, buildLine, "cp "+shellQuote(r.bin)+" ratchet", 1)
		if strings.Contains(text, "./examples/flaky-provider") && !strings.Contains(text, "--addr") {
			text = strings.Replace(text, "./examples/flaky-provider", "./examples/flaky-provider --addr 127.0.0.1:9000", 1)
		}
		text = loopback.ReplaceAllStringFunc(text, func(hostPort string) string {
			port := strings.TrimPrefix(hostPort, "127.0.0.1:")
			if port == "8080" {
				return r.serverAddr
			}
			if _, ok := r.ports[port]; !ok {
				r.ports[port] = freePort(t)
			}
			return "127.0.0.1:" + strconv.Itoa(r.ports[port])
		})
		out = append(out, readmeLine{text: text, line: n})
	}
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// run runs one line and returns what it printed; a serve line (re)starts
// the server.
func (r *readmeRun) run(t *testing.T, l readmeLine) string {
	t.Helper()
	if l.isServe {
		if r.srv != nil {
			r.srv.Stop(t)
		}
		r.srv = proctest.Start(t, r.dir, nil, append(l.serve, "--addr", r.serverAddr)...)
		if r.key == "" {
			r.key = keyInOutput.FindString(r.srv.Output.String())
		}
		return ""
	}
	if r.srv == nil {
		t.Fatalf("README.md:%d: %q runs before any `serve` line has started a server", l.line, l.text)
	}
	text := l.text
	if strings.Contains(text, "rk_...") {
		if r.key == "" {
			t.Fatalf("README.md:%d: the page asks for the key serve printed, and it printed none:\n%s", l.line, r.srv.Output.String())
		}
		text = strings.ReplaceAll(text, "rk_...", r.key)
	}
	out, status := r.sh.run(t, text, l.line)
	if status != 0 {
		t.Fatalf("README.md:%d: %q exited %d:\n%s\nserver log:\n%s", l.line, text, status, out, r.srv.Output.String())
	}
	return out
}

// checkJobsGet checks a `ratchet jobs get N` line: N is the job the
// block's enqueue line made, and that job ran as the page says by the
// time the line printed.
func (r *readmeRun) checkJobsGet(t *testing.T, l readmeLine, id, out string) {
	t.Helper()
	if len(r.enqueued) == 0 {
		t.Errorf("README.md:%d: `ratchet jobs get %s` before any enqueue", l.line, id)
		return
	}
	enq := r.enqueued[len(r.enqueued)-1]
	c := client.New("http://"+r.serverAddr, r.key)
	ctx := context.Background()
	tool := enq.tool
	page, err := c.ListJobs(ctx, client.JobFilter{Tool: tool, Q: enq.key})
	if err != nil {
		t.Fatal(err)
	}
	var job *client.Job
	for i := range page.Jobs {
		if k := page.Jobs[i].IdempotencyKey; k != nil && *k == enq.key {
			job = &page.Jobs[i]
		}
	}
	if job == nil {
		t.Errorf("README.md:%d: no %s job has the key %q: the enqueue line made none (an earlier job holds the key?)", enq.line, tool, enq.key)
		return
	}
	if want := strconv.FormatInt(job.ID, 10); id != want {
		t.Errorf("README.md:%d: `ratchet jobs get %s` shows another job than the one line %d enqueued, job %s", l.line, id, enq.line, want)
	}
	full, err := c.GetJob(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	problems := jobProblems(full)
	// What `jobs get` printed after the page's wait; the attempts'
	// outcomes and the classification are words only it prints (the
	// examples log statuses, not outcomes).
	for _, want := range []string{"succeeded", "retry_after", "503"} {
		if !strings.Contains(out, want) {
			problems = append(problems, fmt.Sprintf("`jobs get` printed no %q", want))
		}
	}
	if len(problems) > 0 {
		t.Errorf("README.md:%d: job %d (%s, key %s) is not what the page says:\n  %s\n`%s` printed:\n%s\nserver log:\n%s",
			l.line, job.ID, tool, enq.key, strings.Join(problems, "\n  "), l.text, out, r.srv.Output.String())
	}
}

// jobProblems lists how a job differs from the quick starts' promise:
// attempt 1 failed with 503 and Retry-After: 2, attempt 2 succeeded.
func jobProblems(j *client.Job) []string {
	var p []string
	if j.State != "succeeded" {
		p = append(p, fmt.Sprintf("state %s, want succeeded", j.State))
	}
	if len(j.Attempts) != 2 {
		p = append(p, fmt.Sprintf("%d attempts, want 2", len(j.Attempts)))
	}
	if len(j.Attempts) > 0 {
		a := j.Attempts[0]
		if a.Outcome != "failed" || a.HTTPStatus == nil || *a.HTTPStatus != 503 || a.RetryAfterMs == nil || *a.RetryAfterMs != 2000 {
			p = append(p, fmt.Sprintf("attempt 1: outcome %s, classification %s, status %s, retryAfterMs %s, message %q; want failed with 503 and Retry-After: 2",
				a.Outcome, a.Classification, ptr(a.HTTPStatus), ptr(a.RetryAfterMs), a.Message))
		}
	}
	if len(j.Attempts) > 1 {
		if a := j.Attempts[1]; a.Outcome != "succeeded" {
			p = append(p, fmt.Sprintf("attempt 2: outcome %s, classification %s, message %q; want succeeded", a.Outcome, a.Classification, a.Message))
		}
	}
	return p
}

func ptr[T any](v *T) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprint(*v)
}
