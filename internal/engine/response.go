package engine

import (
	"encoding/json"
	"strings"

	"github.com/getratchet/ratchet/internal/classify"
)

// maxResponseInMessage bounds the part of a failed delivery's message
// that quotes the response body: enough for a provider's error code and
// sentence, short enough for a list row and a failure fingerprint
// (classify.MaxFingerprintLen) to still show the decision before it.
const maxResponseInMessage = 300

// withResponse is a failed delivery's message: the decision's reason (or
// the dispatcher's note), then what the provider answered, so the job's
// last error, its failure group and search all read the provider's words
// ("HTTP 400 — client error, fail; the response: invalid_recipient: …").
func withResponse(msg string, d classify.Decision, excerpt string) string {
	if msg == "" {
		msg = d.Reason
	}
	text := responseText(excerpt)
	if text == "" || d.Outcome == classify.Succeeded {
		return msg
	}
	return msg + "; the response: " + text
}

// responseText is a response body's start as one line: a JSON document
// as "path: value" pairs in document order ("error.code: plan_exhausted,
// error.message: …"), so quoting does not hide the words from a
// fingerprint (which folds quoted values); any other body with its white
// space folded. At most maxResponseInMessage bytes.
func responseText(body string) string {
	body = strings.TrimSpace(CleanText(body))
	if body == "" {
		return ""
	}
	text := strings.Join(strings.Fields(body), " ")
	if strings.HasPrefix(body, "{") || strings.HasPrefix(body, "[") {
		if pairs, ok := jsonPairs(body); ok && len(pairs) > 0 {
			text = strings.Join(pairs, ", ")
		}
	}
	if len(text) > maxResponseInMessage {
		text = strings.TrimSpace(truncate(text, maxResponseInMessage-len("…"))) + "…"
	}
	return text
}

// jsonPairs lists a JSON document's scalar values with their paths; ok is
// false when body is not one complete JSON document (a body cut at the
// excerpt's bound is shown as text).
func jsonPairs(body string) (pairs []string, ok bool) {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := jsonWalk(dec, "", &pairs, 0); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // more than one document
	}
	return pairs, true
}

// maxJSONDepth bounds jsonWalk's recursion; a deeper body is shown as text.
const maxJSONDepth = 32

var errTooDeep = &json.UnsupportedValueError{Str: "nested deeper than the message shows"}

func jsonWalk(dec *json.Decoder, path string, pairs *[]string, depth int) error {
	if depth > maxJSONDepth {
		return errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		for dec.More() {
			sub := path
			if v == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				sub = strings.TrimPrefix(path+"."+k.(string), ".")
			}
			if err := jsonWalk(dec, sub, pairs, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	case string:
		*pairs = append(*pairs, pair(path, strings.Join(strings.Fields(v), " ")))
	case json.Number:
		*pairs = append(*pairs, pair(path, v.String()))
	case bool:
		*pairs = append(*pairs, pair(path, map[bool]string{true: "true", false: "false"}[v]))
	case nil:
		*pairs = append(*pairs, pair(path, "null"))
	}
	return nil
}

func pair(path, value string) string {
	if path == "" {
		return value
	}
	return path + ": " + value
}
