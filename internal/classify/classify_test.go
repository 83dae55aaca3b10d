package classify_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/classify"
)

func ptr[T any](v T) *T { return &v }

// want is the part of a Decision a row pins down; reason is a substring the
// Reason must contain ("" to skip).
type want struct {
	outcome classify.Outcome
	code    string
	hint    int64
	circuit bool
	reason  string
}

func TestClassify(t *testing.T) {
	t.Parallel()
	ra := func(v string) map[string]string { return map[string]string{"Retry-After": v} }
	tests := []struct {
		name string
		r    classify.Report
		want want
	}{
		// Rule 0: success.
		{"success, no status", classify.Report{Success: true},
			want{classify.Succeeded, "success", 0, false, "the worker reported success — succeeded"}},
		{"success 200", classify.Report{Success: true, HTTPStatus: 200},
			want{classify.Succeeded, "success", 0, false, "HTTP 200 — succeeded"}},
		{"success 204 ignores Retry-After", classify.Report{Success: true, HTTPStatus: 204, Headers: ra("120")},
			want{classify.Succeeded, "success", 0, false, ""}},
		{"success ignores worker fields", classify.Report{Success: true, HTTPStatus: 201, Retryable: ptr(false), RetryAfterMs: ptr(int64(5))},
			want{classify.Succeeded, "success", 0, false, ""}},
		{"success ignores error kind", classify.Report{Success: true, ErrorKind: "timeout"},
			want{classify.Succeeded, "success", 0, false, ""}},
		{"success contradicted by 503", classify.Report{Success: true, HTTPStatus: 503},
			want{classify.Retry, "server_error", 0, true, "the worker reported success but HTTP 503 — server error, retry"}},
		{"success contradicted by 404", classify.Report{Success: true, HTTPStatus: 404},
			want{classify.Fail, "client_error", 0, false, "the worker reported success but HTTP 404"}},

		// Rule 1a: the worker says fail.
		{"worker fail on 503 still counts", classify.Report{HTTPStatus: 503, Retryable: ptr(false)},
			want{classify.Fail, "worker_fail", 0, true, "HTTP 503; the worker marked it not retryable — fail"}},
		{"worker fail beats its own wait", classify.Report{HTTPStatus: 500, Retryable: ptr(false), RetryAfterMs: ptr(int64(1000))},
			want{classify.Fail, "worker_fail", 0, true, ""}},
		{"worker fail beats Retry-After", classify.Report{HTTPStatus: 429, Retryable: ptr(false), Headers: ra("30")},
			want{classify.Fail, "worker_fail", 0, false, ""}},
		{"worker fail on 200", classify.Report{HTTPStatus: 200, Retryable: ptr(false)},
			want{classify.Fail, "worker_fail", 0, false, ""}},
		{"worker fail on timeout counts", classify.Report{ErrorKind: "timeout", Retryable: ptr(false)},
			want{classify.Fail, "worker_fail", 0, true, "no HTTP response (timeout error); the worker"}},

		// Rule 1b: the worker's explicit wait.
		{"worker wait", classify.Report{HTTPStatus: 400, RetryAfterMs: ptr(int64(5000))},
			want{classify.Retry, "worker_retry_after", 5000, false, "the worker asked to retry no sooner than 5000 ms"}},
		{"worker wait zero", classify.Report{ErrorKind: "connect", RetryAfterMs: ptr(int64(0))},
			want{classify.Retry, "worker_retry_after", 0, true, ""}},
		{"worker wait beats Retry-After", classify.Report{HTTPStatus: 503, RetryAfterMs: ptr(int64(7)), Headers: ra("120")},
			want{classify.Retry, "worker_retry_after", 7, true, ""}},
		{"worker wait with retryable true", classify.Report{HTTPStatus: 502, Retryable: ptr(true), RetryAfterMs: ptr(int64(9))},
			want{classify.Retry, "worker_retry_after", 9, true, ""}},
		{"worker wait capped", classify.Report{HTTPStatus: 500, RetryAfterMs: ptr(int64(1) << 62)},
			want{classify.Retry, "worker_retry_after", classify.MaxRetryAfterMs, true, "capped from 4611686018427387904 ms"}},
		{"negative worker wait ignored", classify.Report{HTTPStatus: 404, RetryAfterMs: ptr(int64(-1))},
			want{classify.Fail, "client_error", 0, false, ""}},

		// Rule 1c: the worker says retry.
		{"worker retry on 404", classify.Report{HTTPStatus: 404, Retryable: ptr(true)},
			want{classify.Retry, "worker_retry", 0, false, "HTTP 404; the worker marked it retryable — retry"}},
		{"worker retry takes Retry-After", classify.Report{HTTPStatus: 429, Retryable: ptr(true), Headers: ra("120")},
			want{classify.Retry, "worker_retry", 120_000, false, "no sooner than 120000 ms (Retry-After: 120)"}},
		{"worker retry ignores bad Retry-After", classify.Report{HTTPStatus: 500, Retryable: ptr(true), Headers: ra("soon")},
			want{classify.Retry, "worker_retry", 0, true, `Retry-After "soon" ignored`}},
		{"worker retry on 200", classify.Report{HTTPStatus: 200, Retryable: ptr(true)},
			want{classify.Retry, "worker_retry", 0, false, ""}},

		// Rule 2: a failure report with a 2xx status.
		{"failure report 200", classify.Report{HTTPStatus: 200},
			want{classify.Succeeded, "success", 0, false, "HTTP 200 although the worker reported a failure"}},
		{"failure report 299 beats headers", classify.Report{HTTPStatus: 299, Headers: map[string]string{"Retry-After": "60", "Stripe-Should-Retry": "true"}},
			want{classify.Succeeded, "success", 0, false, ""}},

		// Rule 3a: webhook-delivery: abort-message.
		{"webhook abort on 500", classify.Report{HTTPStatus: 500, Headers: map[string]string{"webhook-delivery": "abort-message"}},
			want{classify.Fail, "webhook_abort", 0, true, "webhook-delivery: abort-message"}},
		{"webhook abort beats Retry-After", classify.Report{HTTPStatus: 429, Headers: map[string]string{"Webhook-Delivery": " ABORT-MESSAGE ", "Retry-After": "5"}},
			want{classify.Fail, "webhook_abort", 0, false, ""}},
		{"webhook abort in a list", classify.Report{HTTPStatus: 410, Headers: map[string]string{"WEBHOOK-DELIVERY": "x, abort-message"}},
			want{classify.Fail, "webhook_abort", 0, false, ""}},
		{"webhook-delivery other value ignored", classify.Report{HTTPStatus: 503, Headers: map[string]string{"webhook-delivery": "abort"}},
			want{classify.Retry, "server_error", 0, true, ""}},

		// Rule 3b/3c: Stripe-Should-Retry.
		{"stripe false on 500", classify.Report{HTTPStatus: 500, Headers: map[string]string{"Stripe-Should-Retry": "false"}},
			want{classify.Fail, "stripe_should_not_retry", 0, true, "HTTP 500 with Stripe-Should-Retry: false — fail"}},
		{"stripe false beats Retry-After", classify.Report{HTTPStatus: 429, Headers: map[string]string{"stripe-should-retry": "False", "retry-after": "5"}},
			want{classify.Fail, "stripe_should_not_retry", 0, false, ""}},
		{"stripe true on 409", classify.Report{HTTPStatus: 409, Headers: map[string]string{"STRIPE-SHOULD-RETRY": " true "}},
			want{classify.Retry, "stripe_should_retry", 0, false, "HTTP 409 with Stripe-Should-Retry: true — retry"}},
		{"stripe true takes Retry-After", classify.Report{HTTPStatus: 409, Headers: map[string]string{"Stripe-Should-Retry": "true", "Retry-After": "3"}},
			want{classify.Retry, "stripe_should_retry", 3000, false, ""}},
		{"stripe bad value ignored", classify.Report{HTTPStatus: 400, Headers: map[string]string{"Stripe-Should-Retry": "yes"}},
			want{classify.Fail, "client_error", 0, false, ""}},

		// Rule 3d: Retry-After.
		{"503 with Retry-After counts toward the circuit", classify.Report{HTTPStatus: 503, Headers: ra("120")},
			want{classify.Retry, "retry_after", 120_000, true, "HTTP 503 with Retry-After: 120 — retry no sooner than 120000 ms"}},
		{"429 with Retry-After", classify.Report{HTTPStatus: 429, Headers: map[string]string{"retry-after": "2"}},
			want{classify.Retry, "retry_after", 2000, false, ""}},
		{"500 with Retry-After still counts", classify.Report{HTTPStatus: 500, Headers: ra("1")},
			want{classify.Retry, "retry_after", 1000, true, ""}},
		{"408 with Retry-After counts", classify.Report{HTTPStatus: 408, Headers: ra("1")},
			want{classify.Retry, "retry_after", 1000, true, ""}},
		{"403 with Retry-After retries", classify.Report{HTTPStatus: 403, Headers: ra("60")},
			want{classify.Retry, "retry_after", 60_000, false, ""}},
		{"301 with Retry-After retries", classify.Report{HTTPStatus: 301, Headers: ra("0")},
			want{classify.Retry, "retry_after", 0, false, ""}},
		{"501 with Retry-After retries, not counted", classify.Report{HTTPStatus: 501, Headers: ra("10")},
			want{classify.Retry, "retry_after", 10_000, false, ""}},
		{"past date is zero", classify.Report{HTTPStatus: 503, Headers: ra("Sun, 06 Nov 1994 08:49:37 GMT")},
			want{classify.Retry, "retry_after", 0, true, "Retry-After: Sun, 06 Nov 1994 08:49:37 GMT — retry no sooner than 0 ms"}},
		{"future date", classify.Report{HTTPStatus: 429, Headers: ra("Sat, 14 Mar 2026 12:01:00 GMT")},
			want{classify.Retry, "retry_after", 60_000, false, ""}},
		{"huge Retry-After capped", classify.Report{HTTPStatus: 429, Headers: ra("99999999999")},
			want{classify.Retry, "retry_after", classify.MaxRetryAfterMs, false, "capped at 86400000 ms"}},
		{"Retry-After without a status", classify.Report{Headers: ra("4")},
			want{classify.Retry, "retry_after", 4000, false, "no HTTP response with Retry-After: 4"}},
		{"invalid Retry-After falls through on 503", classify.Report{HTTPStatus: 503, Headers: ra("1.5")},
			want{classify.Retry, "server_error", 0, true, `(Retry-After "1.5" ignored`}},
		{"invalid Retry-After falls through on 404", classify.Report{HTTPStatus: 404, Headers: ra("-5")},
			want{classify.Fail, "client_error", 0, false, ""}},
		{"two spellings joined, so invalid", classify.Report{HTTPStatus: 503, Headers: map[string]string{"Retry-After": "5", "retry-after": "5"}},
			want{classify.Retry, "server_error", 0, true, `"5, 5" ignored`}},

		// Rule 4: the status.
		{"408", classify.Report{HTTPStatus: 408}, want{classify.Retry, "request_timeout", 0, true, "HTTP 408 — request timeout, retry"}},
		{"425", classify.Report{HTTPStatus: 425}, want{classify.Retry, "too_early", 0, false, ""}},
		{"429", classify.Report{HTTPStatus: 429}, want{classify.Retry, "throttled", 0, false, "HTTP 429 — throttled, retry"}},
		{"500", classify.Report{HTTPStatus: 500}, want{classify.Retry, "server_error", 0, true, ""}},
		{"502", classify.Report{HTTPStatus: 502}, want{classify.Retry, "server_error", 0, true, ""}},
		{"503", classify.Report{HTTPStatus: 503}, want{classify.Retry, "server_error", 0, true, ""}},
		{"504", classify.Report{HTTPStatus: 504}, want{classify.Retry, "server_error", 0, true, ""}},
		{"507", classify.Report{HTTPStatus: 507}, want{classify.Retry, "server_error", 0, true, ""}},
		{"599", classify.Report{HTTPStatus: 599}, want{classify.Retry, "server_error", 0, true, ""}},
		{"501", classify.Report{HTTPStatus: 501}, want{classify.Fail, "not_implemented", 0, false, "HTTP 501 — not implemented, fail"}},
		{"505", classify.Report{HTTPStatus: 505}, want{classify.Fail, "http_version_not_supported", 0, false, ""}},
		{"511", classify.Report{HTTPStatus: 511}, want{classify.Fail, "network_authentication_required", 0, false, ""}},
		{"300", classify.Report{HTTPStatus: 300}, want{classify.Fail, "redirect", 0, false, ""}},
		{"301", classify.Report{HTTPStatus: 301}, want{classify.Fail, "redirect", 0, false, ""}},
		{"308", classify.Report{HTTPStatus: 308}, want{classify.Fail, "redirect", 0, false, ""}},
		{"400", classify.Report{HTTPStatus: 400}, want{classify.Fail, "client_error", 0, false, "HTTP 400 — client error, fail"}},
		{"401", classify.Report{HTTPStatus: 401}, want{classify.Fail, "client_error", 0, false, ""}},
		{"404", classify.Report{HTTPStatus: 404}, want{classify.Fail, "client_error", 0, false, ""}},
		{"409", classify.Report{HTTPStatus: 409}, want{classify.Fail, "client_error", 0, false, ""}},
		{"499", classify.Report{HTTPStatus: 499}, want{classify.Fail, "client_error", 0, false, ""}},
		{"100", classify.Report{HTTPStatus: 100}, want{classify.Fail, "unexpected_status", 0, false, ""}},
		{"status wins over error kind", classify.Report{HTTPStatus: 404, ErrorKind: "timeout"},
			want{classify.Fail, "client_error", 0, false, ""}},

		// Rule 5: network error kinds.
		{"dns", classify.Report{ErrorKind: "dns"}, want{classify.Retry, "network_dns", 0, true, "no HTTP response, dns error — retry"}},
		{"connect", classify.Report{ErrorKind: "connect"}, want{classify.Retry, "network_connect", 0, true, ""}},
		{"timeout", classify.Report{ErrorKind: "timeout"}, want{classify.Retry, "network_timeout", 0, true, ""}},
		{"reset", classify.Report{ErrorKind: "reset"}, want{classify.Retry, "network_reset", 0, true, ""}},
		{"tls", classify.Report{ErrorKind: "tls"}, want{classify.Retry, "network_tls", 0, true, ""}},
		{"other", classify.Report{ErrorKind: "other"}, want{classify.Retry, "network_other", 0, false, "not counted toward the circuit"}},

		// Rule 6: nothing to go on.
		{"empty failure", classify.Report{}, want{classify.Retry, "unknown", 0, false, "unknown, retry"}},
		{"message only", classify.Report{Message: "boom"}, want{classify.Retry, "unknown", 0, false, ""}},

		// Unvalidated input still gives a well-formed decision.
		{"status 600 read as none", classify.Report{HTTPStatus: 600, ErrorKind: "dns"}, want{classify.Retry, "network_dns", 0, true, ""}},
		{"negative status read as none", classify.Report{HTTPStatus: -404}, want{classify.Retry, "unknown", 0, false, ""}},
		{"unknown kind read as other", classify.Report{ErrorKind: "DNS"}, want{classify.Retry, "network_other", 0, false, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := classify.Classify(tt.r, now)
			w := tt.want
			if d.Outcome != w.outcome || d.Classification != w.code || d.RetryAfterMs != w.hint || d.CountsTowardCircuit != w.circuit {
				t.Errorf("Classify(%+v) = {%s %s hint=%d circuit=%v}; want {%s %s hint=%d circuit=%v}\nreason: %s",
					tt.r, d.Outcome, d.Classification, d.RetryAfterMs, d.CountsTowardCircuit,
					w.outcome, w.code, w.hint, w.circuit, d.Reason)
			}
			if !strings.Contains(d.Reason, w.reason) {
				t.Errorf("Reason %q does not contain %q", d.Reason, w.reason)
			}
			if d.Reason == "" || strings.Contains(d.Reason, "\n") {
				t.Errorf("Reason %q is not one line", d.Reason)
			}
		})
	}
}

