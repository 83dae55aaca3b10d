package classify_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/classify"
)

// epochAt is now+d as epoch seconds, as GitHub and X send a reset.
func epochAt(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }

// quota builds an expected Quota.
func quota(source string, limit, windowMs, remaining, resetMs int64) classify.Quota {
	return classify.Quota{Limit: limit, WindowMs: windowMs, Remaining: remaining, ResetMs: resetMs, Source: source}
}

const (
	ietf = classify.QuotaSourceIETF
	rl   = classify.QuotaSourceRateLimit
	xrl  = classify.QuotaSourceXRateLimit
)

type quotaCase struct {
	name    string
	h       map[string]string
	want    classify.Quota // zero value: ok is false
	ignored []string
}

// realQuotaCases are headers as providers send them.
var realQuotaCases = []quotaCase{
	{"GitHub REST: epoch reset, used and resource beside", map[string]string{
		"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4987", "x-ratelimit-reset": epochAt(40 * time.Minute),
		"x-ratelimit-used": "13", "x-ratelimit-resource": "core"}, quota(xrl, 5000, 0, 4987, 2_400_000), nil},
	{"GitHub exhausted, reset already past (clock skew)", map[string]string{
		"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": epochAt(-3 * time.Second)},
		quota(xrl, 60, 0, 0, 0), nil},
	{"X (Twitter) v2 spelling", map[string]string{
		"x-rate-limit-limit": "900", "x-rate-limit-remaining": "899", "x-rate-limit-reset": epochAt(15 * time.Minute)},
		quota(xrl, 900, 0, 899, 900_000), nil},
	{"Discord: fractional epoch and Reset-After, which wins", map[string]string{
		"X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "1", "X-RateLimit-Reset": epochAt(2*time.Second) + ".5",
		"X-RateLimit-Reset-After": "1.234", "X-RateLimit-Bucket": "abcd1234"}, quota(xrl, 5, 0, 1, 1234), nil},
	{"X-RateLimit-Reset as delta-seconds", map[string]string{"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "7", "X-RateLimit-Reset": "42"},
		quota(xrl, 100, 0, 7, 42_000), nil},
	{"X-RateLimit-Reset as epoch milliseconds", map[string]string{
		"X-RateLimit-Reset": strconv.FormatInt(now.Add(90*time.Second).UnixMilli(), 10)}, quota(xrl, 0, 0, -1, 90_000), nil},
	{"Stripe: a 429 with Stripe-Should-Retry and no rate-limit headers", map[string]string{
		"Stripe-Should-Retry": "true", "Request-Id": "req_123", "Retry-After": "1"}, classify.Quota{}, nil},
	{"OpenAI-style per-kind names are not read", map[string]string{
		"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "59", "x-ratelimit-reset-requests": "1s"}, classify.Quota{}, nil},
	{"Cloudflare API: Ratelimit and Ratelimit-Policy", map[string]string{
		"Ratelimit": `"default";r=1199;t=299`, "Ratelimit-Policy": `"default";q=1200;w=300`}, quota(ietf, 1200, 300_000, 1199, 299_000), nil},
	{"draft 11 §4.2: r and t without a policy", map[string]string{"RateLimit": `"default";r=50;t=30`}, quota(ietf, 0, 0, 50, 30_000), nil},
	{"draft 11's partition-key examples paired: more left than the quota", map[string]string{
		"RateLimit-Policy": `"peruser";q=100;w=60;pk=:cHsdsRa894==:`, "RateLimit": `"peruser";r=999;pk=:dHJpYWwxMjEzMjM=:`},
		classify.Quota{}, []string{classify.QuotaRemainingOverLimit}},
	{"draft 11 §4.2: no window, partition key", map[string]string{"RateLimit": `"default";r=999;pk=:dHJpYWwxMjEzMjM=:`},
		quota(ietf, 0, 0, 999, -1), nil},
	{"draft 11 §3.2: several policies alone, the lowest rate answers (per hour here)", map[string]string{
		"RateLimit-Policy": `"permin";q=50;w=60,"perhr";q=1000;w=3600`}, quota(ietf, 1000, 3_600_000, -1, -1), nil},
	{"draft 11 §3: burst and daily, daily binds by rate", map[string]string{
		"RateLimit-Policy": `"burst";q=100;w=60,"daily";q=1000;w=86400`}, quota(ietf, 1000, 86_400_000, -1, -1), nil},
	{"several service limits: the fewest left binds, with its policy", map[string]string{
		"RateLimit-Policy": `"burst";q=100;w=60, "daily";q=1000;w=86400`, "RateLimit": `"burst";r=40;t=20, "daily";r=3;t=5000`},
		quota(ietf, 1000, 86_400_000, 3, 5_000_000), nil},
	{"draft 11 §3.2: content-bytes policy is skipped and counted", map[string]string{
		"RateLimit-Policy": `"peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:`,
		"RateLimit":        `"peruser";r=300000000;t=60`}, classify.Quota{}, []string{classify.QuotaUnsupportedUnit}},
	{"a requests policy beside a concurrency one", map[string]string{
		"RateLimit-Policy": `"conc";q=10;qu="concurrent-requests", "rps";q=20;w=1;qu="requests"`,
		"RateLimit":        `"conc";r=0, "rps";r=19;t=1`}, quota(ietf, 20, 1000, 19, 1000), []string{classify.QuotaUnsupportedUnit}},
	{"draft 8–10: Token names", map[string]string{"RateLimit-Policy": `default;q=10;w=1`, "RateLimit": `default;r=0;t=1`},
		quota(ietf, 10, 1000, 0, 1000), nil},
	{"express-rate-limit draft-7 mode: dictionary and older policy", map[string]string{
		"RateLimit-Policy": `100;w=60`, "RateLimit": `limit=100, remaining=99, reset=58`}, quota(ietf, 100, 60_000, 99, 58_000), nil},
	{"express-rate-limit draft-6 mode: separate fields and older policy", map[string]string{
		"RateLimit-Policy": `100;w=60`, "RateLimit-Limit": "100", "RateLimit-Remaining": "99", "RateLimit-Reset": "58"},
		quota(rl, 100, 60_000, 99, 58_000), nil},
	{"draft 3: quota policies in RateLimit-Limit", map[string]string{
		"RateLimit-Limit": "10, 10;w=1, 50;w=60, 1000;w=3600", "RateLimit-Remaining": "1", "RateLimit-Reset": "7"},
		quota(rl, 10, 1000, 1, 7000), nil},
	{"a RateLimit-Reset of epoch seconds", map[string]string{"RateLimit-Limit": "30", "RateLimit-Reset": epochAt(12 * time.Second)},
		quota(rl, 30, 0, -1, 12_000), nil},
	{"the IETF fields over X-RateLimit-*, which agree", map[string]string{
		"RateLimit": `"default";r=9;t=4`, "RateLimit-Policy": `"default";q=10;w=5`,
		"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "9", "X-RateLimit-Reset": "4"}, quota(ietf, 10, 5000, 9, 4000), nil},
	{"names in any case, with spaces around values", map[string]string{
		"RATELIMIT": ` "default";r=2;t=1 `, "ratelimit-POLICY": "\t\"default\";q=5;w=1"}, quota(ietf, 5, 1000, 2, 1000), nil},
	{"one name in two spellings is one field of two members", map[string]string{
		"RateLimit": `"a";r=5`, "ratelimit": `"b";r=3;t=2`}, quota(ietf, 0, 0, 3, 2000), nil},
	{"every other bare item type as a comment parameter", map[string]string{
		"RateLimit": `"d";r=5;acme-burst=?1;note=%"caf%c3%a9";at=@1700000000;ratio=-0.25;tag=*x/y:z;key=:YWJj:;*flag, "e";r=6`},
		quota(ietf, 0, 0, 5, -1), nil},
	{"a reset of exactly 24 hours", map[string]string{"X-RateLimit-Reset-After": "86400"}, quota(xrl, 0, 0, -1, 86_400_000), nil},
}

// badQuotaCases are values ReadQuota refuses, one class each.
var badQuotaCases = []quotaCase{
	{"limit 0", map[string]string{"X-RateLimit-Limit": "0", "X-RateLimit-Remaining": "0"}, classify.Quota{}, []string{classify.QuotaZeroLimit}},
	{"negative limit", map[string]string{"RateLimit-Limit": "-5"}, classify.Quota{}, []string{classify.QuotaZeroLimit}},
	{"policy quota 0", map[string]string{"RateLimit-Policy": `"d";q=0;w=1`}, classify.Quota{}, []string{classify.QuotaZeroLimit}},
	{"limit above 10^9", map[string]string{"X-RateLimit-Limit": "1000000001"}, classify.Quota{}, []string{classify.QuotaTooLarge}},
	{"limit of 40 digits", map[string]string{"X-RateLimit-Limit": strings.Repeat("9", 40)}, classify.Quota{}, []string{classify.QuotaTooLarge}},
	{"remaining above 10^9", map[string]string{"RateLimit": `"d";r=2000000000`}, classify.Quota{}, []string{classify.QuotaTooLarge}},
	{"remaining over the limit", map[string]string{"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "11"}, classify.Quota{}, []string{classify.QuotaRemainingOverLimit}},
	{"negative remaining", map[string]string{"RateLimit-Remaining": "-1"}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"negative reset", map[string]string{"X-RateLimit-Reset": "-30"}, classify.Quota{}, []string{classify.QuotaNegativeReset}},
	{"negative Reset-After fraction", map[string]string{"X-RateLimit-Reset-After": "-0.5"}, classify.Quota{}, []string{classify.QuotaNegativeReset}},
	{"negative t", map[string]string{"RateLimit": `"d";r=1;t=-1`}, classify.Quota{}, []string{classify.QuotaNegativeReset}},
	{"t over 24 hours", map[string]string{"RateLimit": `"d";r=1;t=86401`}, classify.Quota{}, []string{classify.QuotaResetTooFar}},
	{"epoch reset years away", map[string]string{"X-RateLimit-Reset": epochAt(3 * 365 * 24 * time.Hour)}, classify.Quota{}, []string{classify.QuotaResetTooFar}},
	{"epoch reset of 40 digits", map[string]string{"X-RateLimit-Reset": strings.Repeat("9", 40)}, classify.Quota{}, []string{classify.QuotaResetTooFar}},
	{"delta reset of 100,000 s", map[string]string{"RateLimit-Reset": "100000"}, classify.Quota{}, []string{classify.QuotaResetTooFar}},
	{"window over a month", map[string]string{"RateLimit-Policy": `"y";q=10;w=31536000`}, classify.Quota{}, []string{classify.QuotaTooLarge}},
	{"window 0", map[string]string{"RateLimit-Policy": `"d";q=10;w=0`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"value over 8 KiB", map[string]string{"RateLimit": `"d";r=1;x="` + strings.Repeat("a", 8200) + `"`}, classify.Quota{}, []string{classify.QuotaTooLarge}},
	{"more than 64 members", map[string]string{"RateLimit": strings.Repeat(`"d";r=1, `, 64) + `"d";r=1`}, classify.Quota{}, []string{classify.QuotaTooLarge}},
	{"a trailing comma", map[string]string{"RateLimit": `"d";r=1,`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"r missing", map[string]string{"RateLimit": `"d";t=1`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"r as a Decimal", map[string]string{"RateLimit": `"d";r=1.5`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"r as a String", map[string]string{"RateLimit": `"d";r="5"`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"an Integer of 16 digits", map[string]string{"RateLimit": `"d";r=1234567890123456`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"an unclosed String", map[string]string{"RateLimit": `"d;r=1`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"a bad escape", map[string]string{"RateLimit": `"d\n";r=1`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"an Inner List", map[string]string{"RateLimit": `("d");r=1`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"a Display String that is not UTF-8", map[string]string{"RateLimit": `"d";r=1;n=%"%ff"`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"a Date with a fraction", map[string]string{"RateLimit": `"d";r=1;at=@1.5`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"a Boolean other than ?0 or ?1", map[string]string{"RateLimit": `"d";r=1;b=?2`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"a Decimal with four fraction digits", map[string]string{"RateLimit": `"d";r=1;x=0.1234`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"an upper-case key", map[string]string{"RateLimit": `"d";R=1`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"a bad Byte Sequence", map[string]string{"RateLimit": `"d";r=1;pk=:a b:`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"a dictionary without limit or remaining", map[string]string{"RateLimit": `reset=5`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"a dictionary with a String limit", map[string]string{"RateLimit": `limit="5", remaining=1`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"an empty RateLimit", map[string]string{"RateLimit": ` `}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"a plus sign", map[string]string{"X-RateLimit-Limit": "+5"}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"a fractional limit", map[string]string{"X-RateLimit-Limit": "5.0"}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"a duplicated header, joined", map[string]string{"X-RateLimit-Remaining": "5, 5"}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"an HTTP date as reset", map[string]string{"X-RateLimit-Reset": "Sat, 14 Mar 2026 12:01:00 GMT"}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"qu as a Token", map[string]string{"RateLimit-Policy": `"d";q=5;qu=requests`}, classify.Quota{}, []string{classify.QuotaMalformed}},
	{"one bad value refuses the whole family", map[string]string{
		"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "50", "X-RateLimit-Reset": "-1"}, classify.Quota{}, []string{classify.QuotaNegativeReset}},
	{"a refused family gives way to the next", map[string]string{
		"RateLimit": `"d";r=abc`, "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "4"}, quota(xrl, 10, 0, 4, -1), []string{classify.QuotaMalformed}},
	{"a refused policy alone leaves RateLimit standing", map[string]string{
		"RateLimit-Policy": `"d";q=0`, "RateLimit": `"d";r=4;t=2`}, quota(ietf, 0, 0, 4, 2000), []string{classify.QuotaZeroLimit}},
	{"families that disagree: the first answers, the conflict is counted", map[string]string{
		"RateLimit-Limit": "100", "RateLimit-Remaining": "20", "X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "20"},
		quota(rl, 100, 0, 20, -1), []string{classify.QuotaConflict}},
}

func TestReadQuota(t *testing.T) {
	t.Parallel()
	for _, tt := range slices.Concat(realQuotaCases, badQuotaCases) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q, ok, ignored := classify.ReadQuota(tt.h, now)
			wantOK := tt.want != classify.Quota{}
			if ok != wantOK || (ok && q != tt.want) {
				t.Errorf("ReadQuota = %+v, %v; want %+v, %v", q, ok, tt.want, wantOK)
			}
			if !ok && q != quota("", 0, 0, -1, -1) {
				t.Errorf("ReadQuota = %+v, false; a refused answer must say nothing", q)
			}
			if !slices.Equal(ignored, tt.ignored) {
				t.Errorf("ignored = %q, want %q", ignored, tt.ignored)
			}
		})
	}
}

// TestQuotaIgnoreReasons: every reason is a metric label (lowercase
// snake_case), listed once, and each is given by some case above.
func TestQuotaIgnoreReasons(t *testing.T) {
	reasons := classify.QuotaIgnoreReasons()
	seen := map[string]bool{}
	for _, tt := range slices.Concat(realQuotaCases, badQuotaCases) {
		for _, r := range tt.ignored {
			seen[r] = true
		}
	}
	for _, r := range reasons {
		if r == "" || strings.Trim(r, "abcdefghijklmnopqrstuvwxyz_") != "" {
			t.Errorf("reason %q is not lowercase snake_case", r)
		}
		if !seen[r] {
			t.Errorf("no case gives reason %q", r)
		}
		delete(seen, r)
	}
	for r := range seen {
		t.Errorf("a case gives reason %q, which QuotaIgnoreReasons does not list", r)
	}
}

// TestQuotaHeaders: ReadQuota reads exactly the names QuotaHeaders lists
// (so a keep-list built from it loses nothing), and not Retry-After.
func TestQuotaHeaders(t *testing.T) {
	names := classify.QuotaHeaders()
	if slices.Contains(names, classify.HeaderRetryAfter) {
		t.Errorf("QuotaHeaders lists Retry-After, which Classify reads")
	}
	for _, n := range names {
		// A value refused whatever the header: ReadQuota must report it.
		if _, _, ignored := classify.ReadQuota(map[string]string{n: "x"}, now); len(ignored) == 0 {
			t.Errorf("ReadQuota does not read %s", n)
		}
	}
	names[0] = "changed"
	if classify.QuotaHeaders()[0] == "changed" {
		t.Errorf("QuotaHeaders returns its own slice")
	}
}

// TestQuotaEpochRule checks the worked table of the package doc.
func TestQuotaEpochRule(t *testing.T) {
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]int64{
		"42": 42_000, "1796644860": 60_000, "1796644860.5": 60_500, "1796644860000": 60_000, "1796644700": 0, "1828180800": -1,
	} {
		q, ok, _ := classify.ReadQuota(map[string]string{"X-RateLimit-Reset": v}, at)
		if want < 0 && ok || want >= 0 && (!ok || q.ResetMs != want) {
			t.Errorf("X-RateLimit-Reset: %s gives %+v, %v; want ResetMs %d", v, q, ok, want)
		}
	}
}

// TestQuotaHeadersFile: testdata/quota-headers.json, which the SDKs' tests
// read to check that their response helpers pass every rate-limit header
// on, lists exactly QuotaHeaders and the bound on a value.
func TestQuotaHeadersFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "quota-headers.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Headers       []string `json:"headers"`
		MaxValueBytes int      `json:"maxValueBytes"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(doc.Headers, classify.QuotaHeaders()) || doc.MaxValueBytes != classify.MaxQuotaHeaderBytes+1 {
		t.Errorf("testdata/quota-headers.json lists %q, %d; want %q, %d", doc.Headers, doc.MaxValueBytes, classify.QuotaHeaders(), classify.MaxQuotaHeaderBytes+1)
	}
}
