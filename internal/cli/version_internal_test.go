package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestReadBuild: -ldflags win over the build info; a `go install` of a
// tag reads the module version without its "v"; a clone's build reads
// vcs.revision; nothing known prints "dev (commit unknown)".
func TestReadBuild(t *testing.T) {
	clone := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261205093000-0123456789ab+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.time", Value: "2026-12-05T09:30:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		name            string
		version, commit string
		info            *debug.BuildInfo
		want            string
	}{
		{"release build", "0.1.0", "fedcba9876543210fedcba9876543210fedcba98", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"ratchet 0.1.0 (commit fedcba9876543210fedcba9876543210fedcba98) go1.26.8"},
		{"release build over a clone's stamp", "0.1.0", "fedcba98", clone,
			"ratchet 0.1.0 (commit fedcba98, modified, 2026-12-05T09:30:00Z) go1.26.8"},
		{"go install of a tag", "dev", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.1.0"}},
			"ratchet 0.1.0 (commit unknown) go1.26.8"},
		{"go build in a clone", "dev", "", clone,
			"ratchet 0.0.0-20261205093000-0123456789ab+dirty (commit 0123456789abcdef0123456789abcdef01234567, modified, 2026-12-05T09:30:00Z) go1.26.8"},
		{"go run: no module version", "dev", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"ratchet dev (commit unknown) go1.26.8"},
		{"no build info", "", "", nil, "ratchet dev (commit unknown)"},
	} {
		if got := readBuild(c.version, c.commit, c.info).line(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// FuzzReadBuild: whatever -ldflags and the build info hold, the version
// line names the version and never panics.
func FuzzReadBuild(f *testing.F) {
	f.Add("0.1.0", "abc", "v1.2.3", "0123456789abcdef", "true")
	f.Add("", "", "(devel)", "", "")
	f.Add("dev", "", "v", "x", "false")
	f.Fuzz(func(t *testing.T, version, commit, modVersion, rev, modified string) {
		info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: modVersion},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}}
		b := readBuild(version, commit, info)
		if b.Version == "" {
			t.Fatalf("empty version from %q, %q", version, modVersion)
		}
		if version != "" && version != "dev" && b.Version != version {
			t.Fatalf("-ldflags version %q lost: %q", version, b.Version)
		}
		if line := b.line(); !strings.HasPrefix(line, "ratchet "+b.Version+" (commit ") || !strings.HasSuffix(line, " go1.26.8") {
			t.Fatalf("line %q", line)
		}
	})
}