func TestLeaseExpired(t *testing.T) {
	t.Parallel()
	d := classify.LeaseExpired()
	if d.Outcome != classify.Retry || d.Classification != "timed_out" || !d.CountsTowardCircuit || d.RetryAfterMs != 0 || d.Reason == "" {
		t.Errorf("LeaseExpired() = %+v", d)
	}
}

func TestParseErrorKind(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"", "dns", "connect", "timeout", "reset", "tls", "other"} {
		got, err := classify.ParseErrorKind(k)
		if err != nil || got != k {
			t.Errorf("ParseErrorKind(%q) = %q, %v", k, got, err)
		}
	}
	for _, k := range []string{"DNS", " dns", "refused", "network", "Timeout"} {
		_, err := classify.ParseErrorKind(k)
		var fe *field.Error
		if !errors.As(err, &fe) {
			t.Fatalf("ParseErrorKind(%q) error %v is not a *field.Error", k, err)
		}
		msg := err.Error()
		for _, part := range []string{"errorKind", `"` + k + `"`, `"dns", "connect", "timeout", "reset", "tls", "other"`} {
			if !strings.Contains(msg, part) {
				t.Errorf("ParseErrorKind(%q) error %q does not name %s", k, msg, part)
			}
		}
	}
}

func TestValidateReport(t *testing.T) {
	t.Parallel()
	valid := []classify.Report{
		{},
		{Success: true, HTTPStatus: 200},
		{HTTPStatus: 100}, {HTTPStatus: 599},
		{ErrorKind: "tls", Retryable: ptr(true), RetryAfterMs: ptr(int64(0))},
		{RetryAfterMs: ptr(int64(1) << 62)},
	}
	for _, r := range valid {
		if err := classify.ValidateReport(r); err != nil {
			t.Errorf("ValidateReport(%+v) = %v; want nil", r, err)
		}
	}
	tests := []struct {
		r     classify.Report
		parts []string // each must appear in the message
		n     int      // number of field errors
	}{
		{classify.Report{HTTPStatus: 99}, []string{"httpStatus", "99", "100 through 599"}, 1},
		{classify.Report{HTTPStatus: 600}, []string{"httpStatus", "600"}, 1},
		{classify.Report{HTTPStatus: -1}, []string{"httpStatus", "-1"}, 1},
		{classify.Report{ErrorKind: "x"}, []string{"errorKind", `"x"`, `"dns"`}, 1},
		{classify.Report{RetryAfterMs: ptr(int64(-5))}, []string{"retryAfterMs", "-5", ">= 0"}, 1},
		{classify.Report{HTTPStatus: 1000, ErrorKind: "y", RetryAfterMs: ptr(int64(-1))}, []string{"httpStatus", "errorKind", "retryAfterMs"}, 3},
	}
	for _, tt := range tests {
		err := classify.ValidateReport(tt.r)
		var es field.Errors
		if !errors.As(err, &es) || len(es) != tt.n {
			t.Errorf("ValidateReport(%+v) = %v; want %d field errors", tt.r, err, tt.n)
			continue
		}
		for _, p := range tt.parts {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("ValidateReport(%+v) = %q; does not name %q", tt.r, err, p)
			}
		}
	}
}
