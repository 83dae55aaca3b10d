// Package browsertest runs real headless Chromium for the tests of Ratchet's
// web pages, through chromedp. It finds the browser, starts it with a fresh
// profile, fails a test on any uncaught page exception or console error, and
// writes screenshots where a person can look at them.
//
// The browser is Debian's Chromium: $RATCHET_CHROMIUM, else its headless
// shell (package chromium-headless-shell), else /usr/bin/chromium, else
// chromium on $PATH. The headless shell is the same Blink and V8 without
// the browser's user interface: the browser tests used 2.3 times less CPU
// with it than with chromium's headless mode (195 against 445 CPU seconds
// for internal/web, counted by cgroup), on a machine where the suite is
// bound by CPU. When none is installed the test
// is skipped with a message saying how to install it, unless
// RATCHET_REQUIRE_BROWSER=1 (set by scripts/test), which turns the skip into
// a failure so CI can never pass without running the browser tests.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/getratchet/ratchet/internal/clock"
)

// Path returns the Chromium binary to use, or "" when there is none.
func Path() string {
	if p := os.Getenv("RATCHET_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		return ""
	}
	// The headless shell's own binary, not /usr/bin's shell script that
	// runs it without exec: chromedp stops the process it started.
	for _, p := range []string{"/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromium"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	for _, name := range []string{"chromium-headless-shell", "chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Browser is one test's browser: a browser context of its own (like a
// separate profile: its own storage, cookies and BroadcastChannel) in the
// headless Chromium that the test binary's browser tests share.
type Browser struct {
	ctx context.Context // the context's first tab; new tabs derive from it
	t   testing.TB
}

// shared is the one Chromium process of the test binary, started by the
// first New and stopped by Main. Starting Chromium took about 2.5 CPU
// seconds, and the browser tests started it over thirty times per run
// of internal/web, twice per suite run: one process with a browser
// context per test isolates the tests as well (a context shares no
// storage with another) for a fraction of the CPU.
var shared struct {
	mu       sync.Mutex
	inMain   bool
	ctx      context.Context // the browser's first tab
	stop     func()
	err      error
	started  bool
	userData string
	tmp      string
}

// Main runs the tests of a package whose tests call New, and then stops
// the browser they shared and removes its profile. It wraps the package's
// testing.M:
//
//	func TestMain(m *testing.M) { os.Exit(proctest.Main(browsertest.Main(m))) }
func Main(m interface{ Run() int }) interface{ Run() int } {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	return runner(func() int {
		code := m.Run()
		shared.mu.Lock()
		defer shared.mu.Unlock()
		if shared.stop != nil {
			shared.stop()
		}
		for _, d := range []string{shared.userData, shared.tmp} {
			if d == "" {
				continue
			}
			// The browser's last helpers may still be exiting and
			// writing: try again for up to 5 s; what is left is
			// reported by scripts/test's check of the temporary
			// directory.
			for i := 0; i < 250 && os.RemoveAll(d) != nil; i++ {
				time.Sleep(20 * time.Millisecond)
			}
		}
		return code
	})
}

type runner func() int

func (r runner) Run() int { return r() }

// New gives the test a browser context of its own in the shared Chromium
// (started on first use), closed when the test ends. It skips the test
// when Chromium is missing, or fails it when RATCHET_REQUIRE_BROWSER=1.
func New(t testing.TB) *Browser {
	t.Helper()
	bin := Path()
	if bin == "" {
		msg := "browser test: Chromium not found (set RATCHET_CHROMIUM, or apt-get install chromium-headless-shell; scripts/test installs it)"
		if os.Getenv("RATCHET_REQUIRE_BROWSER") == "1" {
			t.Fatal(msg + "; RATCHET_REQUIRE_BROWSER=1 forbids skipping")
		}
		t.Skip(msg)
	}
	root, err := sharedBrowser(bin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a browser context in Chromium %s: %v", bin, err)
	}
	return &Browser{ctx: ctx, t: t}
}

// sharedBrowser starts the test binary's Chromium once, and says why it
// could not.
func sharedBrowser(bin string) (context.Context, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.inMain {
		return nil, fmt.Errorf("browsertest: the package's TestMain must wrap its testing.M in browsertest.Main, which stops the shared browser when the tests end")
	}
	if shared.started {
		return shared.ctx, shared.err
	}
	shared.started = true
	mk := func(prefix string) string {
		d, err := os.MkdirTemp("", prefix)
		if err != nil && shared.err == nil {
			shared.err = err
		}
		return d
	}
	shared.userData, shared.tmp = mk("crp"), mk("cr")
	if shared.err != nil {
		return nil, shared.err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(shared.userData),
		// Chromium keeps its shared-memory files (disable-dev-shm-usage),
		// its singleton socket and crash folders in TMPDIR: give it a
		// folder removed with the profile — short, as a socket path has
		// at most 107 bytes.
		chromedp.Env("TMPDIR=" + shared.tmp),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	shared.stop = func() {
		cancel()
		cancelAlloc()
	}
	// Start the browser now, so a broken installation fails here with a
	// clear message rather than in the middle of the first step.
	if err := chromedp.Do(ctx); err != nil {
		shared.err = fmt.Errorf("start Chromium %s: %v", bin, err)
		return nil, shared.err
	}
	shared.ctx = ctx
	return ctx, nil
}

// Tab is one page of the browser. Its context carries a per-step timeout
// through the helpers below; Ctx is there for chromedp calls the helpers do
// not cover.
type Tab struct {
	Ctx context.Context
	t   testing.TB

	mu       sync.Mutex
	problems []string // uncaught exceptions and console errors
	shotDir  string   // where the test's screenshots go, once it took one
}

// NewTab opens a tab that closes when the test ends. Uncaught exceptions and
// console.error calls in the page fail the test at its end. The tabs of one
// Browser share a browser context, as the tabs of one profile do: local
// storage, cookies and BroadcastChannel messages (sessionStorage stays per
// tab).
func (b *Browser) NewTab(t testing.TB) *Tab {
	t.Helper()
	return b.newTab(t)
}

// NewIsolatedTab opens a tab in a browser context of its own, like a
// private window or another person's profile: it shares no storage and no
// BroadcastChannel with the Browser's other tabs.
func (b *Browser) NewIsolatedTab(t testing.TB) *Tab {
	t.Helper()
	return b.newTab(t, chromedp.WithNewBrowserContext())
}

func (b *Browser) newTab(t testing.TB, opts ...chromedp.ContextOption) *Tab {
	t.Helper()
	tab := &Tab{t: t}
	ctx, cancel := chromedp.NewContext(b.ctx, append(opts, chromedp.WithListener(func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg = d.Exception.Description
			}
			tab.report(fmt.Sprintf("uncaught exception at %s:%d: %s", d.URL, d.LineNumber+1, msg))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range ev.Args {
					if a.Description != "" {
						parts = append(parts, a.Description)
					} else {
						parts = append(parts, strings.Trim(string(a.Value), `"`))
					}
				}
				tab.report("console." + string(ev.Type) + ": " + strings.Join(parts, " "))
			}
		}
	}))...)
	tab.Ctx = ctx
	t.Cleanup(func() {
		if t.Failed() && !KeepScreenshots() {
			tab.failureShot()
		}
		cancel()
		tab.mu.Lock()
		defer tab.mu.Unlock()
		for _, p := range tab.problems {
			t.Errorf("page: %s", p)
		}
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	off, err := clock.TestOffset()
	if err != nil {
		t.Fatal(err)
	}
	if off != 0 {
		// The server runs on the shifted clock; so does the page.
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: shiftDate(off)}); err != nil {
			t.Fatalf("shift the tab's clock: %v", err)
		}
	}
	return tab
}

