package docs_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestReadmeQuickStarts runs README.md's two quick starts as a new user
// would, one after the other in one shell, and checks what the text
// promises: job 1 (a worker) and job 2 (Ratchet's own delivery) each fail
// once with the provider's 503 and Retry-After: 2, then succeed.
//
// Only what cannot be taken as written is substituted, and nothing else:
//   - the owner key: the test starts the server with its own bootstrap key,
//     exported where the block exports "rk_...";
//   - the addresses: the server listens on a free loopback port
//     (RATCHET_SERVER) and the flaky provider on another, in place of
//     127.0.0.1:8080 and 127.0.0.1:9000, which may be taken on this machine;
//   - the working directory: a temporary one, so "go build -o X ./path"
//     runs as "go -C <clone> build -o <temp>/X ./path";
//   - the restart between the two: the test stops the server and starts
//     the block's `ratchet serve --delivery-allow 127.0.0.1/32` on the same
//     database.
func TestReadmeQuickStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three programs and waits 24 s")
	}
	t.Parallel() // beside TestPages: most of its time is the README's sleeps
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := quickStartBlocks(t, string(readme))
	if len(blocks) != 3 {
		t.Fatalf("README.md's quick starts have %d sh blocks, want 3 (worker, serve again, delivery)", len(blocks))
	}
	if got := strings.TrimSpace(blocks[1]); got != "ratchet serve --delivery-allow 127.0.0.1/32" {
		t.Fatalf("the second block is %q; the test restarts the server with exactly that command", got)
	}
	const key = "rk_readme_owner_key_0123456789abcdef"
	work := t.TempDir()
	addr, provider := freeAddr(t), freeAddr(t)
	srv := proctest.Start(t, work, nil, "--bootstrap-key", key, "--addr", addr)

	sub := func(b string) string {
		b = strings.ReplaceAll(b, "export RATCHET_KEY=rk_...", "export RATCHET_KEY="+key)
		b = regexp.MustCompile(`go build -o (\S+) (\./\S+)`).ReplaceAllString(b, `go -C "$$ROOT" build -o "$$PWD/$1" $2`)
		b = strings.Replace(b, "./flaky-provider &", "./flaky-provider --addr "+provider+" &", 1)
		return strings.ReplaceAll(b, "127.0.0.1:9000", provider)
	}
	// One shell for both blocks, as a person's terminal: the provider and
	// the worker of the first keep running through the second.
	script := "set -e\n" + sub(blocks[0]) + "\necho '--- restart the server'\nread _\n" + sub(blocks[2]) +
		"\nkill $(jobs -p) 2>/dev/null || true\n"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "ROOT="+root, "RATCHET_SERVER="+srv.URL, "RATCHET_KEY=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &proctest.SyncBuffer{}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	restart := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Fprintln(out, sc.Text())
			if sc.Text() == "--- restart the server" {
				close(restart)
			}
		}
	}()
	select {
	case <-restart:
	case <-ctx.Done():
		t.Fatalf("the first quick start did not finish:\n%s", out)
	}
	srv.Stop(t)
	srv = proctest.Start(t, work, nil, "--bootstrap-key", key, "--addr", addr, "--delivery-allow", "127.0.0.1/32")
	fmt.Fprintln(stdin) // go on
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the quick starts failed: %v\n%s", err, out)
	}
	t.Logf("the quick starts printed:\n%s", out)

	c := client.New(srv.URL, key)
	for id, tool := range map[int64]string{1: "charge", 2: "notify"} {
		j, err := c.GetJob(ctx, id)
		if err != nil {
			t.Fatalf("job %d: %v", id, err)
		}
		if j.Tool != tool || j.State != "succeeded" || len(j.Attempts) != 2 {
			t.Errorf("job %d: tool %s, %s after %d attempts; the README promises %s, succeeded after 2", id, j.Tool, j.State, len(j.Attempts), tool)
			continue
		}
		a1, a2 := j.Attempts[0], j.Attempts[1]
		if deref(a1.HTTPStatus) != 503 || deref(a1.RetryAfterMs) != 2000 || a2.Classification != "success" {
			t.Errorf("job %d: attempt 1 got %d (Retry-After %d ms), attempt 2 %s; the README promises 503 with Retry-After: 2, then success", id, deref(a1.HTTPStatus), deref(a1.RetryAfterMs), a2.Classification)
		}
	}
	if n := strings.Count(out.String(), "succeeded"); n < 2 {
		t.Errorf("`ratchet jobs get` printed %q %d times, want it for both jobs", "succeeded", n)
	}
}

// quickStartBlocks are the sh blocks between README.md's "## Quick start"
// heading and the next "## " heading.
func quickStartBlocks(t *testing.T, readme string) []string {
	t.Helper()
	start := strings.Index(readme, "\n## Quick start")
	if start < 0 {
		t.Fatal("README.md has no Quick start section")
	}
	rest := readme[start+1:]
	if end := strings.Index(rest[3:], "\n## "); end >= 0 {
		rest = rest[:end+3]
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(rest, -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
