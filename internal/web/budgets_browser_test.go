package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

// TestBudgetsInConsole covers the console's part of budgets and quiet
// hours (docs/flow-control.md): the endpoint page's card shows a budget's
// use, its renewal and forecast; the editor's text fields (the zone, the
// window) show what is saved, show the server's refusal of a bad window
// by its label, and save a good one, after which the card says the quiet
// hours hold claims and the operator controls name them; at 1280 and 390
// px.
func TestBudgetsInConsole(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, liveEnv)
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	daily, monthly := int64(5), int64(100)
	must(c.CreateEndpoint(ctx, "metered", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"},
		EndpointSettings: wire.EndpointSettings{DailyCallBudget: &daily, MonthlyCallBudget: &monthly, BudgetTimeZone: "Europe/Paris"}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "call", Version: "1", Endpoint: "metered"}))(t)
	for range 6 {
		enqueue(t, c, client.EnqueueRequest{Tool: "call@1"})
	}
	wk := must(c.CreateKey(ctx, "worker", "worker", []string{"call@1"}))(t)
	w := client.New(srv.URL, wk.Secret)
	got := must(w.Claim(ctx, client.ClaimRequest{WorkerID: "w1", Tools: []string{"call@1"}, Max: 4}))(t)
	if len(got) != 4 {
		t.Fatalf("claimed %d, want 4", len(got))
	}

	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	a.signIn(ownerKey)
	a.open("/endpoints/metered")
	a.waitView("endpoint")
	if got := a.text("#budgets-title"); got != "Budgets and quiet hours" {
		t.Fatalf("budget card title %q", got)
	}
	if got := a.text("#budget-daily"); !strings.Contains(got, "Today: 4 of 5 calls (dailyCallBudget)") || !strings.Contains(got, "Renews in ") ||
		!(strings.Contains(got, "calls an hour it runs out in ") || strings.Contains(got, "it lasts until it renews")) {
		t.Errorf("daily budget line %q", got)
	}
	if got := a.text("#budget-monthly"); !strings.Contains(got, "This month: 4 of 100 calls (monthlyCallBudget)") {
		t.Errorf("monthly budget line %q", got)
	}
	if got := browsertest.Eval[string](a.tab, `document.getElementById("f-budgetTimeZone").value + "|" + document.getElementById("f-quietHours").value`); got != "Europe/Paris|" {
		t.Errorf("the editor's zone and window: %q", got)
	}
	a.shot("budgets-01-card")

	// A bad window: the server refuses it, naming it by its label.
	a.setValue("f-quietHours", "22:00-24:00")
	a.click("#save")
	a.tab.WaitFor(`document.getElementById("form-errors").hidden === false`)
	if got := strings.Join(a.texts("#form-errors li"), " | "); !strings.HasPrefix(got, "Quiet hours: ") || !strings.Contains(got, "HH:MM-HH:MM") {
		t.Errorf("the refusal of a bad window: %q", got)
	}
	// A window around now on Paris's clock holds claims.
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	now := proctest.Now().In(paris)
	window := now.Add(-time.Hour).Format("15:04") + "-" + now.Add(time.Hour).Format("15:04")
	a.setValue("f-quietHours", window)
	a.click("#save")
	a.tab.WaitFor(`document.getElementById("save-state").textContent === "Saved as version 2."`)
	if ep := must(c.GetEndpoint(ctx, "metered"))(t); ep.QuietHours != window || ep.Budget == nil || ep.Budget.QuietHours == nil || !ep.Budget.QuietHours.Quiet {
		t.Errorf("saved quiet hours %q, budget %+v", ep.QuietHours, ep.Budget)
	}
	a.open("/endpoints/metered")
	a.waitView("endpoint")
	if got := a.text("#budget-quiet"); !strings.Contains(got, "Quiet hours: "+window+" holding claims") || !strings.Contains(got, "Claims resume in ") {
		t.Errorf("quiet hours line %q", got)
	}
	// The operator controls name the gate in words.
	a.tab.WaitFor(`document.getElementById("ops-held-note").textContent.includes("held by")`)
	if got := a.text("#ops-held-note"); got != "2 due jobs held by the quiet hours." {
		t.Errorf("held jobs note %q", got)
	}
	a.shot("budgets-02-quiet")
	setViewport(t, a.tab, 390, 844)
	noSideScroll(t, a.tab, "endpoint page with its budgets at 390 px")
	browsertest.Eval[bool](a.tab, `(document.getElementById("budgets").scrollIntoView(), true)`)
	a.shot("budgets-03-quiet-390")
	setViewport(t, a.tab, 1280, 900)
}
