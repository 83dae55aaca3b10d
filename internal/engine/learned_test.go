package engine_test

import (
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// reportWith reports an answer of status with headers (200: success).
func (h *harness) reportWith(c engine.Claimed, status int, headers map[string]string) engine.ReportResult {
	h.t.Helper()
	r, err := h.e.Report(h.ctx, h.owner, engine.ReportRequest{JobID: c.Job.ID, LeaseToken: c.LeaseToken,
		Report: classify.Report{Success: status < 300, HTTPStatus: status, Headers: headers}})
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// TestLimitLearnedFromHeaders: an answer's rate-limit headers, on a
// success too, set the endpoint's learned limit, which holds its claims
// (gate provider_limit) and is written to the event log once; remaining 0
// with a reset holds everything until the reset; absurd values change
// nothing; a limit not said again lapses.
func TestLimitLearnedFromHeaders(t *testing.T) {
	bothDrivers(t, func(t *testing.T, h *harness) {
		h.endpoint("api", `{"maxConcurrent":100}`)
		h.tool(`{"name":"call","version":"1","endpoint":"api"}`)
		for range 40 {
			h.enqueue("call@1", nil)
		}
		ietf := map[string]string{"RateLimit-Policy": `"default";q=5;w=1`, "RateLimit": `"default";r=4;t=1`}
		h.reportWith(h.claimOne("call@1"), 200, ietf)
		ep, _ := h.e.Endpoint(h.ctx, h.owner, "api")
		if l := ep.Learned; l.Limit != 5 || l.WindowMs != 1000 || l.Source != "ietf" || l.ResetAt != 0 {
			t.Fatalf("learned %+v, want 5 per 1000 ms from ietf", l)
		}
		// The same again changes nothing: one event.
		h.reportWith(h.claimOne("call@1"), 200, ietf)
		if got := h.claim([]string{"call@1"}, 100); len(got) != 3 {
			t.Fatalf("claimed %d more in the second the provider allows 5 (2 made)", len(got))
		}
		n := 0
		for _, ev := range h.events("api", 0) {
			if ev.Kind == wire.EndpointLimitLearned {
				n++
				if ev.Facts["limit"] != 5 || ev.Facts["windowMs"] != 1000 {
					t.Errorf("limit_learned facts %v", ev.Facts)
				}
			}
		}
		if n != 1 {
			t.Fatalf("%d limit_learned events, want 1", n)
		}
		// A 0 limit, a negative reset: refused, nothing changes.
		h.clk.Advance(time.Second)
		c := h.claimOne("call@1")
		h.reportWith(c, 200, map[string]string{"RateLimit-Limit": "0", "RateLimit-Remaining": "0", "RateLimit-Reset": "-5"})
		if ep, _ = h.e.Endpoint(h.ctx, h.owner, "api"); ep.Learned.Limit != 5 || ep.Learned.ResetAt != 0 {
			t.Fatalf("absurd headers changed the learned limit: %+v", ep.Learned)
		}
		// None remaining until a reset 30 s away (GitHub's style).
		h.reportWith(h.claimOne("call@1"), 429, map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "30"})
		if ep, _ = h.e.Endpoint(h.ctx, h.owner, "api"); ep.Learned.ResetAt != h.clk.Now().Add(30*time.Second).UnixMilli() {
			t.Fatalf("reset at %d, want 30 s from now", ep.Learned.ResetAt)
		}
		h.clk.Advance(29 * time.Second)
		if got := h.claim([]string{"call@1"}, 100); len(got) != 0 {
			t.Fatalf("claimed %d before the provider's reset", len(got))
		}
		h.clk.Advance(time.Second)
		if got := h.claim([]string{"call@1"}, 100); len(got) != 5 {
			t.Fatalf("claimed %d at the reset, want the 5 a second learned", len(got))
		}
		// Not said again: after a minute it lapses and the view drops it.
		h.clk.Advance(61 * time.Second)
		ep, _ = h.e.Endpoint(h.ctx, h.owner, "api")
		if v := engine.LearnedView(ep, h.clk.Now().UnixMilli()); v != nil {
			t.Fatalf("a lapsed limit still shown: %+v", v)
		}
	})
}

// TestRampStartsAtHalfALearnedLimit: a limit the provider stated and that
// still stands starts the ramp at half of it; once it lapsed, the ramp
// starts at a tenth of maxConcurrent a second again.
func TestRampStartsAtHalfALearnedLimit(t *testing.T) {
	bothDrivers(t, func(t *testing.T, h *harness) {
		h.endpoint("api", `{"maxConcurrent":100}`)
		now := h.clk.Now().UnixMilli()
		h.learn("api", store.LearnedLimit{Limit: 100, WindowMs: 1000, At: now, Source: "ietf"})
		restart := func() int64 {
			t.Helper()
			if _, err := h.e.PauseEndpoint(h.ctx, h.owner, "api", ""); err != nil {
				t.Fatal(err)
			}
			ep, err := h.e.ResumeEndpoint(h.ctx, h.owner, "api")
			if err != nil {
				t.Fatal(err)
			}
			return ep.Recovery.Rate
		}
		if r := restart(); r != 50_000 {
			t.Fatalf("with 100 a second learned the ramp starts at %d, want 50000", r)
		}
		h.clk.Advance(61 * time.Second)
		if r := restart(); r != 10_000 {
			t.Fatalf("after the learned limit lapsed the ramp starts at %d, want 10000 (a tenth of maxConcurrent 100)", r)
		}
	})
}
