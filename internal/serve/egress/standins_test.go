//go:build testhooks

package egress

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// The stand-in hook (MCPSANDBOX_EGRESS_STANDINS) re-opens exactly the listed ip:ports: the
// listed stand-in answers, a name mapped to loopback without a port (another loopback server)
// and a listed name on another port stay denied, and a name outside the map does not resolve
// even though the test resolver in Options knows it: the hook replaces the resolver, and
// TestOnlyAllowLoopback and TestOnlyAllowAddrs given by the caller (another test hook) do not widen it.
func TestStandInsOpenOnlyListedAddrs(t *testing.T) {
	allowed, other := newServer(t, true), newServer(t, false)
	t.Setenv(StandInsEnv, fmt.Sprintf("allowed.test=127.0.0.1:%d, rebind.test=127.0.0.1", allowed.port))
	port, oport := strconv.Itoa(allowed.port), strconv.Itoa(other.port)
	f := startProxy(t, rules(t, "allowed.test:"+port, "allowed.test:"+oport, "rebind.test:"+oport, "known.test:"+oport),
		Options{Resolver: &mapResolver{m: map[string][]netip.Addr{"known.test": lo}}, TestOnlyAllowLoopback: true,
			TestOnlyAllowAddrs: []netip.AddrPort{netip.AddrPortFrom(lo[0], uint16(other.port))}})
	if code, b, err := get(t, f.client(), "https://allowed.test:"+port+"/"); err != nil || code != 200 {
		t.Fatalf("the stand-in's exact address: %d %q %v", code, b, err)
	}
	for _, target := range []string{"allowed.test:" + oport, "rebind.test:" + oport} {
		code, b, err := get(t, f.client(), "http://"+target+"/")
		if err != nil || code != 403 || !strings.Contains(b, "loopback") {
			t.Errorf("%s (loopback, not re-opened): %d %q %v", target, code, b, err)
		}
	}
	code, b, err := get(t, f.client(), "http://known.test:"+oport+"/")
	if err != nil || code != 502 || !strings.Contains(b, StandInsEnv) {
		t.Errorf("a name outside the stand-in map: %d %q %v", code, b, err)
	}
	if other.hits.Load() != 0 || allowed.hits.Load() != 1 {
		t.Errorf("hits: other %d (want 0), allowed %d (want 1)", other.hits.Load(), allowed.hits.Load())
	}
}

// Negative control for the test above: without the hook, the same proxy reaches none of it.
func TestStandInsOffByDefault(t *testing.T) {
	allowed := newServer(t, true)
	port := strconv.Itoa(allowed.port)
	f := startProxy(t, rules(t, "allowed.test:"+port), Options{Resolver: &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo}}})
	code, b, err := get(t, f.client(), "http://allowed.test:"+port+"/")
	if err != nil || code != 403 || !strings.Contains(b, "loopback") || allowed.hits.Load() != 0 {
		t.Errorf("without the hook: %d %q %v hits %d", code, b, err, allowed.hits.Load())
	}
	if StandInsWarning() != "" {
		t.Errorf("warning without the hook: %q", StandInsWarning())
	}
}

func TestParseStandIns(t *testing.T) {
	s, err := ParseStandIns("A.test.=127.0.0.1:80,a.test=127.0.0.1:443,b.test=[::1]:8080,c.test=127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.Open()); got != "[127.0.0.1:80 127.0.0.1:443 [::1]:8080]" {
		t.Errorf("open %s", got)
	}
	if got := s.String(); got != "a.test=127.0.0.1, b.test=::1, c.test=127.0.0.2; re-opened: 127.0.0.1:80, 127.0.0.1:443, [::1]:8080" {
		t.Errorf("string %s", got)
	}
	for _, bad := range []string{"", "x", "=127.0.0.1", "a=pypi.org:443", "a=127.0.0.1:0"} {
		if _, err := ParseStandIns(bad); err == nil || !strings.Contains(err.Error(), StandInsEnv) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// malformed: fails closed, and the warning says so
	t.Setenv(StandInsEnv, "nonsense")
	o := Options{}
	applyStandIns(&o)
	if _, err := o.Resolver.LookupNetIP(t.Context(), "ip", "a.test"); err == nil || len(o.TestOnlyAllowAddrs) != 0 {
		t.Errorf("malformed hook did not fail closed: %v %v", err, o.TestOnlyAllowAddrs)
	}
	if w := StandInsWarning(); !strings.Contains(w, "malformed") {
		t.Errorf("warning %q", w)
	}
}
