package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Template is a delivery URL with {name} placeholders in its path and
// query, filled from top-level members of the job's payload. The scheme
// and host are fixed at publish, so the address checks apply to them.
type Template struct {
	Raw    string
	Host   string // the host name or IP literal, without port or brackets
	pieces []piece
	dots   int // the "." and ".." segments of the path as written
}

type piece struct {
	lit     string
	name    string // placeholder; "" for a literal
	inQuery bool
}

var placeholderName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// MaxURLLen bounds a delivery URL template.
const MaxURLLen = 2048

// ParseTemplate checks a delivery URL: absolute http or https, no user
// information or fragment, placeholders only after the host.
func ParseTemplate(raw string) (*Template, error) {
	if len(raw) > MaxURLLen {
		return nil, fmt.Errorf("must be at most %d bytes", MaxURLLen)
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || scheme != "http" && scheme != "https" {
		return nil, errors.New(`must be an absolute "http://" or "https://" URL`)
	}
	hostEnd := strings.IndexAny(rest, "/?#")
	if hostEnd < 0 {
		hostEnd = len(rest)
	}
	if strings.ContainsAny(rest[:hostEnd], "{}") {
		return nil, errors.New("may hold {placeholders} in its path and query only, never in the host")
	}
	t := &Template{Raw: raw}
	sample, err := t.parsePieces(raw)
	if err != nil {
		return nil, err
	}
	u, err := checkSample(sample, raw)
	if err != nil {
		return nil, err
	}
	t.Host = u.Hostname()
	t.dots = dotSegments(sample)
	return t, nil
}

// parsePieces splits raw into literals and {placeholders} and returns a
// sample URL with each placeholder filled with "x", for the URL checks
// that follow.
func (t *Template) parsePieces(raw string) (string, error) {
	var sample strings.Builder
	inQuery := false
	for i := 0; i < len(raw); {
		switch c := raw[i]; c {
		case '{':
			end := strings.IndexByte(raw[i:], '}')
			if end < 0 {
				return "", errors.New(`has a "{" without its "}"`)
			}
			name := raw[i+1 : i+end]
			if !placeholderName.MatchString(name) {
				return "", fmt.Errorf("placeholder {%s} must name a top-level payload member (letters, digits, _; not starting with a digit)", name)
			}
			t.pieces = append(t.pieces, piece{name: name, inQuery: inQuery})
			sample.WriteString("x")
			i += end + 1
		case '}':
			return "", errors.New(`has a "}" without its "{"`)
		default:
			j := i
			for j < len(raw) && raw[j] != '{' && raw[j] != '}' {
				if raw[j] == '?' {
					inQuery = true
				}
				j++
			}
			t.pieces = append(t.pieces, piece{lit: raw[i:j]})
			sample.WriteString(raw[i:j])
			i = j
		}
	}
	return sample.String(), nil
}

// checkSample parses the sample URL of template raw and checks it: no
// user information (credentials go in a static header), no fragment, a
// host, and a port in range.
func checkSample(sample, raw string) (*url.URL, error) {
	u, err := url.Parse(sample)
	if err != nil {
		return nil, errors.New("must be a valid URL (" + strings.TrimPrefix(err.Error(), "parse ") + ")")
	}
	switch {
	case u.User != nil:
		return nil, errors.New("must not carry user information; use a static header for credentials")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, errors.New("must not have a fragment")
	case u.Hostname() == "":
		return nil, errors.New("must name a host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, errors.New("must have a port from 1 through 65535")
		}
	}
	return u, nil
}

// dotSegments counts the "." and ".." segments of a URL's path (before
// its query). A placeholder's segment never is one in the template (its
// sample value is "x"), so a rendered URL with more of them got one from
// the payload.
func dotSegments(u string) int {
	u, _, _ = strings.Cut(u, "?")
	_, rest, _ := strings.Cut(u, "://")
	_, path, ok := strings.Cut(rest, "/")
	if !ok {
		return 0
	}
	n := 0
	for _, s := range strings.Split(path, "/") {
		if s == "." || s == ".." {
			n++
		}
	}
	return n
}

// Names lists the placeholders in order.
func (t *Template) Names() []string {
	var out []string
	for _, p := range t.pieces {
		if p.name != "" {
			out = append(out, p.name)
		}
	}
	return out
}

// Render fills the placeholders from the payload's top-level members;
// each must be a string, a number or a boolean, and is escaped for its
// place (path segment or query value).
func (t *Template) Render(payload json.RawMessage) (string, error) {
	names := t.Names()
	if len(names) == 0 {
		return t.Raw, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(payload, &obj); err != nil || obj == nil {
		return "", fmt.Errorf("the URL needs payload members %v, and the payload is not a JSON object", names)
	}
	var b strings.Builder
	for _, p := range t.pieces {
		if p.name == "" {
			b.WriteString(p.lit)
			continue
		}
		raw, ok := obj[p.name]
		if !ok {
			return "", fmt.Errorf("the URL needs payload member %q, which the payload lacks", p.name)
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case float64, bool:
			s = strings.TrimSpace(string(raw))
		default:
			return "", fmt.Errorf("payload member %q must be a string, number or boolean to go in the URL", p.name)
		}
		if s == "" {
			return "", fmt.Errorf("payload member %q is empty", p.name)
		}
		if p.inQuery {
			b.WriteString(url.QueryEscape(s))
		} else {
			b.WriteString(url.PathEscape(s))
		}
	}
	out := b.String()
	// PathEscape leaves "." alone, so a value of ".." (or "." after a
	// literal ".") would make a dot segment, which servers resolve: the
	// request would go to another path of the provider.
	if dotSegments(out) > t.dots {
		return "", fmt.Errorf("payload members %v would make a \".\" or \"..\" dot segment in the URL's path, which would move the request to another path", names)
	}
	return out, nil
}

// Policy says which addresses deliveries may connect to: every public
// address, and the refused classes only within Allow.
type Policy struct {
	Allow []netip.Prefix
}

// RefusedError is a connection the policy refused.
type RefusedError struct {
	Addr  netip.Addr
	Class string
}

// Error names the address and its class, and how an operator allows it.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("delivery to %s refused: it is a %s address; only public addresses are delivered to unless `ratchet serve --delivery-allow` lists it", e.Addr, e.Class)
}

var refused = []struct {
	prefix netip.Prefix
	class  string
}{
	{netip.MustParsePrefix("169.254.169.254/32"), "cloud metadata"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "cloud metadata"},
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	// Deprecated IPv4-compatible addresses (::a.b.c.d) embed an IPv4
	// address, private or loopback ones among them.
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "NAT64"}, // local-use (RFC 8215)
	{netip.MustParsePrefix("2002::/16"), "6to4"},
}

