package backoff_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/backoff"
)

// vectors is testdata/vectors.json: the golden cases shared with the browser
// tests. Seed cases are copied from the source documents; the rest come from
// the independent JavaScript reference in testdata/reference.mjs.
type vectors struct {
	Calculator []struct {
		Name   string            `json:"name"`
		Source string            `json:"source"`
		Input  backoff.CalcInput `json:"input"`
		Lines  []string          `json:"lines"`
	} `json:"calculator"`
	PolicyDelay []struct {
		Name         string          `json:"name"`
		Source       string          `json:"source"`
		Policy       json.RawMessage `json:"policy"`
		Attempt      int             `json:"attempt"`
		Sample       float64         `json:"sample"`
		RetryAfterMs int64           `json:"retryAfterMs"`
		Exhausted    bool            `json:"exhausted"`
		BaseDelayMs  *float64        `json:"baseDelayMs"`
		MinDelayMs   *int64          `json:"minDelayMs"`
		MaxDelayMs   *int64          `json:"maxDelayMs"`
		SelectedMs   int64           `json:"selectedMs"`
	} `json:"policyDelay"`
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	data, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVectorsCalculator(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	seeds := 0
	for _, c := range v.Calculator {
		if c.Source == "seed 001" {
			seeds++
		}
		s, err := backoff.Calculate(c.Input)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		got, want := strings.Join(s.Lines(), "\n"), strings.Join(c.Lines, "\n")
		if got != want {
			t.Errorf("%s (%s):\ngot\n%s\nwant\n%s", c.Name, c.Source, got, want)
		}
	}
	if seeds != 6 {
		t.Errorf("vectors hold %d blocks from seed 001, want all 6", seeds)
	}
	if len(v.Calculator) < 50 {
		t.Errorf("only %d calculator vectors", len(v.Calculator))
	}
}

func TestVectorsPolicyDelay(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	for _, c := range v.PolicyDelay {
		p, err := backoff.ParsePolicy(c.Policy)
		if err != nil {
			t.Errorf("%s: policy: %v", c.Name, err)
			continue
		}
		d, err := p.Params().Delay(c.Attempt, c.Sample, c.RetryAfterMs)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if d.Exhausted != c.Exhausted {
			t.Errorf("%s: exhausted = %v, want %v", c.Name, d.Exhausted, c.Exhausted)
			continue
		}
		if c.Exhausted {
			continue
		}
		if d.SelectedMs != c.SelectedMs {
			t.Errorf("%s: selected %d ms, want %d", c.Name, d.SelectedMs, c.SelectedMs)
		}
		if c.BaseDelayMs != nil && d.BaseDelayMs != *c.BaseDelayMs {
			t.Errorf("%s: base %v ms, want %v", c.Name, d.BaseDelayMs, *c.BaseDelayMs)
		}
		if c.MinDelayMs != nil && (d.MinDelayMs != *c.MinDelayMs || d.MaxDelayMs != *c.MaxDelayMs) {
			t.Errorf("%s: range %d–%d, want %d–%d", c.Name, d.MinDelayMs, d.MaxDelayMs, *c.MinDelayMs, *c.MaxDelayMs)
		}
	}
}

// TestVectorsAreWhatReferenceMakes fails when testdata/vectors.json is not
// what testdata/reference.mjs prints now (reference.mjs or seedcases.json
// changed without regenerating). It needs node, and skips without it.
func TestVectorsAreWhatReferenceMakes(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the JavaScript reference cannot run (install Node.js 20+ to check testdata/vectors.json)")
	}
	got, err := exec.Command(node, filepath.Join("testdata", "reference.mjs")).Output()
	if err != nil {
		t.Fatalf("node testdata/reference.mjs: %v", err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("backoff/testdata/vectors.json is stale: it is not what testdata/reference.mjs makes from seedcases.json; run\n\tscripts/generate\n(or go generate ./...) and commit the result")
	}
}
