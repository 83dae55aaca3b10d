package webhook_test

import (
	"encoding/json"
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/webhook"
)

func TestParseTemplate(t *testing.T) {
	for _, c := range []struct {
		raw, host string
		names     []string
	}{
		{"https://api.example.com/v1/charges", "api.example.com", nil},
		{"http://api.example.com:8080/orders/{orderId}", "api.example.com", []string{"orderId"}},
		{"https://example.com/a/{x}/b/{y_2}?k={x}&z=1", "example.com", []string{"x", "y_2", "x"}},
		{"https://example.com?{q}", "example.com", []string{"q"}},
		{"https://[2001:db8::1]:443/{id}", "2001:db8::1", []string{"id"}},
		{"https://example.com", "example.com", nil},
	} {
		tpl, err := webhook.ParseTemplate(c.raw)
		if err != nil {
			t.Errorf("ParseTemplate(%q): %v", c.raw, err)
			continue
		}
		if tpl.Host != c.host || !slices.Equal(tpl.Names(), c.names) || tpl.Raw != c.raw {
			t.Errorf("ParseTemplate(%q) = host %q names %v raw %q, want host %q names %v", c.raw, tpl.Host, tpl.Names(), tpl.Raw, c.host, c.names)
		}
	}
	for _, c := range []struct{ raw, says string }{
		{"ftp://example.com/", `"http://" or "https://"`},
		{"example.com/x", `"http://" or "https://"`},
		{"//example.com/x", `"http://" or "https://"`},
		{"HTTP://example.com/", `"http://" or "https://"`},
		{"https://{tenant}.example.com/", "never in the host"},
		{"https://example.com:{port}/", "never in the host"},
		{"https://example{x}/", "never in the host"},
		{"https://user:pw@example.com/", "user information"},
		{"https://example.com/#frag", "fragment"},
		{"https://example.com/{x}#", "fragment"},
		{"https:///path", "host"},
		{"https://example.com:0/", "port"},
		{"https://example.com:65536/", "port"},
		{"https://example.com/{x", `without its "}"`},
		{"https://example.com/x}", `without its "{"`},
		{"https://example.com/{}", "placeholder"},
		{"https://example.com/{1x}", "placeholder"},
		{"https://example.com/{a-b}", "placeholder"},
		{"https://example.com/{a.b}", "placeholder"},
		{"https://example.com/%zz", "valid URL"},
		{"https://example.com/%{x}", "valid URL"},
		{"https://exa mple.com/", "valid URL"},
		{"https://example.com/" + strings.Repeat("a", webhook.MaxURLLen), "at most"},
	} {
		_, err := webhook.ParseTemplate(c.raw)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("ParseTemplate(%q) = %v, want an error saying %q", c.raw, err, c.says)
		}
	}
}

