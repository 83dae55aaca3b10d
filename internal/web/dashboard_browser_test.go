package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/proctest"
	"github.com/getratchet/ratchet/internal/server"
	"github.com/getratchet/ratchet/wire"
)

const ownerKey = "rk_dashboard_test_owner_key_0001"

// dash is the dashboard open in one tab. Tabs of one browser share the
// session (an open tab hands the key to a new one); a tab from
// NewIsolatedTab is another person.
type dash struct {
	t    *testing.T
	tab  *browsertest.Tab
	base string
	dir  string
}

func (d *dash) open(path string) {
	d.t.Helper()
	d.tab.Do("open "+path, chromedp.Navigate(d.base+path))
}

// waitView waits until the client router has rendered view with its data.
func (d *dash) waitView(view string) {
	d.t.Helper()
	d.tab.WaitFor(fmt.Sprintf(`document.documentElement.dataset.view === %q && document.documentElement.dataset.ready === "true"`, view))
}

func (d *dash) signIn(key string) {
	d.t.Helper()
	d.open("/")
	d.waitView("signin")
	d.tab.Do("type the key", chromedp.SendKeys(chromedp.CSS("#api-key"), key))
	d.tab.Do("sign in", chromedp.Click(chromedp.CSS("#signin-button")))
	d.waitView("overview")
}

// go follows a dashboard link by clicking it, as a person would, so the
// client router (not a page load) renders the view.
func (d *dash) click(css string) {
	d.t.Helper()
	d.tab.Do("click "+css, chromedp.Click(chromedp.CSS(css)))
}

// press clicks the element css names through the element itself, once it
// is there, where click presses a mouse at its place: parts of a page that
// draw late (a job page's timeline, a list's live rows) move elements, and
// a mouse click at where one was missed it on a loaded machine.
func (d *dash) press(css string) {
	d.t.Helper()
	d.tab.WaitFor(fmt.Sprintf(`!!document.querySelector(%q)`, css))
	browsertest.Eval[chromedp.Void](d.tab, fmt.Sprintf(`document.querySelector(%q).click()`, css))
}

func (d *dash) setValue(id, value string) {
	d.t.Helper()
	browsertest.Eval[chromedp.Void](d.tab, fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = ""; e.dispatchEvent(new Event("input", {bubbles: true})); })()`, id))
	if value != "" {
		d.tab.Do("type into #"+id, chromedp.SendKeys(chromedp.CSS("#"+id), value))
	}
}

func (d *dash) choose(id, value string) {
	d.t.Helper()
	browsertest.Eval[chromedp.Void](d.tab, fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; e.dispatchEvent(new Event("change", {bubbles: true})); })()`, id, value))
}

// pickStates sets the jobs filter's states to these (none: any state).
func (d *dash) pickStates(states ...string) {
	d.t.Helper()
	js, _ := json.Marshal(states)
	browsertest.Eval[chromedp.Void](d.tab, fmt.Sprintf(`(() => { const want = %s; for (const i of document.querySelectorAll("#flt-state input")) i.checked = want.includes(i.value); document.getElementById("flt-state").dispatchEvent(new Event("change", {bubbles: true})); })()`, js))
}

func (d *dash) text(css string) string {
	d.t.Helper()
	got := browsertest.Eval[string](d.tab, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) throw new Error("no element " + %q); return e.innerText || e.textContent; })()`, css, css))
	return strings.Join(strings.Fields(got), " ")
}

func (d *dash) texts(css string) []string {
	d.t.Helper()
	return browsertest.Eval[[]string](d.tab, fmt.Sprintf(`Array.from(document.querySelectorAll(%q), e => (e.innerText || e.textContent).replace(/\s+/g, " ").trim())`, css))
}

func (d *dash) visible(css string) bool {
	d.t.Helper()
	return browsertest.Eval[bool](d.tab, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.getClientRects().length > 0; })()`, css))
}

func (d *dash) shot(name string) {
	d.t.Helper()
	p := d.tab.Screenshot(d.dir, name)
	d.t.Logf("screenshot %s", filepath.Base(p))
}

// fixture is what seedDashboard put in the server.
type fixture struct {
	freeKey   string
	arithJob  int64 // a job with two failed attempts and the hint winning the second
	exhausted []int64
	runID     int64
	chargeIDs []int64
}

