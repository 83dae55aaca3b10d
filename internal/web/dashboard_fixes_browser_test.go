package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestDashboardDetails covers the dashboard's smaller behaviours against a
// seeded server: what a job page prints, how the policy editor reports a
// refused save, and how the overview refreshes.
func TestDashboardDetails(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	freeKey := prepareDB(t, dir)
	srv := proctest.Start(t, dir, nil, "--dev-clock")
	fx := seedDashboard(t, srv.URL, freeKey)
	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	a.signIn(ownerKey)

	t.Run("job pages print no null", func(t *testing.T) {
		a.t = t
		// An exhausted job has no hold banner; a charge the circuit holds has
		// no attempt yet.
		for _, id := range []int64{fx.exhausted[0], fx.chargeIDs[2]} {
			a.open(fmt.Sprintf("/jobs/%d", id))
			a.waitView("job")
			if got := browsertest.Eval[[]string](a.tab, `Array.from(document.getElementById("view").childNodes).filter(n => n.nodeType === 3 && n.textContent.trim()).map(n => n.textContent)`); len(got) > 0 {
				t.Errorf("job #%d: stray text in the view: %q", id, got)
			}
			if txt := a.text("#view"); strings.Contains(txt, "null") {
				t.Errorf("job #%d prints null: %q", id, txt)
			}
		}
	})

	t.Run("policy editor keeps server errors", func(t *testing.T) {
		a.t = t
		a.open("/endpoints/stripe")
		a.waitView("endpoint")
		// The server refuses the save with a field error the form cannot
		// know about beforehand.
		browsertest.Eval[chromedp.Void](a.tab, `(() => {
			const orig = window.fetch;
			window.fetch = (url, init) => init && init.method === "PUT"
				? Promise.resolve(new Response(JSON.stringify({error: {code: "invalid_request", message: "invalid request",
					fields: [{field: "maxConcurrent", value: "7", allowed: "must be at most 5 on this plan", message: "maxConcurrent: 7 is not allowed; must be at most 5 on this plan"}]}}),
					{status: 400, headers: {"Content-Type": "application/json"}}))
				: orig(url, init);
		})()`)
		a.setValue("f-maxConcurrent", "7")
		a.click("#save")
		a.tab.WaitFor(`document.getElementById("save-state").textContent.startsWith("Not saved")`)
		if !a.visible("#form-errors") {
			t.Fatal("the server's errors are hidden after a refused save")
		}
		if got := a.text("#form-errors"); !strings.Contains(got, "invalid request") || !strings.Contains(got, "at most 5 on this plan") {
			t.Errorf("form errors = %q", got)
		}
		a.shot("policy-server-error")
		// Editing the form again clears the stale server message.
		a.setValue("f-maxConcurrent", "6")
		if a.visible("#form-errors") {
			t.Error("the server's errors outlive an edit")
		}
	})

	t.Run("overview refreshes in place", func(t *testing.T) {
		a.t = t
		a.open("/")
		a.waitView("overview")
		if got := browsertest.Eval[string](a.tab, `String(document.getElementById("view").getAttribute("aria-live"))`); got != "null" {
			t.Errorf("#view is an aria-live region (%s): every refresh is read out again", got)
		}
		a.tab.WaitFor(`document.getElementById("refresh").dataset.state === "live"`)
		if got := browsertest.Eval[string](a.tab, `document.getElementById("refresh-state").getAttribute("aria-live") + " " + document.getElementById("refresh-state").textContent`); got != "polite Live" {
			t.Errorf("refresh status line = %q", got)
		}
		// Focus a link in a card, mark the card, and let two updates pass:
		// the stream sends one when a job joins the openai endpoint.
		browsertest.Eval[chromedp.Void](a.tab, `(() => {
			const l = document.querySelector('[data-endpoint="openai"] .ep-foot a:last-child');
			l.focus(); window.__focused = l; window.__card = l.closest(".ep");
			window.__updated = document.getElementById("refresh").dataset.updated;
		})()`)
		c := client.New(srv.URL, ownerKey)
		for i := range 2 {
			enqueue(t, c, client.EnqueueRequest{Tool: "complete@1", Payload: json.RawMessage(fmt.Sprintf(`{"prompt":"live %d"}`, i))})
			a.tab.WaitFor(fmt.Sprintf(`document.querySelector('[data-endpoint="openai"] .scheduled').textContent === "%d" && document.getElementById("refresh").dataset.updated !== window.__updated`, 2+i))
			browsertest.Eval[chromedp.Void](a.tab, `window.__updated = document.getElementById("refresh").dataset.updated`)
		}
		if !browsertest.Eval[bool](a.tab, `document.activeElement === window.__focused && window.__card.isConnected`) {
			t.Errorf("an update moved the focus to %s", browsertest.Eval[string](a.tab, `document.activeElement.tagName + " " + document.activeElement.textContent.slice(0, 40)`))
		}
		if got := a.text("#refresh"); !strings.HasPrefix(got, "Live") || !strings.Contains(got, "updates as they happen") {
			t.Errorf("live line = %q", got)
		}
	})

	t.Run("attempt table fits or says it scrolls", func(t *testing.T) {
		a.t = t
		a.open(fmt.Sprintf("/jobs/%d", fx.arithJob))
		a.waitView("job")
		fit := browsertest.Eval[[]int](a.tab, `(() => { const w = document.querySelector("#attempts-table").closest(".table-wrap"); return [w.scrollWidth, w.clientWidth]; })()`)
		if fit[0] > fit[1] {
			t.Errorf("at 1280 px the attempt table is %d px in a %d px card", fit[0], fit[1])
		}
		a.shot("attempts-1280")
		setViewport(t, a.tab, 390, 844)
		defer setViewport(t, a.tab, 1280, 900)
		a.tab.WaitFor(`document.querySelector("#attempts-table").closest(".table-wrap").dataset.overflow === "true"`)
		if got := browsertest.Eval[string](a.tab, `(() => { const w = document.querySelector("#attempts-table").closest(".table-wrap"); return w.getAttribute("tabindex") + " " + getComputedStyle(w, "::after").content; })()`); !strings.HasPrefix(got, "0 ") || !strings.Contains(strings.ToLower(got), "scroll") {
			t.Errorf("a table wider than its card gives no sign that it scrolls: %q", got)
		}
		a.shot("attempts-390")
	})

	t.Run("sign-in key field is styled", func(t *testing.T) {
		a.t = t
		tab := b.NewIsolatedTab(t)
		d := &dash{t: t, tab: tab, base: srv.URL, dir: shots}
		d.open("/")
		d.waitView("signin")
		got := browsertest.Eval[[]string](tab, `(() => { const s = getComputedStyle(document.getElementById("api-key")); return [s.borderTopLeftRadius, s.paddingLeft, s.width]; })()`)
		if got[0] != "9px" || got[1] != "11px" {
			t.Errorf("the key field looks like a native box: radius %s, padding %s, width %s", got[0], got[1], got[2])
		}
		d.shot("signin-1280")
	})

	t.Run("policy editor keeps custom numbers; other keys read only", func(t *testing.T) {
		a.t = t
		a.open("/endpoints/openai")
		a.waitView("endpoint")
		a.choose("f-preset", "CUSTOM")
		a.setValue("f-maxAttempts", "7")
		a.setValue("f-initialDelayMs", "1500")
		a.choose("f-preset", "RELAXED")
		if got := browsertest.Eval[string](a.tab, `document.getElementById("f-maxAttempts").value`); got != "3" {
			t.Errorf("RELAXED shows %s attempts", got)
		}
		a.choose("f-preset", "CUSTOM")
		if got := browsertest.Eval[string](a.tab, `document.getElementById("f-maxAttempts").value + " " + document.getElementById("f-initialDelayMs").value`); got != "7 1500" {
			t.Errorf("back to CUSTOM the form shows %q, want the numbers typed before (7 1500)", got)
		}

		pk := must(client.New(srv.URL, ownerKey).CreateKey(context.Background(), "reader", "producer", nil))(t)
		p := &dash{t: t, tab: b.NewIsolatedTab(t), base: srv.URL, dir: shots}
		p.signIn(pk.Secret)
		p.open("/endpoints/openai")
		p.waitView("endpoint")
		if got := browsertest.Eval[[]string](p.tab, `Array.from(document.querySelectorAll("#policy-form input, #policy-form select")).filter(e => !e.disabled).map(e => e.id)`); len(got) > 0 {
			t.Errorf("a producer key can edit %q", got)
		}
		p.shot("policy-producer-key")
	})

	t.Run("bulk action asks again when the selection changed", func(t *testing.T) {
		a.t = t
		c := client.New(srv.URL, ownerKey)
		a.open("/jobs?state=scheduled&tool=post%401")
		a.waitView("jobs")
		a.click("#bulk-cancel")
		a.tab.WaitFor(`document.getElementById("confirm").open`)
		n := a.text("#confirm-title")
		// Another job joins the selection while the person reads the dialog.
		enqueue(t, c, client.EnqueueRequest{Tool: "post@1", Payload: json.RawMessage(`{"text":"late"}`)})
		a.click("#confirm-yes")
		a.tab.WaitFor(`document.getElementById("confirm").open && document.getElementById("confirm-title").textContent !== ` + fmt.Sprintf("%q", n))
		if got := a.text("#confirm-body"); !strings.HasPrefix(got, "The selection changed before the server acted: it held ") || !strings.Contains(got, "Nothing was done.") {
			t.Errorf("second dialog = %q", got)
		}
		a.shot("bulk-asks-again")
		a.click("#confirm-no")
		a.tab.WaitFor(`!!document.getElementById("bulk-changed")`)
		if got := a.text("#bulk-changed"); !strings.HasPrefix(got, "The selection changed") {
			t.Errorf("after Back: %q", got)
		}
	})
}
