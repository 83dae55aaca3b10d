package webhook_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/webhook"
)

// TestSignStandardWebhooksVector signs the test vector the Standard
// Webhooks libraries check their signers against (the symmetric signing
// test of github.com/standard-webhooks/standard-webhooks, libraries/go,
// webhook_symmetric_test.go, TestSymmetricWebhookSign, and the same
// vector in its JavaScript, Python and Rust libraries). The expected value
// is the spec's, not computed by this package.
func TestSignStandardWebhooksVector(t *testing.T) {
	const (
		secret   = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		msgID    = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		payload  = `{"test": 2432232314}`
		expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	key, err := webhook.ParseSecret(secret)
	if err != nil {
		t.Fatalf("the spec's secret %q: %v", secret, err)
	}
	if got := webhook.Sign(key, msgID, time.Unix(1614265330, 0), []byte(payload)); got != expected {
		t.Errorf("Sign = %s, the Standard Webhooks test vector is %s", got, expected)
	}
	// The timestamp is whole seconds: sub-second parts and the zone do not
	// change the signed content.
	at := time.Unix(1614265330, 999_000_000).In(time.FixedZone("UTC+5", 5*3600))
	if got := webhook.Sign(key, msgID, at, []byte(payload)); got != expected {
		t.Errorf("Sign with a sub-second, zoned time = %s, want %s", got, expected)
	}
	// One byte changed anywhere changes the signature.
	for _, c := range []struct{ id, body string }{{msgID + "x", payload}, {msgID, payload + " "}, {msgID, strings.Replace(payload, "2", "3", 1)}} {
		if got := webhook.Sign(key, c.id, time.Unix(1614265330, 0), []byte(c.body)); got == expected {
			t.Errorf("id %q body %q signs like the vector", c.id, c.body)
		}
	}
	if got := webhook.Sign(key, msgID, time.Unix(1614265331, 0), []byte(payload)); got == expected {
		t.Error("a timestamp one second later signs like the vector")
	}
}

func TestParseSecret(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	for _, c := range []struct {
		in   string
		keyN int // 0: refused
	}{
		{"whsec_" + b64(24), 24},
		{"whsec_" + b64(32), 32},
		{"whsec_" + b64(64), 64},
		{"whsec_" + b64(23), 0},
		{"whsec_" + b64(65), 0},
		{b64(32), 0},                                          // no prefix
		{"WHSEC_" + b64(32), 0},                               // the prefix is case-sensitive
		{"whsec_" + strings.TrimRight(b64(32), "=") + "!", 0}, // not base64
		{"whsec_" + base64.URLEncoding.EncodeToString([]byte{0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe}), 0}, // URL alphabet
		{"whsec_", 0},
		{"", 0},
	} {
		key, err := webhook.ParseSecret(c.in)
		switch {
		case c.keyN == 0 && err == nil:
			t.Errorf("ParseSecret(%q) accepted %d key bytes, want an error", c.in, len(key))
		case c.keyN > 0 && err != nil:
			t.Errorf("ParseSecret(%q): %v", c.in, err)
		case c.keyN > 0 && len(key) != c.keyN:
			t.Errorf("ParseSecret(%q) = %d bytes, want %d", c.in, len(key), c.keyN)
		}
	}
	// A generated secret parses, and two are not the same.
	a, b := webhook.NewSecret(), webhook.NewSecret()
	if _, err := webhook.ParseSecret(a); err != nil {
		t.Errorf("NewSecret() = %q does not parse: %v", a, err)
	}
	if a == b {
		t.Errorf("two NewSecret calls gave %q", a)
	}
}