// must(f())(t) is f's value, or fails the test with f's error.
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// prepareDB creates the database before the server starts: the first
// project (PRO) with ownerKey, and a FREE project whose key it returns.
func prepareDB(t *testing.T, dir string) string {
	t.Helper()
	ctx := context.Background()
	st, err := server.OpenStore(ctx, filepath.Join(dir, "ratchet.db"), "", true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng := must(engine.New(engine.Config{Store: st}))(t)
	if _, _, err := eng.Bootstrap(ctx, ownerKey); err != nil {
		t.Fatal(err)
	}
	_, freeKey, err := eng.CreateProject(ctx, "hobby", "FREE")
	if err != nil {
		t.Fatal(err)
	}
	return freeKey
}

// seedDashboard builds, through the public API, what the dashboard shows:
// an endpoint whose circuit is open, one held by its rate limit, exhausted
// jobs, a job whose second failure carried a Retry-After hint, and a run.
func seedDashboard(t *testing.T, base, freeKey string) fixture {
	t.Helper()
	ctx := context.Background()
	c := client.New(base, ownerKey)
	fx := fixture{freeKey: freeKey}
	two, one := int64(2), int64(1)
	// Every wait of the seed is long beside the test's run time on a loaded
	// machine (the dev clock runs in real time): stripe's failed charges
	// retry after 24–36 min, its circuit stays open 30 min, summary-42's
	// hint is 10 min. With STANDARD (30 s) and a 60 s hint, a run slowed
	// by a second copy of the suite saw the charges and summary-42 due.
	slow := client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 5, InitialDelayMs: 1_800_000, Multiplier: 2, MaxDelayMs: 3_600_000, JitterPercent: 20}}
	must(c.CreateEndpoint(ctx, "stripe", client.EndpointPolicy{Policy: slow, EndpointSettings: wire.EndpointSettings{CircuitFailureThreshold: two, CircuitOpenMs: 1_800_000}}))(t)
	must(c.CreateEndpoint(ctx, "openai", client.EndpointPolicy{Policy: client.Policy{Preset: backoff.Custom, Custom: backoff.Params{MaxAttempts: 4, InitialDelayMs: 10_000, Multiplier: 2, MaxDelayMs: 600_000, JitterPercent: 20}}, EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: 60_000, MaxConcurrent: 8, CircuitFailureThreshold: 1000, CircuitOpenMs: 30_000}}))(t)
	must(c.CreateEndpoint(ctx, "slack", client.EndpointPolicy{Policy: client.Policy{Preset: "AGGRESSIVE"}, EndpointSettings: wire.EndpointSettings{RateLimitPerMinute: &one}}))(t)
	schema := json.RawMessage(`{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer","minimum":1},"currency":{"type":"string"}}}`)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "charge", Version: "1", Endpoint: "stripe", Description: "Charge a customer's card.", PayloadSchema: schema}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "complete", Version: "1", Endpoint: "openai", Description: "Ask the model for a completion."}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "post", Version: "1", Endpoint: "slack", Description: "Post a message to a channel.", RetryPreset: "RELAXED"}))(t)
	wk := must(c.CreateKey(ctx, "worker", "worker", []string{"charge@1", "complete@1", "post@1"}))(t)
	w := client.New(base, wk.Secret)
	claim := func(tool string) client.ClaimedJob {
		t.Helper()
		js := must(w.Claim(ctx, client.ClaimRequest{WorkerID: "worker-7", Tools: []string{tool}, Max: 1}))(t)
		if len(js) != 1 {
			t.Fatalf("claim %s: %d jobs", tool, len(js))
		}
		return js[0]
	}
	report := func(j client.ClaimedJob, status int, headers map[string]string) {
		t.Helper()
		must(w.ReportOne(ctx, client.Report{JobID: j.ID, LeaseToken: j.LeaseToken, HTTPStatus: status, Headers: headers, Message: "provider said " + fmt.Sprint(status)}))(t)
	}

	// stripe: a run of three charges; two fail with 503 and open the circuit.
	run := must(c.StartRun(ctx, "nightly-billing"))(t)
	fx.runID = run.ID
	for i := range 3 {
		j := enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(fmt.Sprintf(`{"amount":%d,"currency":"eur"}`, 100*(i+1))), RunID: run.ID})
		fx.chargeIDs = append(fx.chargeIDs, j.ID)
	}
	report(claim("charge@1"), 503, nil)
	report(claim("charge@1"), 503, nil)

	// openai: three jobs allowed one attempt each end exhausted.
	for i := range 3 {
		j := enqueue(t, c, client.EnqueueRequest{Tool: "complete@1", Payload: json.RawMessage(fmt.Sprintf(`{"prompt":"p%d"}`, i)), MaxAttempts: &one})
		fx.exhausted = append(fx.exhausted, j.ID)
		report(claim("complete@1"), 502, nil)
	}
	// One job fails twice: plain jitter after attempt 1, then a 429 whose
	// Retry-After (600 s) is longer than the whole jitter band of attempt 2.
	j := enqueue(t, c, client.EnqueueRequest{Tool: "complete@1", Payload: json.RawMessage(`{"prompt":"summarise"}`), IdempotencyKey: "summary-42"})
	fx.arithJob = j.ID
	report(claim("complete@1"), 500, nil)
	if err := c.AdvanceClock(ctx, 13*time.Second); err != nil {
		t.Fatal(err)
	}
	report(claim("complete@1"), 429, map[string]string{"Retry-After": "600"})

	// slack: one claim uses the whole rate limit; two more wait for it.
	for i := range 3 {
		enqueue(t, c, client.EnqueueRequest{Tool: "post@1", Payload: json.RawMessage(fmt.Sprintf(`{"text":"hello %d"}`, i))})
	}
	p := claim("post@1")
	must(w.ReportOne(ctx, client.Report{JobID: p.ID, LeaseToken: p.LeaseToken, Success: true, HTTPStatus: 200}))(t)
	return fx
}

