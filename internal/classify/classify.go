package classify

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/getratchet/ratchet/field"
)

// Report is what a worker says about one attempt.
type Report struct {
	Success      bool              // the attempt succeeded (still run through Classify so 2xx etc. are consistent)
	HTTPStatus   int               // 0 when the provider gave no HTTP response; otherwise 100–599
	Headers      map[string]string // provider response headers, any case; multiple values joined by ", "
	ErrorKind    string            // "", "dns", "connect", "timeout", "reset", "tls", "other" (see ParseErrorKind)
	Retryable    *bool             // the worker's explicit decision, nil when none
	RetryAfterMs *int64            // the worker's explicit minimum wait, nil when none; >= 0
	Message      string            // free text, kept for display only; never affects the decision
}

// Outcome is what happens to the job after an attempt.
type Outcome string

// The three outcomes. Whether a Retry actually runs again (attempts left,
// delay) is the engine's business, not this package's.
const (
	Succeeded Outcome = "succeeded" // the job is done
	Retry     Outcome = "retry"     // schedule another attempt
	Fail      Outcome = "fail"      // stop: the failure is not retryable
)

// Decision is the classification of one attempt.
type Decision struct {
	Outcome             Outcome // Succeeded, Retry or Fail
	Classification      string  // stable lowercase snake_case code, one of the Code… constants
	RetryAfterMs        int64   // the hint to feed into backoff, 0–MaxRetryAfterMs (0 = none); always 0 unless Outcome is Retry
	CountsTowardCircuit bool    // the provider looked unhealthy (see the package doc)
	Reason              string  // one human sentence explaining the decision
}

// Classification codes. They are stored with every attempt and shown to
// people, so they never change meaning; new ones may be added.
const (
	CodeSuccess              = "success"
	CodeWorkerFail           = "worker_fail"
	CodeWorkerRetryAfter     = "worker_retry_after"
	CodeWorkerRetry          = "worker_retry"
	CodeWebhookAbort         = "webhook_abort"
	CodeStripeShouldNotRetry = "stripe_should_not_retry"
	CodeStripeShouldRetry    = "stripe_should_retry"
	CodeRetryAfter           = "retry_after"
	CodeRequestTimeout       = "request_timeout"                 // 408
	CodeTooEarly             = "too_early"                       // 425
	CodeThrottled            = "throttled"                       // 429
	CodeServerError          = "server_error"                    // retryable 5xx
	CodeNotImplemented       = "not_implemented"                 // 501
	CodeHTTPVersion          = "http_version_not_supported"      // 505
	CodeNetworkAuthRequired  = "network_authentication_required" // 511
	CodeRedirect             = "redirect"                        // 3xx
	CodeClientError          = "client_error"                    // other 4xx
	CodeUnexpectedStatus     = "unexpected_status"               // 1xx as a final status
	CodeNetworkDNS           = "network_dns"
	CodeNetworkConnect       = "network_connect"
	CodeNetworkTimeout       = "network_timeout"
	CodeNetworkReset         = "network_reset"
	CodeNetworkTLS           = "network_tls"
	CodeNetworkOther         = "network_other"
	CodeTimedOut             = "timed_out"       // the lease expired (LeaseExpired)
	CodeRequestInvalid       = "request_invalid" // Ratchet's delivery could not build the request (RequestInvalid)
	CodeUnknown              = "unknown"
)

// errorKinds are the values Report.ErrorKind may take, "" (none) first.
var errorKinds = []string{"", "dns", "connect", "timeout", "reset", "tls", "other"}

// ErrorKinds returns the values Report.ErrorKind may take, "" (none) first.
func ErrorKinds() []string { return append([]string(nil), errorKinds...) }

// Header names Classify reads, matched case-insensitively.
const (
	HeaderRetryAfter        = "Retry-After"
	HeaderStripeShouldRetry = "Stripe-Should-Retry"
	HeaderWebhookDelivery   = "webhook-delivery"
)

// LeaseExpired is the decision for an attempt whose lease ran out before the
// worker reported: the provider (or the worker) took too long, which is a
// timeout, so it is retryable and counts toward the circuit.
func LeaseExpired() Decision {
	return Decision{
		Outcome:             Retry,
		Classification:      CodeTimedOut,
		CountsTowardCircuit: true,
		Reason:              "the lease expired before the worker reported — timed out, retry",
	}
}

