package cli

import (
	"context"
	"log/slog"

	"github.com/getratchet/ratchet/internal/server"
)

const serveUsage = "serve [--addr HOST:PORT]"

func runServe(ctx context.Context, env *Env, args []string) error {
	f := newFlagSet("serve", serveUsage, env.Stderr)
	addr := f.String("addr", envOr(env, "RATCHET_ADDR", "127.0.0.1:8080"), "listen address (RATCHET_ADDR)")
	if err := f.parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	return server.Run(ctx, server.Config{Addr: *addr}, env.Stdout, log)
}

func envOr(env *Env, name, def string) string {
	if v := env.Getenv(name); v != "" {
		return v
	}
	return def
}
