package classify_test

import (
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
