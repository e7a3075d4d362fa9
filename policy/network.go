package policy

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// NetMode says what a `network` key allows.
type NetMode int

// Network modes.
const (
	NetNone  NetMode = iota // no network at all (allowlist false, docker "none")
	NetAll                  // everything (allowlist true)
	NetNamed                // docker only: join the named docker network ("bridge", "host", a user network)
	NetHosts                // only the listed hosts, through serve's egress proxy
)

// Network is the value of the `network` key of [allowlist] and [docker]: false or true
// (allowlist), "none" or a docker network name (docker), or, for both, a list of host
// patterns reached only through serve's egress proxy:
//
//	network = ["pypi.org", "files.pythonhosted.org:443", "*.example.com"]
//
// A pattern is a host name, "*." followed by a domain (any name below it, not the domain
// itself), or an exact IP literal; ":PORT" limits it to one port, else it allows 80 and 443.
type Network struct {
	Mode NetMode
	Name string // NetNamed: the docker network; NetNone: "none" when written that way
	// list holds NetHosts' entries as written, newline-separated: a string keeps Network
	// comparable with == (callers compare policy sections). Read it with Hosts.
	list string
}

// Hosts parses the host list (NetHosts) into rules, in file order. An entry that does not
// parse comes back with only Raw set and matches nothing; validation reports it.
func (n Network) Hosts() []HostRule {
	if n.Mode != NetHosts || n.list == "" {
		return nil
	}
	var out []HostRule
	for _, s := range strings.Split(n.list, "\n") {
		r, err := ParseHostRule(s)
		if err != nil {
			r = HostRule{Raw: s}
		}
		out = append(out, r)
	}
	return out
}

// entries are the host list entries as written.
func (n Network) entries() []string {
	if n.list == "" {
		return nil
	}
	return strings.Split(n.list, "\n")
}

// HostRule is one entry of a host list.
type HostRule struct {
	Raw     string // as written in the file
	Pattern string // lower-case host, "*.domain", or a canonical IP literal
	Port    int    // 0 = 80 and 443
	// IP is set when Pattern is an IP literal.
	IP netip.Addr
}

// DefaultPorts are the ports a host rule without ":PORT" allows.
var DefaultPorts = []int{80, 443}

// NetworkHosts builds a host-list network from patterns, checking each.
func NetworkHosts(patterns ...string) (Network, error) {
	for i, s := range patterns {
		if _, err := ParseHostRule(s); err != nil {
			return Network{}, fmt.Errorf("network[%d]: %w", i, err)
		}
	}
	if len(patterns) == 0 {
		return Network{}, fmt.Errorf("an empty host list allows nothing: use false / \"none\" for no network")
	}
	return Network{Mode: NetHosts, list: strings.Join(patterns, "\n")}, nil
}

// UnmarshalTOML accepts a bool, a string or an array of strings. Patterns are checked by
// validation, so every bad entry is reported with its line, not just the first.
func (n *Network) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case bool:
		*n = Network{Mode: NetNone}
		if x {
			n.Mode = NetAll
		}
	case string:
		if x == "none" {
			*n = Network{Mode: NetNone, Name: x}
		} else {
			*n = Network{Mode: NetNamed, Name: x}
		}
	case []any:
		list := make([]string, 0, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("network[%d] is %v (%s): write each host as a string, e.g. \"pypi.org\" or \"api.example.com:443\"", i, e, tomlKind(e))
			}
			if strings.ContainsAny(s, "\n\r\x00") {
				return fmt.Errorf("network[%d] is %q: write each host on one line, e.g. \"pypi.org\"", i, s)
			}
			list = append(list, s) // patterns are checked by validate, each with its line
		}
		*n = Network{Mode: NetHosts, list: strings.Join(list, "\n")}
	default:
		return fmt.Errorf("network is %v (%s): use false, true, \"none\", a docker network name, or a list of hosts such as [\"pypi.org\"]", v, tomlKind(v))
	}
	return nil
}

// value is the TOML/JSON form.
func (n Network) value() any {
	switch n.Mode {
	case NetAll:
		return true
	case NetNamed:
		return n.Name
	case NetHosts:
		out := []string{}
		for _, h := range n.Hosts() {
			out = append(out, h.String())
		}
		return out
	}
	if n.Name != "" {
		return n.Name
	}
	return false
}

// MarshalTOML writes the value as the file would hold it.
func (n Network) MarshalTOML() ([]byte, error) {
	switch v := n.value().(type) {
	case bool:
		return []byte(strconv.FormatBool(v)), nil
	case string:
		return []byte(strconv.Quote(v)), nil
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = strconv.Quote(s)
		}
		return []byte("[" + strings.Join(q, ", ") + "]"), nil
	}
	return nil, fmt.Errorf("network: unknown mode %d", n.Mode)
}

