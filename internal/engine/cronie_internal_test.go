package engine

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCronMatchesCronie compares the schedule's ticks with cronie's for
// every row of testdata/cronie/table.txt (made by testdata/cronie/gen.sh
// from cronie's own parser and match rule): the same first firing times
// from 2026-01-01T00:00Z, "never" alike, and "error" refused.
func TestCronMatchesCronie(t *testing.T) {
	f, err := os.Open("../../testdata/cronie/table.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Second)
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") || sc.Text() == "" {
			continue
		}
		expr, answer, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			t.Fatalf("row %q has no tab", sc.Text())
		}
		rows++
		spec, errs := parseCron(expr, "UTC")
		if answer == "error" {
			if len(errs) == 0 {
				t.Errorf("%q: accepted, cronie refuses it", expr)
			}
			continue
		}
		if len(errs) > 0 {
			t.Errorf("%q: refused (%v), cronie accepts it", expr, errs)
			continue
		}
		var got []string
		at := start
		for range strings.Fields(answer) {
			if at = spec.next(at); at.IsZero() {
				got = append(got, "never")
				break
			}
			got = append(got, at.Format(time.RFC3339))
		}
		if g := strings.Join(got, " "); g != answer {
			t.Errorf("%q:\n got   %s\n cronie %s", expr, g, answer)
		}
	}
	if rows < 40 {
		t.Fatalf("read %d rows; the table has more", rows)
	}
}

// TestCronFieldErrors: a bad field is named with its value and what it
// allows.
func TestCronFieldErrors(t *testing.T) {
	for expr, want := range map[string]string{
		"0 9 * * 8":   `day-of-week field "8": "8" must be 0-7 (0 and 7 are Sunday) or SUN-SAT`,
		"0 9 * * 5-1": `day-of-week field "5-1": range "5-1" runs backwards`,
		"60 * * * *":  `minute field "60": "60" must be 0-59`,
		"0 9 * * *":   ``,
		"0 9 * *":     `has 4 fields; must be five cron fields`,
		"0 9 1 13 *":  `month field "13": "13" must be 1-12 or JAN-DEC`,
		"*/0 * * * *": `minute field "*/0": step "0" must be a whole number of at least 1`,
	} {
		_, errs := parseCron(expr, "UTC")
		if got := errs.Error(); want == "" && len(errs) > 0 || want != "" && !strings.Contains(got, want) {
			t.Errorf("%q: error %q, want it to contain %q", expr, got, want)
		}
	}
}