// RequestInvalid is the decision for a delivery whose request could not be
// built from the job and the tool (a header value no HTTP client sends, a
// URL template that renders no URL, a bad signing secret): nothing reached
// the provider and a retry would fail the same way, so the job fails at
// once, and the provider's circuit does not count it.
func RequestInvalid(why string) Decision {
	return Decision{
		Outcome:        Fail,
		Classification: CodeRequestInvalid,
		Reason:         "the request could not be built (" + why + ") — nothing was sent; a retry would fail the same way, fail",
	}
}

// Classify decides what an attempt means. It is pure: the same report and
// now always give the same decision. now is used only to turn a Retry-After
// HTTP-date into a wait.
//
// Classify expects a report that passed ValidateReport, but never panics on
// one that did not: a status outside 100–599 is read as no status, an
// unknown error kind as "other", and a negative RetryAfterMs as none.
func Classify(r Report, now time.Time) Decision {
	status := r.HTTPStatus
	if status < 100 || status > 599 {
		status = 0
	}
	kind := r.ErrorKind
	if kind != "" && !validKind(kind) {
		kind = "other"
	}
	ra := readRetryAfter(r.Headers, now)
	c := cause{status: status, kind: kind, ra: ra}
	counts := providerUnhealthy(status, kind, ra.ok)

	// Rule 0: a success report the status does not contradict.
	if r.Success && (status == 0 || is2xx(status)) {
		reason := "the worker reported success — succeeded"
		if status != 0 {
			reason = fmt.Sprintf("HTTP %d — succeeded", status)
		}
		return Decision{Outcome: Succeeded, Classification: CodeSuccess, Reason: reason}
	}
	d := decideFailure(r, c)
	if d.Outcome != Succeeded {
		d.CountsTowardCircuit = counts
	}
	if d.Outcome != Retry {
		d.RetryAfterMs = 0
	}
	if r.Success {
		d.Reason = "the worker reported success but " + d.Reason
	}
	return d
}

// decideFailure applies rules 1–5 of the decision table to a failure report
// (or a success report its status contradicts).
func decideFailure(r Report, c cause) Decision {
	if d, ok := workerRule(r, c); ok {
		return d
	}
	// Rule 2: the provider accepted the request. Checked before the headers
	// because Retry-After and Stripe-Should-Retry only mean something on a
	// failed response, and retrying a request the provider accepted would
	// repeat its side effect.
	if is2xx(c.status) {
		return Decision{Outcome: Succeeded, Classification: CodeSuccess,
			Reason: fmt.Sprintf("HTTP %d although the worker reported a failure — the provider accepted the request, succeeded", c.status)}
	}
	if d, ok := headerRule(r.Headers, c); ok {
		return d
	}
	return responseRule(c)
}

// workerRule is rule 1: the worker's explicit decision — not retryable,
// retry no sooner than a time, or retryable — when it made one.
func workerRule(r Report, c cause) (Decision, bool) {
	if r.Retryable != nil && !*r.Retryable {
		return Decision{Outcome: Fail, Classification: CodeWorkerFail,
			Reason: c.subject() + "; the worker marked it not retryable — fail"}, true
	}
	if r.RetryAfterMs != nil && *r.RetryAfterMs >= 0 {
		ms := min(*r.RetryAfterMs, MaxRetryAfterMs)
		reason := fmt.Sprintf("%s; the worker asked to retry no sooner than %d ms", c.subject(), ms)
		if ms < *r.RetryAfterMs {
			reason += fmt.Sprintf(" (capped from %d ms)", *r.RetryAfterMs)
		}
		return Decision{Outcome: Retry, Classification: CodeWorkerRetryAfter, RetryAfterMs: ms, Reason: reason}, true
	}
	if r.Retryable != nil && *r.Retryable {
		return Decision{Outcome: Retry, Classification: CodeWorkerRetry, RetryAfterMs: c.ra.ms,
			Reason: c.subject() + "; the worker marked it retryable — retry" + c.ra.waitClause()}, true
	}
	return Decision{}, false
}