func TestRender(t *testing.T) {
	tpl, err := webhook.ParseTemplate("https://example.com/orders/{id}/items?note={note}&flag={flag}")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ payload, want string }{
		{`{"id": 42, "note": "a b&c=d", "flag": true}`, "https://example.com/orders/42/items?note=a+b%26c%3Dd&flag=true"},
		{`{"id": "a/b?c#d", "note": "x", "flag": false}`, "https://example.com/orders/a%2Fb%3Fc%23d/items?note=x&flag=false"},
		{`{"id": "@evil.com", "note": "/", "flag": 1.5}`, "https://example.com/orders/@evil.com/items?note=%2F&flag=1.5"},
		{`{"id": "ü", "note": "ü", "flag": -1e3}`, "https://example.com/orders/%C3%BC/items?note=%C3%BC&flag=-1e3"},
		{`{"id": "..x", "note": "..", "flag": 0}`, "https://example.com/orders/..x/items?note=..&flag=0"},
	} {
		got, err := tpl.Render(json.RawMessage(c.payload))
		if err != nil || got != c.want {
			t.Errorf("Render(%s) = %q, %v; want %q", c.payload, got, err, c.want)
		}
	}
	for _, c := range []struct{ payload, says string }{
		{`[1]`, "not a JSON object"},
		{`null`, "not a JSON object"},
		{`"x"`, "not a JSON object"},
		{`{"note": "x", "flag": 1}`, `lacks`},
		{`{"id": null, "note": "x", "flag": 1}`, "string, number or boolean"},
		{`{"id": {"a": 1}, "note": "x", "flag": 1}`, "string, number or boolean"},
		{`{"id": [1], "note": "x", "flag": 1}`, "string, number or boolean"},
		{`{"id": "", "note": "x", "flag": 1}`, "empty"},
		// A path segment of "." or ".." would move the request to another
		// path of the provider (servers resolve dot segments).
		{`{"id": "..", "note": "x", "flag": 1}`, "dot segment"},
		{`{"id": ".", "note": "x", "flag": 1}`, "dot segment"},
	} {
		got, err := tpl.Render(json.RawMessage(c.payload))
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Render(%s) = %q, %v; want an error saying %q", c.payload, got, err, c.says)
		}
	}
	// Without placeholders the URL is sent as written, whatever the payload.
	plain, err := webhook.ParseTemplate("https://example.com/hook?a=1")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{`[]`, `"x"`, `{"a": 2}`} {
		if got, err := plain.Render(json.RawMessage(p)); err != nil || got != "https://example.com/hook?a=1" {
			t.Errorf("Render(%s) without placeholders = %q, %v", p, got, err)
		}
	}
}

// FuzzURLTemplate: ParseTemplate never panics, and a template it accepts
// renders, from any payload values, to a URL with the template's scheme,
// host and port, no user information, no fragment, and the template's
// path prefix up to the first placeholder: values from the payload can
// never move a request to another host.
func FuzzURLTemplate(f *testing.F) {
	for _, s := range []struct{ tpl, a, b string }{
		{"https://example.com/{a}", "x", "y"},
		{"http://example.com:8080/v1/{a}/items?q={b}", "../admin", "a&b=c"},
		{"https://[::1]/{a}{b}", "@evil.com", ":80"},
		{"https://example.com/{a}?{b}", "//evil.com/", "#frag"},
		{"https://example.com{a}", "@evil.com", ""},
		{"https://example.com/x?{a}", "?x=y", "\x00"},
		{"https://example.com/%41{a}", "%2e%2e", ".."},
		{"http://ex%61mple.com/{a}", "\\evil.com", "%"},
		{"https://example.com/{a}/{b}", "..", "."},
	} {
		f.Add(s.tpl, s.a, s.b)
	}
	f.Fuzz(func(t *testing.T, raw, a, b string) {
		tpl, err := webhook.ParseTemplate(raw)
		if err != nil {
			return
		}
		base, err := url.Parse(strings.NewReplacer("{", "", "}", "").Replace(raw))
		if err != nil {
			// Only placeholders make the raw text unparsable as is.
			base = nil
		}
		// Every placeholder gets a or b in turn, and the number 7 once.
		obj := map[string]any{}
		for i, n := range tpl.Names() {
			switch i % 3 {
			case 0:
				obj[n] = a
			case 1:
				obj[n] = b
			default:
				obj[n] = 7
			}
		}
		payload, _ := json.Marshal(obj)
		out, err := tpl.Render(payload)
		if err != nil {
			return
		}
		u, err := url.Parse(out)
		if err != nil {
			t.Fatalf("template %q rendered %q, which does not parse: %v", raw, out, err)
		}
		scheme, _, _ := strings.Cut(raw, "://")
		if u.Scheme != scheme || u.Hostname() != tpl.Host || u.User != nil || u.Fragment != "" || strings.Contains(out, "#") {
			t.Fatalf("template %q (host %q) with a=%q b=%q rendered %q: scheme %q host %q user %v fragment %q",
				raw, tpl.Host, a, b, out, u.Scheme, u.Hostname(), u.User, u.Fragment)
		}
		if base != nil && u.Port() != base.Port() {
			t.Fatalf("template %q rendered %q: port %q, the template's is %q", raw, out, u.Port(), base.Port())
		}
		// The fixed start of the template (scheme, host, the path up to the
		// first placeholder) is the start of every rendered URL.
		prefix, _, _ := strings.Cut(raw, "{")
		if !strings.HasPrefix(out, prefix) {
			t.Fatalf("template %q rendered %q, which does not start with %q", raw, out, prefix)
		}
		// A dot segment never comes from the payload: the rendered path has
		// no more "." or ".." segments than the template.
		if dots(u.EscapedPath()) > dots(strings.NewReplacer("{", "", "}", "").Replace(strings.SplitN(strings.SplitN(raw, "?", 2)[0], "://", 2)[1])) {
			t.Fatalf("template %q with a=%q b=%q rendered %q: the payload added a dot segment", raw, a, b, out)
		}
	})
}