// MarshalJSON writes false, true, a docker network name or the list of hosts.
func (n Network) MarshalJSON() ([]byte, error) { return json.Marshal(n.value()) }

// String is the value as written in a policy file.
func (n Network) String() string {
	b, _ := n.MarshalTOML()
	return string(b)
}

// Allows reports whether host:port (host lower-case, no trailing dot, IPv6 without brackets)
// matches a rule, and returns that rule.
func (n Network) Allows(host string, port int) (HostRule, bool) {
	if n.Mode != NetHosts {
		return HostRule{}, false
	}
	for _, r := range n.Hosts() {
		if r.Matches(host, port) {
			return r, true
		}
	}
	return HostRule{}, false
}

// String renders the rule in canonical form ("pypi.org", "*.example.com:8443", "[::1]:443").
func (r HostRule) String() string {
	if r.Pattern == "" {
		return r.Raw
	}
	h := r.Pattern
	if r.IP.Is6() && !r.IP.Is4In6() && r.Port != 0 {
		h = "[" + h + "]"
	}
	if r.Port != 0 {
		return h + ":" + strconv.Itoa(r.Port)
	}
	return h
}

// Ports lists the ports the rule allows.
func (r HostRule) Ports() []int {
	if r.Port == 0 {
		return DefaultPorts
	}
	return []int{r.Port}
}

// Matches reports whether the rule allows host:port. An IP literal matches only a rule that
// names that same address; a wildcard matches names below its domain, never an IP.
func (r HostRule) Matches(host string, port int) bool {
	if r.Pattern == "" || !slices.Contains(r.Ports(), port) {
		return false
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return r.IP.IsValid() && r.IP == ip.Unmap()
	}
	if r.IP.IsValid() {
		return false
	}
	if dom, ok := strings.CutPrefix(r.Pattern, "*."); ok {
		if mutated("egress-wildcard-exact") {
			return strings.Contains(host, dom)
		}
		return strings.HasSuffix(host, "."+dom) && len(host) > len(dom)+1
	}
	return host == r.Pattern
}

// ParseHostRule checks and parses one host pattern. Its errors say what to write instead.
func ParseHostRule(s string) (HostRule, error) {
	r := HostRule{Raw: s}
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return r, fmt.Errorf("empty host: write a host name such as \"pypi.org\", or remove the entry")
	case strings.Contains(t, "://"):
		return r, fmt.Errorf("%q is a URL: write the host only, e.g. %q", s, hostOfURL(t))
	case strings.ContainsAny(t, "/?#"):
		return r, fmt.Errorf("%q has a path: write the host only (the proxy allows every path on a listed host), e.g. %q", s, strings.FieldsFunc(t, func(c rune) bool { return strings.ContainsRune("/?#", c) })[0])
	case strings.ContainsAny(t, "@ \t"):
		return r, fmt.Errorf("%q is not a host name: write it like \"pypi.org\" or \"api.example.com:443\"", s)
	}
	host, port := t, ""
	switch {
	case strings.HasPrefix(t, "["):
		end := strings.Index(t, "]")
		if end < 0 {
			return r, fmt.Errorf("%q: unclosed '[': write an IPv6 address as \"[2001:db8::1]:443\"", s)
		}
		host, port = t[1:end], t[end+1:]
		if port != "" {
			if port[0] != ':' {
				return r, fmt.Errorf("%q: after ']' only \":PORT\" may follow", s)
			}
			port = port[1:]
		}
	case strings.Count(t, ":") == 1:
		host, port, _ = strings.Cut(t, ":")
	}
	if port != "" || strings.HasSuffix(t, ":") {
		p, err := strconv.Atoi(port)
		if err != nil || p < 1 || p > 65535 {
			return r, fmt.Errorf("%q: port %q is not a number in 1..65535 (leave it out to allow 80 and 443)", s, port)
		}
		r.Port = p
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		if ip.Zone() != "" {
			return r, fmt.Errorf("%q: an IPv6 zone is not allowed: name the address alone", s)
		}
		if why := DeniedAddr(ip); why != "" {
			return r, fmt.Errorf("%q is %s, which the egress proxy always refuses (cloud metadata, loopback and private ranges are never reachable by name or by number)", s, why)
		}
		r.Pattern, r.IP = ip.String(), ip
		return r, nil
	}
	if host == "*" || host == "*." {
		return r, fmt.Errorf("%q allows every host: list the hosts by name (an allowlist with everything on it is no allowlist)", s)
	}
	dom, wild := strings.CutPrefix(host, "*.")
	if looksNumeric(strings.ReplaceAll(dom, "*", "")) || strings.Contains(host, ":") {
		return r, fmt.Errorf("%q: IP addresses are allowed only as exact literals such as \"203.0.113.7\", never as patterns", s)
	}
	if strings.Contains(dom, "*") {
		return r, fmt.Errorf("%q: only a leading \"*.\" wildcard is supported, e.g. \"*.example.com\"", s)
	}
	if err := checkHostName(dom); err != nil {
		return r, fmt.Errorf("%q: %w", s, err)
	}
	if wild && !strings.Contains(dom, ".") {
		return r, fmt.Errorf("%q is too broad (every name under a top-level domain): name the domain, e.g. \"*.example.%s\"", s, dom)
	}
	r.Pattern = host
	return r, nil
}

