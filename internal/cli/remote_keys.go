package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/getratchet/ratchet/wire"
)

func keysGroup() *group {
	return &group{name: "keys", dispatch: runClientGroup, footer: commonFlagsHelp, subs: []subcommand{
		{"list", "list API keys, revoked ones included", "", keysListCommand{}},
		{"create", "create an API key and print its secret once", "--scope " + wire.Join(wire.Scopes(), "|") + " [--name NAME] [--tool NAME@VERSION ...]", keysCreateCommand{}},
		{"revoke", "revoke an API key", "ID", keysRevokeCommand{}},
		{"recover", "offline, on the database (no server or key): create a new owner key when every one is lost; audited", "[--database URL] [--project ID] [--name NAME]", keysRecoverCommand{}},
	}}
}

// keyFlags are the flags of keys create. list and revoke accept them as well
// because the keys commands always have.
type keyFlags struct {
	scope, name *string
	tools       stringList
}

func addKeyFlags(f *flagSet) *keyFlags {
	kf := &keyFlags{
		scope: f.String("scope", "", "create: "+wire.JoinOr(wire.Scopes())),
		name:  f.String("name", "", "create: a name to recognise the key by"),
	}
	f.fs.Var(&kf.tools, "tool", "create: a tool@version a worker key may run (repeat the flag for more)")
	return kf
}

// keysListCommand is `ratchet keys list`.
type keysListCommand struct{}

// Run lists keys by prefix only: a secret is shown once, at create.
func (keysListCommand) Run(ctx context.Context, env *Env, args []string) error {
	r, err := connectClient(keysGroup(), "list", env, args, func(f *flagSet) { addKeyFlags(f) })
	if err != nil {
		return err
	}
	ks, err := r.c.ListKeys(ctx)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintln(w, "ID\tNAME\tSCOPE\tPREFIX\tTOOLS\tCREATED\tREVOKED")
		for _, k := range ks {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s…\t%s\t%s\t%s\n", k.ID, orDash(k.Name), k.Scope, k.Prefix, orDash(strings.Join(k.Tools, ",")), k.CreatedAt, orDash(k.RevokedAt))
		}
	})
}

// keysCreateCommand is `ratchet keys create`.
type keysCreateCommand struct{}

// Run checks the scope before the request, so a typo is a usage error
// naming --scope rather than the server's 400.
func (keysCreateCommand) Run(ctx context.Context, env *Env, args []string) error {
	f, rf := clientFlags(keysGroup(), "create", env)
	kf := addKeyFlags(f)
	if err := f.parse(args); err != nil {
		return err
	}
	if !slices.Contains(wire.Scopes(), wire.Scope(*kf.scope)) {
		f.fail("scope", *kf.scope, "required: "+wire.JoinOr(wire.Scopes()))
	}
	r, err := rf.connect(f, env)
	if err != nil {
		return err
	}
	k, err := r.c.CreateKey(ctx, *kf.name, wire.Scope(*kf.scope), kf.tools)
	if err != nil {
		return r.fail(err)
	}
	return r.show(func(w io.Writer) {
		fmt.Fprintf(w, "created %s key %d", k.Scope, k.ID)
		if len(k.Tools) > 0 {
			fmt.Fprintf(w, " for %s", strings.Join(k.Tools, ", "))
		}
		fmt.Fprintf(w, ". It is shown once; keep it:\n\n    %s\n", k.Secret)
	})
}

// keysRevokeCommand is `ratchet keys revoke`.
type keysRevokeCommand struct{}

// Run prints nothing with --json: the API answers 204 with no body.
func (keysRevokeCommand) Run(ctx context.Context, env *Env, args []string) error {
	id, r, err := connectID(keysGroup(), "revoke", env, args, func(f *flagSet) { addKeyFlags(f) })
	if err != nil {
		return err
	}
	if err := r.c.RevokeKey(ctx, id); err != nil {
		return r.fail(err)
	}
	if r.asJSON {
		return nil // the API answers 204 with no body
	}
	_, err = fmt.Fprintf(r.out, "revoked key %d\n", id)
	return err
}
