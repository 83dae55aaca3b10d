package classify_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/classify"
)

// docTable returns the rows of the table under the heading of
// docs/errors.md, each a list of its cells without the backticks.
func docTable(t *testing.T, heading string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("docs/errors.md has no section %q", heading)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var rows [][]string
	for _, l := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "|---") {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(l, "|"), "|") {
			cells = append(cells, strings.Trim(strings.TrimSpace(c), "`"))
		}
		rows = append(rows, cells)
	}
	if len(rows) < 3 {
		t.Fatalf("docs/errors.md, %s: found %d table rows", heading, len(rows))
	}
	return rows[1:] // the header row
}

var docNow = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func yes(counts bool) string {
	if counts {
		return "yes"
	}
	return "no"
}

// TestStatusTableMatchesDocs reads the table of status codes in
// docs/errors.md and checks every status from 100 to 599 against
// Classify: the outcome, the classification and whether it counts toward
// the circuit are those of the row that names the status, or of the row
// for its class (5xx, 3xx, "any other 4xx", 1xx).
func TestStatusTableMatchesDocs(t *testing.T) {
	exact := map[int][]string{}
	class := map[int][]string{}
	num := regexp.MustCompile(`\b([1-5]\d\d)\b`)
	cls := regexp.MustCompile(`\b([1-5])xx\b`)
	for _, row := range docTable(t, "Status codes") {
		if len(row) != 4 {
			t.Fatalf("row %q: want 4 cells", row)
		}
		for _, m := range num.FindAllStringSubmatch(row[0], -1) {
			n, _ := strconv.Atoi(m[1])
			exact[n] = row
		}
		for _, m := range cls.FindAllStringSubmatch(row[0], -1) {
			n, _ := strconv.Atoi(m[1])
			class[n] = row
		}
	}
	class[2] = []string{"2xx", "succeeded", "success", "no"} // rule 2 of the decision order, before the status table
	for s := 100; s <= 599; s++ {
		row, ok := exact[s]
		if !ok {
			row, ok = class[s/100]
		}
		if !ok {
			t.Errorf("status %d: no row of docs/errors.md covers it", s)
			continue
		}
		d := classify.Classify(classify.Report{HTTPStatus: s}, docNow)
		if string(d.Outcome) != row[1] || d.Classification != row[2] || yes(d.CountsTowardCircuit) != row[3] {
			t.Errorf("status %d: Classify says %s, %s, counts %s; docs/errors.md's row %q says %s, %s, counts %s",
				s, d.Outcome, d.Classification, yes(d.CountsTowardCircuit), row[0], row[1], row[2], row[3])
		}
	}
}

// TestNetworkTableMatchesDocs checks each row of the network errors table
// of docs/errors.md against Classify, and that every error kind the code
// knows has a row.
func TestNetworkTableMatchesDocs(t *testing.T) {
	rows := map[string]bool{}
	for _, row := range docTable(t, "Network errors") {
		if len(row) != 4 {
			t.Fatalf("row %q: want 4 cells", row)
		}
		rows[row[0]] = true
		d := classify.Classify(classify.Report{ErrorKind: row[0]}, docNow)
		if d.Outcome != classify.Retry || d.Classification != row[2] || yes(d.CountsTowardCircuit) != row[3] {
			t.Errorf("kind %s: Classify says %s, %s, counts %s; docs/errors.md says retry, %s, counts %s",
				row[0], d.Outcome, d.Classification, yes(d.CountsTowardCircuit), row[2], row[3])
		}
	}
	for _, k := range classify.ErrorKinds() {
		if k != "" && !rows[k] {
			t.Errorf("error kind %q has no row in docs/errors.md", k)
		}
	}
}

