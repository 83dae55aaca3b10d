package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/wire"
)

// TestFlowKeysInConsole covers the console's part of flow keys
// (docs/flow-control.md): the jobs list filtered by a key from the URL and
// from the form (list, count, the stream's tab counts and a bulk action all
// take the key), a job page showing its key as a link to that key's jobs
// and the gate key_concurrency that holds it, and the endpoint editor
// showing, checking and saving the four limits per key, which the endpoint
// page and its overview card then state.
func TestFlowKeysInConsole(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, liveEnv)
	ctx := context.Background()
	c := client.New(srv.URL, ownerKey)
	two := int64(2)
	// The lease is the longest allowed, so the claimed jobs stay running
	// (and keep holding their key) however slowly the test runs.
	must(c.CreateEndpoint(ctx, "sms", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 43_200_000, KeyLimits: wire.KeyLimits{KeyMaxConcurrent: &two}}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "text", Version: "1", Endpoint: "sms"}))(t)
	var nine []int64 // the jobs of key acct_9, oldest first
	for i := range 3 {
		nine = append(nine, enqueue(t, c, client.EnqueueRequest{Tool: "text@1", FlowKey: "acct_9", Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}).ID)
	}
	five := enqueue(t, c, client.EnqueueRequest{Tool: "text@1", FlowKey: "acct_5"})
	keyless := enqueue(t, c, client.EnqueueRequest{Tool: "text@1"})
	wk := must(c.CreateKey(ctx, "worker", "worker", []string{"text@1"}))(t)
	w := client.New(srv.URL, wk.Secret)
	// keyMaxConcurrent 2 lets two of acct_9's three jobs go, beside acct_5's
	// and the key-less one; the third of acct_9 is held by its key.
	if got := must(w.Claim(ctx, client.ClaimRequest{WorkerID: "w1", Tools: []string{"text@1"}, Max: 10}))(t); len(got) != 4 {
		t.Fatalf("claimed %d jobs, want 4", len(got))
	}
	held := must(c.GetJob(ctx, nine[2]))(t)
	if held.State != wire.JobScheduled || held.HeldBy == nil || held.HeldBy.Gate != wire.GateKeyConcurrent {
		t.Fatalf("seed: job %d is %s, held by %+v", held.ID, held.State, held.HeldBy)
	}
	five2 := enqueue(t, c, client.EnqueueRequest{Tool: "text@1", FlowKey: "acct_5"})

	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}
	a.signIn(ownerKey)
	rowIDs := func() []string { return a.texts("#jobs-table tbody tr td.job-id > a") }
	ids := func(xs ...int64) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = fmt.Sprintf("#%d", x)
		}
		return strings.Join(s, ",")
	}

	t.Run("jobs list filtered by key", func(t *testing.T) {
		a.t = t
		a.open("/jobs?flowKey=acct_9")
		a.waitView("jobs")
		if got, want := strings.Join(rowIDs(), ","), ids(nine[2], nine[1], nine[0]); got != want {
			t.Errorf("rows for acct_9: %s, want %s", got, want)
		}
		if got := browsertest.Eval[string](a.tab, `document.getElementById("flt-flow-key").value`); got != "acct_9" {
			t.Errorf("flow key field = %q", got)
		}
		if got := a.text("#jobs-count"); got != "3 jobs match" {
			t.Errorf("count = %q", got)
		}
		if got := a.text("#bulk-scope"); got != "all 3 jobs for key acct_9" {
			t.Errorf("scope = %q", got)
		}
		// The stream's counts behind the state tabs are the key's too.
		a.tab.WaitFor(`document.querySelector('.state-tab[data-state="running"] .tab-count').textContent === "2" && document.querySelector('.state-tab[data-state="scheduled"] .tab-count').textContent === "1"`)
		row := fmt.Sprintf(`#jobs-table tr[data-job="%d"]`, nine[2])
		if got := a.text(row + " .held-col"); got != "key concurrency" {
			t.Errorf("held by cell = %q", got)
		}
		if got := browsertest.Eval[string](a.tab, `document.querySelector('`+row+` .held-cell').title`); got != `key "acct_9" has 2 of 2 in flight (keyMaxConcurrent)` {
			t.Errorf("held by title = %q", got)
		}
		if got := a.text(row + " .flow-key"); got != "key acct_9" {
			t.Errorf("key in the row = %q", got)
		}
		a.shot("flowkey-01-jobs-by-key")

		// Typed into the form, the key goes to the URL.
		a.setValue("flt-flow-key", "acct_5")
		a.click("#apply-filters")
		a.tab.WaitFor(`document.documentElement.dataset.ready === "true" && location.search === "?flowKey=acct_5"`)
		if got, want := strings.Join(rowIDs(), ","), ids(five2.ID, five.ID); got != want {
			t.Errorf("rows for acct_5: %s, want %s", got, want)
		}
		// An exact match: a prefix of a key is no key.
		a.open("/jobs?flowKey=acct")
		a.waitView("jobs")
		if !a.visible("#jobs-empty") {
			t.Errorf("a key's prefix matched rows %q", rowIDs())
		}
	})

	t.Run("job page shows its key", func(t *testing.T) {
		a.t = t
		a.open(fmt.Sprintf("/jobs/%d", nine[2]))
		a.waitView("job")
		if got := a.text(`[data-key="Flow key"]`); got != "FLOW KEY acct_9" {
			t.Errorf("flow key fact = %q", got)
		}
		if got := browsertest.Eval[string](a.tab, `document.getElementById("job-flow-key").getAttribute("href")`); got != "/jobs?flowKey=acct_9" {
			t.Errorf("flow key links to %q", got)
		}
		if got := a.text("#held-by"); got != `Held by the concurrency limit per key — key "acct_9" has 2 of 2 in flight (keyMaxConcurrent).` {
			t.Errorf("held by = %q", got)
		}
		a.shot("flowkey-02-job")
		a.click("#job-flow-key")
		a.waitView("jobs")
		if got := browsertest.Eval[string](a.tab, `location.pathname + location.search`); got != "/jobs?flowKey=acct_9" {
			t.Errorf("the key's link went to %q", got)
		}
		if got, want := strings.Join(rowIDs(), ","), ids(nine[2], nine[1], nine[0]); got != want {
			t.Errorf("rows after following the key: %s, want %s", got, want)
		}

		a.open(fmt.Sprintf("/jobs/%d", keyless.ID))
		a.waitView("job")
		if got := a.text(`[data-key="Flow key"] dd`); got != "—" {
			t.Errorf("flow key of a key-less job = %q", got)
		}
		if n := browsertest.Eval[int](a.tab, `document.querySelectorAll('[data-key="Flow key"] a').length`); n != 0 {
			t.Errorf("a key-less job links its key (%d links)", n)
		}
	})

	t.Run("endpoint page lists the busiest keys", func(t *testing.T) {
		a.t = t
		a.open("/endpoints/sms")
		a.waitView("endpoint")
		a.tab.WaitFor(`!!document.getElementById("flow-keys-table")`)
		rows := a.texts("#flow-keys-table tbody tr")
		want := []string{"acct_9 2 1 1 1 by the concurrency limit per key", "acct_5 1 1 1 —"}
		if strings.Join(rows, "|") != strings.Join(want, "|") {
			t.Errorf("busiest keys rows = %q\nwant %q", rows, want)
		}
		if got := browsertest.Eval[string](a.tab, `document.querySelector('#flow-keys-table tr[data-flow-key="acct_9"] .held-col').title`); got != `key "acct_9" has 2 of 2 in flight (keyMaxConcurrent)` {
			t.Errorf("held cell title = %q", got)
		}
		if got := browsertest.Eval[string](a.tab, `document.querySelector('#flow-keys-table tr[data-flow-key="acct_9"] a').getAttribute("href")`); got != "/jobs?endpoint=sms&flowKey=acct_9" {
			t.Errorf("the key links to %q", got)
		}
		a.shot("flowkey-06-busiest-keys")
		setViewport(t, a.tab, 390, 844)
		noSideScroll(t, a.tab, "endpoint page with its busiest keys at 390 px")
		a.shot("flowkey-06-busiest-keys-390")
		setViewport(t, a.tab, 1280, 900)
	})

	t.Run("bulk action takes the key", func(t *testing.T) {
		a.t = t
		a.open("/jobs?state=scheduled&flowKey=acct_9")
		a.waitView("jobs")
		a.click("#bulk-cancel")
		a.tab.WaitFor(`document.getElementById("confirm").open`)
		if got := a.text("#confirm-body"); !strings.HasPrefix(got, "Cancel all 1 scheduled jobs for key acct_9.") {
			t.Errorf("dialog body = %q", got)
		}
		a.click("#confirm-yes")
		a.tab.WaitFor(`!!document.getElementById("bulk-done")`)
		if j := must(c.GetJob(ctx, nine[2]))(t); j.State != wire.JobCancelled {
			t.Errorf("acct_9's held job is %s after the bulk cancel", j.State)
		}
		if j := must(c.GetJob(ctx, five2.ID))(t); j.State != wire.JobScheduled {
			t.Errorf("acct_5's scheduled job is %s after a cancel of acct_9's", j.State)
		}
	})

	t.Run("endpoint editor saves the limits per key", func(t *testing.T) {
		a.t = t
		a.open("/endpoints/sms")
		a.waitView("endpoint")
		// The editor builds its settings fields from limits.js's
		// ENDPOINT_SETTINGS: every setting of wire.EndpointSettings has
		// its labelled input, without a dashboard.js edit per setting.
		for _, f := range wire.SettingFields() {
			if got := browsertest.Eval[string](a.tab, `(() => { const l = document.querySelector('#policy-form label[for="f-`+f.JSON+`"]'); return l && document.getElementById("f-`+f.JSON+`") ? l.textContent : "(none)"; })()`); !strings.HasPrefix(got, f.Label) {
				t.Errorf("the editor's field for %s is labelled %q, want %q", f.JSON, got, f.Label)
			}
		}
		if got := a.text("#key-limits"); got != "Per key: 2 running" {
			t.Errorf("key limits line = %q", got)
		}
		form := func() string {
			return browsertest.Eval[string](a.tab, `["keyMaxConcurrent", "keyRateLimitPerMinute", "keyOrdered", "fairKeys"].map(k => { const e = document.getElementById("f-" + k); return e.type === "checkbox" ? e.checked : JSON.stringify(e.value); }).join(" ")`)
		}
		if got := form(); got != `"2" "" false false` {
			t.Errorf("key settings in the form: %s", got)
		}
		a.setValue("f-keyMaxConcurrent", "0")
		if got := a.text("#f-keyMaxConcurrent-error"); got != "0 is not allowed; must be null (no limit) or an integer from 1 through 100,000" {
			t.Errorf("beside keyMaxConcurrent: %q", got)
		}
		if got := a.texts("#form-errors li"); strings.Join(got, ",") != "Max concurrent per key" {
			t.Errorf("errors box %q", got)
		}
		if !browsertest.Eval[bool](a.tab, `document.getElementById("save").disabled`) {
			t.Error("an invalid limit per key can be saved")
		}
		a.setValue("f-keyMaxConcurrent", "5")
		a.setValue("f-keyRateLimitPerMinute", "60")
		a.click("#f-keyOrdered")
		a.shot("flowkey-03-editor")
		a.click("#save")
		a.tab.WaitFor(`document.getElementById("save-state").textContent === "Saved as version 2."`)
		ep := must(c.GetEndpoint(ctx, "sms"))(t)
		if ep.KeyMaxConcurrent == nil || *ep.KeyMaxConcurrent != 5 || ep.KeyRateLimitPerMinute == nil || *ep.KeyRateLimitPerMinute != 60 || !ep.KeyOrdered || ep.FairKeys {
			t.Errorf("saved limits per key: %s", keyLimits(ep.KeyLimits))
		}
		if got := a.text("#key-limits"); got != "Per key: 5 running · 60/min · ordered" {
			t.Errorf("key limits line after saving = %q", got)
		}
		if got := a.text("#saved-json"); !strings.Contains(got, `"keyMaxConcurrent": 5`) || !strings.Contains(got, `"keyOrdered": true`) {
			t.Errorf("saved JSON = %q", got)
		}

		// Emptied, a count is sent as null; the switches both ways.
		a.setValue("f-keyRateLimitPerMinute", "")
		a.click("#f-keyOrdered")
		a.click("#f-fairKeys")
		a.click("#save")
		a.tab.WaitFor(`document.getElementById("save-state").textContent === "Saved as version 3."`)
		ep = must(c.GetEndpoint(ctx, "sms"))(t)
		if ep.KeyMaxConcurrent == nil || *ep.KeyMaxConcurrent != 5 || ep.KeyRateLimitPerMinute != nil || ep.KeyOrdered || !ep.FairKeys {
			t.Errorf("saved limits per key: %s", keyLimits(ep.KeyLimits))
		}
		if got := form(); got != `"5" "" false true` {
			t.Errorf("key settings in the form after saving: %s", got)
		}
		a.shot("flowkey-04-editor-saved")

		a.open("/")
		a.waitView("overview")
		if got := a.text(`[data-endpoint="sms"] .key-limits`); got != "Per key: 5 running · fair" {
			t.Errorf("overview card's limits per key = %q", got)
		}
		a.shot("flowkey-05-overview")
	})
}

// keyLimits prints limits per key for a failure message.
func keyLimits(k wire.KeyLimits) string {
	p := func(v *int64) string {
		if v == nil {
			return "null"
		}
		return fmt.Sprint(*v)
	}
	return fmt.Sprintf("keyMaxConcurrent %s, keyRateLimitPerMinute %s, keyOrdered %t, fairKeys %t", p(k.KeyMaxConcurrent), p(k.KeyRateLimitPerMinute), k.KeyOrdered, k.FairKeys)
}
