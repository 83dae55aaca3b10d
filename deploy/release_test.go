// Package deploy_test checks what a team installs: the release build
// (scripts/release), its checksums and version, the container image it
// writes (deploy/image) and the systemd unit (deploy/ratchet.service).
package deploy_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/getratchet/ratchet/internal/proctest"
)

// testVersion is a version no build carries by chance: the binary prints
// it only if -ldflags reached it.
const testVersion = "0.0.0-test.1"

// root is the repository root.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	releaseOnce sync.Once
	releaseDir  string
	releaseOut  string
	releaseErr  error
	tmpRoot     string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ratchet-deploy-test-")
	if err != nil {
		panic(err)
	}
	tmpRoot = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// release runs scripts/release testVersion for the host's linux target
// only, without the SDK packages (TestReleaseSDKPackages builds those),
// once for every test of the package, and returns its output folder.
func release(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the release test builds and runs the linux binary of this machine")
	}
	releaseOnce.Do(func() {
		releaseDir = filepath.Join(tmpRoot, "dist")
		script := filepath.Join(root(t), "scripts", "release")
		cmd := exec.Command(script, testVersion)
		cmd.Env = append(os.Environ(), "RATCHET_RELEASE_DIST="+releaseDir, "RATCHET_RELEASE_TARGETS=linux/"+runtime.GOARCH, "RATCHET_RELEASE_SDKS=0")
		out, err := proctest.CombinedOutputExclusive(cmd, script)
		releaseOut, releaseErr = string(out), err
	})
	if releaseErr != nil {
		t.Fatalf("scripts/release %s: %v\n%s", testVersion, releaseErr, releaseOut)
	}
	return releaseDir
}

// sums reads a SHA256SUMS file: "HEX  NAME" lines, as sha256sum writes.
func sums(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^([0-9a-f]{64})  (\S+)$`)
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("SHA256SUMS: %q is not a sha256sum line", sc.Text())
		}
		out[m[2]] = m[1]
	}
	return out
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// checkSums checks that SHA256SUMS lists exactly want, each with the
// SHA-256 of the file beside it.
func checkSums(t *testing.T, dir string, want ...string) {
	t.Helper()
	got := sums(t, filepath.Join(dir, "SHA256SUMS"))
	if len(got) != len(want) {
		t.Errorf("SHA256SUMS lists %d files, want %v: %v", len(got), want, got)
	}
	for _, name := range want {
		if sum, ok := got[name]; !ok {
			t.Errorf("SHA256SUMS has no line for %s", name)
		} else if file := sha256File(t, filepath.Join(dir, name)); file != sum {
			t.Errorf("SHA256SUMS says %s of %s, the file's SHA-256 is %s", sum, name, file)
		}
	}
}

// TestReleaseBinary: the release of the host's target is a static binary
// whose checksum is in SHA256SUMS and whose version line names the
// release version and the commit it was built from.
func TestReleaseBinary(t *testing.T) {
	dir := release(t)
	bin := "ratchet_" + testVersion + "_linux_" + runtime.GOARCH
	image := bin + ".oci.tar"
	checkSums(t, dir, bin, image)

	f, err := elf.Open(filepath.Join(dir, bin))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a dynamic loader: it is not static (CGO_ENABLED=0)", bin)
		}
	}
	if s := f.Section(".symtab"); s != nil {
		t.Errorf("%s has a symbol table: -ldflags -s did not reach it", bin)
	}
	f.Close()

	head, err := exec.Command("git", "-C", root(t), "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(dir, bin), "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	want := regexp.MustCompile(`^ratchet ` + regexp.QuoteMeta(testVersion) + ` \(commit ` + strings.TrimSpace(string(head)) + `(-dirty)?\) go1\.\d+(\.\d+)?\n$`)
	if !want.Match(out) {
		t.Errorf("%s version printed %q, want %s", bin, out, want)
	}
	if out2, _ := exec.Command(filepath.Join(dir, bin), "--version").Output(); !bytes.Equal(out, out2) {
		t.Errorf("--version printed %q, version %q", out2, out)
	}
}

// TestReleaseRejectsBadVersions: the script says what a version must be.
func TestReleaseRejectsBadVersions(t *testing.T) {
	for _, v := range []string{"", "1.2", "latest", "1.2.3; rm -rf /"} {
		cmd := exec.Command(filepath.Join(root(t), "scripts", "release"), v)
		cmd.Env = append(os.Environ(), "RATCHET_RELEASE_DIST="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "MAJOR.MINOR.PATCH") {
			t.Errorf("scripts/release %q: %v\n%s", v, err, out)
		}
	}
}

// TestLicenseCopies: the SDK packages ship the repository's licence, which
// npm and setuptools take only from inside the package folder.
func TestLicenseCopies(t *testing.T) {
	lic, err := os.ReadFile(filepath.Join(root(t), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(lic, []byte("Apache License\n                           Version 2.0, January 2004")) || !bytes.Contains(lic, []byte("END OF TERMS AND CONDITIONS")) {
		t.Errorf("LICENSE is not the Apache License 2.0")
	}
	for _, p := range []string{"sdk/typescript/LICENSE", "sdk/python/LICENSE"} {
		if b, err := os.ReadFile(filepath.Join(root(t), p)); err != nil || !bytes.Equal(b, lic) {
			t.Errorf("%s differs from LICENSE (%v): cp LICENSE %s", p, err, p)
		}
	}
}
