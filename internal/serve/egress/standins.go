//go:build testhooks

package egress

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"sort"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/internal/testhooks"
)

// StandInsEnv is a TEST HOOK, compiled only into test builds (-tags testhooks: this file and
// internal/testhooks); a release binary neither reads nor names it (standins_release.go). The
// harness of a test build hands it to the serve it spawns:
//
//	MCPSANDBOX_EGRESS_STANDINS="allowed.test=127.0.0.1:8080,allowed.test=127.0.0.1:8443,rebind.test=127.0.0.1"
//
// When it is set, the proxy resolves names ONLY through this map (a name not in it does not
// resolve: nothing reaches a real resolver or a real host), and each "name=ip:port" entry
// re-opens exactly that ip:port past the denied ranges (loopback included), where the stand-in
// server listens. A "name=ip" entry (no port) only maps the name: the address stays denied,
// which is how the harness stages a listed name that resolves to loopback. Every other denied
// address stays denied. A malformed value fails closed: nothing resolves. serve warns loudly
// (see StandInsWarning) whenever it is set; nothing in a real deployment sets it.
const StandInsEnv = testhooks.StandInsVar

// StandIns is a parsed MCPSANDBOX_EGRESS_STANDINS value.
type StandIns struct {
	names map[string][]netip.Addr
	open  []netip.AddrPort
}

// ParseStandIns parses the variable's value ("name=ip[:port],...").
func ParseStandIns(v string) (*StandIns, error) {
	s := &StandIns{names: map[string][]netip.Addr{}}
	for i, kv := range strings.Split(v, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		name, addr, ok := strings.Cut(kv, "=")
		name = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
		if !ok || name == "" {
			return nil, fmt.Errorf("%s entry %d %q: want name=ip:port or name=ip", StandInsEnv, i+1, kv)
		}
		var ip netip.Addr
		if ap, err := netip.ParseAddrPort(strings.TrimSpace(addr)); err == nil {
			if ap.Port() == 0 {
				return nil, fmt.Errorf("%s entry %d %q: port 0", StandInsEnv, i+1, kv)
			}
			ip = ap.Addr().Unmap()
			s.open = append(s.open, netip.AddrPortFrom(ip, ap.Port()))
		} else if a, err := netip.ParseAddr(strings.Trim(strings.TrimSpace(addr), "[]")); err == nil && a.Zone() == "" {
			ip = a.Unmap()
		} else {
			return nil, fmt.Errorf("%s entry %d %q: %q is not an ip or ip:port", StandInsEnv, i+1, kv, addr)
		}
		if !containsAddr(s.names[name], ip) {
			s.names[name] = append(s.names[name], ip)
		}
	}
	if len(s.names) == 0 {
		return nil, fmt.Errorf("%s is set but names nothing", StandInsEnv)
	}
	return s, nil
}

func containsAddr(l []netip.Addr, a netip.Addr) bool {
	for _, x := range l {
		if x == a {
			return true
		}
	}
	return false
}

// LookupNetIP resolves a stand-in name; any other name does not resolve.
func (s *StandIns) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	if s != nil {
		for _, a := range s.names[strings.TrimSuffix(strings.ToLower(host), ".")] {
			if network == "ip" || (network == "ip4") == a.Is4() {
				out = append(out, a)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("lookup %s: no such host (%s is set: only its stand-in names resolve)", host, StandInsEnv)
	}
	return out, nil
}

// Open is the exact ip:ports the stand-ins re-open.
func (s *StandIns) Open() []netip.AddrPort {
	if s == nil {
		return nil
	}
	return append([]netip.AddrPort(nil), s.open...)
}

// String lists the mapping, sorted, for the warning.
func (s *StandIns) String() string {
	var l []string
	for n, as := range s.names {
		var a []string
		for _, x := range as {
			a = append(a, x.String())
		}
		l = append(l, n+"="+strings.Join(a, "/"))
	}
	sort.Strings(l)
	var o []string
	for _, x := range s.open {
		o = append(o, x.String())
	}
	return strings.Join(l, ", ") + "; re-opened: " + strings.Join(o, ", ")
}

// standInsFromEnv is the environment's stand-ins: (nil, nil) when the variable is unset.
func standInsFromEnv() (*StandIns, error) {
	v, ok := testhooks.StandIns()
	if !ok {
		return nil, nil
	}
	return ParseStandIns(v)
}

// StandInsWarning is the warning serve must log at start when the test hook is on ("" when
// off), or the error that makes every egress name unresolvable.
func StandInsWarning() string {
	s, err := standInsFromEnv()
	switch {
	case err != nil:
		return fmt.Sprintf("TEST HOOK %s is set and malformed (%v): the egress proxy resolves no name at all; unset it", StandInsEnv, err)
	case s == nil:
		return ""
	}
	return fmt.Sprintf("TEST HOOK %s is set: the egress proxy resolves only these stand-in names and re-opens exactly these loopback/private addresses (%s). Never set it outside the harness and tests; unset it", StandInsEnv, s)
}

var warnOnce sync.Once

// applyStandIns puts the environment's stand-ins into o (replacing its resolver, TestOnlyAllowLoopback
// and TestOnlyAllowAddrs: only the stand-ins' exact addresses are re-opened), and logs the warning once
// per process.
func applyStandIns(o *Options) {
	s, err := standInsFromEnv()
	if s == nil && err == nil {
		return
	}
	warnOnce.Do(func() {
		l := o.Logger
		if l == nil {
			l = slog.Default()
		}
		l.Warn(StandInsWarning())
	})
	if err != nil {
		o.Resolver, o.TestOnlyAllowLoopback, o.TestOnlyAllowAddrs = (*StandIns)(nil), false, nil // fail closed: nothing resolves
		return
	}
	// exactly the stand-ins' addresses: nothing else a caller re-opened (loopback as a whole, or
	// other addresses) stays open beside them
	o.Resolver, o.TestOnlyAllowLoopback, o.TestOnlyAllowAddrs = s, false, s.Open()
}
