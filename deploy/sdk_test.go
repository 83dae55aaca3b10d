package deploy_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReleaseSDKPackages: scripts/release packs the TypeScript SDK (npm
// pack) and builds the Python SDK's wheel and sdist (python3 -m build,
// offline), each carrying the licence, all in SHA256SUMS.
//
// It needs node, npm and Debian's python3-build; without them it skips,
// unless RATCHET_REQUIRE_PACKAGING is set (scripts/test sets it and
// installs python3-build when missing).
func TestReleaseSDKPackages(t *testing.T) {
	py := "python3"
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		py = "/usr/bin/python3"
	}
	_, errNpm := exec.LookPath("npm")
	errBuild := exec.Command(py, "-c", "import build, setuptools, wheel").Run()
	if errNpm != nil || errBuild != nil {
		if os.Getenv("RATCHET_REQUIRE_PACKAGING") != "" {
			t.Fatalf("npm (%v) or %s -m build (%v) is missing and RATCHET_REQUIRE_PACKAGING is set", errNpm, py, errBuild)
		}
		t.Skipf("npm (%v) or %s -m build (%v) is missing (Debian: apt-get install python3-build); ./scripts/test installs it", errNpm, py, errBuild)
	}
	var pkg struct{ Version, License string }
	b, err := os.ReadFile(filepath.Join(root(t), "sdk", "typescript", "package.json"))
	if err != nil || json.Unmarshal(b, &pkg) != nil {
		t.Fatalf("package.json: %v", err)
	}
	v := pkg.Version
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(root(t), "scripts", "release"), v)
	cmd.Env = append(os.Environ(), "RATCHET_RELEASE_DIST="+dir, "RATCHET_RELEASE_TARGETS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release %s: %v\n%s", v, err, out)
	}
	tgz, whl, sdist := "ratchet-sdk-"+v+".tgz", "ratchet_sdk-"+v+"-py3-none-any.whl", "ratchet_sdk-"+v+".tar.gz"
	checkSums(t, dir, tgz, whl, sdist)

	npm := tarGz(t, filepath.Join(dir, tgz))
	if !bytes.HasPrefix(npm["package/LICENSE"], []byte("\n                                 Apache License")) {
		t.Errorf("%s has no LICENSE", tgz)
	}
	if err := json.Unmarshal(npm["package/package.json"], &pkg); err != nil || pkg.License != "Apache-2.0" {
		t.Errorf("%s: package.json license %q (%v)", tgz, pkg.License, err)
	}
	if _, ok := npm["package/dist/index.js"]; !ok {
		t.Errorf("%s has no dist/index.js: npm pack did not build it", tgz)
	}

	zr, err := zip.OpenReader(filepath.Join(dir, whl))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	wheel := map[string][]byte{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		wheel[f.Name], _ = io.ReadAll(r)
		r.Close()
	}
	info := "ratchet_sdk-" + v + ".dist-info/"
	if !regexp.MustCompile(`(?m)^License: Apache-2\.0$`).Match(wheel[info+"METADATA"]) || !strings.Contains(string(wheel[info+"METADATA"]), "Classifier: License :: OSI Approved :: Apache Software License") {
		t.Errorf("%s METADATA does not name Apache-2.0:\n%s", whl, wheel[info+"METADATA"])
	}
	if _, ok := wheel[info+"LICENSE"]; !ok {
		t.Errorf("%s has no %sLICENSE", whl, info)
	}
	if _, ok := wheel["ratchet/client.py"]; !ok {
		t.Errorf("%s has no ratchet/client.py", whl)
	}
	// PEP 625: the sdist is named after the normalized project name,
	// underscores for dashes, and holds one directory of the same name.
	src := tarGz(t, filepath.Join(dir, sdist))
	top := "ratchet_sdk-" + v + "/"
	for name := range src {
		if !strings.HasPrefix(name, top) {
			t.Errorf("%s holds %s, outside its top directory %s (PEP 625)", sdist, name, top)
		}
	}
	if _, ok := src[top+"LICENSE"]; !ok {
		t.Errorf("%s has no %sLICENSE", sdist, top)
	}
	// The Python build ran on a copy: nothing is left in the tree.
	for _, p := range []string{"sdk/python/build", "sdk/python/ratchet_sdk.egg-info"} {
		if _, err := os.Stat(filepath.Join(root(t), p)); err == nil {
			t.Errorf("scripts/release left %s in the tree", p)
		}
	}
}

// tarGz reads a .tar.gz into a map of names to contents.
func tarGz(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name], _ = io.ReadAll(tr)
	}
}
