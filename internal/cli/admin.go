package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/server"
)

const migrateUsage = "migrate [up|status] [--database URL]"

// runMigrate applies or lists the store's migrations.
func runMigrate(ctx context.Context, env *Env, args []string) error {
	sub := "up"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	if sub != "up" && sub != "status" {
		return usagef("migrate subcommand %q is not known; use up or status", sub)
	}
	f := newFlagSet("migrate", migrateUsage, env.Stderr)
	db := f.String("database", envOr(env, "RATCHET_DATABASE_URL", "ratchet.db"), "SQLite file path, sqlite://PATH or postgres://URL (RATCHET_DATABASE_URL)")
	if err := f.parse(args); err != nil {
		return err
	}
	st, err := server.OpenStore(ctx, *db, "", false)
	if err != nil {
		return err
	}
	defer st.Close()
	if sub == "up" {
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

const projectUsage = "project create --name NAME [--plan FREE|BASIC|PRO] [--database URL]"

// runProject administers projects directly on the database (for hosts that
// serve several tenants): it prints the new project's owner key once.
func runProject(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		return usagef("usage: ratchet %s", projectUsage)
	}
	f := newFlagSet("project create", projectUsage, env.Stderr)
	name := f.String("name", "", "project name")
	plan := f.String("plan", "FREE", "plan: FREE, BASIC or PRO")
	db := f.String("database", envOr(env, "RATCHET_DATABASE_URL", "ratchet.db"), "SQLite file path, sqlite://PATH or postgres://URL (RATCHET_DATABASE_URL)")
	if err := f.parse(args[1:]); err != nil {
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
	p, key, err := eng.CreateProject(ctx, *name, strings.ToUpper(*plan))
	if err != nil {
		return &UsageError{Err: err}
	}
	fmt.Fprintf(env.Stdout, "project %d %q (%s)\nowner key: %s\n", p.ID, p.Name, p.Plan, key)
	return nil
}
