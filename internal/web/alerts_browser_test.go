package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

// TestAlertsPage: the Alerts view lists the sinks made through the API
// (no secret), adds one through its form (a private address refused with
// the message beside the URL; a webhook sink's secret shown once), saves
// thresholds (one out of bounds refused beside its input), queues a test
// alert that is listed among the latest alerts, and deletes a sink after
// a confirmation. It fits a phone's width and passes axe-core.
func TestAlertsPage(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, nil, "--delivery-allow", "127.0.0.1/32")
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	must(c.CreateEndpoint(ctx, "payments", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}}))(t)
	must(c.CreateAlertSink(ctx, client.AlertSinkCreate{Name: "oncall-slack", Kind: wire.SinkSlack, URL: "https://hooks.slack.com/services/T000/B000/XXXX"}))(t)
	must(c.CreateAlertSink(ctx, client.AlertSinkCreate{Name: "ops-teams", Kind: wire.SinkTeams, URL: "https://example.webhook.office.com/webhookb2/abc"}))(t)
	must(c.OpenCircuit(ctx, "payments"))(t)

	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	a.signIn(ownerKey)
	a.click(`.site-nav a[href="/alerts"]`)
	a.waitView("alerts")
	a.tab.WaitFor(`document.querySelector('#deliveries-table tbody tr') !== null`) // the circuit opened by hand
	if got := a.texts("#sinks-table tbody th"); strings.Join(got, ",") != "oncall-slack,ops-teams" {
		t.Errorf("sinks listed %v", got)
	}
	a.setValue("sink-name", "pager")
	a.choose("sink-kind", "webhook")
	a.setValue("sink-url", "http://10.1.2.3/hook")
	a.click("#sink-add")
	a.tab.WaitFor(`!document.getElementById("sink-url-error").hidden`)
	if got := a.text("#sink-url-error"); !strings.Contains(got, "private address") {
		t.Errorf("the refused URL reads %q", got)
	}
	a.setValue("sink-url", "https://hooks.example.com/ratchet")
	a.click("#sink-add")
	a.tab.WaitFor(`document.getElementById("sink-secret") !== null && document.querySelector('#sinks-table tr[data-sink="pager"]') !== null`)
	if got := a.text("#sink-secret pre"); !strings.HasPrefix(got, "whsec_") {
		t.Errorf("the secret shown is %q", got)
	}
	a.setValue("set-maxPerWindow", "500")
	a.click("#settings-save")
	a.tab.WaitFor(`!document.getElementById("set-maxPerWindow-error").hidden`)
	if got := a.text("#set-maxPerWindow-error"); !strings.Contains(got, "from 1 through 100") {
		t.Errorf("the refused cap reads %q", got)
	}
	if l := must(c.AlertSinks(ctx))(t); l.Settings.MaxPerWindow != wire.DefaultAlertMaxPerWindow {
		t.Errorf("a refused save changed the cap to %d", l.Settings.MaxPerWindow)
	}
	a.setValue("set-maxPerWindow", "3")
	a.click("#settings-save")
	a.tab.WaitFor(`document.getElementById("set-maxPerWindow-error").hidden`)
	a.press(`#sinks-table tr[data-sink="oncall-slack"] button[data-action="test"]`)
	a.tab.WaitFor(`[...document.querySelectorAll('#deliveries-table td[data-label="Alert"]')].some((e) => e.textContent.includes("Test alert"))`)
	if l := must(c.AlertSinks(ctx))(t); l.Settings.MaxPerWindow != 3 {
		t.Errorf("the saved cap is %d, want 3", l.Settings.MaxPerWindow)
	}
	for _, vp := range viewports {
		setViewport(t, a.tab, vp.w, vp.h)
		noSideScroll(t, a.tab, "alerts "+vp.name)
		if vp.w >= 1280 {
			tablesFit(t, a.tab, "alerts at "+vp.name+" px")
		}
		checkAxe(t, a.tab, vp.name+" px /alerts")
		a.shot("alerts-" + vp.name)
	}
	a.press(`#sinks-table tr[data-sink="ops-teams"] button[data-action="delete"]`)
	a.press("#confirm-yes")
	a.tab.WaitFor(`document.querySelector('#sinks-table tr[data-sink="ops-teams"]') === null`)
	if l := must(c.AlertSinks(ctx))(t); len(l.Sinks) != 2 {
		t.Errorf("after delete: %+v", l.Sinks)
	}
}