// enqueue adds one job through the API.
func enqueue(t *testing.T, c *client.Client, r client.EnqueueRequest) *client.Job {
	t.Helper()
	j, _, err := c.Enqueue(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestDashboardInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	freeKey := prepareDB(t, dir)
	srv := proctest.Start(t, dir, nil, "--dev-clock")
	fx := seedDashboard(t, srv.URL, freeKey)
	c := client.New(srv.URL, ownerKey)
	ctx := context.Background()
	shots := browsertest.ScreenshotDir(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: shots}

	// Sign in.
	a.open("/jobs")
	a.waitView("signin")
	a.tab.Do("type a wrong key", chromedp.SendKeys(chromedp.CSS("#api-key"), "rk_not_a_key_at_all"), chromedp.Click(chromedp.CSS("#signin-button")))
	a.tab.WaitFor(`!document.getElementById("api-key-error").hidden`)
	if got := a.text("#api-key-error"); !strings.Contains(got, "not accepted") {
		t.Errorf("wrong key message = %q", got)
	}
	a.setValue("api-key", "")
	a.shot("01-sign-in")
	a.signIn(ownerKey)
	if got := browsertest.Eval[string](a.tab, `sessionStorage.getItem("ratchet.apiKey")`); got != ownerKey {
		t.Errorf("sessionStorage holds %q", got)
	}
	if got := browsertest.Eval[string](a.tab, `localStorage.length + "|" + document.cookie`); got != "0|" {
		t.Errorf("the key leaked to localStorage or a cookie: %q", got)
	}
	if s := a.text("#session"); !strings.Contains(s, "project default") || !strings.Contains(s, "PRO plan") || !strings.Contains(s, "an owner key") {
		t.Errorf("session line = %q", s)
	}

	t.Run("overview", func(t *testing.T) {
		a.t = t
		ep := must(c.GetEndpoint(ctx, "stripe"))(t)
		if ep.Circuit.State != "open" {
			t.Fatalf("seed: stripe circuit %s", ep.Circuit.State)
		}
		stripe := `[data-endpoint="stripe"]`
		if got := a.text(stripe + " .status"); got != "Circuit open" {
			t.Errorf("stripe badge = %q", got)
		}
		half, _ := time.Parse(time.RFC3339Nano, ep.Circuit.HalfOpensAt)
		if got, want := a.text(stripe+" .half-opens"), half.UTC().Format("2006-01-02 15:04:05")+" UTC"; got != want {
			t.Errorf("half-opens at %q, want %q", got, want)
		}
		if got := a.text(stripe + " .circuit-note"); !strings.Contains(got, "after 2 failures") || !regexp.MustCompile(`\(in [1-3]?[0-9] min`).MatchString(got) {
			t.Errorf("circuit note = %q", got)
		}
		if got := a.text(stripe + " .held"); !strings.HasPrefix(got, "1 due, held by the circuit breaker until") {
			t.Errorf("stripe held line = %q", got)
		}
		if got := a.text(stripe + " .outcomes tbody tr:first-child"); got != "Last 5 min 0 2 0" {
			t.Errorf("stripe outcomes 5m = %q", got)
		}
		slack := `[data-endpoint="slack"]`
		if got := a.text(slack + " .claims"); got != "1 / 1" {
			t.Errorf("slack claims = %q", got)
		}
		if got := browsertest.Eval[string](a.tab, `document.querySelector('[data-endpoint="slack"] .held').dataset.gate`); got != "rate_limit" {
			t.Errorf("slack held by %q", got)
		}
		if got := a.text(`[data-endpoint="openai"] .running`); got != "0 / 8" {
			t.Errorf("openai running = %q", got)
		}
		if got := a.text(`[data-endpoint="openai"] .outcomes tbody tr:first-child`); got != "Last 5 min 0 5 0" {
			t.Errorf("openai outcomes 5m = %q", got)
		}
		a.shot("02-overview")

		// Live: a new claim shows up without a reload.
		browsertest.Eval[chromedp.Void](a.tab, `window.__sameDocument = true`)
		wk := must(c.CreateKey(ctx, "worker-2", "worker", []string{"complete@1"}))(t)
		w := client.New(srv.URL, wk.Secret)
		enqueue(t, c, client.EnqueueRequest{Tool: "complete@1", Payload: json.RawMessage(`{"prompt":"live"}`)})
		js := must(w.Claim(ctx, client.ClaimRequest{WorkerID: "live", Tools: []string{"complete@1"}, Max: 1}))(t)
		if len(js) != 1 {
			t.Fatalf("claimed %d", len(js))
		}
		a.tab.WaitFor(`document.querySelector('[data-endpoint="openai"] .running').textContent === "1 / 8"`)
		if !browsertest.Eval[bool](a.tab, `window.__sameDocument === true`) {
			t.Error("the overview reloaded the page to refresh")
		}
		must(w.ReportOne(ctx, client.Report{JobID: js[0].ID, LeaseToken: js[0].LeaseToken, Success: true, HTTPStatus: 200}))(t)
		a.tab.WaitFor(`document.querySelector('[data-endpoint="openai"] .running').textContent === "0 / 8"`)
	})

	t.Run("policy editor and version conflict", func(t *testing.T) {
		a.t = t
		a.click(`[data-endpoint="openai"] h2 a`)
		a.waitView("endpoint")
		if got := a.text("#version-line"); !strings.HasPrefix(got, "Version 1 ·") {
			t.Errorf("version line = %q", got)
		}
		// The preview is the policy table of seed 000.
		params := backoff.Params{MaxAttempts: 4, InitialDelayMs: 10_000, Multiplier: 2, MaxDelayMs: 600_000, JitterPercent: 20}
		checkPreview(t, a, params)
		// Inline validation with the seed's messages.
		a.setValue("f-maxAttempts", "11")
		a.setValue("f-multiplier", "5")
		a.setValue("f-maxConcurrent", "0")
		_, perr := backoff.ParsePolicy([]byte(`{"preset":"CUSTOM","maxAttempts":11,"initialDelayMs":10000,"multiplier":5,"maxDelayMs":600000,"jitterPercent":20}`))
		want := append(strings.Split(perr.Error(), "\n"), "maxConcurrent: 0 is not allowed; must be an integer from 1 through 100000")
		// Messages sit beside their fields in the page's words; the box
		// names the fields to fix by their labels.
		if got := a.texts("#form-errors li"); strings.Join(got, ",") != "Max attempts,Multiplier,Max concurrent" {
			t.Errorf("errors box %q", got)
		}
		for i, id := range []string{"maxAttempts", "multiplier", "maxConcurrent"} {
			if got := a.text("#f-" + id + "-error"); got != besideField(want[i]) {
				t.Errorf("beside %s: %q, want %q", id, got, besideField(want[i]))
			}
		}
		if !browsertest.Eval[bool](a.tab, `document.getElementById("save").disabled`) || a.visible("#preview-out") {
			t.Error("an invalid policy can be saved or previewed")
		}
		a.shot("03-policy-invalid")
		// My edit: 5 attempts, jitter 10 %, 4 concurrent.
		a.setValue("f-maxAttempts", "5")
		a.setValue("f-multiplier", "2")
		a.setValue("f-jitterPercent", "10")
		a.setValue("f-maxConcurrent", "4")
		mine := backoff.Params{MaxAttempts: 5, InitialDelayMs: 10_000, Multiplier: 2, MaxDelayMs: 600_000, JitterPercent: 10}
		checkPreview(t, a, mine)
		a.shot("04-policy-edit")

		// Someone else, in another tab with its own session, saves first.
		other := &dash{t: t, tab: b.NewIsolatedTab(t), base: srv.URL, dir: shots}
		other.open("/endpoints/openai")
		other.waitView("signin") // another profile: nothing to hand over
		other.tab.Do("sign in", chromedp.SendKeys(chromedp.CSS("#api-key"), ownerKey), chromedp.Click(chromedp.CSS("#signin-button")))
		other.waitView("endpoint")
		other.setValue("f-rateLimitPerMinute", "120")
		other.setValue("f-circuitOpenMs", "45000")
		other.click("#save")
		other.tab.WaitFor(`document.getElementById("save-state").textContent === "Saved as version 2."`)

		a.click("#save")
		a.tab.WaitFor(`!document.getElementById("conflict").hidden`)
		if got := a.text("#conflict-summary"); !strings.HasPrefix(got, "You edited version 1, but version 2 was saved at") {
			t.Errorf("conflict summary = %q", got)
		}
		rows := a.texts("#conflict-table tbody tr")
		wantRows := []string{
			"Max attempts 4 4 5",
			"Jitter 20 20 10",
			"Max concurrent 8 8 4",
			"Rate limit no limit 120 no limit",
			"Circuit open for 30000 45000 30000",
		}
		if strings.Join(rows, "\n") != strings.Join(wantRows, "\n") {
			t.Errorf("conflict rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
		}
		if got := a.texts("#conflict-table td.theirs.changed"); strings.Join(got, ",") != "120,45000" {
			t.Errorf("their changes marked: %q", got)
		}
		a.shot("05-policy-conflict")
		a.click("#reapply")
		a.tab.WaitFor(`document.getElementById("conflict").hidden`)
		for id, want := range map[string]string{"f-maxAttempts": "5", "f-jitterPercent": "10", "f-maxConcurrent": "4", "f-rateLimitPerMinute": "120", "f-circuitOpenMs": "45000"} {
			if got := browsertest.Eval[string](a.tab, fmt.Sprintf(`document.getElementById(%q).value`, id)); got != want {
				t.Errorf("after reapply #%s = %q, want %q", id, got, want)
			}
		}
		a.click("#save")
		a.tab.WaitFor(`document.getElementById("save-state").textContent === "Saved as version 3."`)
		ep := must(c.GetEndpoint(ctx, "openai"))(t)
		pol := ep.Policy.Custom
		if ep.Version != 3 || ep.MaxConcurrent != 4 || ep.RateLimitPerMinute == nil || *ep.RateLimitPerMinute != 120 || ep.CircuitOpenMs != 45000 || pol.MaxAttempts != 5 || pol.JitterPercent != 10 {
			t.Errorf("saved endpoint: version %d, %+v, policy %+v", ep.Version, ep, ep.Policy)
		}
		a.shot("06-policy-saved")

		// A FREE project cannot save CUSTOM; the editor says so before trying.
		fc := client.New(srv.URL, fx.freeKey)
		must(fc.CreateEndpoint(ctx, "mailer", client.EndpointPolicy{}))(t)
		free := &dash{t: t, tab: b.NewIsolatedTab(t), base: srv.URL, dir: shots}
		free.signIn(fx.freeKey)
		free.open("/endpoints/mailer")
		free.waitView("endpoint")
		if free.visible("#plan-note") {
			t.Error("plan note shown for a preset")
		}
		free.choose("f-preset", "CUSTOM")
		if !free.visible("#plan-note") || !browsertest.Eval[bool](free.tab, `document.getElementById("save").disabled`) {
			t.Error("a FREE project may save CUSTOM from the editor")
		}
		if got := free.text("#plan-note"); !strings.Contains(got, "FREE plan, which cannot save a CUSTOM retry policy") {
			t.Errorf("plan note = %q", got)
		}
		free.shot("07-policy-free-plan")
	})

	t.Run("bulk replay", func(t *testing.T) {
		a.t = t
		a.click(`.site-nav a[href="/jobs"]`)
		a.waitView("jobs")
		a.pickStates("exhausted")
		a.choose("flt-tool", "complete@1")
		a.choose("flt-created", "1h")
		a.click("#apply-filters")
		a.tab.WaitFor(`document.documentElement.dataset.ready === "true" && location.search.includes("state=exhausted")`)
		if got := a.text("#jobs-count"); got != "3 jobs match" {
			t.Errorf("count = %q", got)
		}
		if got := a.text("#bulk-scope"); !strings.HasPrefix(got, "all 3 exhausted jobs of tool complete@1 created since ") {
			t.Errorf("scope = %q", got)
		}
		ids := a.texts("#jobs-table tbody tr td.job-id > a")
		if want := fmt.Sprintf("#%d,#%d,#%d", fx.exhausted[2], fx.exhausted[1], fx.exhausted[0]); strings.Join(ids, ",") != want {
			t.Errorf("rows %q, want %s", ids, want)
		}
		if !browsertest.Eval[bool](a.tab, `document.getElementById("bulk-cancel").disabled`) {
			t.Error("cancel offered for exhausted jobs")
		}
		a.shot("08-jobs-filtered")
		a.click("#bulk-replay")
		a.tab.WaitFor(`document.getElementById("confirm").open`)
		if got := a.text("#confirm-title"); got != "Replay 3 jobs?" {
			t.Errorf("dialog title = %q", got)
		}
		if got := a.text("#confirm-body"); !strings.HasPrefix(got, "Replay all 3 exhausted jobs of tool complete@1 created since") {
			t.Errorf("dialog body = %q", got)
		}
		a.shot("09-bulk-confirm")
		a.click("#confirm-yes")
		a.tab.WaitFor(`!!document.getElementById("bulk-done")`)
		if got := a.text("#bulk-done"); !strings.HasPrefix(got, "Replayed 3 jobs as new jobs #") {
			t.Errorf("result = %q", got)
		}
		a.shot("10-bulk-done")
		n := must(c.CountJobs(ctx, client.JobFilter{States: []wire.JobState{wire.JobScheduled}, Tool: "complete@1"}))(t)
		if n != 4 { // the arithmetic job and the three replays
			t.Errorf("scheduled complete@1 jobs after replay: %d, want 4", n)
		}
	})

	t.Run("job detail", func(t *testing.T) {
		a.t = t
		j := must(c.GetJob(ctx, fx.arithJob))(t)
		if len(j.Attempts) != 2 {
			t.Fatalf("seed: %d attempts", len(j.Attempts))
		}
		a.open(fmt.Sprintf("/jobs/%d", fx.arithJob)) // a reload of a deep link gets the shell
		a.waitView("job")
		params := backoff.Params{MaxAttempts: 4, InitialDelayMs: 10_000, Multiplier: 2, MaxDelayMs: 600_000, JitterPercent: 20}
		for i, at := range j.Attempts {
			d, err := params.Delay(int(at.Number), *at.JitterSample, ptrOr(at.RetryAfterMs))
			if err != nil {
				t.Fatal(err)
			}
			if d.SelectedMs != *at.SelectedDelayMs {
				t.Fatalf("attempt %d: server selected %d, formula %d", at.Number, *at.SelectedDelayMs, d.SelectedMs)
			}
			arith := a.texts(fmt.Sprintf(`#attempt-%d .arith dd`, at.Number))
			next, _ := time.Parse(time.RFC3339Nano, *at.NextDueAt)
			want := []string{
				fmt.Sprintf("min(600,000, 10,000 × 2^%d) = %s ms", i, comma(int64(d.BaseDelayMs))),
				fmt.Sprintf("± 20%% → %s ms – %s ms", comma(d.MinDelayMs), comma(d.MaxDelayMs)),
				fmt.Sprintf("u = %.4f → %s ms", d.Sample, comma(d.JitteredMs)),
				"none",
				fmt.Sprintf("%s ms (%d s)", comma(d.SelectedMs), (d.SelectedMs+500)/1000),
				next.UTC().Format("2006-01-02 15:04:05.000") + " UTC",
			}
			if i == 1 {
				want[3] = "retry-after 600,000 ms → wins"
				want[4] = "600,000 ms (10 min) — the hint"
			}
			if strings.Join(arith, "\n") != strings.Join(want, "\n") {
				t.Errorf("attempt %d arithmetic\n%s\nwant\n%s", at.Number, strings.Join(arith, "\n"), strings.Join(want, "\n"))
			}
		}
		rows := a.texts("#attempts-table tbody tr")
		if len(rows) != 2 || !strings.Contains(rows[0], "worker-7") || !strings.Contains(rows[0], "server_error") && !strings.Contains(rows[0], "500") || !strings.Contains(rows[1], "429") || !strings.Contains(rows[1], "600,000 ms") {
			t.Errorf("attempt rows %q", rows)
		}
		if n := len(a.texts("#timeline g.lane")); n != 2 {
			t.Errorf("timeline lanes = %d", n)
		}
		if n := len(a.texts("#timeline .delay .range")); n != 2 || len(a.texts("#timeline .delay .hint")) != 1 || len(a.texts("#timeline .delay .due")) != 2 {
			t.Error("timeline lacks a range band, the hint or a due marker")
		}
		// Attempt 2's 600 s Retry-After outlasted its 16–24 s backoff.
		if got := a.text("#held-by"); !strings.HasPrefix(got, "Waiting out the provider's Retry-After") && !strings.HasPrefix(got, "Held by") {
			t.Errorf("held-by = %q", got)
		}
		if got := a.text("#snapshot"); !strings.Contains(got, "Copied at enqueue from the endpoint policy") || !strings.Contains(got, "INITIAL DELAY 10,000 ms") {
			t.Errorf("snapshot = %q", got)
		}
		a.shot("11-job-detail")

		// A job the circuit holds says so, and until when.
		a.open(fmt.Sprintf("/jobs/%d", fx.chargeIDs[2]))
		a.waitView("job")
		if got := a.text("#held-by"); !strings.HasPrefix(got, "Held by the circuit breaker until ") {
			t.Errorf("charge held-by = %q", got)
		}
		a.shot("12-job-held-by-circuit")
	})

	t.Run("tools and runs", func(t *testing.T) {
		a.t = t
		a.click(`.site-nav a[href="/tools"]`)
		a.waitView("tools")
		if got := a.text(`[data-tool="charge@1"] pre`); !strings.Contains(got, `"required": [ "amount" ]`) {
			t.Errorf("charge schema = %q", got)
		}
		if got := a.text(`[data-tool="post@1"] .facts`); !strings.Contains(got, "RETRY POLICY RELAXED") {
			t.Errorf("post facts = %q", got)
		}
		a.shot("13-tools")
		a.click(`.site-nav a[href="/runs"]`)
		a.waitView("runs")
		a.click(`#recent-runs a`)
		a.waitView("run")
		if got := a.texts("#steps-table tbody tr"); len(got) != 3 {
			t.Errorf("run steps %q", got)
		}
		if got := a.text("#view h1"); got != fmt.Sprintf("Run #%d · nightly-billing", fx.runID) {
			t.Errorf("run title %q", got)
		}
		a.shot("14-run")
		// Sign out forgets the key.
		a.click("#signout")
		a.waitView("signin")
		if got := browsertest.Eval[string](a.tab, `String(sessionStorage.getItem("ratchet.apiKey"))`); got != "null" {
			t.Errorf("key after sign out: %q", got)
		}
	})
}

func checkPreview(t *testing.T, d *dash, p backoff.Params) {
	t.Helper()
	want := strings.Split(strings.TrimSuffix(p.Schedule().Text(), "\n"), "\n")
	rows := browsertest.Eval[[]string](d.tab, `Array.from(document.querySelectorAll("#preview-table tbody tr"), tr => "| " + Array.from(tr.cells, td => td.textContent).join(" | ") + " |")`)
	if strings.Join(rows, "\n") != strings.Join(want[2:len(want)-1], "\n") {
		t.Errorf("preview rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want[2:len(want)-1], "\n"))
	}
	if got := d.text("#preview-total"); got != want[len(want)-1] {
		t.Errorf("preview total %q, want %q", got, want[len(want)-1])
	}
}

func ptrOr(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// comma prints 60000 as "60,000", as the page's Intl.NumberFormat does.
func comma(v int64) string {
	s := fmt.Sprint(v)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
