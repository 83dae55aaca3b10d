package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// runner is one subcommand: it parses its own flags from args (what follows
// "ratchet GROUP NAME") and does the work.
type runner interface {
	Run(ctx context.Context, env *Env, args []string) error
}

// subcommand is one row of a group's table. The dispatcher finds the row by
// name and the group's help is printed from the rows, so a subcommand cannot
// be reachable without being listed, or listed without being reachable.
type subcommand struct {
	name    string
	summary string // one line: what the subcommand is for
	usage   string // what follows "ratchet GROUP NAME"; continuation lines carry their own indent
	cmd     runner
}

// group is a command made of subcommands, such as jobs or policy. Groups are
// built by functions (jobsGroup) rather than kept in variables: a
// subcommand's Run builds its group again to print the help, which keeps
// the table the only place the help comes from.
type group struct {
	name   string
	subs   []subcommand
	footer string // printed after the synopses by client groups: the flags their subcommands share
	// dispatch picks the row from args. Groups differ in what a missing
	// subcommand or --help does, and those differences are kept as they
	// were when each group was one function.
	dispatch func(ctx context.Context, env *Env, g *group, args []string) error
}

func (g *group) run(ctx context.Context, env *Env, args []string) error {
	return g.dispatch(ctx, env, g, args)
}

func (g *group) find(name string) (subcommand, bool) {
	i := slices.IndexFunc(g.subs, func(s subcommand) bool { return s.name == name })
	if i < 0 {
		return subcommand{}, false
	}
	return g.subs[i], true
}

func (g *group) names() []string {
	names := make([]string, len(g.subs))
	for i, s := range g.subs {
		names[i] = s.name
	}
	return names
}

// synopsis is how the help writes a subcommand: "jobs get ID".
func (g *group) synopsis(name string) string {
	s, _ := g.find(name)
	if s.usage == "" {
		return g.name + " " + name
	}
	return g.name + " " + name + " " + s.usage
}

// flagSet starts the flags of a subcommand whose --help shows only its own
// synopsis (policy, project).
func (g *group) flagSet(name string, env *Env) *flagSet {
	return newFlagSet(g.name+" "+name, g.synopsis(name), env.Stderr)
}

// printSummaries writes one aligned "name  summary" line per row.
func (g *group) printSummaries(w io.Writer) {
	width := 0
	for _, s := range g.subs {
		width = max(width, len(s.name))
	}
	for _, s := range g.subs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, s.name, s.summary)
	}
}

// orList joins names as prose: "show or delay", "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
