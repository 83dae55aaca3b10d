package cli

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

// Version is Ratchet's version. A release build sets it with
//
//	-ldflags "-X github.com/getratchet/ratchet/internal/cli.Version=0.1.0"
//
// (scripts/release). Left at "dev", it is resolved when the program starts
// from the module version the Go toolchain stamped into the binary:
// v0.1.0 for `go install github.com/getratchet/ratchet/cmd/ratchet@v0.1.0`,
// a pseudo-version such as v0.0.0-20261205093000-0123456789ab for a build
// from a clone. The leading "v" is dropped either way, so a release and a
// `go install` of the same tag print the same version. `ratchet serve`
// puts it in /healthz and in the info.version of /openapi.json.
var Version = "dev"

// Commit is the commit a release was built from, set with
// -ldflags "-X github.com/getratchet/ratchet/internal/cli.Commit=<sha>".
// Left empty, it is resolved from the vcs.revision the Go toolchain
// stamps into a build from a git checkout (a `go install` of a module
// version has none, and then it stays empty).
var Commit = ""

func init() {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	build = readBuild(Version, Commit, info)
	Version, Commit = build.Version, build.Commit
}

// build is what this binary knows of its own build, resolved at start.
var build buildInfo

// buildInfo is what a binary knows of its own build.
type buildInfo struct {
	Version  string // the release version, else the module version without its "v", else "dev"
	Commit   string // the release's commit, else vcs.revision; "" when unknown
	Time     string // vcs.time: the commit's time, when the toolchain stamped it
	Modified bool   // vcs.modified: built from a tree with uncommitted changes
	Go       string // the Go toolchain, e.g. go1.26.8; "" when unknown
}

// readBuild resolves the version and commit: what -ldflags set wins, then
// the build info (nil when the binary carries none).
func readBuild(version, commit string, info *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: version, Commit: commit}
	if b.Version == "" {
		b.Version = "dev"
	}
	if info == nil {
		return b
	}
	b.Go = info.GoVersion
	if mv := strings.TrimPrefix(info.Main.Version, "v"); b.Version == "dev" && mv != "" && mv != "(devel)" {
		b.Version = mv
	}
	var rev string
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.time":
			b.Time = kv.Value
		case "vcs.modified":
			b.Modified = kv.Value == "true"
		}
	}
	if b.Commit == "" {
		b.Commit = rev
	}
	return b
}

// line is what `ratchet version` prints:
//
//	ratchet VERSION (commit COMMIT[, modified][, TIME]) GO
//
// with "commit unknown" when there is none, and the whole commit hash so
// that it can be looked up.
func (b buildInfo) line() string {
	var detail []string
	if b.Commit != "" {
		detail = append(detail, "commit "+b.Commit)
	} else {
		detail = append(detail, "commit unknown")
	}
	if b.Modified {
		detail = append(detail, "modified")
	}
	if b.Time != "" {
		detail = append(detail, b.Time)
	}
	line := "ratchet " + b.Version + " (" + strings.Join(detail, ", ") + ")"
	if b.Go != "" {
		line += " " + b.Go
	}
	return line
}

func runVersion(_ context.Context, env *Env, _ []string) error {
	_, err := fmt.Fprintln(env.Stdout, build.line())
	return err
}
