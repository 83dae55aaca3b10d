package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestSystemdUnit checks deploy/ratchet.service with systemd-analyze: it
// must verify without a word (an unknown or misspelt setting is only a
// warning there, so any output fails), its exposure score must stay low
// (the hardening is in force), and the settings docs/deploy.md promises
// must be there. verify checks that ExecStart's binary exists, so the
// check runs on a copy whose ExecStart names the release binary.
//
// Without systemd-analyze it skips, unless RATCHET_REQUIRE_SYSTEMD is set
// (scripts/test sets it, and installs Debian's systemd when missing).
func TestSystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("RATCHET_REQUIRE_SYSTEMD") != "" {
			t.Fatal("systemd-analyze is missing and RATCHET_REQUIRE_SYSTEMD is set (Debian: apt-get install systemd)")
		}
		t.Skip("systemd-analyze is missing (Debian: apt-get install systemd); ./scripts/test installs it")
	}
	src, err := os.ReadFile(filepath.Join(root(t), "deploy", "ratchet.service"))
	if err != nil {
		t.Fatal(err)
	}
	unit := string(src)
	for _, want := range []string{"ExecStart=/usr/local/bin/ratchet serve\n", "DynamicUser=yes\n", "StateDirectory=ratchet\n",
		"Environment=RATCHET_DATABASE_URL=/var/lib/ratchet/ratchet.db\n", "EnvironmentFile=-/etc/ratchet/ratchet.env\n",
		"Restart=on-failure\n", "ProtectSystem=strict\n", "NoNewPrivileges=yes\n", "CapabilityBoundingSet=\n"} {
		if !strings.Contains(unit, "\n"+want) {
			t.Errorf("deploy/ratchet.service lacks the line %q", strings.TrimSpace(want))
		}
	}
	bin := "ratchet_" + testVersion + "_linux_" + runtime.GOARCH
	path := filepath.Join(t.TempDir(), "ratchet.service")
	unit = strings.Replace(unit, "ExecStart=/usr/local/bin/ratchet ", "ExecStart="+filepath.Join(release(t), bin)+" ", 1)
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(analyze, "verify", path).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err := exec.Command(analyze, "security", "--offline=yes", "--no-pager", path).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for ratchet\.service: (\d+\.\d+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	// 0 is a unit that can do nothing, 10 one without any hardening;
	// systemd calls up to 2.0 "OK". This unit scores 1.1.
	if score, _ := strconv.ParseFloat(string(m[1]), 64); score > 2.0 {
		t.Errorf("systemd-analyze security: exposure %s, above 2.0 (OK):\n%s", m[1], out)
	}
}

// TestSystemdUnitNamesRealSettings: the variables the unit sets are ones
// `ratchet serve` reads.
func TestSystemdUnitNamesRealSettings(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root(t), "deploy", "ratchet.service"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(release(t), "ratchet_"+testVersion+"_linux_"+runtime.GOARCH)
	help, _ := exec.Command(bin, "serve", "--help").CombinedOutput()
	vars := regexp.MustCompile(`(?m)^Environment=(RATCHET_[A-Z_]+)=`).FindAllStringSubmatch(string(src), -1)
	if len(vars) < 2 {
		t.Fatalf("the unit sets %d RATCHET_ variables, want the address and the database", len(vars))
	}
	for _, v := range vars {
		if !strings.Contains(string(help), "("+v[1]+")") {
			t.Errorf("the unit sets %s, which ratchet serve --help does not name:\n%s", v[1], help)
		}
	}
}
