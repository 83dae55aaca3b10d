package web_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// TestOperatorControlsInBrowser: on the endpoint page an owner pauses the
// endpoint through the dialog; the card says who paused it, when and why,
// lists the held job and the audit entry, and the overview card shows the
// pause holding the due job. Resume clears both. A producer sees the state
// without the buttons.
func TestOperatorControlsInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey)
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	must(c.CreateEndpoint(ctx, "payments", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "pay", Version: "1", Endpoint: "payments"}))(t)
	job, _, err := c.Enqueue(ctx, client.EnqueueRequest{Tool: "pay@1", Payload: json.RawMessage(`{"order":42}`)})
	if err != nil {
		t.Fatal(err)
	}
	pk := must(c.CreateKey(ctx, "viewer", "producer", nil))(t)
	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	a.signIn(ownerKey)

	a.open("/endpoints/payments")
	a.waitView("endpoint")
	a.tab.WaitFor(`!!document.getElementById("ops-pause") && document.getElementById("ops-held-note").textContent !== ""`)
	if got := a.text("#ops-paused"); !strings.Contains(got, "Not paused") {
		t.Errorf("before the pause: %q", got)
	}
	if got := a.text("#ops-audit"); !strings.Contains(got, "No operator action") {
		t.Errorf("audit before any action: %q", got)
	}
	a.click("#ops-pause")
	a.tab.WaitFor(`document.getElementById("pause-dialog").open`)
	a.tab.Do("type the reason", chromedp.SendKeys(chromedp.CSS("#pause-reason"), "provider incident #12"))
	if got := a.text("#pause-reason-count"); got != "21 / 500" {
		t.Errorf("reason counter = %q", got)
	}
	a.click("#pause-yes")
	a.tab.WaitFor(`document.getElementById("ops-paused").dataset.gate === "paused" && !!document.getElementById("ops-resume") && document.querySelector('#ops-audit [data-action="endpoint.pause"]') !== null && !document.getElementById("ops-held-table").closest(".table-wrap").hidden`)
	got := a.text("#ops-paused")
	if !strings.HasPrefix(got, "Paused by bootstrap owner at ") || !strings.HasSuffix(got, " UTC: provider incident #12") {
		t.Errorf("paused line = %q", got)
	}
	if rows := a.texts("#ops-held-table tbody tr"); len(rows) != 1 || !strings.HasPrefix(rows[0], "#"+strconv.FormatInt(job.ID, 10)+" pay@1 0 / 5") || !strings.HasSuffix(rows[0], "paused") {
		t.Errorf("held rows = %q", rows)
	}
	if got := a.text(`#ops-audit [data-action="endpoint.pause"]`); !strings.Contains(got, "bootstrap owner · endpoint.pause — paused endpoint payments: provider incident #12") {
		t.Errorf("audit entry = %q", got)
	}
	if got := a.text("#ops-held-note"); got != "1 due job held by the pause." {
		t.Errorf("held note = %q", got)
	}
	a.shot("ops-paused-1280")
	setViewport(t, a.tab, 390, 844)
	noSideScroll(t, a.tab, "the endpoint page with operator controls at 390 px")
	a.shot("ops-paused-390")
	setViewport(t, a.tab, 1280, 900)

	// In a browser away from UTC, the pause says the local time beside UTC,
	// as every time on the dashboard does.
	if _, err := chromedp.Call(a.tab.Ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Kolkata"}); err != nil {
		t.Fatalf("time zone: %v", err)
	}
	a.open("/endpoints/payments")
	a.waitView("endpoint")
	a.tab.WaitFor(`document.getElementById("ops-paused").dataset.gate === "paused" && document.querySelector('#ops-audit [data-action="endpoint.pause"]') !== null`)
	if got := a.text("#ops-paused"); !strings.HasPrefix(got, "Paused by bootstrap owner at ") || !strings.Contains(got, " UTC (") || !strings.HasSuffix(got, " local): provider incident #12") {
		t.Errorf("paused line in Kolkata = %q, want local time beside UTC", got)
	}
	if got := a.text(`#ops-audit [data-action="endpoint.pause"]`); !strings.Contains(got, " UTC (") || !strings.Contains(got, " local) · bootstrap owner") {
		t.Errorf("audit entry in Kolkata = %q, want local time beside UTC", got)
	}
	if _, err := chromedp.Call(a.tab.Ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: ""}); err != nil {
		t.Fatalf("time zone: %v", err)
	}

	a.open("/")
	a.waitView("overview")
	held := a.text(`[data-endpoint="payments"] .held`)
	// The time of the pause reads as a relative time (TestHoldTextsReadAsTimes).
	if !strings.Contains(held, "1 due, held by a pause") || !regexp.MustCompile(`endpoint payments was paused by bootstrap owner (now|[^:]+ ago):`).MatchString(held) || !strings.Contains(held, ": provider incident #12") {
		t.Errorf("overview held line = %q", held)
	}
	a.shot("ops-overview-paused")

	// A producer sees the pause but gets no buttons.
	p := &dash{t: t, tab: b.NewIsolatedTab(t), base: srv.URL, dir: shots}
	p.signIn(pk.Secret)
	p.open("/endpoints/payments")
	p.waitView("endpoint")
	p.tab.WaitFor(`document.getElementById("ops-held-note").textContent !== ""`)
	if got := p.text("#ops-paused"); !strings.HasPrefix(got, "Paused by bootstrap owner") {
		t.Errorf("producer's paused line = %q", got)
	}
	if p.visible("#ops-pause") || p.visible("#ops-resume") || p.visible("#ops-circuit-open") {
		t.Error("a producer key sees owner buttons")
	}
	if got := p.text("#ops-buttons"); !strings.Contains(got, "need an owner key") {
		t.Errorf("producer's buttons line = %q", got)
	}

	// Resume clears the pause on the card and on the overview.
	a.open("/endpoints/payments")
	a.waitView("endpoint")
	a.tab.WaitFor(`!!document.getElementById("ops-resume")`)
	a.click("#ops-resume")
	a.tab.WaitFor(`!!document.getElementById("ops-pause") && document.querySelector('#ops-audit [data-action="endpoint.resume"]') !== null && document.getElementById("ops-held-note").textContent === "1 due and claimable: no gate holds them; they wait for a worker."`)
	if got := a.text("#ops-paused"); !strings.Contains(got, "Not paused") {
		t.Errorf("after resume: %q", got)
	}
	// Open and close the circuit by hand.
	a.click("#ops-circuit-open")
	a.tab.WaitFor(`document.getElementById("confirm").open`)
	a.click("#confirm-yes")
	a.tab.WaitFor(`!!document.getElementById("ops-circuit-close")`)
	if got := a.text("#ops-circuit"); !strings.Contains(got, "opened by hand by bootstrap owner") {
		t.Errorf("circuit line = %q", got)
	}
	a.tab.WaitFor(`document.getElementById("ops-held-note").textContent.includes("held by the circuit breaker")`)
	if got := a.text("#endpoint-head .status"); got != "Circuit open" {
		t.Errorf("the heading's circuit badge = %q after opening it", got)
	}
	a.shot("ops-circuit-open-1280")
	a.click("#ops-circuit-close")
	a.tab.WaitFor(`!!document.getElementById("ops-circuit-open") && document.getElementById("ops-held-note").textContent === "1 due and claimable: no gate holds them; they wait for a worker."`)
	a.open("/")
	a.waitView("overview")
	if got := a.text(`[data-endpoint="payments"] .held`); strings.Contains(got, "pause") || !strings.Contains(got, "due and claimable") {
		t.Errorf("overview after resume = %q", got)
	}
	entries := must(c.Audit(ctx, "endpoint:payments", "", 0))(t)
	if len(entries.Entries) != 4 {
		t.Errorf("audit after the UI actions: %+v", entries.Entries)
	}
}
