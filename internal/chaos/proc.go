package chaos

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// proc is a child process: a node or a worker. Its output is appended to
// a log file of the run.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// startProc starts bin with args, and env added to this process's
// environment. Its standard output and error are appended to log, which
// startProc closes when the process has exited and its output is read.
// With ready, it waits until a line of standard output contains ready (the
// process exiting first, or the wait passing, is an error).
func startProc(ctx context.Context, name, bin string, args, env []string, log *os.File, ready string, wait time.Duration) (*proc, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		log.Close()
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = pw, log
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	pw.Close() // the child has its own copy; EOF comes when it exits
	if err != nil {
		pr.Close()
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	found := make(chan struct{})
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		copyOutput(pr, log, ready, found)
	}()
	go func() {
		_ = cmd.Wait()
		<-outDone
		log.Close()
		close(p.done)
	}()
	if ready == "" {
		return p, nil
	}
	if err := p.waitReady(ctx, found, wait); err != nil {
		return nil, err
	}
	return p, nil
}

// copyOutput appends the process's standard output to log line by line
// until it closes, and closes found at the first line that contains ready
// (never when ready is ""). It closes pr.
func copyOutput(pr io.ReadCloser, log io.Writer, ready string, found chan struct{}) {
	defer pr.Close()
	sc := bufio.NewScanner(pr)
	seen := ready == ""
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(log, line)
		if !seen && strings.Contains(line, ready) {
			seen = true
			close(found)
		}
	}
	_, _ = io.Copy(log, pr)
}

// waitReady waits for found (the ready line), and kills the process when
// it does not come within wait or ctx ends; a process that exits first is
// an error too.
func (p *proc) waitReady(ctx context.Context, found <-chan struct{}, wait time.Duration) error {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-found:
		return nil
	case <-p.done:
		return fmt.Errorf("%s exited before it was ready (%s)", p.name, p.cmd.ProcessState)
	case <-t.C:
		p.kill()
		return fmt.Errorf("%s was not ready within %s", p.name, wait)
	case <-ctx.Done():
		p.kill()
		return ctx.Err()
	}
}

// kill sends SIGKILL, as a crash would, and waits for the process to go.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM and waits up to grace for a clean exit, then kills.
// It reports whether the process stopped by itself.
func (p *proc) stop(grace time.Duration) bool {
	select {
	case <-p.done:
		return true
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		p.kill()
		return false
	}
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// pgCtl runs pg_ctl on the run's data directory.
type pgCtl struct {
	path, data, log string
}

func (c pgCtl) run(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.path, append([]string{"-D", c.data}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// stop shuts PostgreSQL down at once, as a crash would: sessions are cut
// and the next start recovers from the write-ahead log.
func (c pgCtl) stop(ctx context.Context) error {
	return c.run(ctx, "-m", "immediate", "-w", "-t", "60", "stop")
}

// start starts PostgreSQL and waits until it accepts connections.
func (c pgCtl) start(ctx context.Context) error {
	return c.run(ctx, "-l", c.log, "-w", "-t", "120", "start")
}

// status reports whether PostgreSQL runs.
func (c pgCtl) status(ctx context.Context) error {
	return c.run(ctx, "status")
}

// openLog opens (appending) a log file of the run.
func openLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}
