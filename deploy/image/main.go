// Command image writes Ratchet's container image as an OCI image layout in
// a tar file (an "oci-archive"), from a ratchet binary built for Linux,
// with no Docker daemon, no registry and no base image: one layer holds
// the binary, the CA certificates HTTPS deliveries need, /etc/passwd and
// /etc/group naming the non-root user ratchet (65532), and the volume
// /var/lib/ratchet that user owns. The image runs `ratchet serve` on
// 0.0.0.0:8080 with its SQLite database on that volume. scripts/release
// runs it for each Linux target; load the file with `podman load -i` or
// `docker load -i`, or copy it to a registry with `skopeo copy
// oci-archive:FILE docker://REGISTRY/ratchet:VERSION`.
//
//	go run ./deploy/image -binary dist/ratchet_0.1.0_linux_amd64 -arch amd64 \
//	    -version 0.1.0 -commit $(git rev-parse HEAD) -o dist/ratchet_0.1.0_linux_amd64.oci.tar
//
// The output depends only on its inputs (fixed times, sorted entries), so
// the same binary makes the same image digest. Standard library only.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"
)

// The image's user, volume and address: what docs/deploy.md documents.
const (
	uid        = 65532
	volume     = "/var/lib/ratchet"
	binaryPath = "/usr/local/bin/ratchet"
	port       = "8080"
)

// epoch is the time of every file and of the image: a fixed time keeps the
// digest reproducible (the commit's time would do too, but is not known
// to a build from a source archive).
var epoch = time.Unix(0, 0).UTC()

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "", "the ratchet binary, built for linux/ARCH with CGO_ENABLED=0 (required)")
	flag.StringVar(&o.arch, "arch", "amd64", "the binary's GOARCH: amd64 or arm64")
	flag.StringVar(&o.version, "version", "", "the release version, such as 0.1.0 (required)")
	flag.StringVar(&o.commit, "commit", "", "the commit the binary was built from")
	flag.StringVar(&o.caCerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle copied into the image for HTTPS deliveries (Debian: ca-certificates)")
	flag.StringVar(&o.license, "license", "LICENSE", "the licence file copied to /usr/share/doc/ratchet/LICENSE")
	flag.StringVar(&o.out, "o", "", "the oci-archive to write (required)")
	flag.Parse()
	if err := o.write(); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

type options struct {
	binary, arch, version, commit, caCerts, license, out string
}

// file is one entry of the layer.
type file struct {
	name string // without a leading slash
	mode int64
	uid  int
	dir  bool
	body []byte
}

func (o options) files() ([]file, error) {
	if o.binary == "" || o.version == "" || o.out == "" {
		return nil, errors.New("-binary, -version and -o are required")
	}
	if o.arch != "amd64" && o.arch != "arm64" {
		return nil, fmt.Errorf("-arch %q: must be amd64 or arm64", o.arch)
	}
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(o.caCerts)
	if err != nil {
		return nil, fmt.Errorf("the CA bundle (install Debian's ca-certificates, or give -ca-certs): %w", err)
	}
	lic, err := os.ReadFile(o.license)
	if err != nil {
		return nil, err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nratchet:x:%d:%d:ratchet:%s:/sbin/nologin\n", uid, uid, volume)
	group := fmt.Sprintf("root:x:0:\nratchet:x:%d:\n", uid)
	// Parents before children, as tar readers expect.
	return []file{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, body: []byte(group)},
		{name: "etc/passwd", mode: 0o644, body: []byte(passwd)},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, body: ca},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: "usr/local/bin/ratchet", mode: 0o755, body: bin},
		{name: "usr/share/", mode: 0o755, dir: true},
		{name: "usr/share/doc/", mode: 0o755, dir: true},
		{name: "usr/share/doc/ratchet/", mode: 0o755, dir: true},
		{name: "usr/share/doc/ratchet/LICENSE", mode: 0o644, body: lic},
		{name: "var/", mode: 0o755, dir: true},
		{name: "var/lib/", mode: 0o755, dir: true},
		{name: "var/lib/ratchet/", mode: 0o700, uid: uid, dir: true},
	}, nil
}

