package deploy_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// ociImage is what the test reads back from an oci-archive.
type ociImage struct {
	config struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
		Config       struct {
			User         string
			Entrypoint   []string
			Cmd          []string
			Env          []string
			WorkingDir   string
			ExposedPorts map[string]struct{}
			Volumes      map[string]struct{}
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	files   map[string]*tar.Header // the layer's entries, without a leading slash
	content map[string][]byte
}

func untar(t *testing.T, r io.Reader) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	hdrs, bodies := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return hdrs, bodies
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(h.Name, "/")
		hdrs[name], bodies[name] = h, b
	}
}

// blob returns a blob of the layout after checking it against its digest.
func blob(t *testing.T, layout map[string][]byte, digest string) []byte {
	t.Helper()
	b, ok := layout["blobs/sha256/"+strings.TrimPrefix(digest, "sha256:")]
	if !ok {
		t.Fatalf("the archive has no blob %s", digest)
	}
	if sum := sha256.Sum256(b); "sha256:"+hex.EncodeToString(sum[:]) != digest {
		t.Fatalf("blob %s does not match its digest", digest)
	}
	return b
}

// readImage follows index.json to the manifest, the config and the one
// layer, checking every digest on the way, as a runtime loading it would.
func readImage(t *testing.T, path string) *ociImage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, layout := untar(t, f)
	type desc struct{ MediaType, Digest string }
	var index struct{ Manifests []desc }
	if err := json.Unmarshal(layout["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v %s", err, layout["index.json"])
	}
	if string(layout["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout: %s", layout["oci-layout"])
	}
	var manifest struct {
		Config desc
		Layers []desc
	}
	if err := json.Unmarshal(blob(t, layout, index.Manifests[0].Digest), &manifest); err != nil || len(manifest.Layers) != 1 {
		t.Fatalf("manifest: %v %+v", err, manifest)
	}
	img := &ociImage{}
	if err := json.Unmarshal(blob(t, layout, manifest.Config.Digest), &img.config); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob(t, layout, manifest.Layers[0].Digest)))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(raw); len(img.config.RootFS.DiffIDs) != 1 || img.config.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("rootfs.diff_ids %v do not name the layer", img.config.RootFS.DiffIDs)
	}
	img.files, img.content = untar(t, bytes.NewReader(raw))
	return img
}

// TestImage: the release's container image runs `ratchet serve` as the
// non-root user ratchet, on 0.0.0.0:8080, with its database on the volume
// /var/lib/ratchet that user owns, and holds the very binary of the
// release and the CA certificates HTTPS deliveries need.
func TestImage(t *testing.T) {
	dir := release(t)
	bin := "ratchet_" + testVersion + "_linux_" + runtime.GOARCH
	img := readImage(t, filepath.Join(dir, bin+".oci.tar"))
	c := img.config.Config
	if img.config.OS != "linux" || img.config.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s", img.config.OS, img.config.Architecture)
	}
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (not root)", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/ratchet", "serve"}) || c.Cmd != nil {
		t.Errorf("entrypoint %q cmd %q", c.Entrypoint, c.Cmd)
	}
	for _, e := range []string{"RATCHET_ADDR=0.0.0.0:8080", "RATCHET_DATABASE_URL=/var/lib/ratchet/ratchet.db"} {
		if !slices.Contains(c.Env, e) {
			t.Errorf("env %q lacks %s", c.Env, e)
		}
	}
	if _, ok := c.ExposedPorts["8080/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("exposed ports %v", c.ExposedPorts)
	}
	if _, ok := c.Volumes["/var/lib/ratchet"]; !ok || len(c.Volumes) != 1 {
		t.Errorf("volumes %v", c.Volumes)
	}

	if got := img.content["usr/local/bin/ratchet"]; sha256Hex(got) != sha256File(t, filepath.Join(dir, bin)) {
		t.Errorf("/usr/local/bin/ratchet in the image is not the release's %s", bin)
	}
	if h := img.files["usr/local/bin/ratchet"]; h == nil || h.Mode&0o111 == 0 {
		t.Errorf("/usr/local/bin/ratchet is not executable: %+v", h)
	}
	if h := img.files["var/lib/ratchet/"]; h == nil || h.Typeflag != tar.TypeDir || h.Uid != 65532 || h.Mode&0o777 != 0o700 {
		t.Errorf("/var/lib/ratchet is not a directory of 65532 with mode 0700: %+v", h)
	}
	if !strings.Contains(string(img.content["etc/passwd"]), "\nratchet:x:65532:65532:") {
		t.Errorf("/etc/passwd names no user 65532:\n%s", img.content["etc/passwd"])
	}
	if !bytes.Contains(img.content["etc/ssl/certs/ca-certificates.crt"], []byte("BEGIN CERTIFICATE")) {
		t.Error("the image has no CA certificates at /etc/ssl/certs/ca-certificates.crt")
	}
	runEntrypoint(t, img)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// runEntrypoint does what a container runtime would, without one: it
// unpacks the layer into a folder and runs the entrypoint from it with the
// image's environment, its paths under that folder and its address moved
// to loopback (a test listens nowhere else); then /healthz answers with
// the release version, and the database is on the volume.
func runEntrypoint(t *testing.T, img *ociImage) {
	rootfs := t.TempDir()
	for name, h := range img.files {
		p := filepath.Join(rootfs, name)
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, img.content[name], os.FileMode(h.Mode)&0o777); err != nil {
			t.Fatal(err)
		}
	}
	c := img.config.Config
	var env []string
	for _, e := range c.Env {
		k, v, _ := strings.Cut(e, "=")
		switch k {
		case "RATCHET_ADDR":
			v = "127.0.0.1:0"
		case "RATCHET_DATABASE_URL", "PATH":
			v = filepath.Join(rootfs, v)
		}
		env = append(env, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(rootfs, c.Entrypoint[0]), c.Entrypoint[1:]...)
	cmd.Env, cmd.Dir = env, filepath.Join(rootfs, c.WorkingDir)
	// The server prints its address on standard output.
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	listen := regexp.MustCompile(`listening on (http://\S+)`)
	sc := bufio.NewScanner(stdout)
	var url, log string
	for url == "" && sc.Scan() {
		log += sc.Text() + "\n"
		if m := listen.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if url == "" {
		t.Fatalf("the entrypoint printed no address:\n%s", log)
	}
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `{"status":"ok","version":"` + testVersion + `"}`; string(body) != want {
		t.Errorf("/healthz of the image's entrypoint: %s, want %s", body, want)
	}
	if _, err := os.Stat(filepath.Join(rootfs, "var/lib/ratchet/ratchet.db")); err != nil {
		t.Errorf("the database is not on the volume: %v", err)
	}
}
