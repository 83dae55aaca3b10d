package classify_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/getratchet/ratchet/internal/classify"
)

func TestFingerprint(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"timeout after 3012ms on req 8f3a…", "timeout after <n>ms on req <hex>…"},
		{"timeout after 2990ms on req 77b1…", "timeout after <n>ms on req <hex>…"},
		{"HTTP 503 from upstream", "HTTP <n> from upstream"},
		{"job 123e4567-e89b-12d3-a456-426614174000 not found", "job <uuid> not found"},
		{"rate limited until 2026-12-06T04:26:45.120Z, try later", "rate limited until <time>, try later"},
		{"at 04:26:45 the peer reset", "at <time> the peer reset"},
		{`no such customer "cus_9xQ2"`, `no such customer "…"`},
		{"key 'acct-42' is locked", "key '…' is locked"},
		{"request req_8f3aZz failed", "request <id> failed"},
		{"  many\t\tspaces\nand\x00controls  ", "many spaces and controls"},
		{"bad \xff byte", "bad \uFFFD byte"},
		{"", ""},
		{"connection refused", "connection refused"},
		{"conn 0xbeef and 0xbef0, 0x", "conn <hex> and <hex>, <n>x"},
	} {
		if got := classify.Fingerprint(c.in); got != c.want {
			t.Errorf("Fingerprint(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := strings.Repeat("word ", 100)
	if got := classify.Fingerprint(long); utf8.RuneCountInString(got) > classify.MaxFingerprintLen {
		t.Errorf("Fingerprint of %d characters kept %d", len(long), utf8.RuneCountInString(got))
	}
}

func TestGroupID(t *testing.T) {
	a := classify.GroupID("server_error", "timeout after <n>ms")
	if !classify.ValidGroupID(a) {
		t.Errorf("GroupID = %q, not 12 hex digits", a)
	}
	if b := classify.GroupID("throttled", "timeout after <n>ms"); a == b {
		t.Errorf("two classifications share group %s", a)
	}
	if a != classify.GroupID("server_error", "timeout after <n>ms") {
		t.Error("GroupID is not deterministic")
	}
	for _, bad := range []string{"", "abc", "ABCDEF012345", "0123456789abc", "01234567890g"} {
		if classify.ValidGroupID(bad) {
			t.Errorf("ValidGroupID(%q) = true", bad)
		}
	}
}

// FuzzFingerprint holds Fingerprint to its promises for any input: text
// PostgreSQL stores (valid UTF-8, no NUL), no ASCII digit, bounded length,
// idempotent, and blind to the digits that vary between two failures.
func FuzzFingerprint(f *testing.F) {
	for _, v := range []string{
		"timeout after 3012ms on req 8f3a", "HTTP 503", "don't 'x' `y` \"z\"", "2026-12-06T04:26:45Z",
		"123e4567-e89b-12d3-a456-426614174000", "\x00\xff\xfe", "٣٤ ms", strings.Repeat("ab1 ", 60),
	} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		fp := classify.Fingerprint(msg)
		if !utf8.ValidString(fp) || strings.ContainsRune(fp, 0) {
			t.Fatalf("Fingerprint(%q) = %q: not storable text", msg, fp)
		}
		if strings.ContainsAny(fp, "0123456789") {
			t.Fatalf("Fingerprint(%q) = %q holds a digit", msg, fp)
		}
		if n := utf8.RuneCountInString(fp); n > classify.MaxFingerprintLen {
			t.Fatalf("Fingerprint(%q) has %d characters", msg, n)
		}
		if fp != strings.TrimSpace(fp) || strings.Contains(fp, "  ") {
			t.Fatalf("Fingerprint(%q) = %q: white space not collapsed", msg, fp)
		}
		if again := classify.Fingerprint(fp); again != fp {
			t.Fatalf("Fingerprint is not idempotent: %q → %q → %q", msg, fp, again)
		}
		// Other digits in the same places give the same fingerprint (a
		// leading 0 stays: 0x starts a hex number).
		shifted := []byte(msg)
		for i, c := range shifted {
			if c >= '1' && c <= '8' {
				shifted[i] = c + 1
			}
		}
		if got := classify.Fingerprint(string(shifted)); got != fp && !strings.ContainsAny(msg, "9") {
			t.Fatalf("Fingerprint(%q) = %q but Fingerprint(%q) = %q", msg, fp, shifted, got)
		}
	})
}