func hostOfURL(u string) string {
	_, rest, _ := strings.Cut(u, "://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}

func looksNumeric(h string) bool {
	for _, l := range strings.Split(h, ".") {
		if l == "" {
			continue
		}
		if strings.Trim(l, "0123456789") != "" {
			return false
		}
	}
	return true
}

// CheckHostName says whether h (any case) is a DNS host name: dot-separated labels of letters,
// digits, '-' and '_', within DNS's lengths; the error says what is wrong.
func CheckHostName(h string) error { return checkHostName(strings.ToLower(h)) }

func checkHostName(h string) error {
	if len(h) > 253 {
		return fmt.Errorf("a host name is at most 253 characters")
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" {
			return fmt.Errorf("empty label (two dots, or a leading dot): write it like \"files.pythonhosted.org\"")
		}
		if len(l) > 63 {
			return fmt.Errorf("label %q is longer than 63 characters", l)
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("label %q starts or ends with '-'", l)
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("%q is not allowed in a host name (letters, digits, '-' and '.' only; write internationalised names in their xn-- form)", c)
			}
		}
	}
	return nil
}

// deniedRanges are never reachable through the egress proxy, whatever the list says and
// whatever a listed name resolves to: cloud metadata, loopback, private, shared (CGNAT),
// link-local, multicast and reserved addresses.
var deniedRanges = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local / cloud metadata (169.254.0.0/16)"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "cloud metadata (fd00:ec2::254)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback (127.0.0.0/8)"},
	{netip.MustParsePrefix("::1/128"), "loopback (::1)"},
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network (0.0.0.0/8)"},
	{netip.MustParsePrefix("::/128"), "the unspecified address (::)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (10.0.0.0/8)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (172.16.0.0/12)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (192.168.0.0/16)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared / CGNAT (100.64.0.0/10)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (192.0.0.0/24)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (198.18.0.0/15)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast (224.0.0.0/4)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (fc00::/7)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local (fe80::/10)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast (ff00::/8)"},
}

// IPv6 forms that carry an IPv4 address: a connection to one of them can end at that IPv4
// address (through a translator or a tunnel relay), so the address inside is judged as well.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")    // well-known NAT64 (RFC 6052): the last 32 bits
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")  // local-use NAT64 (RFC 8215): where the IPv4 sits is the site's choice
	sixToFour  = netip.MustParsePrefix("2002::/16")       // 6to4 (RFC 3056): bits 16..47
	teredo     = netip.MustParsePrefix("2001::/32")       // Teredo (RFC 4380): server in bits 32..63, client obfuscated in the last 32
	v4Compat   = netip.MustParsePrefix("::/96")           // IPv4-compatible (deprecated, RFC 4291): the last 32 bits
	v4Transl   = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (SIIT, RFC 2765): the last 32 bits
)

// CarriedV4 returns the IPv4 address an IPv6 address carries where it can be located (NAT64,
// IPv4-translated, 6to4, ISATAP), with the form's name: a connection to ip can end there.
func CarriedV4(ip netip.Addr) (form string, v4 netip.Addr, ok bool) {
	if !ip.Is6() || ip.Is4In6() {
		return "", netip.Addr{}, false
	}
	b := ip.As16()
	at := func(x []byte) netip.Addr { return netip.AddrFrom4([4]byte(x)) }
	switch {
	case ip == netip.IPv6Unspecified() || ip == netip.IPv6Loopback():
		return "", netip.Addr{}, false
	case nat64.Contains(ip):
		return "NAT64", at(b[12:]), true
	case v4Transl.Contains(ip):
		return "IPv4-translated", at(b[12:]), true
	case sixToFour.Contains(ip):
		return "6to4", at(b[2:6]), true
	}
	// ISATAP (RFC 5214): an interface identifier 0000:5efe or 0200:5efe carries the IPv4
	// address of the host behind the site's router
	if !nat64Local.Contains(ip) && !teredo.Contains(ip) && !v4Compat.Contains(ip) &&
		(b[8]|0x02) == 0x02 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe {
		return "ISATAP", at(b[12:]), true
	}
	return "", netip.Addr{}, false
}

