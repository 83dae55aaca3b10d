package web_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// vectorsPath is the golden file the Go package is tested against; the
// browser tests load the very same file.
const vectorsPath = "../../backoff/testdata/vectors.json"

type vectors struct {
	Calculator []struct {
		Name   string            `json:"name"`
		Source string            `json:"source"`
		Input  backoff.CalcInput `json:"input"`
		Lines  []string          `json:"lines"`
	} `json:"calculator"`
	PolicyDelay []struct {
		Name         string          `json:"name"`
		Source       string          `json:"source"`
		Policy       json.RawMessage `json:"policy"`
		Attempt      int             `json:"attempt"`
		Sample       float64         `json:"sample"`
		RetryAfterMs int64           `json:"retryAfterMs"`
		Exhausted    bool            `json:"exhausted"`
		BaseDelayMs  *float64        `json:"baseDelayMs"`
		MinDelayMs   *int64          `json:"minDelayMs"`
		MaxDelayMs   *int64          `json:"maxDelayMs"`
		SelectedMs   int64           `json:"selectedMs"`
	} `json:"policyDelay"`
}

// page is the calculator open in one tab of a real Chromium, served by a
// real `ratchet serve`.
type page struct {
	t    *testing.T
	tab  *browsertest.Tab
	base string // server URL
	dir  string // screenshots
}

func (p *page) open(query string) {
	p.t.Helper()
	p.tab.Do("open the calculator", chromedp.Navigate(p.base+"/calculator"+query))
	p.tab.WaitFor(`document.documentElement.dataset.ready === "true"`)
}

// typeInto clears a text field and types value key by key, as a person would.
func (p *page) typeInto(id, value string) {
	p.t.Helper()
	browsertest.Eval[chromedp.Void](p.tab, fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = ""; e.dispatchEvent(new Event("input", {bubbles: true})); })()`, id))
	if value != "" {
		p.tab.Do("type into #"+id, chromedp.SendKeys(chromedp.ID(id), value))
	}
}

// choose picks an option of a <select> by keyboard-equivalent value change.
func (p *page) choose(id, value string) {
	p.t.Helper()
	p.tab.Do("focus #"+id, chromedp.Focus(chromedp.ID(id)))
	browsertest.Eval[chromedp.Void](p.tab, fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; e.dispatchEvent(new Event("change", {bubbles: true})); })()`, id, value))
}

func (p *page) click(id string) {
	p.t.Helper()
	p.tab.Do("click #"+id, chromedp.Click(chromedp.ID(id)))
}

func (p *page) text(css string) string {
	p.t.Helper()
	return p.tab.Text(css)
}

