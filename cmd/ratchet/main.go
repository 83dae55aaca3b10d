// Command ratchet is the Ratchet retry scheduler: server, calculator and tools.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/getratchet/ratchet/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}