// dots counts the "." and ".." segments of a path.
func dots(p string) int {
	n := 0
	for _, s := range strings.Split(p, "/") {
		if s == "." || s == ".." {
			n++
		}
	}
	return n
}

func TestPolicyRefusesEveryClass(t *testing.T) {
	for _, c := range []struct{ addr, class string }{
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"}, // IPv4-mapped IPv6
		{"10.0.0.1", "private"},
		{"10.255.255.255", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"::ffff:10.1.2.3", "private"},
		{"::ffff:192.168.0.1", "private"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"169.254.169.254", "cloud metadata"},
		{"::ffff:169.254.169.254", "cloud metadata"},
		{"fd00:ec2::254", "cloud metadata"},
		{"169.254.0.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "reserved"},
		{"100.64.0.1", "shared (CGNAT)"},
		{"64:ff9b::7f00:1", "NAT64"},
		{"64:ff9b:1::a00:1", "NAT64"},
		{"2002:7f00:1::1", "6to4"},
		{"::127.0.0.1", "IPv4-compatible"}, // deprecated ::/96 embedding
		{"::10.0.0.1", "IPv4-compatible"},
	} {
		ip := netip.MustParseAddr(c.addr)
		if got := webhook.Class(ip); got != c.class {
			t.Errorf("Class(%s) = %q, want %q", c.addr, got, c.class)
		}
		var re *webhook.RefusedError
		err := webhook.Policy{}.Check(ip)
		if !errors.As(err, &re) || re.Class != c.class {
			t.Errorf("Check(%s) = %v, want refused as %s", c.addr, err, c.class)
			continue
		}
		if !strings.Contains(err.Error(), "--delivery-allow") || !strings.Contains(err.Error(), c.class) {
			t.Errorf("Check(%s) says %q: it should name the class and the flag", c.addr, err)
		}
		// Listed in the allow-list (as written, mapped or not), it is allowed.
		allow, perr := webhook.ParseAllow(ip.WithZone("").String())
		if perr != nil {
			t.Fatal(perr)
		}
		if err := (webhook.Policy{Allow: allow}).Check(ip); err != nil {
			t.Errorf("Check(%s) with it allowed (%v): %v", c.addr, allow, err)
		}
		// Another allowed range does not open it.
		other, _ := webhook.ParseAllow("198.51.100.0/24,2001:db8::/32")
		if err := (webhook.Policy{Allow: other}).Check(ip); err == nil {
			t.Errorf("Check(%s) allowed by %v", c.addr, other)
		}
	}
	// CheckHost refuses an IP literal at publish, brackets or not, and
	// leaves names to the connection-time check.
	for _, h := range []string{"127.0.0.1", "[::1]", "::1", "169.254.169.254", "[::ffff:127.0.0.1]"} {
		if err := (webhook.Policy{}).CheckHost(h); err == nil {
			t.Errorf("CheckHost(%q) allowed it", h)
		}
	}
	for _, h := range []string{"localhost", "metadata.google.internal", "example.com", "93.184.215.14", "[2606:4700::1111]"} {
		if err := (webhook.Policy{}).CheckHost(h); err != nil {
			t.Errorf("CheckHost(%q): %v", h, err)
		}
	}
}

func TestPolicyAllowsPublic(t *testing.T) {
	for _, a := range []string{"93.184.215.14", "8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.0", "192.167.255.255", "169.253.255.255",
		"100.63.255.255", "100.128.0.0", "223.255.255.255", "2606:4700::1111", "2001:4860:4860::8888", "::ffff:8.8.8.8"} {
		ip := netip.MustParseAddr(a)
		if c := webhook.Class(ip); c != "" {
			t.Errorf("Class(%s) = %q, want public", a, c)
		}
		if err := (webhook.Policy{}).Check(ip); err != nil {
			t.Errorf("Check(%s): %v", a, err)
		}
	}
}

func TestParseAllow(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ,", nil},
		{"127.0.0.1/32", []string{"127.0.0.1/32"}},
		{"127.0.0.1", []string{"127.0.0.1/32"}},
		{" 10.1.2.3/16 , ::1 ", []string{"10.1.0.0/16", "::1/128"}},
		{"::ffff:127.0.0.1", []string{"127.0.0.1/32"}},
		{"::ffff:10.0.0.0/104", []string{"10.0.0.0/8"}}, // a mapped prefix is the IPv4 prefix
		{"fe80::1%eth0", []string{"fe80::1/128"}},
		{"fc00::/7,169.254.169.254/32", []string{"fc00::/7", "169.254.169.254/32"}},
	} {
		got, err := webhook.ParseAllow(c.in)
		if err != nil {
			t.Errorf("ParseAllow(%q): %v", c.in, err)
			continue
		}
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		if !slices.Equal(s, c.want) {
			t.Errorf("ParseAllow(%q) = %v, want %v", c.in, s, c.want)
		}
	}
	for _, in := range []string{"localhost", "127.0.0.1/33", "10.0.0.0/8;", "10.0.0/8", "::1/129", "1.2.3.4/", "/8", "10.0.0.0/-1"} {
		if got, err := webhook.ParseAllow(in); err == nil || !strings.Contains(err.Error(), "CIDR") {
			t.Errorf("ParseAllow(%q) = %v, %v; want an error naming CIDR", in, got, err)
		}
	}
	// A mapped address listed allows the IPv4 address it maps, and back.
	allow, _ := webhook.ParseAllow("::ffff:127.0.0.0/104")
	for _, a := range []string{"127.0.0.1", "::ffff:127.0.0.1"} {
		if err := (webhook.Policy{Allow: allow}).Check(netip.MustParseAddr(a)); err != nil {
			t.Errorf("Check(%s) with %v allowed: %v", a, allow, err)
		}
	}
}

