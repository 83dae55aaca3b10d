package server

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTLSKeyReadableByOthersWarns: a --tls-key that its group or others
// can read loads with a warning naming the file, its mode and chmod 600;
// a key readable by its owner alone loads without one.
func TestTLSKeyReadableByOthersWarns(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeSelfSigned(t, certFile, keyFile)
	for _, c := range []struct {
		mode os.FileMode
		warn bool
	}{{0o644, true}, {0o640, true}, {0o604, true}, {0o600, false}, {0o400, false}} {
		if err := os.Chmod(keyFile, c.mode); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		_, err := loadTLS(ctx, Config{TLSCertFile: certFile, TLSKeyFile: keyFile}, slog.New(slog.NewTextHandler(&buf, nil)))
		cancel()
		if err != nil {
			t.Fatalf("%04o: %v", c.mode, err)
		}
		logged := buf.String()
		warned := strings.Contains(logged, "level=WARN")
		if warned != c.warn {
			t.Errorf("key mode %04o: warned %v, want %v; log:\n%s", c.mode, warned, c.warn, logged)
			continue
		}
		if c.warn {
			for _, part := range []string{"file=" + keyFile, "chmod 600 " + keyFile, "--tls-key", modeText(c.mode)} {
				if !strings.Contains(logged, part) {
					t.Errorf("key mode %04o: the warning does not say %q:\n%s", c.mode, part, logged)
				}
			}
		}
	}
}

// modeText is the mode as the warning logs it, e.g. mode=0644.
func modeText(m os.FileMode) string { return fmt.Sprintf("mode=%04o", m) }

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 and its
// key.
func writeSelfSigned(t *testing.T, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Unix(1_700_000_000, 0), NotAfter: time.Unix(1_700_000_000, 0).Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
}
