// Command generate writes the files Ratchet derives from its Go code:
// openapi.json, from the route table and the wire types
// (api.CheckedInDocument), and internal/web/assets/limits.js, from the
// limits, presets and enums (web.LimitsJS). It is the first step of
// scripts/generate, which then makes the TypeScript and Python SDKs' types
// from openapi.json; run that script rather than this command alone.
//
//	go run ./internal/generate [-root DIR]
//
// The directive below makes `go generate ./...` another spelling of
// scripts/generate: it is the only one in the module.
//
//go:generate ../../scripts/generate
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/getratchet/ratchet/internal/api"
	"github.com/getratchet/ratchet/internal/web"
)

func main() {
	root := flag.String("root", ".", "the root of the repository (the folder of go.mod)")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return fmt.Errorf("-root %q is not the repository root (no go.mod): %w", root, err)
	}
	doc, err := api.CheckedInDocument()
	if err != nil {
		return err
	}
	if err := write(filepath.Join(root, "openapi.json"), doc); err != nil {
		return err
	}
	return write(filepath.Join(root, "internal", "web", "assets", "limits.js"), web.LimitsJS())
}

// write replaces path with b unless it already holds b, so an unchanged
// file keeps its modification time, and says which files it wrote.
func write(path string, b []byte) error {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Println("wrote", path)
	return nil
}
