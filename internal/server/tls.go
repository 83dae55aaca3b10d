package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// certReloader serves the certificate pair of --tls-cert and --tls-key and
// reads it again on SIGHUP, so a renewed certificate (certbot, an ACME
// client, a secret mount) is taken without a restart. Handshakes read the
// current pair through GetCertificate, which is swapped atomically: a
// connection gets the old pair or the new one, never half of each. A reload
// that fails (a file half written, a key that does not match) keeps the pair
// in use and logs why.
type certReloader struct {
	certFile, keyFile string
	cert              atomic.Pointer[tls.Certificate]
}

// newCertReloader loads the pair once; a pair that does not load fails the
// start, naming both flags.
func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile}
	if _, err := r.reload(); err != nil {
		return nil, err
	}
	return r, nil
}

// reload reads the pair and, when it loads, serves it from the next
// handshake on. It returns the new certificate.
func (r *certReloader) reload() (*tls.Certificate, error) {
	c, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return nil, fmt.Errorf("load the TLS certificate %s (--tls-cert, RATCHET_TLS_CERT) and key %s (--tls-key, RATCHET_TLS_KEY): %w", r.certFile, r.keyFile, err)
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parse the TLS certificate %s (--tls-cert): %w", r.certFile, err)
		}
	}
	r.cert.Store(&c)
	return &c, nil
}

// warnKeyMode warns when the private key at path can be read by its
// group or by others: anyone who reads it can pose as this server. It
// names the file, its mode and the remedy; the server starts anyway, as
// a key shared with a group on purpose (a TLS terminator's, say) is the
// operator's call.
func warnKeyMode(path string, log *slog.Logger) {
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	if mode := fi.Mode().Perm(); mode&0o077 != 0 {
		log.Warn("the TLS key (--tls-key) can be read by its group or others; make it readable by Ratchet's user alone: chmod 600 "+path,
			"file", path, "mode", fmt.Sprintf("%04o", mode))
	}
}

// getCertificate is the tls.Config hook: the pair loaded last.
func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.cert.Load(), nil
}

// config is the listener's TLS configuration: TLS 1.2 and later, with the
// certificate from the reloader.
func (r *certReloader) config() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.getCertificate}
}

// watch reloads the pair on every SIGHUP until ctx ends.
func (r *certReloader) watch(ctx context.Context, log *slog.Logger) {
	onSIGHUP(ctx, func() {
		c, err := r.reload()
		if err != nil {
			log.Error("SIGHUP: TLS reload failed; still serving the previous certificate", "err", err)
			return
		}
		log.Info("SIGHUP: TLS certificate reloaded", certAttrs(c.Leaf)...)
	})
}

// onSIGHUP runs fn on every SIGHUP until ctx ends. It is registered before
// the server listens, so a SIGHUP never finds the process with the
// signal's default action (which ends it).
func onSIGHUP(ctx context.Context, fn func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
				fn()
			}
		}
	}()
}

// certAttrs describes a certificate for the log: whom it names, its serial
// number and when it expires.
func certAttrs(c *x509.Certificate) []any {
	names := append([]string{}, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	return []any{"cert", c.Subject.CommonName, "names", strings.Join(names, ","), "serial", c.SerialNumber.String(),
		"notAfter", c.NotAfter.UTC().Format(time.RFC3339)}
}
