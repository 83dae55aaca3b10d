package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// runHelp runs one command line in-process and returns what it printed on
// both streams: some groups print help on standard output, others as a
// usage error.
func runHelp(args ...string) string {
	var out bytes.Buffer
	Run(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out}, args)
	return out.String()
}

// TestGroupTables walks the table of every command group: each subcommand
// has a one-line summary, the group's help lists it with its synopsis, and
// the dispatcher reaches it. The help is printed from the table, so this
// guards the printing, and a group left out of commands() fails below.
func TestGroupTables(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands() {
		g := c.group
		if g == nil {
			continue
		}
		seen[g.name] = true
		t.Run(g.name, func(t *testing.T) {
			if g.name != c.name {
				t.Fatalf("command %q runs group %q", c.name, g.name)
			}
			if len(g.subs) == 0 {
				t.Fatal("the table is empty")
			}
			help := runHelp(g.name, "--help")
			names := map[string]bool{}
			for _, s := range g.subs {
				if names[s.name] {
					t.Errorf("%s appears twice in the table", s.name)
				}
				names[s.name] = true
				if s.summary == "" || strings.Contains(s.summary, "\n") || s.summary != strings.TrimSpace(s.summary) {
					t.Errorf("%s: summary %q must be one non-empty line", s.name, s.summary)
				}
				if s.cmd == nil {
					t.Errorf("%s: no command", s.name)
				}
				if !regexp.MustCompile(`(^|[\s\[|])` + regexp.QuoteMeta(s.name) + `($|[\s\]|])`).MatchString(help) {
					t.Errorf("ratchet %s --help does not list %s:\n%s", g.name, s.name, help)
				}
				if first, _, _ := strings.Cut(s.usage, "\n"); !strings.Contains(help, first) {
					t.Errorf("ratchet %s --help lacks the synopsis of %s, %q:\n%s", g.name, s.name, first, help)
				}
				if out := runHelp(g.name, s.name, "--help"); strings.Contains(out, "is not known") {
					t.Errorf("ratchet %s %s --help does not reach the subcommand:\n%s", g.name, s.name, out)
				}
			}
		})
	}
	for _, name := range []string{"migrate", "project", "policy", "endpoints", "tools", "jobs", "runs", "keys"} {
		if !seen[name] {
			t.Errorf("commands() has no group %q", name)
		}
	}
}

// TestPolicyHelpSummaries checks the one help that prints the summaries:
// bare `ratchet policy`.
func TestPolicyHelpSummaries(t *testing.T) {
	out := runHelp("policy")
	for _, s := range policyGroup().subs {
		if !regexp.MustCompile(`(?m)^  ` + s.name + ` +` + regexp.QuoteMeta(s.summary) + `$`).MatchString(out) {
			t.Errorf("ratchet policy lacks %s and its summary:\n%s", s.name, out)
		}
	}
}

// TestClientHelp pins the help of a client group byte for byte: printed
// from the table, on standard output (ratchet jobs --help exits 0).
func TestClientHelp(t *testing.T) {
	want := `Usage: ratchet jobs <subcommand>

list, read, enqueue, cancel, replay, run now and explain jobs (on a server)

Subcommands:
  ratchet jobs list [--state S[,S]] [--tool NAME[@VERSION]] [--endpoint NAME] [--run-id N] [--flow-key K]
                       [--q TEXT] [--sort ORDER] [--limit N] [--cursor C]
      list jobs a page at a time, filtered by state, tool, endpoint, run or flow key
  ratchet jobs get ID
      print a job with its policy and every attempt
  ratchet jobs enqueue --tool NAME@VERSION [--payload JSON | --payload-file FILE] [--idempotency-key K]
                       [--max-attempts N] [--run-id N] [--run-at RFC3339] [--flow-key K]
      enqueue a job for a published tool
  ratchet jobs cancel ID
      cancel a job, or ask its worker to stop
  ratchet jobs replay ID
      enqueue a finished job again as a new job
  ratchet jobs run-now ID
      make a scheduled job due now (gates still apply); owner key
  ratchet jobs explain ID
      say what holds a job back from being claimed
  ratchet jobs counts [--endpoint NAME] [--tool NAME[@VERSION]]
      count jobs in each state, of the project, one endpoint or one tool
common flags: --server URL (RATCHET_SERVER) --key KEY (RATCHET_KEY) --ca-cert FILE (RATCHET_CA_CERT) --json
`
	if got := runHelp("jobs", "--help"); got != want {
		t.Errorf("ratchet jobs --help:\n%s\nwant\n%s", got, want)
	}
}