// Class names the refused class of an address, or "" for a public one.
func Class(ip netip.Addr) string {
	// A zone (fe80::1%eth0) would make every Contains false.
	ip = ip.Unmap().WithZone("")
	for _, r := range refused {
		if r.prefix.Contains(ip) {
			return r.class
		}
	}
	return ""
}

// Check returns a *RefusedError for an address outside the policy.
func (p Policy) Check(ip netip.Addr) error {
	ip = ip.Unmap().WithZone("")
	c := Class(ip)
	if c == "" {
		return nil
	}
	for _, a := range p.Allow {
		if a.Contains(ip) {
			return nil
		}
	}
	return &RefusedError{Addr: ip, Class: c}
}

// CheckHost checks the host of a delivery URL at publish: an IP literal
// against the policy. A name is checked after resolution, at every
// connection (a name may resolve elsewhere tomorrow, or rebind).
func (p Policy) CheckHost(host string) error {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return p.Check(ip)
	}
	return nil
}

// ParseAllow reads a comma-separated list of CIDR prefixes or addresses.
func ParseAllow(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if ip, err := netip.ParseAddr(f); err == nil {
			out = append(out, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or a CIDR prefix such as 127.0.0.1/32", f)
		}
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			// The policy checks addresses unmapped: a mapped prefix is
			// the IPv4 prefix it maps.
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
