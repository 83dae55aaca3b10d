package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/proctest"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ratchet test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// leaf issues a server certificate for 127.0.0.1 with the given serial
// number and returns it and its key, PEM encoded.
func (ca *testCA) leaf(t *testing.T, serial int64) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// replaceFile writes b to path through a rename, as certificate renewers do.
func replaceFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path+".new", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// servedSerial opens a new TLS connection to url trusting only ca and
// returns the serial number of the certificate the server showed.
func servedSerial(t *testing.T, url string, ca *testCA) string {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := hc.Get(url + "/healthz")
	if err != nil {
		t.Fatalf("GET %s/healthz trusting the test CA: %v", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Fatalf("GET /healthz: %s, TLS %v", resp.Status, resp.TLS != nil)
	}
	return resp.TLS.PeerCertificates[0].SerialNumber.String()
}

// waitForLog waits up to 10 s for a line of the server's output holding
// every one of parts.
func waitForLog(t *testing.T, srv *proctest.Server, parts ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range strings.Split(srv.Output.String(), "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(l, p)
			}
			if all {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no log line with %q within 10 s:\n%s", parts, srv.Output.String())
}

// TestTLSServesAndReloadsOnSIGHUP: with --tls-cert and --tls-key the real
// server speaks HTTPS with that pair; after the files are replaced and the
// process gets SIGHUP, new connections see the new certificate; a pair
// that does not load (a certificate with another certificate's key) keeps
// the previous one and says why; and the CLI reaches it with --ca-cert.
func TestTLSServesAndReloadsOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t)
	certPath, keyPath, caPath := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.crt")
	cert1, key1 := ca.leaf(t, 1001)
	replaceFile(t, certPath, cert1)
	replaceFile(t, keyPath, key1)
	replaceFile(t, caPath, ca.pem)

	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey, "--tls-cert", certPath, "--tls-key", keyPath)
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") {
		t.Fatalf("the server announced %q, want an https:// address", srv.URL)
	}
	if got := servedSerial(t, srv.URL, ca); got != "1001" {
		t.Fatalf("served serial %s, want 1001", got)
	}
	if _, err := http.Get(srv.URL + "/healthz"); err == nil {
		t.Error("a client trusting only the system's roots accepted the test CA's certificate")
	}

	cert2, key2 := ca.leaf(t, 1002)
	replaceFile(t, certPath, cert2)
	replaceFile(t, keyPath, key2)
	if err := srv.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, srv, "TLS certificate reloaded", "serial=1002")
	if got := servedSerial(t, srv.URL, ca); got != "1002" {
		t.Fatalf("after SIGHUP the server showed serial %s, want 1002", got)
	}

	// Half a renewal: the third certificate beside the second one's key.
	cert3, _ := ca.leaf(t, 1003)
	replaceFile(t, certPath, cert3)
	if err := srv.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, srv, "TLS reload failed; still serving the previous certificate", "private key does not match public key")
	if got := servedSerial(t, srv.URL, ca); got != "1002" || srv.Exited() {
		t.Fatalf("after a failed reload: serial %s (want 1002), exited %v", got, srv.Exited())
	}

	// The CLI: with --ca-cert it trusts the test CA; without, it fails
	// and says which flag would help.
	cli := func(extra ...string) (string, error) {
		cmd := exec.Command(proctest.Binary(t), append([]string{"endpoints", "list", "--server", srv.URL, "--key", ownerKey}, extra...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := cli("--ca-cert", caPath); err != nil || !strings.HasPrefix(out, "NAME") {
		t.Errorf("ratchet endpoints list --ca-cert: %v\n%s", err, out)
	}
	if out, err := cli(); err == nil || !strings.Contains(out, "--ca-cert") {
		t.Errorf("ratchet endpoints list without --ca-cert: %v\n%s", err, out)
	}
}

// TestTLSFlagsGoTogether: --tls-cert without --tls-key (and the other way
// round) is refused before anything starts, naming the missing flag; a
// pair that does not load names both files.
func TestTLSFlagsGoTogether(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--tls-cert", "a.crt"}, `--tls-key: "" is not allowed; required with --tls-cert`, 2},
		{[]string{"--tls-key", "a.key"}, `--tls-cert: "" is not allowed; required with --tls-key`, 2},
		{[]string{"--tls-cert", "missing.crt", "--tls-key", "missing.key"}, "load the TLS certificate missing.crt (--tls-cert, RATCHET_TLS_CERT) and key missing.key (--tls-key", 1},
	} {
		cmd := exec.Command(proctest.Binary(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != c.code || !strings.Contains(string(out), c.want) {
			t.Errorf("serve %v: exit %d (%v), want %d and %q:\n%s", c.args, code, err, c.code, c.want, out)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused start left files: %v", entries)
	}
}

// TestSIGHUPWithoutTLS: a server without TLS logs a SIGHUP and goes on
// serving (the signal's default action would end it, and a service
// manager's reload would then stop the service).
func TestSIGHUPWithoutTLS(t *testing.T) {
	srv := proctest.Start(t, "", nil, "--bootstrap-key", ownerKey)
	if err := srv.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, srv, "SIGHUP: nothing to reload")
	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil || srv.Exited() {
		t.Fatalf("after SIGHUP: %v, exited %v\n%s", err, srv.Exited(), srv.Output.String())
	}
	resp.Body.Close()
}