func (p *page) visible(css string) bool {
	p.t.Helper()
	return browsertest.Eval[bool](p.tab, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.getClientRects().length > 0; })()`, css))
}

func (p *page) shot(name string) {
	p.t.Helper()
	p.tab.Screenshot(p.dir, name)
}

func (p *page) listTexts(css string) []string {
	p.t.Helper()
	return browsertest.Eval[[]string](p.tab, fmt.Sprintf(`Array.from(document.querySelectorAll(%q), e => e.textContent)`, css))
}

// setCalc enters a calculator input through the form.
func (p *page) setCalc(in backoff.CalcInput) {
	p.t.Helper()
	p.typeInto("base", backoff.FormatMicro(int64(in.BaseMs*1000)))
	p.typeInto("multiplier", fmt.Sprint(in.Multiplier))
	p.typeInto("cap", backoff.FormatMicro(int64(in.CapMs*1000)))
	p.typeInto("attempts", fmt.Sprint(in.Attempts))
	p.choose("jitter", string(in.Jitter))
	p.click("first-" + string(in.FirstWait))
	p.typeInto("seed", fmt.Sprint(in.Seed))
}

// printed is what the page prints for the calculator: the formula line, one
// line per retry, the notes.
func (p *page) printed() []string {
	p.t.Helper()
	return strings.Split(p.text("#calc-lines"), "\n")
}

func TestCalculatorInBrowser(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	var vec vectors
	if err := json.Unmarshal(raw, &vec); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil)
	dir := browsertest.ScreenshotDir(t)
	newPage := func(t *testing.T) *page {
		return &page{t: t, tab: b.NewTab(t), base: srv.URL, dir: dir}
	}

	t.Run("seed 001 blocks", func(t *testing.T) {
		p := newPage(t)
		p.open("")
		// A fresh page opens on the sample, computed: its fields hold
		// values, not grey placeholders that look like values, and the
		// schedule is there (defect 16: placeholders and an empty schedule).
		if p.visible("#calc-empty") || !p.visible("#calc-output") {
			t.Error("a fresh page shows no schedule")
		}
		got := browsertest.Eval[[]string](p.tab, `["base", "multiplier", "cap", "attempts"].map(id => { const e = document.getElementById(id); return e.value + "|" + e.placeholder; })`)
		if strings.Join(got, " ") != "1000| 2| 30000| 4|" {
			t.Errorf("a fresh page's fields (value|placeholder) = %q, want the sample's values and no placeholders", got)
		}
		p.shot("01-fresh")
		// Emptied, the form invites to type or load the sample.
		for _, id := range []string{"base", "multiplier", "cap", "attempts"} {
			p.typeInto(id, "")
		}
		if !p.visible("#calc-empty") || p.visible("#calc-output") {
			t.Error("an emptied form should invite to type or load the sample, with no schedule")
		}
		p.shot("01-empty")
		p.click("load-sample")
		seeds := 0
		for _, c := range vec.Calculator {
			if c.Source != "seed 001" {
				continue
			}
			seeds++
			if seeds > 1 {
				p.setCalc(c.Input)
			} else if c.Input != backoff.SampleInput() {
				t.Fatalf("first seed block %s is not the sample", c.Name)
			}
			got := p.printed()
			if strings.Join(got, "\n") != strings.Join(c.Lines, "\n") {
				t.Errorf("%s: page prints\n%s\nseed 001 says\n%s", c.Name, strings.Join(got, "\n"), strings.Join(c.Lines, "\n"))
			}
			if f := p.text("#formula"); f != c.Lines[0] {
				t.Errorf("%s: formula above the table = %q", c.Name, f)
			}
			// The bars show the wait, and their column says so.
			if got := browsertest.Eval[string](p.tab, `(() => { const td = document.querySelector("#calc-table tbody .bar-track").closest("td"); return document.querySelector("#calc-table thead tr").children[td.cellIndex].textContent; })()`); !strings.HasPrefix(got, "Wait") {
				t.Errorf("the bars sit under %q", got)
			}
			rows := p.listTexts("#calc-table tbody tr td:nth-child(3) .mono")
			if len(rows) != c.Input.Attempts {
				t.Errorf("%s: table has %d rows", c.Name, len(rows))
			}
			notes := p.listTexts("#calc-notes p")
			if want := c.Lines[1+c.Input.Attempts:]; strings.Join(notes, "|") != strings.Join(want, "|") {
				t.Errorf("%s: notes %q, want %q", c.Name, notes, want)
			}
			capped := len(p.listTexts("#calc-table .badge-cap"))
			if want := strings.Count(strings.Join(c.Lines, "\n"), ", capped)"); capped != want {
				t.Errorf("%s: %d capped marks, want %d", c.Name, capped, want)
			}
			q := browsertest.Eval[string](p.tab, `location.search`)
			if !strings.Contains(q, "jitter="+string(c.Input.Jitter)) || !strings.Contains(q, "first="+string(c.Input.FirstWait)) {
				t.Errorf("%s: URL %q does not carry the inputs", c.Name, q)
			}
			p.shot(fmt.Sprintf("02-seed001-%d-%s", seeds, c.Name))
		}
		if seeds != 6 {
			t.Errorf("checked %d seed 001 blocks, want 6", seeds)
		}
	})

	t.Run("URL restores the page", func(t *testing.T) {
		p := newPage(t)
		in := backoff.CalcInput{BaseMs: 100, Multiplier: 3, CapMs: 2000, Attempts: 9, Jitter: backoff.DecorrelatedJitter, FirstWait: backoff.FirstWaitBase, Seed: 42}
		p.open("?base=100&multiplier=3&cap=2000&attempts=9&jitter=decorrelated&first=base&seed=42&durable=4&transport=3")
		for id, want := range map[string]string{"base": "100", "multiplier": "3", "cap": "2000", "attempts": "9", "jitter": "decorrelated", "seed": "42", "durable": "4", "transport": "3"} {
			if got := browsertest.Eval[string](p.tab, fmt.Sprintf(`document.getElementById(%q).value`, id)); got != want {
				t.Errorf("#%s = %q, want %q", id, got, want)
			}
		}
		s, err := backoff.Calculate(in)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(p.printed(), "\n"), strings.Join(s.Lines(), "\n"); got != want {
			t.Errorf("restored page prints\n%s\nGo prints\n%s", got, want)
		}
		// Decorrelated jitter with a low cap: the histogram shows the pile-up.
		p.choose("hist-retry", "9")
		if note := p.text("#spike-note"); !strings.Contains(note, "wait exactly the cap (2000 ms)") {
			t.Errorf("spike note = %q", note)
		}
		if n := len(p.listTexts("#calc-chart .band-range rect")); n != 9 {
			t.Errorf("chart has %d band columns, want 9", n)
		}
		if !p.visible("#calc-hist .spike rect") || !p.visible("#calc-chart .rule-cap line") {
			t.Error("chart lacks the cap line or the spike at the cap")
		}
		if got := p.text("#layers-result"); got != "4 durable attempts × 3 transport attempts = 12 provider requests in the worst case." {
			t.Errorf("layers = %q", got)
		}
		p.shot("03-url-decorrelated")

		// The policy mode restores from the URL too.
		p.open("?mode=policy&preset=CUSTOM&maxAttempts=6&initialDelayMs=10000&policyMultiplier=2&maxDelayMs=600000&jitterPercent=20&retryAfterMs=60000")
		if sel := browsertest.Eval[string](p.tab, `document.querySelector('[role=tab][aria-selected=true]').id`); sel != "tab-policy" {
			t.Errorf("selected tab %s", sel)
		}
		params := backoff.Params{MaxAttempts: 6, InitialDelayMs: 10000, Multiplier: 2, MaxDelayMs: 600000, JitterPercent: 20}
		if got, want := p.text("#policy-text"), params.Schedule().Text(); got != want {
			t.Errorf("policy table\n%s\nGo prints\n%s", got, want)
		}
	})

	t.Run("invalid values", func(t *testing.T) {
		p := newPage(t)
		// A link with bad values shows what is wrong with each.
		p.open("?base=1000&multiplier=0.5&cap=30000&attempts=16&jitter=half&first=base&seed=x")
		p.typeInto("base", "abc")
		want := []string{
			`baseMs: "abc" is not allowed; must be a number of milliseconds greater than 0`,
			"multiplier: 0.5 is not allowed; must be a finite number of at least 1",
			"attempts: 16 is not allowed; must be an integer from 1 through 15",
			`jitter: "half" is not allowed; must be one of none, full, equal, decorrelated`,
			`seed: "x" is not allowed; must be an integer from -2147483648 through 4294967295`,
		}
		// The rules shared with Go give exactly Go's messages.
		goErr := backoff.CalcInput{BaseMs: 1000, Multiplier: 0.5, CapMs: 30000, Attempts: 16, Jitter: "half", FirstWait: backoff.FirstWaitBase}.Validate().Error()
		for _, line := range []string{want[1], want[2], want[3]} {
			if !strings.Contains(goErr, line) {
				t.Errorf("Go says %q, test expects %q", goErr, line)
			}
		}
		// Each message sits beside its field in the page's words; the list
		// above the results names the fields by their labels, once.
		if got := p.listTexts("#calc-errors li"); strings.Join(got, ",") != "Base delay,Multiplier,Attempts,Jitter,Seed" {
			t.Errorf("errors list: %q", got)
		}
		for i, id := range []string{"base", "multiplier", "attempts", "jitter", "seed"} {
			if got := p.text("#" + id + "-error"); got != besideField(want[i]) {
				t.Errorf("message beside #%s = %q, want %q", id, got, besideField(want[i]))
			}
		}
		if got := p.text("#seed-error"); got != `"x" is not allowed; must be an integer from -2,147,483,648 through 4,294,967,295` {
			t.Errorf("seed message = %q", got)
		}
		if got := browsertest.Eval[string](p.tab, `getComputedStyle(document.getElementById("base-error")).fontFamily`); strings.Contains(got, "mono") {
			t.Errorf("field messages are set in %s", got)
		}
		if inv := browsertest.Eval[string](p.tab, `document.getElementById("base").getAttribute("aria-invalid")`); inv != "true" {
			t.Error("base field not marked invalid")
		}
		if p.visible("#calc-output") {
			t.Error("a schedule is shown for invalid input")
		}
		p.shot("04-invalid-calculator")

		p.typeInto("base", "1000")
		p.typeInto("multiplier", "2")
		p.typeInto("attempts", "4")
		p.typeInto("seed", "1")
		p.choose("jitter", "none")
		p.typeInto("cap", "500")
		capErr := backoff.CalcInput{BaseMs: 1000, Multiplier: 2, CapMs: 500, Attempts: 4, Jitter: backoff.NoJitter, FirstWait: backoff.FirstWaitBase}.Validate().Error()
		if got := p.listTexts("#calc-errors li"); len(got) != 1 || got[0] != "Cap" || p.text("#cap-error") != besideField(capErr) {
			t.Errorf("cap below base: %q, %q; Go says %q", got, p.text("#cap-error"), capErr)
		}

		// Policy form: the messages of backoff.ParsePolicy for the same document.
		p.click("tab-policy")
		p.choose("preset", "CUSTOM")
		p.typeInto("maxAttempts", "11")
		p.typeInto("initialDelayMs", "1000")
		p.typeInto("policyMultiplier", "5")
		p.typeInto("maxDelayMs", "500")
		p.typeInto("jitterPercent", "")
		p.typeInto("retryAfterMs", "-5")
		_, perr := backoff.ParsePolicy([]byte(`{"preset":"CUSTOM","maxAttempts":11,"initialDelayMs":1000,"multiplier":5,"maxDelayMs":500}`))
		wantPolicy := append(strings.Split(perr.Error(), "\n"), "retryAfterMs: -5 is not allowed; must be 0 (no hint) or more milliseconds")
		var beside []string
		for _, id := range []string{"maxAttempts", "policyMultiplier", "maxDelayMs", "jitterPercent", "retryAfterMs"} {
			beside = append(beside, p.text("#"+id+"-error"))
		}
		var wantBeside []string
		for _, m := range wantPolicy {
			wantBeside = append(wantBeside, besideField(m))
		}
		if strings.Join(beside, "\n") != strings.Join(wantBeside, "\n") {
			t.Errorf("policy errors beside the fields:\n%s\nwant\n%s", strings.Join(beside, "\n"), strings.Join(wantBeside, "\n"))
		}
		if got := p.listTexts("#policy-errors li"); strings.Join(got, ",") != "Total attempts,Multiplier,Cap before jitter,Jitter,Retry-After hint" {
			t.Errorf("policy errors list: %q", got)
		}
		p.shot("05-invalid-policy")
	})

	t.Run("policies", func(t *testing.T) {
		p := newPage(t)
		p.open("")
		// Keyboard: the tabs follow the arrow keys.
		p.tab.Do("focus the mode tabs", chromedp.Focus(chromedp.ID("tab-calc")), chromedp.KeyEvent(kb.ArrowRight))
		p.tab.WaitFor(`!document.getElementById("panel-policy").hidden && document.activeElement.id === "tab-policy"`)
		params, _ := backoff.PresetParams(backoff.Standard)
		if got, want := p.text("#policy-text"), params.Schedule().Text(); got != want {
			t.Errorf("STANDARD\n%s\nGo prints\n%s", got, want)
		}
		p.choose("preset", "CUSTOM")
		for id, v := range map[string]string{"maxAttempts": "6", "initialDelayMs": "10000", "policyMultiplier": "2", "maxDelayMs": "600000", "jitterPercent": "20"} {
			p.typeInto(id, v)
		}
		p.typeInto("retryAfterMs", "60000")
		seed := backoff.Params{MaxAttempts: 6, InitialDelayMs: 10000, Multiplier: 2, MaxDelayMs: 600000, JitterPercent: 20}
		want := strings.Split(strings.TrimSuffix(seed.Schedule().Text(), "\n"), "\n")
		rows := browsertest.Eval[[]string](p.tab, `Array.from(document.querySelectorAll("#policy-table tbody tr"), tr => "| " + Array.from(tr.cells).slice(0, 4).map(td => td.textContent).join(" | ") + " |")`)
		if strings.Join(rows, "\n") != strings.Join(want[2:len(want)-1], "\n") {
			t.Errorf("table rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want[2:len(want)-1], "\n"))
		}
		if got := p.text("#policy-total"); got != "With zero jitter, those five waits total 310 seconds." {
			t.Errorf("total = %q", got)
		}
		hints := p.listTexts("#policy-table tbody td.hint-col")
		if len(hints) != 6 || hints[0] != "Hint wins: 60 seconds" || hints[4] != "Hint loses: 128–192 seconds" || hints[5] != "No retry" {
			t.Errorf("hint column = %q", hints)
		}
		if s := p.text("#policy-hint-summary"); !strings.Contains(s, "A 60-second hint wins after attempts 1, 2 and 3, where it is longer than every jittered delay.") || !strings.Contains(s, "It loses after attempts 4 and 5 to the normal delay.") {
			t.Errorf("hint summary = %q", s)
		}
		if c := p.text("#policy-ceiling"); !strings.Contains(c, "720 seconds") {
			t.Errorf("ceiling = %q", c)
		}
		if got := p.text("#layers-result"); got != "6 durable attempts × 5 transport attempts = 30 provider requests in the worst case." {
			t.Errorf("layers = %q", got)
		}
		if a := p.text(".advice"); !strings.Contains(a, "Prefer one durable scheduling policy and keep any transport retries tightly bounded.") {
			t.Errorf("advice = %q", a)
		}
		p.shot("06-policy-seed000-hint")

		// Copy table (CSV) writes the rows to the clipboard.
		p.tab.AllowClipboard(srv.URL)
		p.click("copy-policy-csv")
		p.tab.WaitFor(`document.getElementById("toast").textContent.startsWith("Copied")`)
		csv := browsertest.Eval[string](p.tab, `navigator.clipboard.readText()`)
		if !strings.HasPrefix(csv, "failed_attempt,base_delay_ms,min_delay_ms,max_delay_ms,next_execution") || !strings.Contains(csv, "\n1,10000,8000,12000,attempt 2,60000,60000,wins\n") {
			t.Errorf("CSV = %q", csv)
		}
		p.click("tab-calc")
		p.click("load-sample")
		p.tab.Do("copy the link", chromedp.Click(chromedp.CSS("#panel-calc .copy-link")))
		p.tab.WaitFor(`document.getElementById("toast").textContent === "Copied the link."`)
		link := browsertest.Eval[string](p.tab, `navigator.clipboard.readText()`)
		if !strings.HasPrefix(link, srv.URL+"/calculator?") || !strings.Contains(link, "cap=30000") {
			t.Errorf("copied link %q", link)
		}
	})

	t.Run("pasted log", func(t *testing.T) {
		p := newPage(t)
		p.open("")
		p.click("load-sample")
		t0 := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
		at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
		log := strings.Join([]string{
			at(0).Format("2006-01-02T15:04:05.000Z07:00") + " attempt 1 failed: 503",
			fmt.Sprintf("ts=%d level=error msg=\"attempt 2 failed\"", at(1000).UnixMilli()),
			"worker restarted",
			"[" + at(3000).Format("2006-01-02 15:04:05.000") + "] ERROR attempt 3 failed",
			at(7000).In(time.FixedZone("", 3600)).Format("2006-01-02T15:04:05.000-07:00") + " attempt 4 failed",
			at(18500).Format(time.RFC3339Nano) + " attempt 5 failed",
			at(18000).Format(time.RFC3339Nano) + " attempt 6 failed",
		}, "\n")
		// The browser fetches the page's icon when it likes (sometimes after
		// the paste): that is not the page sending anything.
		const pageRequests = `performance.getEntriesByType("resource").filter(e => !e.name.endsWith("/favicon.svg"))`
		before := browsertest.Eval[int](p.tab, pageRequests+`.length`)
		p.tab.Do("paste the log", chromedp.Focus(chromedp.ID("log")))
		browsertest.Eval[chromedp.Void](p.tab, fmt.Sprintf(`document.execCommand("insertText", false, %q)`, log))
		p.tab.WaitFor(`!document.getElementById("log-table").hidden`)
		verdicts := p.listTexts("#log-table tbody td:last-child")
		wantV := []string{"Inside", "Inside", "Inside", "Late by 3500 ms", "Out of order"}
		if strings.Join(verdicts, "|") != strings.Join(wantV, "|") {
			t.Errorf("verdicts %q, want %q", verdicts, wantV)
		}
		observed := p.listTexts("#log-table tbody td:nth-child(3)")
		if len(observed) != 5 || observed[3] != "11500 ms" || observed[0] != "1000 ms" {
			t.Errorf("observed waits %q", observed)
		}
		// Every failure time reads as a time, whatever the log wrote (the
		// second line is epoch milliseconds, the fourth is at UTC+1).
		failedAt := p.listTexts("#log-table tbody td:nth-child(2)")
		if len(failedAt) != 5 || failedAt[0] != "2026-03-04 10:00:01.000 UTC" || failedAt[2] != "2026-03-04 10:00:07.000 UTC" {
			t.Errorf("failed-at column %q", failedAt)
		}
		for _, f := range failedAt {
			if regexp.MustCompile(`\d{13}`).MatchString(f) {
				t.Errorf("an epoch number is shown raw: %q", f)
			}
		}
		configured := p.listTexts("#log-table tbody td:nth-child(4)")
		if len(configured) != 5 || configured[2] != "4000 ms" {
			t.Errorf("configured %q", configured)
		}
		summary := p.text("#log-summary")
		if !strings.Contains(summary, "6 failures, 5 observed waits: 3 inside the expected range, 2 outside (retry 4 was late by 3500 ms and retry 5 is out of order)") {
			t.Errorf("summary = %q", summary)
		}
		if s := p.listTexts("#log-skipped li"); len(s) != 1 || s[0] != "Line 3 has no timestamp and was skipped." {
			t.Errorf("skipped = %q", s)
		}
		// Nothing pasted leaves the page: not in the URL, no request made.
		href := browsertest.Eval[string](p.tab, `location.href`)
		if strings.Contains(href, "failed") || strings.Contains(href, "503") || strings.Contains(href, "restarted") || strings.Contains(href, "level") {
			t.Errorf("the log leaked into the URL: %s", href)
		}
		if after := browsertest.Eval[int](p.tab, pageRequests+`.length`); after != before {
			t.Errorf("pasting made %d requests: %q", after-before, browsertest.Eval[[]string](p.tab, fmt.Sprintf(pageRequests+`.slice(%d).map(e => e.name)`, before)))
		}
		if p.visible("#calc-hist") {
			t.Error("the histogram is shown for a schedule without jitter")
		}
		p.shot("07-pasted-log")

		// The policy mode compares against the policy's jitter ranges.
		p.click("tab-policy")
		p.click("log-clear")
		p.click("log-example")
		p.tab.WaitFor(`!document.getElementById("log-table").hidden`)
		if v := p.listTexts("#log-table tbody td:last-child"); len(v) != 4 || v[2] != "Late by 2500 ms" || v[0] != "Inside" {
			t.Errorf("STANDARD example verdicts %q", v)
		}
	})

	t.Run("narrow screen", func(t *testing.T) {
		p := newPage(t)
		p.tab.Do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
		p.open("?base=1000&multiplier=2&cap=5000&attempts=6&jitter=full&first=base&seed=7")
		if w := browsertest.Eval[int](p.tab, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
			t.Errorf("page is %d px wider than a 390 px screen", w)
		}
		p.shot("08-narrow")
		p.click("tab-policy")
		p.shot("09-narrow-policy")
	})

	t.Run("golden vectors", func(t *testing.T) {
		p := newPage(t)
		p.open("")
		type calcOut struct {
			Errors []string `json:"errors"`
			Lines  []string `json:"lines"`
		}
		type delayOut struct {
			Errors      []string `json:"errors"`
			Exhausted   bool     `json:"exhausted"`
			BaseDelayMs float64  `json:"baseDelayMs"`
			MinDelayMs  int64    `json:"minDelayMs"`
			MaxDelayMs  int64    `json:"maxDelayMs"`
			SelectedMs  int64    `json:"selectedMs"`
		}
		// The page's own modules, at the URL the page loaded them from.
		res := browsertest.Eval[struct {
			Calculator  []calcOut  `json:"calculator"`
			PolicyDelay []delayOut `json:"policyDelay"`
		}](p.tab, `(async () => {
			const src = document.querySelector('script[type=module]').src;
			const B = await import(new URL("backoff.js", src));
			const v = `+string(raw)+`;
			return {
				calculator: v.calculator.map(c => {
					const r = B.calculate(c.input);
					return { errors: r.errors.map(e => e.message), lines: r.lines || [] };
				}),
				policyDelay: v.policyDelay.map(c => {
					const errors = c.policy.preset === "CUSTOM"
						? B.validatePolicyText(Object.fromEntries(B.POLICY_FIELDS.map(f => [f, String(c.policy[f])]))).errors.map(e => e.message)
						: [];
					return { errors, ...B.policyDelay(B.policyParams(c.policy), c.attempt, c.sample, c.retryAfterMs) };
				}),
			};
		})()`)
		if len(res.Calculator) != len(vec.Calculator) || len(res.PolicyDelay) != len(vec.PolicyDelay) {
			t.Fatalf("page returned %d/%d results for %d/%d vectors", len(res.Calculator), len(res.PolicyDelay), len(vec.Calculator), len(vec.PolicyDelay))
		}
		for i, c := range vec.Calculator {
			got := res.Calculator[i]
			if len(got.Errors) > 0 || strings.Join(got.Lines, "\n") != strings.Join(c.Lines, "\n") {
				t.Errorf("%s (%s): page\n%s\n%s\nwant\n%s", c.Name, c.Source, strings.Join(got.Errors, "\n"), strings.Join(got.Lines, "\n"), strings.Join(c.Lines, "\n"))
			}
		}
		for i, c := range vec.PolicyDelay {
			got := res.PolicyDelay[i]
			switch {
			case len(got.Errors) > 0:
				t.Errorf("%s: page rejects the policy: %q", c.Name, got.Errors)
			case got.Exhausted != c.Exhausted:
				t.Errorf("%s: exhausted %v, want %v", c.Name, got.Exhausted, c.Exhausted)
			case c.Exhausted:
			case got.SelectedMs != c.SelectedMs:
				t.Errorf("%s: selected %d ms, want %d", c.Name, got.SelectedMs, c.SelectedMs)
			case c.BaseDelayMs != nil && got.BaseDelayMs != *c.BaseDelayMs:
				t.Errorf("%s: base %v ms, want %v", c.Name, got.BaseDelayMs, *c.BaseDelayMs)
			case c.MinDelayMs != nil && (got.MinDelayMs != *c.MinDelayMs || got.MaxDelayMs != *c.MaxDelayMs):
				t.Errorf("%s: range %d–%d, want %d–%d", c.Name, got.MinDelayMs, got.MaxDelayMs, *c.MinDelayMs, *c.MaxDelayMs)
			}
		}
		t.Logf("the page's JavaScript agrees with %s on all %d calculator and %d policyDelay cases", vectorsPath, len(vec.Calculator), len(vec.PolicyDelay))
	})
}