// shiftDate is a script that moves the page's Date (new Date(), Date(),
// Date.now()) by off, the way clock.TestOffsetEnv moves the server's clock:
// Chromium does not run under libfaketime (it hangs at start), so the
// browser's clock is shifted where the page reads it. Timers and
// performance.now are durations and stay as they are.
func shiftDate(off time.Duration) string {
	return fmt.Sprintf(`(() => {
  const off = %d, RealDate = Date;
  function ShiftedDate(...args) {
    if (!new.target) return new RealDate(RealDate.now() + off).toString();
    return args.length === 0 ? new RealDate(RealDate.now() + off) : new RealDate(...args);
  }
  ShiftedDate.prototype = RealDate.prototype;
  ShiftedDate.now = () => RealDate.now() + off;
  ShiftedDate.UTC = RealDate.UTC;
  ShiftedDate.parse = RealDate.parse;
  Object.defineProperty(globalThis, "Date", { value: ShiftedDate, writable: true, configurable: true });
})();`, off.Milliseconds())
}

func (tab *Tab) report(p string) {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	tab.problems = append(tab.problems, p)
}

// StepTimeout bounds every helper call, so a page that never reaches a
// condition fails the test with a message instead of hanging it.
const StepTimeout = 30 * time.Second

// Do runs chromedp actions with the step timeout and fails the test on error.
func (tab *Tab) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tab.t.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, StepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tab.t.Fatalf("%s: %v", what, err)
	}
}

