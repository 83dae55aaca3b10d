package browsertest_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/internal/browsertest"
)

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