// headerRule is rule 3: the provider's headers, strongest instruction
// first — webhook-delivery: abort-message, Stripe-Should-Retry, then
// Retry-After — when one of them is there.
func headerRule(h map[string]string, c cause) (Decision, bool) {
	if hasToken(header(h, HeaderWebhookDelivery), "abort-message") {
		return Decision{Outcome: Fail, Classification: CodeWebhookAbort,
			Reason: c.subject() + " with webhook-delivery: abort-message — the receiver asked not to retry, fail"}, true
	}
	switch strings.ToLower(strings.Trim(header(h, HeaderStripeShouldRetry), " \t")) {
	case "false":
		return Decision{Outcome: Fail, Classification: CodeStripeShouldNotRetry,
			Reason: c.subject() + " with Stripe-Should-Retry: false — fail"}, true
	case "true":
		return Decision{Outcome: Retry, Classification: CodeStripeShouldRetry, RetryAfterMs: c.ra.ms,
			Reason: c.subject() + " with Stripe-Should-Retry: true — retry" + c.ra.waitClause()}, true
	}
	if c.ra.ok {
		return Decision{Outcome: Retry, Classification: CodeRetryAfter, RetryAfterMs: c.ra.ms,
			Reason: fmt.Sprintf("%s with Retry-After: %s — retry no sooner than %d ms%s",
				c.subject(), c.ra.value, c.ra.ms, c.ra.cappedNote())}, true
	}
	return Decision{}, false
}

// responseRule is rules 4–6, when neither the worker nor the headers
// decided: the HTTP status, else the network error kind, else nothing to
// go on (retry).
func responseRule(c cause) Decision {
	// Rule 4: the HTTP status.
	if c.status != 0 {
		out, code, label := statusRule(c.status)
		verb := "fail"
		if out == Retry {
			verb = "retry"
		}
		return Decision{Outcome: out, Classification: code,
			Reason: fmt.Sprintf("HTTP %d — %s, %s%s", c.status, label, verb, c.ra.ignoredNote())}
	}
	// Rule 5: network error kinds.
	if c.kind != "" {
		out, verb := Retry, "retry"
		if c.kind == "other" {
			verb = "retry (cause unknown, not counted toward the circuit)"
		}
		return Decision{Outcome: out, Classification: "network_" + c.kind,
			Reason: fmt.Sprintf("no HTTP response, %s error — %s%s", c.kind, verb, c.ra.ignoredNote())}
	}
	// Rule 6: nothing to go on.
	return Decision{Outcome: Retry, Classification: CodeUnknown,
		Reason: "the failure report has no status, error kind or provider instruction — unknown, retry" + c.ra.ignoredNote()}
}

// statusRule is rule 4: the outcome, code and label of an HTTP status that no
// header decided.
func statusRule(s int) (Outcome, string, string) {
	switch {
	case s == 408:
		return Retry, CodeRequestTimeout, "request timeout"
	case s == 425:
		return Retry, CodeTooEarly, "too early"
	case s == 429:
		return Retry, CodeThrottled, "throttled"
	case s == 501:
		return Fail, CodeNotImplemented, "not implemented"
	case s == 505:
		return Fail, CodeHTTPVersion, "HTTP version not supported"
	case s == 511:
		return Fail, CodeNetworkAuthRequired, "network authentication required"
	case s >= 500:
		return Retry, CodeServerError, "server error"
	case s >= 400:
		return Fail, CodeClientError, "client error"
	case s >= 300:
		return Fail, CodeRedirect, "redirect"
	case s >= 200:
		return Succeeded, CodeSuccess, "success"
	}
	return Fail, CodeUnexpectedStatus, "interim status reported as final"
}

// providerUnhealthy says whether an attempt counts toward the circuit. It
// looks only at what the provider did, never at the worker's decision: a
// worker that gives up on a 503 still saw an unhealthy provider, and one that
// insists on retrying a 404 did not.
//
// A 503 counts with or without a Retry-After: the hint says when to come
// back, not that the provider is well. Counted, a provider that sheds every
// call opens the circuit like one that is down, and the open circuit holds
// the backlog instead of letting each job spend its attempts on it.
func providerUnhealthy(status int, kind string, _ bool) bool {
	switch {
	case status == 408:
		return true
	case status >= 500 && status != 501 && status != 505 && status != 511:
		return true
	case status != 0:
		return false
	}
	switch kind {
	case "dns", "connect", "timeout", "reset", "tls":
		return true
	}
	return false
}

func is2xx(s int) bool { return s >= 200 && s <= 299 }

// cause is what the provider did, for rules and reasons.
type cause struct {
	status int
	kind   string
	ra     retryAfter
}