// layer returns the layer as an uncompressed tar and gzipped.
func layer(files []file) (raw, gz []byte, err error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.uid, ModTime: epoch, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(f.body))}
		if f.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, nil, err
	}
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if _, err := zw.Write(b.Bytes()); err != nil {
		return nil, nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, nil, err
	}
	return b.Bytes(), z.Bytes(), nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int               `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    map[string]string `json:"platform,omitempty"`
}

func describe(mediaType string, b []byte) descriptor {
	return descriptor{MediaType: mediaType, Digest: digest(b), Size: len(b)}
}

// config is the image configuration: who runs what, where.
func (o options) config(diffID string) ([]byte, error) {
	labels := map[string]string{
		"org.opencontainers.image.title":    "ratchet",
		"org.opencontainers.image.version":  o.version,
		"org.opencontainers.image.revision": o.commit,
		"org.opencontainers.image.source":   "https://github.com/getratchet/ratchet",
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	return json.Marshal(map[string]any{
		"created":      epoch.Format(time.RFC3339),
		"architecture": o.arch,
		"os":           "linux",
		"config": map[string]any{
			"User":       fmt.Sprintf("%d:%d", uid, uid),
			"Entrypoint": []string{binaryPath, "serve"},
			"Env": []string{
				"PATH=/usr/local/bin",
				// Every setting is a RATCHET_* variable (docs/operations.md);
				// `docker run -e` overrides these two.
				"RATCHET_ADDR=0.0.0.0:" + port,
				"RATCHET_DATABASE_URL=" + volume + "/ratchet.db",
			},
			"WorkingDir":   volume,
			"ExposedPorts": map[string]any{port + "/tcp": struct{}{}},
			"Volumes":      map[string]any{volume: struct{}{}},
			"StopSignal":   "SIGTERM",
			"Labels":       labels,
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{diffID}},
		"history": []map[string]any{{"created": epoch.Format(time.RFC3339), "created_by": "go run ./deploy/image (ratchet " + o.version + ")"}},
	})
}

func (o options) write() error {
	files, err := o.files()
	if err != nil {
		return err
	}
	raw, gz, err := layer(files)
	if err != nil {
		return err
	}
	cfg, err := o.config(digest(raw))
	if err != nil {
		return err
	}
	layerDesc := describe("application/vnd.oci.image.layer.v1.tar+gzip", gz)
	cfgDesc := describe("application/vnd.oci.image.config.v1+json", cfg)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        cfgDesc,
		"layers":        []descriptor{layerDesc},
	})
	if err != nil {
		return err
	}
	mDesc := describe("application/vnd.oci.image.manifest.v1+json", manifest)
	mDesc.Platform = map[string]string{"architecture": o.arch, "os": "linux"}
	// ref.name is what podman load and skopeo name the image by;
	// io.containerd.image.name what docker load does.
	mDesc.Annotations = map[string]string{
		"org.opencontainers.image.ref.name": o.version,
		"io.containerd.image.name":          "docker.io/getratchet/ratchet:" + o.version,
	}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []descriptor{mDesc}})
	if err != nil {
		return err
	}
	return writeArchive(o.out, []file{
		{name: "oci-layout", mode: 0o644, body: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{name: "index.json", mode: 0o644, body: index},
		{name: "blobs/", mode: 0o755, dir: true},
		{name: "blobs/sha256/", mode: 0o755, dir: true},
		blob(manifest), blob(cfg), blob(gz),
	})
}

func blob(b []byte) file {
	return file{name: "blobs/sha256/" + digest(b)[len("sha256:"):], mode: 0o644, body: b}
}

// writeArchive writes the layout's files as a tar to path.
func writeArchive(path string, files []file) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, e := range files {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: epoch, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(e.body))}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err = tw.WriteHeader(h); err != nil {
			break
		}
		if _, err = tw.Write(e.body); err != nil {
			break
		}
	}
	if err == nil {
		err = tw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
