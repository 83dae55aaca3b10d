package docs_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/wire"
)

// TestStateMachinePage keeps docs/state-machine.md true: its diagram and its
// table list exactly the transitions of wire.JobTransitions.
func TestStateMachinePage(t *testing.T) {
	src, err := os.ReadFile("state-machine.md")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tr := range wire.JobTransitions {
		want = append(want, string(tr.From)+" "+string(tr.Event)+" "+string(tr.To))
	}
	slices.Sort(want)

	diagram := regexp.MustCompile(`(?m)^\s+(\w+) --> (\w+) : (\w+)$`)
	var drawn []string
	for _, m := range diagram.FindAllStringSubmatch(string(src), -1) {
		drawn = append(drawn, m[1]+" "+m[3]+" "+m[2])
	}
	slices.Sort(drawn)
	if !slices.Equal(drawn, want) {
		t.Errorf("the diagram draws\n\t%s\nthe state machine has\n\t%s", strings.Join(drawn, "\n\t"), strings.Join(want, "\n\t"))
	}

	row := regexp.MustCompile("(?m)^\\| `(\\w+)` \\| `(\\w+)` \\| `(\\w+)` \\|")
	var tabled []string
	for _, m := range row.FindAllStringSubmatch(string(src), -1) {
		tabled = append(tabled, m[1]+" "+m[2]+" "+m[3])
	}
	slices.Sort(tabled)
	if !slices.Equal(tabled, want) {
		t.Errorf("the table lists\n\t%s\nthe state machine has\n\t%s", strings.Join(tabled, "\n\t"), strings.Join(want, "\n\t"))
	}

	// Every final state is drawn as final, and no other.
	for _, s := range wire.JobStates() {
		final := strings.Contains(string(src), "    "+string(s)+" --> [*]")
		if final != s.Finished() {
			t.Errorf("state %s: drawn final %v, Finished() %v", s, final, s.Finished())
		}
	}
}
