package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/server"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/store/sqlite"
)

const backupUsage = "backup --to FILE [--database URL]"

// runBackup is ratchet backup: an online copy of the embedded SQLite store,
// checked and counted. PostgreSQL has pg_dump, which it names rather than
// imitates.
func runBackup(ctx context.Context, env *Env, args []string) error {
	f := newFlagSet("backup", backupUsage, env.Stderr)
	to := f.String("to", "", "the new file to write the copy to; an existing file is never overwritten")
	db := databaseFlag(f, env)
	if err := f.parse(args); err != nil {
		return err
	}
	if strings.TrimSpace(*to) == "" {
		f.fail("to", *to, "required: the path of a new file for the copy")
	}
	driver, path, err := server.ParseDatabase(*db)
	if err != nil {
		return &UsageError{Err: err}
	}
	if err := f.done(); err != nil {
		return err
	}
	if driver == server.DriverPostgres {
		return usagef("--database %s is PostgreSQL; ratchet backup copies the embedded SQLite store only. Back PostgreSQL up with pg_dump:\n  pg_dump --format=custom --file %s '%s'\nand restore with pg_restore --clean --if-exists --dbname URL %s",
			server.DescribeDatabase(*db), *to, server.DescribeDatabase(*db), *to)
	}
	if _, err := os.Stat(path); err == nil { // a missing one: sqlite.Backup says so
		if err := isSQLiteFile(path); err != nil {
			return usagef("--database %s: %v; nothing was changed", quoteValue(*db), err)
		}
	}
	sum, err := sqlite.Backup(ctx, path, *to)
	if err != nil {
		return err
	}
	jobs := strconv.FormatInt(sum.Jobs, 10)
	if sum.NewestJobID > 0 {
		jobs += " (newest id " + strconv.FormatInt(sum.NewestJobID, 10) + ")"
	}
	_, err = fmt.Fprintf(env.Stdout, "backed up %s to %s: %d bytes, integrity ok\njobs:       %s\nendpoints:  %d\ntools:      %d\n",
		path, *to, sum.Bytes, jobs, sum.Endpoints, sum.Tools)
	return err
}

// keysRecoverCommand is `ratchet keys recover`: a new owner key made on the
// database directly, for a project whose owner keys are lost.
//
// It may run while a server serves the database. On SQLite the file is in
// WAL mode and every connection waits its turn to write (busy_timeout), so
// this process's one transaction is another writer beside the server's,
// as `ratchet project create` is; on PostgreSQL it is one more
// transaction. Servers read keys from the database at every request, so
// the new key works at once, on every node.
type keysRecoverCommand struct{}

// Run mints the key through the engine (as keys create does) and prints it
// once.
func (keysRecoverCommand) Run(ctx context.Context, env *Env, args []string) error {
	f := keysGroup().flagSet("recover", env)
	db := databaseFlag(f, env)
	project := f.String("project", "1", "the project to recover, by id (1 is the one ratchet serve creates first)")
	name := f.String("name", "recovered owner", "a name to recognise the new key by")
	if err := f.parse(args); err != nil {
		return err
	}
	pid := f.integer("project", *project, 1, 1<<53, "must be a project id, a positive integer")
	if len(*name) > 200 {
		f.fail("name", *name, "must be at most 200 characters")
	}
	if err := f.done(); err != nil {
		return err
	}
	st, err := openExisting(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	eng, err := engine.New(engine.Config{Store: st})
	if err != nil {
		return err
	}
	k, secret, err := eng.RecoverOwnerKey(ctx, pid, *name, whoRuns())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(env.Stdout, "created owner key %d %q in project %d (audited as key.recover). It is shown once; keep it:\n\n    %s\n", k.ID, k.Name, pid, secret)
	return err
}

// openExisting opens a database that must exist and be migrated to this
// binary's schema: recovering a key must neither create an empty
// database from a mistyped path nor migrate one under a running server of
// another version.
func openExisting(ctx context.Context, db string) (store.Store, error) {
	driver, path, err := server.ParseDatabase(db)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	if driver == server.DriverSQLite {
		if err := isSQLiteFile(path); err != nil {
			return nil, usagef("--database %s: %v; nothing was changed", quoteValue(db), err)
		}
	}
	var st store.Store
	if driver == server.DriverSQLite {
		st, err = sqlite.Open(ctx, path, sqlite.Options{Existing: true})
	} else {
		st, err = server.OpenStore(ctx, db, "", false)
	}
	if err != nil {
		return nil, err
	}
	ms, err := st.Migrations(ctx)
	if err != nil {
		st.Close()
		return nil, err
	}
	for _, m := range ms {
		if !m.Applied {
			st.Close()
			return nil, fmt.Errorf("%s lacks migration %04d_%s: run the ratchet version that serves it, or ratchet migrate up first", server.DescribeDatabase(db), m.Version, m.Name)
		}
	}
	return st, nil
}

// sqliteHeader starts every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// isSQLiteFile checks that path is an SQLite database before the driver
// opens it: SQLite takes an empty file, or a missing one, for a new
// database and writes one there (and its -wal and -shm files beside it),
// so a command that refuses would still have changed the file.
func isSQLiteFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("there is no database there: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return fmt.Errorf("%s cannot be read: %w", path, err)
	case fi.IsDir():
		return fmt.Errorf("%s is a directory, not an SQLite database", path)
	case fi.Size() == 0:
		return fmt.Errorf("%s is an empty file, not an SQLite database", path)
	}
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil || string(head) != sqliteHeader {
		return fmt.Errorf("%s is not an SQLite database (it does not start with %q)", path, strings.TrimSuffix(sqliteHeader, "\x00"))
	}
	return nil
}

// whoRuns names this process's user and machine for the audit log.
func whoRuns() string {
	who := "unknown user"
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	if h, err := os.Hostname(); err == nil {
		who += "@" + h
	}
	return who
}
