package browsertest_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/clock"
)

// TestMain stops the browser the tests shared.
func TestMain(m *testing.M) { os.Exit(browsertest.Main(m).Run()) }

func TestBrowserRunsAPage(t *testing.T) {
	b := browsertest.New(t)
	tab := b.NewTab(t)
	tab.Do("navigate", chromedp.Navigate(`data:text/html,<title>t</title><p id="x">hello</p><script>setTimeout(() => document.body.dataset.done = "yes", 10)</script>`))
	tab.WaitFor(`document.body.dataset.done === "yes"`)
	if got := tab.Text("#x"); got != "hello" {
		t.Errorf("text = %q", got)
	}
	if got := browsertest.Eval[int](tab, `Promise.resolve(6 * 7)`); got != 42 {
		t.Errorf("eval = %d", got)
	}
}

// TestShiftedClock: under RATCHET_TEST_CLOCK_OFFSET a tab's Date runs the
// offset ahead of the machine's, in every form a page reads it, and dates
// given explicitly are untouched.
func TestShiftedClock(t *testing.T) {
	t.Setenv(clock.TestOffsetEnv, "10h30m")
	b := browsertest.New(t)
	tab := b.NewTab(t)
	tab.Do("navigate", chromedp.Navigate(`data:text/html,<p>t</p>`))
	before := time.Now()
	got := browsertest.Eval[[]float64](tab, `[Date.now(), new Date().getTime(), Date.parse(Date()), new Date(0).getTime(), +(new Date() instanceof Date), Date.UTC(2026, 0, 1)]`)
	after := time.Now()
	want := []time.Time{before.Add(10*time.Hour + 30*time.Minute), after.Add(10*time.Hour + 30*time.Minute)}
	for i, ms := range got[:3] {
		at := time.UnixMilli(int64(ms))
		// Date() prints whole seconds.
		if at.Before(want[0].Add(-time.Second)) || at.After(want[1]) {
			t.Errorf("reading %d of the shifted clock = %v, want between %v and %v", i, at, want[0], want[1])
		}
	}
	if got[3] != 0 || got[4] != 1 || got[5] != float64(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()) {
		t.Errorf("explicit dates and instanceof under a shifted clock: %v", got[3:])
	}
}

// TestScreenshotDirRemovedOnPass: a passing test leaves no screenshot
// folder behind (a failing one keeps it; see ScreenshotDir).
func TestScreenshotDirRemovedOnPass(t *testing.T) {
	t.Setenv("RATCHET_SCREENSHOTS", "")
	var dir string
	t.Run("passes", func(t *testing.T) {
		dir = browsertest.ScreenshotDir(t)
		if err := os.WriteFile(filepath.Join(dir, "x.png"), []byte("png"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("screenshot folder %s of a passing test is still there (stat: %v)", dir, err)
		os.RemoveAll(dir)
	}
}

// TestBrowsersShareNoStorage: the tests share one Chromium, but each
// Browser is a profile of its own — what a page stores in one test's
// browser is not there in another's — while the tabs of one Browser share
// it, as the tabs of one window do.
func TestBrowsersShareNoStorage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<title>t</title><p>t</p>`))
	}))
	defer srv.Close()
	read := `localStorage.getItem("k") || document.cookie || ""`
	one := browsertest.New(t)
	a := one.NewTab(t)
	a.Do("open", chromedp.Navigate(srv.URL))
	browsertest.Eval[chromedp.Void](a, `localStorage.setItem("k", "one"); document.cookie = "c=one"`)
	same := one.NewTab(t)
	same.Do("open", chromedp.Navigate(srv.URL))
	if got := browsertest.Eval[string](same, read); got != "one" {
		t.Errorf("a second tab of the same Browser reads %q, want what the first stored", got)
	}
	for name, tab := range map[string]*browsertest.Tab{
		"another Browser": browsertest.New(t).NewTab(t),
		"an isolated tab": one.NewIsolatedTab(t),
	} {
		tab.Do("open", chromedp.Navigate(srv.URL))
		if got := browsertest.Eval[string](tab, read); got != "" {
			t.Errorf("%s reads %q that the first Browser stored", name, got)
		}
	}
}
