package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/getratchet/ratchet/client"
	"github.com/getratchet/ratchet/internal/browsertest"
	"github.com/getratchet/ratchet/internal/proctest"
)

// sseFuzzJS runs in the page against the module the dashboard reads its
// streams with (assets/sse.js, the SDK's EventStreamParser): thousands
// of event-stream texts from a seeded generator, each fed to it in
// random pieces — as text, and as UTF-8 bytes cut anywhere through the
// page's TextDecoder — must read as a plain whole-text reading does; the
// server's form comes back as sent; with bound, an event over the bound
// throws. It returns the first failure, or "".
const sseFuzzJS = `(async (seed, rounds, bound) => {
  const script = [...document.scripts].find((s) => s.src.includes("/assets/"));
  const { EventStreamParser, MAX_EVENT_CHARS } = await import(new URL("sse.js", script.src).href);
  const parser = () => { const p = new EventStreamParser(); return { push: (t) => p.pushWithComments(t) }; };
  let a = seed >>> 0;
  const r = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pieces = ["\n", "\r", "\r\n", "\n\n", ":", ": ping", " ", "data", "data:", "data: ", "event", "event:", "event: job",
    "id: 1", "retry: 5", "{\"id\":1}", "é", "€", "😀", "\u0000", "x", "ab", "\ufeff"];
  const randomText = () => { let s = ""; for (let n = Math.floor(r() * 40); n > 0; n--) s += pieces[Math.floor(r() * pieces.length)]; return s; };
  const reference = (text) => {
    const lines = [];
    for (let m; (m = /\r\n|\r|\n/.exec(text)); text = text.slice(m.index + m[0].length)) lines.push(text.slice(0, m.index));
    const out = [];
    let event = "", data = [], has = false;
    for (const l of lines) {
      if (l === "") {
        if (has) out.push({ event: event || "message", data: data.join("\n") });
        event = ""; data = []; has = false;
      } else if (l.startsWith(":")) {
        out.push({ comment: l.slice(1).replace(/^ /, "") });
      } else {
        const i = l.indexOf(":");
        const name = i < 0 ? l : l.slice(0, i);
        const value = i < 0 ? "" : l.slice(i + 1).replace(/^ /, "");
        if (name === "event") event = value;
        else if (name === "data") { data.push(value); has = true; }
      }
    }
    return out;
  };
  const cuts = (n) => { const out = []; for (let at = 0; at < n;) { const k = 1 + Math.floor(r() * 9); out.push([at, Math.min(n, at + k)]); at += k; } return out; };
  const same = (x, y) => JSON.stringify(x) === JSON.stringify(y);
  for (let round = 0; round < rounds; round++) {
    const text = randomText();
    const want = reference(text);
    const p = parser();
    const got = [];
    for (const [i, j] of cuts(text.length)) got.push(...p.push(text.slice(i, j)));
    if (!same(got, want)) return "round " + round + ": text " + JSON.stringify(text) + " read " + JSON.stringify(got) + ", want " + JSON.stringify(want);
    const bytes = new TextEncoder().encode(text);
    const dec = new TextDecoder();
    const q = parser();
    const fromBytes = [];
    for (const [i, j] of cuts(bytes.length)) fromBytes.push(...q.push(dec.decode(bytes.subarray(i, j), { stream: true })));
    fromBytes.push(...q.push(dec.decode()));
    if (!same(fromBytes, reference(new TextDecoder().decode(bytes)))) return "round " + round + ": bytes of " + JSON.stringify(text) + " read " + JSON.stringify(fromBytes);
    const sent = [];
    let wire = "";
    for (let i = Math.floor(r() * 4); i > 0; i--) {
      const data = randomText().replace(/[\r\n]/g, "");
      sent.push({ comment: "ping" }, { event: "e" + i, data });
      wire += ": ping\n\nevent: e" + i + "\ndata: " + data + "\n\n";
    }
    const w = parser();
    const back = [];
    for (const [i, j] of cuts(wire.length)) back.push(...w.push(wire.slice(i, j)));
    if (!same(back, sent)) return "round " + round + ": the server's form " + JSON.stringify(wire) + " read " + JSON.stringify(back);
  }
  if (bound) try { parser().push("data: " + "x".repeat(MAX_EVENT_CHARS)); return "a line over the bound was taken"; } catch (e) { if (!(e instanceof RangeError)) return "over the bound: " + e; }
  return "";
})`

// TestDashboardEventParser fuzzes the event-stream parser the dashboard loads in
// Chromium (the parser the live pages read GET /v1/stream with): 4,000
// texts in eight steps of 500, each step within the step timeout on its
// own (4,000 in one step outlasted it on a loaded machine), and the bound
// in a step of its own.
func TestDashboardEventParser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := proctest.Start(t, "", nil)
	tab := b.NewTab(t)
	tab.Do("open the jobs page (signed out)", chromedp.Navigate(srv.URL+"/jobs"))
	seed := rand.Uint32() >> 1
	t.Logf("seed %d", seed)
	if msg := browsertest.Eval[string](tab, fmt.Sprintf("%s(0, 0, true)", sseFuzzJS)); msg != "" {
		t.Fatal(msg)
	}
	for step := range uint32(8) {
		if msg := browsertest.Eval[string](tab, fmt.Sprintf("%s(%d, 500, false)", sseFuzzJS, seed+step)); msg != "" {
			t.Fatalf("seed %d: %s", seed+step, msg)
		}
	}
}

