package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/server"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/sqlite"
	"github.com/getratchet/ratchet/wire"
)

// The admin commands work on the database directly, without a server.

// databaseFlag registers --database, which every command that opens the
// database takes with the same default and environment variable.
func databaseFlag(f *flagSet, env *Env) *string {
	return f.String("database", envOr(env, "RATCHET_DATABASE_URL", "ratchet.db"), "SQLite file path, sqlite://PATH or postgres://URL (RATCHET_DATABASE_URL)")
}

// migrateGroup's first row is what a bare `ratchet migrate` runs.
func migrateGroup() *group {
	return &group{name: "migrate", dispatch: runMigrateGroup, subs: []subcommand{
		{"up", "apply the migrations the database lacks", "", migrateUpCommand{}},
		{"status", "list every migration and whether it is applied", "", migrateStatusCommand{}},
	}}
}

// runMigrateGroup dispatches migrate. The subcommand is optional, so flags
// may come first; the subcommands share one usage line.
func runMigrateGroup(ctx context.Context, env *Env, g *group, args []string) error {
	name := g.subs[0].name
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	s, ok := g.find(name)
	if !ok {
		return usagef("%s subcommand %q is not known; use %s", g.name, name, orList(g.names()))
	}
	return s.cmd.Run(ctx, env, args)
}

// migrateDatabase parses the flags of a migrate subcommand, which share one
// usage line, and returns the database to open.
func migrateDatabase(env *Env, args []string) (string, error) {
	g := migrateGroup()
	f := newFlagSet(g.name, g.name+" ["+strings.Join(g.names(), "|")+"] [--database URL]", env.Stderr)
	db := databaseFlag(f, env)
	if err := f.parse(args); err != nil {
		return "", err
	}
	return *db, nil
}

// migrateUpCommand is `ratchet migrate up`.
type migrateUpCommand struct{}

// Run applies what is pending and names each migration it applied.
func (migrateUpCommand) Run(ctx context.Context, env *Env, args []string) error {
	db, err := migrateDatabase(env, args)
	if err != nil {
		return err
	}
	st, err := server.OpenStore(ctx, db, "", false) // Migrate below, to print what it applied
	if err != nil {
		return err
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintln(env.Stdout, "The database is up to date.")
	}
	for _, m := range applied {
		fmt.Fprintln(env.Stdout, "applied "+m)
	}
	return nil
}

// openForStatus opens db unmigrated, so pending migrations show. Reading
// the status changes nothing: an SQLite path that is not a database (a
// missing or empty file) is refused rather than made one.
func openForStatus(ctx context.Context, db string) (store.Store, error) {
	driver, path, err := server.ParseDatabase(db)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	if driver != server.DriverSQLite {
		return server.OpenStore(ctx, db, "", false)
	}
	if err := isSQLiteFile(path); err != nil {
		return nil, usagef("--database %s: %v; nothing was changed (ratchet migrate up makes a new database)", quoteValue(db), err)
	}
	return sqlite.Open(ctx, path, sqlite.Options{Existing: true})
}

// migrateStatusCommand is `ratchet migrate status`.
type migrateStatusCommand struct{}

// Run lists the migrations without applying any.
func (migrateStatusCommand) Run(ctx context.Context, env *Env, args []string) error {
	db, err := migrateDatabase(env, args)
	if err != nil {
		return err
	}
	st, err := openForStatus(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	ms, err := st.Migrations(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tNAME\tSTATUS")
	for _, m := range ms {
		status := "pending"
		if m.Applied {
			status = "applied"
		}
		fmt.Fprintf(tw, "%04d\t%s\t%s\n", m.Version, m.Name, status)
	}
	return tw.Flush()
}

// projectGroup administers projects for hosts that serve several tenants.
func projectGroup() *group {
	return &group{name: "project", dispatch: runProjectGroup, subs: []subcommand{
		{"create", "create a project and print its owner key once", "--name NAME [--plan " + wire.Join(wire.Plans(), "|") + "] [--database URL]", projectCreateCommand{}},
	}}
}

// runProjectGroup dispatches project. Anything but a known subcommand,
// --help included, is answered with the usage as an error.
func runProjectGroup(ctx context.Context, env *Env, g *group, args []string) error {
	if len(args) > 0 {
		if s, ok := g.find(args[0]); ok {
			return s.cmd.Run(ctx, env, args[1:])
		}
	}
	lines := make([]string, len(g.subs))
	for i, s := range g.subs {
		lines[i] = "usage: ratchet " + g.synopsis(s.name)
	}
	return usagef("%s", strings.Join(lines, "\n"))
}

// projectCreateCommand is `ratchet project create`.
type projectCreateCommand struct{}

// Run works on the database directly, with no server or key, and prints the
// new project's owner key once.
func (projectCreateCommand) Run(ctx context.Context, env *Env, args []string) error {
	f := projectGroup().flagSet("create", env)
	name := f.String("name", "", "project name")
	plan := f.String("plan", string(wire.PlanFree), "plan: "+wire.JoinOr(wire.Plans()))
	db := databaseFlag(f, env)
	if err := f.parse(args); err != nil {
		return err
	}
	if *name == "" || len(*name) > 200 {
		f.fail("name", *name, "required: 1–200 characters")
	}
	if err := f.done(); err != nil {
		return err
	}
	st, err := server.OpenStore(ctx, *db, "", true)
	if err != nil {
		return err
	}
	defer st.Close()
	eng, err := engine.New(engine.Config{Store: st})
	if err != nil {
		return err
	}
	p, key, err := eng.CreateProject(ctx, *name, wire.Plan(strings.ToUpper(*plan)))
	if err != nil {
		return &UsageError{Err: err}
	}
	fmt.Fprintf(env.Stdout, "project %d %q (%s)\nowner key: %s\n", p.ID, p.Name, p.Plan, key)
	return nil
}
