package classify_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/classify"
)

func FuzzParseRetryAfter(f *testing.F) {
	for _, v := range []string{
		"120", "0", "", " 7 ", "1.5", "-1", "+5", "99999999999999999999999",
		"Sun, 06 Nov 1994 08:49:37 GMT",
		"Sunday, 06-Nov-94 08:49:37 GMT",
		"Sun Nov  6 08:49:37 1994",
		"Fri, 31 Dec 9999 23:59:59 GMT",
		"Tuesday, 29-Feb-00 12:00:00 GMT",
	} {
		f.Add(v, now.Unix())
	}
	f.Fuzz(func(t *testing.T, value string, nowUnix int64) {
		at := time.Unix(nowUnix, 0)
		ms, ok := classify.ParseRetryAfter(value, at)
		if ms < 0 || ms > classify.MaxRetryAfterMs {
			t.Fatalf("ParseRetryAfter(%q) = %d, outside 0–%d", value, ms, classify.MaxRetryAfterMs)
		}
		if !ok && ms != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %d, false; a rejected value must give 0", value, ms)
		}
		// Optional whitespace never changes the answer.
		if ms2, ok2 := classify.ParseRetryAfter(" \t"+value+" ", at); ms2 != ms || ok2 != ok {
			t.Fatalf("padding changed ParseRetryAfter(%q): %d, %v then %d, %v", value, ms, ok, ms2, ok2)
		}
		// Plain digits are always accepted, saturating at the cap.
		v := strings.Trim(value, " \t")
		if v != "" && strings.Trim(v, "0123456789") == "" && !ok {
			t.Fatalf("ParseRetryAfter(%q) rejected delta-seconds", value)
		}
		// A later now never asks for a longer wait.
		if ok {
			if later, ok2 := classify.ParseRetryAfter(value, at.Add(time.Hour)); !ok2 || later > ms {
				t.Fatalf("ParseRetryAfter(%q) an hour later = %d, %v; was %d", value, later, ok2, ms)
			}
		}
	})
}

func FuzzClassify(f *testing.F) {
	f.Add(false, 503, "Retry-After", "120", "", int8(-1), int64(-1), now.Unix())
	f.Add(false, 429, "retry-after", "Sun, 06 Nov 1994 08:49:37 GMT", "", int8(-1), int64(-1), now.Unix())
	f.Add(false, 409, "Stripe-Should-Retry", "false", "", int8(1), int64(-1), now.Unix())
	f.Add(false, 500, "webhook-delivery", "abort-message", "", int8(-1), int64(-1), now.Unix())
	f.Add(false, 0, "", "", "timeout", int8(0), int64(-1), now.Unix())
	f.Add(true, 503, "X", "y", "", int8(-1), int64(5000), now.Unix())
	f.Add(false, 404, "Retry-After", "1.5", "other", int8(1), int64(1)<<62, now.Unix())
	f.Add(false, 700, "", "", "DNS", int8(-1), int64(-7), int64(0))
	f.Fuzz(func(t *testing.T, success bool, status int, hName, hValue, kind string, retryable int8, retryAfterMs, nowUnix int64) {
		r := classify.Report{Success: success, HTTPStatus: status, ErrorKind: kind}
		if hName != "" {
			r.Headers = map[string]string{hName: hValue}
		}
		switch {
		case retryable > 0:
			r.Retryable = ptr(true)
		case retryable == 0:
			r.Retryable = ptr(false)
		}
		if retryAfterMs >= -1 || retryAfterMs < -1000 { // let some negatives through as "invalid"
			if retryAfterMs != -1 {
				r.RetryAfterMs = ptr(retryAfterMs)
			}
		}
		at := time.Unix(nowUnix, 0)
		d := classify.Classify(r, at)

		if d2 := classify.Classify(r, at); d2 != d {
			t.Fatalf("not deterministic: %+v then %+v", d, d2)
		}
		switch d.Outcome {
		case classify.Succeeded, classify.Retry, classify.Fail:
		default:
			t.Fatalf("unknown outcome %q", d.Outcome)
		}
		if d.RetryAfterMs < 0 || d.RetryAfterMs > classify.MaxRetryAfterMs {
			t.Fatalf("hint %d outside 0–%d: %+v", d.RetryAfterMs, classify.MaxRetryAfterMs, d)
		}
		if d.Outcome != classify.Retry && d.RetryAfterMs != 0 {
			t.Fatalf("hint on a %s decision: %+v", d.Outcome, d)
		}
		if d.Classification == "" || strings.Trim(d.Classification, "abcdefghijklmnopqrstuvwxyz_") != "" {
			t.Fatalf("classification %q is not lowercase snake_case", d.Classification)
		}
		if d.Reason == "" {
			t.Fatalf("no reason: %+v", d)
		}

		// Success and explicit worker decisions.
		validStatus := status >= 100 && status <= 599
		statusOK := !validStatus || (status >= 200 && status <= 299)
		if success && statusOK && d.Outcome != classify.Succeeded {
			t.Fatalf("uncontradicted success report gave %+v", d)
		}
		if (d.Outcome == classify.Succeeded) != (d.Classification == "success") {
			t.Fatalf("outcome and code disagree: %+v", d)
		}
		if !(success && statusOK) && r.Retryable != nil && !*r.Retryable && d.Classification != "worker_fail" {
			t.Fatalf("retryable=false gave %+v", d)
		}

		// A retryable 5xx counts, a 503 with Retry-After too: the hint says
		// when to come back, not that the provider is well.
		if validStatus && status >= 500 && status != 501 && status != 505 && status != 511 && !d.CountsTowardCircuit {
			t.Fatalf("HTTP %d does not count toward the circuit: %+v", status, d)
		}
		// The circuit counts only what the provider did.
		if d.CountsTowardCircuit {
			if d.Outcome == classify.Succeeded {
				t.Fatalf("success counts toward the circuit: %+v", d)
			}
			if validStatus {
				if status < 500 && status != 408 {
					t.Fatalf("HTTP %d counts toward the circuit: %+v", status, d)
				}
				if status == 501 || status == 505 || status == 511 {
					t.Fatalf("non-retryable HTTP %d counts toward the circuit: %+v", status, d)
				}
			} else if kind == "" || kind == "other" {
				t.Fatalf("no status and error kind %q counts: %+v", kind, d)
			}
		}
		bare := r
		bare.Retryable, bare.RetryAfterMs = nil, nil
		if b := classify.Classify(bare, at); b.CountsTowardCircuit != d.CountsTowardCircuit {
			t.Fatalf("the worker's decision changed the circuit count: %+v vs %+v without it", d, b)
		}

		// A report that passes validation keeps its error kind in the code.
		if classify.ValidateReport(r) == nil && !validStatus && kind != "" && r.Retryable == nil && r.RetryAfterMs == nil &&
			!success && d.Outcome == classify.Retry && !strings.HasPrefix(d.Classification, "network_") &&
			d.Classification != "retry_after" && d.Classification != "stripe_should_retry" {
			t.Fatalf("error kind %q gave %+v", kind, d)
		}
	})
}