// setHidden makes the page believe its tab is hidden (or shown) the way a
// browser says so: document.hidden, visibilityState and a visibilitychange
// event. Headless Chromium has no window to hide.
func setHidden(tab *browsertest.Tab, hidden bool) {
	browsertest.Eval[chromedp.Void](tab, fmt.Sprintf(`(() => {
		const hidden = %t;
		Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
		Object.defineProperty(document, "visibilityState", { configurable: true, get: () => hidden ? "hidden" : "visible" });
		document.dispatchEvent(new Event("visibilitychange"));
	})()`, hidden))
}

// TestDashboardHiddenTabGivesStreamBack: a jobs list left in a hidden tab
// closes its stream after 10 s (the server's gauge goes to 0) and says it
// is paused; shown again, it opens the stream and shows what changed
// meanwhile. A tab hidden briefly keeps its stream.
func TestDashboardHiddenTabGivesStreamBack(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, liveEnv, "--dev-clock")
	c := client.New(srv.URL, ownerKey)
	ctx := context.Background()
	must(c.CreateEndpoint(ctx, "pay", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "charge", Version: "1", Endpoint: "pay"}))(t)
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	a.signIn(ownerKey)
	a.open("/jobs")
	a.waitView("jobs")
	a.tab.WaitFor(`document.getElementById("refresh").dataset.state === "live"`)
	streams := func(want int) {
		t.Helper()
		srv.WaitForMetric(t, fmt.Sprintf("ratchet_streams_open %d", want))
	}
	streams(1)

	// Hidden for a moment: nothing changes.
	setHidden(a.tab, true)
	setHidden(a.tab, false)
	if got := a.tab.Text("#refresh-state"); got != "Live" {
		t.Fatalf("after a short hide the live line reads %q", got)
	}

	start := time.Now()
	setHidden(a.tab, true)
	a.tab.WaitFor(`document.getElementById("refresh-state").textContent === "Paused"`)
	if waited := time.Since(start); waited < 9*time.Second {
		t.Fatalf("the stream closed %v after the tab was hidden, before its 10 s", waited)
	}
	if got := a.tab.Text("#refresh-detail"); !strings.Contains(got, "the tab is hidden") {
		t.Errorf("paused detail = %q", got)
	}
	streams(0)
	a.shot("hidden-tab-paused")

	// A job enqueued while hidden shows once the tab is back.
	job := enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"amount":7}`)})
	setHidden(a.tab, false)
	a.tab.WaitFor(`document.getElementById("refresh").dataset.state === "live"`)
	a.tab.WaitFor(fmt.Sprintf(`!!document.querySelector('a[href="/jobs/%d"]')`, job.ID))
	streams(1)
}

// TestSearchCountCapped: when a text search's count stops at the search
// window (here 2 jobs, RATCHET_SEARCH_WINDOW), the jobs list says "At
// least" and its state tabs mark the counts with "+"; a search by job id
// is exact and says the count plainly.
func TestSearchCountCapped(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	dir := t.TempDir()
	prepareDB(t, dir)
	srv := proctest.Start(t, dir, append([]string{"RATCHET_SEARCH_WINDOW=2"}, liveEnv...), "--dev-clock")
	c := client.New(srv.URL, ownerKey)
	ctx := context.Background()
	must(c.CreateEndpoint(ctx, "pay", client.EndpointPolicy{Policy: client.Policy{Preset: "STANDARD"}}))(t)
	must(c.PublishTool(ctx, client.ToolSpec{Name: "charge", Version: "1", Endpoint: "pay"}))(t)
	var first int64
	for _, note := range []string{"needle", "hay", "needle", "a needle"} {
		j := enqueue(t, c, client.EnqueueRequest{Tool: "charge@1", Payload: json.RawMessage(`{"note":"` + note + `"}`)})
		if first == 0 {
			first = j.ID
		}
	}
	a := &dash{t: t, tab: b.NewTab(t), base: srv.URL, dir: browsertest.ScreenshotDir(t)}
	a.signIn(ownerKey)
	for _, w := range []struct {
		name   string
		width  int64
		height int64
	}{{"1280", 1280, 900}, {"390", 390, 844}} {
		a.tab.Do("viewport "+w.name, chromedp.EmulateViewport(w.width, w.height))
		a.open("/jobs?q=needle")
		a.waitView("jobs")
		a.tab.WaitFor(`document.getElementById("jobs-count").textContent === "At least 2 jobs match"`)
		a.tab.WaitFor(`document.querySelector('.state-tab-scheduled .tab-count').textContent === "2+"`)
		if title := browsertest.Eval[string](a.tab, `document.getElementById("jobs-count").title`); !strings.Contains(title, "newest 50,000 jobs") {
			t.Errorf("the heading's title says %q", title)
		}
		// The page searched the same window: the two newest needles, not
		// the oldest; the selection says what a bulk action would touch.
		if got := a.texts(`#jobs-table tbody tr td:nth-child(2) a`); strings.Join(got, ",") != fmt.Sprintf("#%d,#%d", first+3, first+2) {
			t.Errorf("rows %v, want the two newest matches", got)
		}
		if got := a.text("#bulk-scope"); got != "all 2 jobs matching “needle” among the newest 50,000 jobs" {
			t.Errorf("bulk scope %q", got)
		}
		a.shot(w.name + "-search-capped")
	}
	a.open(fmt.Sprintf("/jobs?q=%d", first))
	a.waitView("jobs")
	a.tab.WaitFor(`document.getElementById("jobs-count").textContent === "1 job matches"`)
}
