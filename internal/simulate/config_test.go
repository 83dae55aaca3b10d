package simulate

import (
	"strings"
	"testing"
)

func TestDefaultConfigIsTheStudy(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if p := c.Points(); len(p) != 19 || p[0] != 10 || p[18] != 190 || c.Runs != 100 || len(c.Modes) != 5 {
		t.Fatalf("points %v runs %d modes %v", p, c.Runs, c.Modes)
	}
}

func TestParseConfig(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig([]byte(`{"from":20,"to":40,"modes":["full"],"budget":{"capacity":50},"retryAfter":{"ms":100}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.From != 20 || c.Runs != 100 || c.Budget.RetryCost != 5 || c.Budget.Capacity != 50 || c.RetryAfter.Overload != 20 || c.RetryAfter.WindowMs != 100 {
		t.Fatalf("%+v %+v %+v", c, *c.Budget, *c.RetryAfter)
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"clients":3}`, `unknown field "clients"`},
		{`{"from":0}`, "from: 0 is not allowed; must be an integer from 1 through 1000 clients"},
		{`{"to":5}`, "to: 5 is not allowed; must be an integer from the first point (10) through 1000 clients"},
		{`{"modes":["fast","full","full"]}`, `modes: "fast" is not allowed; must be one of none, exponential, full, equal, decorrelated, policy, calc` + "\n" + `modes: "full" is not allowed; each mode may appear once`},
		{`{"modes":["policy"]}`, "policy: missing; mode policy needs a retry policy"},
		{`{"modes":["policy"],"policy":{"maxAttempts":11,"initialDelayMs":1000,"multiplier":2,"maxDelayMs":1000,"jitterPercent":0}}`, "policy.maxAttempts: 11 is not allowed"},
		{`{"modes":["calc"],"calc":{"baseMs":0,"multiplier":2,"capMs":10,"attempts":3,"jitter":"full","firstWait":"base"}}`, "calc.baseMs: 0 is not allowed"},
		{`{"budget":{"capacity":10,"retryCost":11}}`, "budget.retryCost: 11 is not allowed; must be an integer from 1 through the capacity (10) tokens"},
		{`{"retryAfter":{}}`, "retryAfter.ms: 0 is not allowed"},
		{`{"seed":9007199254740992}`, "seed: 9007199254740992 is not allowed"},
		{`{"from":1,"to":1000,"step":1}`, "step: 1 is not allowed; gives 1000 points from 1 to 1000; at most 100 are allowed"},
		{`{"from":1000,"to":1000,"runs":10000,"modes":["full","equal","none"]}`, "runs: 10000 is not allowed; makes 30000000 client runs"},
		{`{} {}`, "trailing data"},
	} {
		_, err := ParseConfig([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.doc, err, tc.want)
		}
	}
}

// FuzzParseConfig: any document either parses into a valid config or is
// rejected with an error; nothing panics, and a parsed config always
// validates and stays within the work limit.
func FuzzParseConfig(f *testing.F) {
	f.Add(`{}`)
	f.Add(`{"from":10,"to":190,"step":10,"runs":100,"modes":["none","full"],"seed":3}`)
	f.Add(`{"modes":["policy","calc"],"policy":{"maxAttempts":3,"initialDelayMs":1000,"multiplier":2,"maxDelayMs":5000,"jitterPercent":20},"calc":{"baseMs":5,"multiplier":2,"capMs":2000,"attempts":15,"jitter":"decorrelated","firstWait":"multiplied"}}`)
	f.Add(`{"budget":{"capacity":1e3},"retryAfter":{"ms":-1,"windowMs":1e309}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := ParseConfig([]byte(doc))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed config does not validate: %v", err)
		}
		total := 0
		for _, n := range c.Points() {
			total += n
		}
		if total*c.Runs*len(c.Modes) > MaxClientRuns {
			t.Fatal("work limit not enforced")
		}
	})
}