// FuzzReadQuota: ReadQuota never panics, is deterministic, reads names in
// any case, gives only bounded values and known reasons, and a later now
// never lengthens an accepted reset.
func FuzzReadQuota(f *testing.F) {
	names := classify.QuotaHeaders()
	f.Add(`"default";r=0;t=30`, `"default";q=100;w=60`, "", "", "", "", "", "", "", now.Unix())
	f.Add(`limit=100, remaining=0, reset=30`, `100;w=60`, "", "", "", "", "", "", "", now.Unix())
	f.Add("", "", "10, 10;w=1", "1", "7", "", "", "", "", now.Unix())
	f.Add("", "", "", "", "", "5000", "4999", "1773490000", "", now.Unix())
	f.Add("", "", "", "", "", "5", "1", "1773489602.5", "1.234", now.Unix())
	f.Add(`"d";r=1;t=-1`, `"d";q=0`, "-5", "-1", "99999999999999999999", "0", "11", "-0.5", "86401", int64(0))
	f.Add(`"d";n=%"%ff";b=?1;at=@1`, `"x";q=1;qu="content-bytes"`, "", "", "", "", "", "", "", int64(-1)<<40)
	f.Fuzz(func(t *testing.T, v0, v1, v2, v3, v4, v5, v6, v7, v8 string, nowUnix int64) {
		h := map[string]string{}
		for i, v := range []string{v0, v1, v2, v3, v4, v5, v6, v7, v8} {
			if v != "" {
				h[names[i]] = v
			}
		}
		at := time.Unix(nowUnix, 0)
		q, ok, ignored := classify.ReadQuota(h, at)
		if q2, ok2, ignored2 := classify.ReadQuota(h, at); q2 != q || ok2 != ok || !slices.Equal(ignored2, ignored) {
			t.Fatalf("not deterministic: %+v %v %q then %+v %v %q", q, ok, ignored, q2, ok2, ignored2)
		}
		lower := map[string]string{}
		for k, v := range h {
			lower[strings.ToLower(k)] = v
		}
		if q2, ok2, ignored2 := classify.ReadQuota(lower, at); q2 != q || ok2 != ok || !slices.Equal(ignored2, ignored) {
			t.Fatalf("lower-case names changed the answer: %+v %v %q then %+v %v %q", q, ok, ignored, q2, ok2, ignored2)
		}
		for _, r := range ignored {
			if !slices.Contains(classify.QuotaIgnoreReasons(), r) {
				t.Fatalf("unknown reason %q", r)
			}
		}
		if len(ignored) > len(h)+2 {
			t.Fatalf("%d reasons for %d headers: %q", len(ignored), len(h), ignored)
		}
		checkQuota(t, q, ok)
		if ok && len(ignored) == 0 {
			later, ok2, _ := classify.ReadQuota(h, at.Add(time.Hour))
			resetOK := later.ResetMs <= q.ResetMs && (later.ResetMs < 0) == (q.ResetMs < 0)
			later.ResetMs = q.ResetMs
			if !ok2 || later != q || !resetOK {
				t.Fatalf("an hour later: %+v, %v; was %+v", later, ok2, q)
			}
		}
	})
}

// checkQuota fails t unless q is within ReadQuota's bounds.
func checkQuota(t *testing.T, q classify.Quota, ok bool) {
	t.Helper()
	if !ok {
		if q != (classify.Quota{Remaining: -1, ResetMs: -1}) {
			t.Fatalf("refused, yet %+v", q)
		}
		return
	}
	maxRemaining := classify.MaxQuotaLimit
	if q.Limit > 0 {
		maxRemaining = q.Limit
	}
	switch {
	case q.Limit < 0 || q.Limit > classify.MaxQuotaLimit,
		q.WindowMs != 0 && (q.WindowMs < 1000 || q.WindowMs > classify.MaxQuotaWindowMs),
		q.Remaining < -1 || q.Remaining > maxRemaining,
		q.ResetMs < -1 || q.ResetMs > classify.MaxQuotaResetMs,
		q.Limit == 0 && q.WindowMs == 0 && q.Remaining < 0 && q.ResetMs < 0:
		t.Fatalf("out of bounds: %+v", q)
	}
	switch q.Source {
	case classify.QuotaSourceIETF, classify.QuotaSourceRateLimit, classify.QuotaSourceXRateLimit:
	default:
		t.Fatalf("unknown source: %+v", q)
	}
}