// Run runs one chromedp action that returns a value, with the step timeout.
func Run[T any](tab *Tab, what string, action chromedp.Action[T]) T {
	tab.t.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, StepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		tab.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// Eval evaluates a JavaScript expression and decodes its JSON value into T.
// A promise is awaited.
func Eval[T any](tab *Tab, expr string) T {
	tab.t.Helper()
	return Run(tab, "evaluate "+abbrev(expr), chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// WaitFor polls a JavaScript condition until it is truthy (checking on every
// animation frame), failing the test after the step timeout with what it was
// waiting for. It is the way to wait in these tests: never a sleep.
func (tab *Tab) WaitFor(cond string) {
	tab.t.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, StepTimeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, Poll(cond)); err != nil {
		tab.t.Fatalf("wait for %s: %v", cond, err)
	}
}

// PollInterval is how often Poll checks its condition.
const PollInterval = 40 * time.Millisecond

// Poll waits until the expression cond is true in the page, checking it
// every PollInterval. chromedp's default checks it on every animation
// frame, and asking for frames makes the browser draw one sixty times a
// second for as long as the wait lasts: the browser tests of internal/web
// took 16 % less CPU (329 s to 277 s, Chromium's own process 136 s to
// 76 s) polling on a timer.
func Poll(cond string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(PollInterval))
}

// Text returns the textContent of the first element matching a CSS selector.
func (tab *Tab) Text(css string) string {
	tab.t.Helper()
	return Eval[string](tab, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) throw new Error("no element " + %q); return e.textContent; })()`, css, css))
}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// ScreenshotDir is where the screenshots of t go: $RATCHET_SCREENSHOTS/<test
// name> when that is set (kept), else a new directory under the system
// temporary directory that is removed when the test passes and kept, with
// a picture of each tab as it was (see KeepScreenshots), when it fails. The
// directory is logged.
func ScreenshotDir(t testing.TB) string {
	t.Helper()
	name := nonWord.ReplaceAllString(t.Name(), "_")
	var dir string
	if root := os.Getenv("RATCHET_SCREENSHOTS"); root != "" {
		dir = filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	} else {
		d, err := os.MkdirTemp("", "ratchet-screenshots-"+name+"-")
		if err != nil {
			t.Fatal(err)
		}
		dir = d
		t.Cleanup(func() {
			if !t.Failed() {
				os.RemoveAll(d)
			}
		})
	}
	t.Logf("screenshots: %s", dir)
	return dir
}

// KeepScreenshots says whether RATCHET_SCREENSHOTS asks for every
// screenshot the tests take. Without it a passing test takes none (the
// pictures went to a folder removed when the test passed, and took 25 of
// 110 CPU seconds in three tests measured), and a failing one gets a
// picture of each of its tabs as they were when it failed.
func KeepScreenshots() bool { return os.Getenv("RATCHET_SCREENSHOTS") != "" }

// failureShot writes a picture of the tab as it is to the test's
// screenshot folder (a new one when the test took no screenshot), and logs
// where.
func (tab *Tab) failureShot() {
	dir := tab.shotDir
	if dir == "" {
		d, err := os.MkdirTemp("", "ratchet-screenshots-"+nonWord.ReplaceAllString(tab.t.Name(), "_")+"-")
		if err != nil {
			return
		}
		dir = d
	}
	ctx, cancel := context.WithTimeout(tab.Ctx, 3*StepTimeout)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tab.t.Logf("no picture of the failed page: %v", err)
		return
	}
	p := filepath.Join(dir, fmt.Sprintf("failed-%p.png", tab))
	if err := os.WriteFile(p, buf, 0o644); err == nil {
		tab.t.Logf("the page when the test failed: %s", p)
	}
}

// MaxShotHeight bounds the height of a screenshot, in CSS pixels.
const MaxShotHeight = 6000

// Screenshot writes a full-page PNG of the tab to dir/name.png (at most
// MaxShotHeight high) when KeepScreenshots, and returns its path; else it
// only notes dir for a picture should the test fail.
func (tab *Tab) Screenshot(dir, name string) string {
	tab.t.Helper()
	p := filepath.Join(dir, name+".png")
	if !KeepScreenshots() {
		tab.shotDir = dir
		return p
	}
	// From the top, so sticky headers sit where a person first sees them.
	Eval[chromedp.Void](tab, `window.scrollTo(0, 0)`)
	// The whole page, down to MaxShotHeight: the API reference is tens of
	// thousands of pixels long, and encoding all of it took longer than a
	// step may under load, for nothing a person looks at.
	size := Eval[[]float64](tab, `[document.documentElement.scrollWidth, Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)]`)
	// A picture of 1280×6000 took over StepTimeout to encode on a loaded
	// machine with the browser tests side by side: a screenshot gets three.
	ctx, cancel := context.WithTimeout(tab.Ctx, 3*StepTimeout)
	defer cancel()
	beyond := true
	res, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format:                page.CaptureScreenshotFormatPng,
		CaptureBeyondViewport: &beyond,
		Clip:                  &page.Viewport{Width: size[0], Height: min(size[1], MaxShotHeight), Scale: 1},
	})
	if err != nil {
		tab.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(p, res.Data, 0o644); err != nil {
		tab.t.Fatal(err)
	}
	return p
}

// AllowClipboard lets the pages of origin (e.g. "http://127.0.0.1:8080")
// read and write the clipboard without a prompt, so a test can read back what
// a "Copy" button wrote.
func (tab *Tab) AllowClipboard(origin string) {
	tab.t.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, StepTimeout)
	defer cancel()
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true},
			Setting:    browser.PermissionSettingGranted,
			Origin:     origin,
			// The test's own browser context: the browser is shared.
			BrowserContextID: chromedp.FromContext(tab.Ctx).BrowserContextID,
		})
		if err != nil {
			tab.t.Fatalf("grant %s: %v", name, err)
		}
	}
}

func abbrev(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
