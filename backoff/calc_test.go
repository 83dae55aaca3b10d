package backoff_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/backoff"
)

func TestMulberry32Reference(t *testing.T) {
	t.Parallel()
	// First outputs of the JavaScript reference (node, mulberry32(1)).
	m := backoff.NewMulberry32(1)
	want := []float64{0.6270739405881613, 0.002735721180215478, 0.5274470399599522}
	for i, w := range want {
		if got := m.Next(); got != w {
			t.Errorf("draw %d = %v, want %v", i, got, w)
		}
	}
}

func TestCalculateValidation(t *testing.T) {
	t.Parallel()
	_, err := backoff.Calculate(backoff.CalcInput{BaseMs: 0, Multiplier: 0.5, CapMs: 10, Attempts: 16, Jitter: "half", FirstWait: "later"})
	want := []string{
		"baseMs: 0 is not allowed; must be greater than 0 and at most 1000000000000 milliseconds",
		"multiplier: 0.5 is not allowed; must be a finite number of at least 1",
		"attempts: 16 is not allowed; must be an integer from 1 through 15",
		`jitter: "half" is not allowed; must be one of none, full, equal, decorrelated`,
		`firstWait: "later" is not allowed; must be one of base, multiplied`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("got %v", err)
	}
	in := backoff.SampleInput()
	in.CapMs = 999
	if _, err := backoff.Calculate(in); err == nil || err.Error() != "capMs: 999 is not allowed; must be at least the base delay (1000) and at most 1000000000000 milliseconds" {
		t.Errorf("cap below base: %v", err)
	}
}

func TestCalculateJSON(t *testing.T) {
	t.Parallel()
	in := backoff.SampleInput()
	in.Jitter = backoff.FullJitter
	s, err := backoff.Calculate(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Rows []struct {
			WaitMs       float64 `json:"waitMs"`
			CumulativeMs float64 `json:"cumulativeMs"`
		} `json:"rows"`
		Lines []string `json:"lines"`
	}
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.Rows[1].WaitMs != 5.471 || back.Rows[1].CumulativeMs != 632.545 || len(back.Lines) != 6 {
		t.Errorf("json = %s", out)
	}
}

func TestFormatMicro(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]string{0: "0", 1: "0.001", 1000: "1", 627074: "627.074", 5470: "5.47", 10590741: "10590.741", -1500: "-1.5"} {
		if got := backoff.FormatMicro(in); got != want {
			t.Errorf("FormatMicro(%d) = %q, want %q", in, got, want)
		}
	}
}