// embeddedV4 judges the IPv4 address an IPv6 address carries ("" = none, or not denied).
func embeddedV4(ip netip.Addr) string {
	if !ip.Is6() || mutated("egress-embedded-v4") {
		return ""
	}
	switch {
	case ip == netip.IPv6Unspecified() || ip == netip.IPv6Loopback():
		return "" // listed ranges of their own
	case nat64Local.Contains(ip):
		return "local-use NAT64 (64:ff9b:1::/48), whose embedded IPv4 address cannot be located"
	case teredo.Contains(ip):
		return "Teredo (2001::/32), a tunnel to an IPv4 address that is never checked"
	case v4Compat.Contains(ip) && !v4Transl.Contains(ip):
		b := ip.As16()
		return "IPv4-compatible (::/96, deprecated), carrying " + netip.AddrFrom4([4]byte(b[12:])).String()
	}
	if form, a, ok := CarriedV4(ip); ok {
		if why := DeniedAddr(a); why != "" {
			return form + " of " + a.String() + ", " + why
		}
	}
	return ""
}

// DeniedAddr says why the egress proxy never connects to ip ("" = not denied). IPv4-mapped
// addresses are judged as IPv4; other IPv6 forms that carry an IPv4 address (NAT64, 6to4,
// IPv4-translated, ISATAP) are judged by the address inside too, and the forms whose inner
// address cannot be checked (Teredo, local-use NAT64, the deprecated IPv4-compatible) are denied.
func DeniedAddr(ip netip.Addr) string {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return "not an address"
	}
	for _, d := range deniedRanges {
		if d.prefix.Contains(ip) {
			return d.why
		}
	}
	return embeddedV4(ip)
}

// IsLoopback reports whether ip is a loopback address (the only range tests may re-open).
func IsLoopback(ip netip.Addr) bool { return ip.Unmap().IsLoopback() }

// NetworkPreset is a named group of hosts the wizard offers.
type NetworkPreset struct {
	Name  string // short id: "pypi", "npm", "github"
	Title string
	Hosts []string
}

// NetworkPresets are the host groups `init` offers when a sandbox needs the network.
var NetworkPresets = []NetworkPreset{
	{Name: "pypi", Title: "PyPI (pip install)", Hosts: []string{"pypi.org", "files.pythonhosted.org"}},
	{Name: "npm", Title: "npm registry (npm install)", Hosts: []string{"registry.npmjs.org"}},
	{Name: "github", Title: "GitHub (git clone over https, release downloads)", Hosts: []string{"github.com", "codeload.github.com", "objects.githubusercontent.com"}},
}

// Preset looks a network preset up by name.
func Preset(name string) (NetworkPreset, bool) {
	for _, p := range NetworkPresets {
		if p.Name == name {
			return p, true
		}
	}
	return NetworkPreset{}, false
}

// ValidateNetwork checks a section's `network` key (key is its dotted name); named: the key
// takes the container engine's network names, and "none" rather than false.
func ValidateNetwork(key string, n Network, named bool) []Problem {
	var ps []Problem
	add := func(k, msg, fix string) { ps = append(ps, Problem{Key: k, Msg: msg, Fix: fix}) }
	switch n.Mode {
	case NetAll:
		if named {
			add(key, "true is not a docker network", `use "none" (no network), a list of hosts such as ["pypi.org"], or a docker network name such as "bridge"`)
		}
	case NetNamed:
		if !named {
			add(key, fmt.Sprintf("%q: %s takes false, true or a list of hosts", n.Name, key), `use false (no network) or a list such as ["pypi.org"]`)
		} else if n.Name == "" || strings.ContainsAny(n.Name, " \t") {
			add(key, fmt.Sprintf("%q is not a network", n.Name), `use "none" (recommended), a list of hosts such as ["pypi.org"], or a docker network name`)
		}
	case NetHosts:
		if n.list == "" {
			none := "false"
			if named {
				none = `"none"`
			}
			add(key, "an empty host list allows nothing", "list hosts such as [\"pypi.org\"], or write "+none+" for no network")
		}
		seen := map[string]int{}
		for i, raw := range n.entries() {
			k := fmt.Sprintf("%s[%d]", key, i)
			r, err := ParseHostRule(raw)
			if err != nil {
				add(k, err.Error(), "") // the message says what to write instead
				continue
			}
			if j, ok := seen[r.String()]; ok {
				add(k, fmt.Sprintf("%q is listed twice (also %s[%d])", raw, key, j), "keep one entry")
			}
			seen[r.String()] = i
		}
	}
	return ps
}
