// Package docs holds Ratchet's user documentation as Markdown. The pages are
// embedded so `ratchet serve` can show them at /docs with no files beside
// the binary; internal/docs renders them. The tests of this package run
// every block of the pages tagged "test" against a real server.
package docs

import "embed"

// FS holds every Markdown page of this directory.
//
//go:embed *.md
var FS embed.FS