// subject names the provider's response for a reason: "HTTP 503", "no HTTP
// response (timeout error)" or "no HTTP response".
func (c cause) subject() string {
	switch {
	case c.status != 0:
		return "HTTP " + strconv.Itoa(c.status)
	case c.kind != "":
		return "no HTTP response (" + c.kind + " error)"
	}
	return "no HTTP response"
}

// retryAfter is the provider's Retry-After header as read.
type retryAfter struct {
	present bool   // the header was there
	value   string // trimmed, for reasons
	ok      bool   // it parsed
	capped  bool   // the wait was cut to MaxRetryAfterMs
	ms      int64  // the wait, when ok
}

func readRetryAfter(h map[string]string, now time.Time) retryAfter {
	raw, present := lookup(h, HeaderRetryAfter)
	if !present {
		return retryAfter{}
	}
	v := strings.Trim(raw, " \t")
	ms, ok, capped := parseRetryAfter(v, now)
	return retryAfter{present: true, value: v, ok: ok, capped: capped, ms: ms}
}

// waitClause is appended to a retry reason that also takes the header's hint.
func (ra retryAfter) waitClause() string {
	if !ra.ok {
		return ra.ignoredNote()
	}
	return fmt.Sprintf(" no sooner than %d ms (Retry-After: %s)%s", ra.ms, ra.value, ra.cappedNote())
}

func (ra retryAfter) cappedNote() string {
	if !ra.capped {
		return ""
	}
	return fmt.Sprintf(", capped at %d ms", MaxRetryAfterMs)
}

// ignoredNote tells a reader that a Retry-After header was there but invalid.
func (ra retryAfter) ignoredNote() string {
	if !ra.present || ra.ok {
		return ""
	}
	v := ra.value
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	return fmt.Sprintf(" (Retry-After %q ignored: neither delta-seconds nor an HTTP-date)", v)
}

// header returns the value of a header, "" when absent.
func header(h map[string]string, name string) string {
	v, _ := lookup(h, name)
	return v
}

// lookup finds a header by case-insensitive name. When the map holds the
// name in several spellings, their values are joined by ", " in byte order of
// the spellings, as one field with several values would be, so the result
// does not depend on map iteration order.
func lookup(h map[string]string, name string) (string, bool) {
	var keys []string
	for k := range h {
		if strings.EqualFold(strings.Trim(k, " \t"), name) {
			keys = append(keys, k)
		}
	}
	switch len(keys) {
	case 0:
		return "", false
	case 1:
		return h[keys[0]], true
	}
	sort.Strings(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = h[k]
	}
	return strings.Join(vals, ", "), true
}

// hasToken reports whether a comma-separated header value holds token,
// compared case-insensitively.
func hasToken(value, token string) bool {
	for part := range strings.SplitSeq(value, ",") {
		if strings.EqualFold(strings.Trim(part, " \t"), token) {
			return true
		}
	}
	return false
}

func validKind(k string) bool {
	for _, v := range errorKinds {
		if k == v {
			return true
		}
	}
	return false
}

// ParseErrorKind checks a worker's error kind. It accepts exactly the values
// of ErrorKinds() (lowercase, "" for none) and returns the kind unchanged.
func ParseErrorKind(s string) (string, error) {
	if validKind(s) {
		return s, nil
	}
	return "", &field.Error{Field: "errorKind", Value: strconv.Quote(s), Allowed: allowedKinds()}
}

func allowedKinds() string {
	q := make([]string, len(errorKinds))
	for i, k := range errorKinds {
		q[i] = strconv.Quote(k)
	}
	return "one of " + strings.Join(q, ", ")
}

// ValidateReport checks the fields of a report that have a range: the HTTP
// status, the error kind and the worker's minimum wait. It returns nil or an
// field.Errors listing each problem, naming the field, the value and the allowed
// range.
func ValidateReport(r Report) error {
	var es field.Errors
	if r.HTTPStatus != 0 && (r.HTTPStatus < 100 || r.HTTPStatus > 599) {
		es.Add("httpStatus", strconv.Itoa(r.HTTPStatus), "0 (no HTTP response) or an integer from 100 through 599")
	}
	if _, err := ParseErrorKind(r.ErrorKind); err != nil {
		es.Merge(err)
	}
	if r.RetryAfterMs != nil && *r.RetryAfterMs < 0 {
		es.Add("retryAfterMs", strconv.FormatInt(*r.RetryAfterMs, 10),
			fmt.Sprintf("absent or an integer >= 0 (values above %d are capped)", MaxRetryAfterMs))
	}
	return es.Err()
}
