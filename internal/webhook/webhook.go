// Package webhook holds the pure parts of HTTP delivery: the Standard
// Webhooks signature, the URL template of a delivery target and the address
// policy that keeps deliveries off loopback, private, link-local and
// metadata addresses. It does no I/O; internal/delivery sends the requests.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret, as Standard Webhooks writes
// them: "whsec_" and the base64 of the key bytes.
const SecretPrefix = "whsec_"

// Header names of a signed delivery (Standard Webhooks).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// NewSecret returns a fresh signing secret of 32 random bytes.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// ParseSecret returns the key bytes of a "whsec_..." secret.
func ParseSecret(s string) ([]byte, error) {
	rest, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, errors.New(`must start with "whsec_"`)
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, errors.New(`must be "whsec_" followed by standard base64`)
	}
	if len(key) < 24 || len(key) > 64 {
		return nil, errors.New("must hold 24 to 64 key bytes (" + strconv.Itoa(len(key)) + " given)")
	}
	return key, nil
}

// Sign returns the webhook-signature header value for a message: "v1,"
// and the base64 of HMAC-SHA256(key, "{id}.{timestamp}.{body}").
func Sign(key []byte, id string, ts time.Time, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}
