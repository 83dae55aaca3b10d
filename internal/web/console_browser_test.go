package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestSessionAcrossTabs: a tab opened at a deep link while another tab of
// the same browser is signed in is signed in without asking (the open tab
// hands the key over); a private window is not; signing out in one tab
// signs the others out, and signing in again signs them in.
func TestSessionAcrossTabs(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, liveEnv, "--dev-clock")
	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	a.signIn(ownerKey)

	second := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	second.open("/jobs?state=failed")
	second.waitView("jobs")
	if got := browsertest.Eval[string](second.tab, `String(sessionStorage.getItem("ratchet.apiKey"))`); got != ownerKey {
		t.Errorf("the second tab's key = %q", got)
	}
	if got := browsertest.Eval[string](second.tab, `location.pathname + location.search`); got != "/jobs?state=failed" {
		t.Errorf("the deep link became %s", got)
	}
	second.shot("second-tab-1280")

	private := &dash{t: t, tab: b.NewIsolatedTab(t), base: srv.URL, dir: shots}
	private.open("/jobs")
	private.waitView("signin")

	second.click("#signout")
	second.waitView("signin")
	a.waitView("signin")
	if got := browsertest.Eval[string](a.tab, `String(sessionStorage.getItem("ratchet.apiKey"))`); got != "null" {
		t.Errorf("the first tab keeps the key after the second signed out: %q", got)
	}
	a.shot("signed-out-elsewhere-1280")

	// Signing in on one tab's form signs in the tab that shows the form
	// beside it, at the page it was on.
	a.tab.Do("sign in again", chromedp.SendKeys(chromedp.CSS("#api-key"), ownerKey), chromedp.Click(chromedp.CSS("#signin-button")))
	a.waitView("overview")
	second.waitView("jobs")
}