// FuzzAllowList: ParseAllow never panics; what it accepts is a list of
// valid, masked prefixes without zones or IPv4-mapped forms, which prints
// and parses back to itself, and an address the list holds passes the
// policy.
func FuzzAllowList(f *testing.F) {
	for _, s := range []string{"127.0.0.1/32", "127.0.0.1", "10.0.0.0/8,::1", " ::ffff:127.0.0.1 ,fe80::1%eth0", "::ffff:10.0.0.0/100",
		"0.0.0.0/0", "::/0", "1.2.3.4/33", ",,", "a,b", "fe80::%25/64", "::ffff:0:0/96"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := webhook.ParseAllow(in)
		if err != nil {
			if !strings.Contains(err.Error(), "CIDR") {
				t.Fatalf("ParseAllow(%q): %v does not say what is allowed", in, err)
			}
			return
		}
		var printed []string
		for _, p := range got {
			if !p.IsValid() || p != p.Masked() || p.Addr().Zone() != "" || p.Addr().Is4In6() {
				t.Fatalf("ParseAllow(%q) gave %v (valid %v, masked %v, zone %q, mapped %v)", in, p, p.IsValid(), p.Masked(), p.Addr().Zone(), p.Addr().Is4In6())
			}
			printed = append(printed, p.String())
			if err := (webhook.Policy{Allow: got}).Check(p.Addr()); err != nil {
				t.Fatalf("ParseAllow(%q) lists %v, yet its address %s is refused: %v", in, p, p.Addr(), err)
			}
		}
		again, err := webhook.ParseAllow(strings.Join(printed, ","))
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("ParseAllow(%q) = %v printed as %q parses to %v, %v", in, got, strings.Join(printed, ","), again, err)
		}
	})
}
