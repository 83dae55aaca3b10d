package classify

// Failure classes: the classification codes grouped as an operator reads
// an outage (the console's History and an endpoint's outage timeline
// count failed attempts by class).
const (
	ClassThrottled   = "throttled"    // 429, or a Retry-After on a status that is not a server error
	ClassServerError = "server_error" // 5xx, with or without Retry-After
	ClassNetwork     = "network"      // DNS, connect, reset, TLS and other network errors
	ClassTimeout     = "timeout"      // 408, a request timeout, or a lease that expired
	ClassClientError = "client_error" // 3xx, 4xx but 408, 425 and 429; a request Ratchet could not build
	ClassWorker      = "worker"       // a worker's own decision without a status
	ClassOther       = "other"        // anything else
)

// Classes lists the failure classes in the order the console shows them.
func Classes() []string {
	return []string{ClassThrottled, ClassServerError, ClassNetwork, ClassTimeout, ClassClientError, ClassWorker, ClassOther}
}

// ClassOf is the failure class of a failed attempt's classification code
// and HTTP status (0 when none). A code that names a kind of failure
// decides; a hint or a worker's decision is placed by its status.
func ClassOf(code string, status int) string {
	switch code {
	case CodeThrottled, CodeTooEarly:
		return ClassThrottled
	case CodeServerError, CodeNotImplemented, CodeHTTPVersion, CodeNetworkAuthRequired, CodeUnexpectedStatus:
		return ClassServerError
	case CodeNetworkDNS, CodeNetworkConnect, CodeNetworkReset, CodeNetworkTLS, CodeNetworkOther:
		return ClassNetwork
	case CodeNetworkTimeout, CodeRequestTimeout, CodeTimedOut:
		return ClassTimeout
	case CodeClientError, CodeRedirect, CodeRequestInvalid:
		return ClassClientError
	}
	switch {
	case status == 408:
		return ClassTimeout
	case status == 429 || status == 425:
		return ClassThrottled
	case status >= 500:
		return ClassServerError
	case status >= 300:
		return ClassClientError
	}
	switch code {
	case CodeRetryAfter, CodeWorkerRetryAfter:
		return ClassThrottled
	case CodeWorkerFail, CodeWorkerRetry, CodeWebhookAbort, CodeStripeShouldNotRetry, CodeStripeShouldRetry:
		return ClassWorker
	}
	return ClassOther
}
