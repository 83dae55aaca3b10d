package classify

import "testing"

// TestClassOf: every code lands in a class of Classes, a hint by its
// status.
func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		code   string
		status int
		want   string
	}{
		{CodeThrottled, 429, ClassThrottled},
		{CodeRetryAfter, 503, ClassServerError},
		{CodeRetryAfter, 429, ClassThrottled},
		{CodeRetryAfter, 0, ClassThrottled},
		{CodeServerError, 502, ClassServerError},
		{CodeNetworkConnect, 0, ClassNetwork},
		{CodeNetworkTimeout, 0, ClassTimeout},
		{CodeTimedOut, 0, ClassTimeout},
		{CodeRequestTimeout, 408, ClassTimeout},
		{CodeClientError, 404, ClassClientError},
		{CodeWorkerFail, 0, ClassWorker},
		{CodeWorkerFail, 500, ClassServerError},
		{CodeWorkerRetryAfter, 0, ClassThrottled},
		{CodeUnknown, 0, ClassOther},
		{"", 0, ClassOther},
	} {
		if got := ClassOf(tc.code, tc.status); got != tc.want {
			t.Errorf("ClassOf(%q, %d) = %q, want %q", tc.code, tc.status, got, tc.want)
		}
	}
	known := map[string]bool{}
	for _, c := range Classes() {
		known[c] = true
	}
	for _, code := range []string{CodeWorkerFail, CodeWorkerRetryAfter, CodeWorkerRetry, CodeWebhookAbort, CodeStripeShouldNotRetry, CodeStripeShouldRetry,
		CodeRetryAfter, CodeRequestTimeout, CodeTooEarly, CodeThrottled, CodeServerError, CodeNotImplemented, CodeHTTPVersion, CodeNetworkAuthRequired,
		CodeRedirect, CodeClientError, CodeUnexpectedStatus, CodeNetworkDNS, CodeNetworkConnect, CodeNetworkTimeout, CodeNetworkReset, CodeNetworkTLS,
		CodeNetworkOther, CodeTimedOut, CodeRequestInvalid, CodeUnknown} {
		if c := ClassOf(code, 0); !known[c] {
			t.Errorf("ClassOf(%q) = %q, not one of Classes()", code, c)
		}
	}
}
