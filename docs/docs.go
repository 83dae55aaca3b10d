// Package docs holds Ratchet's user documentation as Markdown. The pages are
// embedded so `ratchet serve` can show them at /docs with no files beside
// the binary; internal/docs renders them. The tests of this package run
// every block of the pages tagged "test" against a real server.
package docs

import (
	"embed"
	"regexp"
)

// FS holds every Markdown page of this directory.
//
//go:embed *.md
var FS embed.FS

// Placeholder matches a test placeholder such as <TIME>: in the expected
// output of a page's console block it stands for text that differs from
// run to run (times, keys, durations), and the tests match any text there.
var Placeholder = regexp.MustCompile(`<[A-Z][A-Z_]*>`)

// Examples is what a reader sees in place of each placeholder on the
// served pages: real-looking output, as a run could print it. A page may
// use only placeholders listed here (a test checks).
var Examples = map[string]string{
	"TIME":       "2026-12-05T09:30:00.000Z",
	"MS":         "4",
	"KEY":        "rk_5e0f9c2d7a4b81e36c9d0a2f4b7e1c8d3a6f9b2e5c8d1a4f7b0e3c6d9a2f5b8e",
	"PROVIDER":   "http://127.0.0.1:9000",
	"MESSAGE":    "HTTP 200 — succeeded",
	"SCHEMA_URL": "mem://ratchet/payload-schema.json",
	"VERSION":    "0.1.0",
	"COMMIT":     "3f2c1a9e5b7d4c8f0a6e2b1d9c7f5a3e8b4d6c2a",
	"GO":         "go1.26.8",
	"BYTES":      "270336",
	"PATH":       "/var/lib/ratchet",
	"PORT":       "8080",
	"WORKER":     "ratchet-delivery/ratchet-1/6f1c3292",
	"ID":         "4",
	"IDS":        "7, 8, 9, 10",
	"COUNT":      "0",
	"SECRET":     "whsec_Mj5tN3J0cVh2bEE4c0Q5ZkcxaEsyelc2eVAwdVI0ZUI=",
}

// Readable returns a page with each placeholder replaced by its example,
// for readers; the tests read the page as it is. An unknown placeholder is
// left as it is.
func Readable(src []byte) []byte {
	return Placeholder.ReplaceAllFunc(src, func(m []byte) []byte {
		if ex, ok := Examples[string(m[1:len(m)-1])]; ok {
			return []byte(ex)
		}
		return m
	})
}