// TestDecisionOrderMatchesDocs runs one report per row of the decision
// order in docs/errors.md and checks the row's outcome and classification.
// A row added to the page without a report here fails, as does a report
// whose row is gone.
func TestDecisionOrderMatchesDocs(t *testing.T) {
	f, tr := false, true
	ms := int64(90000)
	reports := map[string]classify.Report{
		"0":  {Success: true, HTTPStatus: 204},
		"1a": {Retryable: &f, HTTPStatus: 503},
		"1b": {RetryAfterMs: &ms, HTTPStatus: 404},
		"1c": {Retryable: &tr, HTTPStatus: 404},
		"2":  {HTTPStatus: 201},
		"3a": {HTTPStatus: 500, Headers: map[string]string{"Webhook-Delivery": "abort-message"}},
		"3b": {HTTPStatus: 500, Headers: map[string]string{"stripe-should-retry": "false"}},
		"3c": {HTTPStatus: 400, Headers: map[string]string{"Stripe-Should-Retry": "true"}},
		"3d": {HTTPStatus: 403, Headers: map[string]string{"Retry-After": "120"}},
		"5":  {ErrorKind: "dns"},
		"6":  {},
	}
	special := map[string]classify.Decision{
		"timed_out":       classify.LeaseExpired(),
		"request_invalid": classify.RequestInvalid("a URL template that renders no URL"),
	}
	seen := map[string]bool{}
	for _, row := range docTable(t, "Decision order") {
		if len(row) != 5 {
			t.Fatalf("row %q: want 5 cells", row)
		}
		n, out, code := row[0], row[2], row[3]
		if n == "4" {
			seen[n] = true
			continue // the status table, checked row by row in TestStatusTableMatchesDocs
		}
		var d classify.Decision
		if n == "—" {
			var ok bool
			if d, ok = special[code]; !ok {
				t.Errorf("row %q: no decision of the code for %s", row[1], code)
				continue
			}
		} else {
			r, ok := reports[n]
			if !ok {
				t.Errorf("row %s of docs/errors.md (%s): no report for it in this test", n, row[1])
				continue
			}
			d = classify.Classify(r, docNow)
		}
		seen[n+code] = true
		seen[n] = true
		if string(d.Outcome) != out || strings.TrimPrefix(d.Classification, "network_dns") != strings.TrimPrefix(code, "network_<kind>") {
			t.Errorf("row %s (%s): Classify says %s, %s; docs/errors.md says %s, %s", n, row[1], d.Outcome, d.Classification, out, code)
		}
	}
	for n := range reports {
		if !seen[n] {
			t.Errorf("rule %s has a report here but no row in docs/errors.md", n)
		}
	}
}

// TestQuotaReasonsMatchDocs: the reasons table of "Rate-limit headers
// Ratchet reads" lists exactly QuotaIgnoreReasons, and every example
// written as `Header: value` is refused by ReadQuota for its row's reason.
func TestQuotaReasonsMatchDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Rate-limit headers Ratchet reads\n")
	if !ok {
		t.Fatal(`docs/errors.md has no section "Rate-limit headers Ratchet reads"`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	span := regexp.MustCompile("`([^`]+)`")
	var listed []string
	for _, l := range strings.Split(sec, "\n") {
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if !strings.HasPrefix(l, "| `") || len(cells) != 2 {
			continue
		}
		reason := strings.Trim(strings.TrimSpace(cells[0]), "`")
		if !slices.Contains(classify.QuotaIgnoreReasons(), reason) {
			continue // a row of the families table
		}
		listed = append(listed, reason)
		h := map[string]string{}
		for _, m := range span.FindAllStringSubmatch(cells[1], -1) {
			if name, value, ok := strings.Cut(m[1], ": "); ok {
				h[name] = value
			}
		}
		if len(h) == 0 {
			continue
		}
		if _, _, ignored := classify.ReadQuota(h, docNow); !slices.Contains(ignored, reason) {
			t.Errorf("docs/errors.md gives %v as %s; ReadQuota ignored %q", h, reason, ignored)
		}
	}
	if !slices.Equal(listed, classify.QuotaIgnoreReasons()) {
		t.Errorf("docs/errors.md lists reasons %q; QuotaIgnoreReasons is %q", listed, classify.QuotaIgnoreReasons())
	}
}
