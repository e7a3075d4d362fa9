package policy_test

import (
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

func withNetwork(section, value string) string {
	src := validAllowlist
	if section == "docker" {
		src = strings.Replace(src, `scheme = "allowlist"`, `scheme = "docker"`, 1)
		src = strings.Replace(src, "[allowlist]", "[docker]\nimage = \"python:3.12-slim\"\nnetwork = "+value+"\n\n[allowlist]", 1)
		return src
	}
	return strings.Replace(src, `workspace = "/srv/ws"`, `workspace = "/srv/ws"`+"\nnetwork = "+value, 1)
}

// Old files keep meaning what they meant, and hash as before the key took lists.
func TestNetworkOldForms(t *testing.T) {
	for _, c := range []struct {
		section, value string
		mode           policy.NetMode
		oldBool        bool
		oldName        string
		json           string
	}{
		{"allowlist", "false", policy.NetNone, false, "", `false`},
		{"allowlist", "true", policy.NetAll, true, "", `true`},
		{"docker", `"none"`, policy.NetNone, false, "none", `"none"`},
		{"docker", `"bridge"`, policy.NetNamed, false, "bridge", `"bridge"`},
	} {
		p, err := policy.Parse("p.toml", []byte(withNetwork(c.section, c.value)))
		if err != nil {
			t.Fatalf("%s network = %s: %v", c.section, c.value, err)
		}
		var n policy.Network
		var js []byte
		if c.section == "docker" {
			n = dksec.Of(p).Net()
			if dksec.Of(p).NetworkName() != c.oldName {
				t.Errorf("docker network %s: network joined %q, want %q", c.value, dksec.Of(p).NetworkName(), c.oldName)
			}
			js, _ = json.Marshal(dksec.Of(p))
		} else {
			n = alsec.Of(p).Net()
			if alsec.Of(p).AllHosts() != c.oldBool {
				t.Errorf("allowlist network %s: all hosts %v, want %v", c.value, alsec.Of(p).AllHosts(), c.oldBool)
			}
			js, _ = json.Marshal(alsec.Of(p))
		}
		if n.Mode != c.mode {
			t.Errorf("%s network = %s: mode %d, want %d", c.section, c.value, n.Mode, c.mode)
		}
		if !strings.Contains(string(js), `"network":`+c.json) {
			t.Errorf("%s network = %s: JSON %s lacks \"network\":%s", c.section, c.value, js, c.json)
		}
		roundTrip(t, p)
	}
	// The hash of a default docker policy is what it was when network was a plain string:
	// the JSON of the section is unchanged.
	d := policy.Default(dksec.Name)
	js, _ := json.Marshal(dksec.Of(d))
	if !strings.Contains(string(js), `"network":"none"`) {
		t.Errorf("default docker JSON %s", js)
	}
}

func roundTrip(t *testing.T, p *policy.Policy) {
	t.Helper()
	b, err := policy.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := policy.Parse("saved.toml", b)
	if err != nil {
		t.Fatalf("saved policy does not parse: %v\n%s", err, b)
	}
	if q.Hash() != p.Hash() {
		t.Errorf("hash changed through Marshal/Parse:\n%s", b)
	}
}

func TestNetworkHostList(t *testing.T) {
	for _, section := range []string{"allowlist", "docker"} {
		p, err := policy.Parse("p.toml", []byte(withNetwork(section, `["pypi.org", "Files.PythonHosted.org.:443", "*.example.com", "203.0.113.7", "[2001:db8::1]:8443"]`)))
		if err != nil {
			t.Fatalf("%s: %v", section, err)
		}
		n := alsec.Of(p).Net()
		if section == "docker" {
			n = dksec.Of(p).Net()
			if dksec.Of(p).NetworkName() != "none" {
				t.Errorf("docker host list: network joined %q, want \"none\" (the proxy is the only way out)", dksec.Of(p).NetworkName())
			}
		} else if alsec.Of(p).AllHosts() {
			t.Error("allowlist host list: all hosts, want only the listed ones")
		}
		if n.Mode != policy.NetHosts || len(n.Hosts()) != 5 {
			t.Fatalf("%s: %+v", section, n)
		}
		want := []string{"pypi.org", "files.pythonhosted.org:443", "*.example.com", "203.0.113.7", "[2001:db8::1]:8443"}
		for i, h := range n.Hosts() {
			if h.String() != want[i] {
				t.Errorf("%s rule %d = %q, want %q", section, i, h.String(), want[i])
			}
		}
		roundTrip(t, p)
		js, _ := json.Marshal(n)
		if string(js) != `["pypi.org","files.pythonhosted.org:443","*.example.com","203.0.113.7","[2001:db8::1]:8443"]` {
			t.Errorf("JSON %s", js)
		}
	}
}

func TestHostRuleMatches(t *testing.T) {
	n, err := policy.NetworkHosts("pypi.org", "files.pythonhosted.org:443", "*.example.com", "203.0.113.7", "[2001:db8::1]:8443")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		port int
		ok   bool
	}{
		{"pypi.org", 443, true},
		{"pypi.org", 80, true},
		{"PyPI.org.", 443, true},
		{"pypi.org", 22, false},
		{"evil.pypi.org", 443, false},
		{"pypi.org.evil.test", 443, false},
		{"files.pythonhosted.org", 443, true},
		{"files.pythonhosted.org", 80, false},
		{"a.example.com", 443, true},
		{"a.b.example.com", 80, true},
		{"example.com", 443, false},
		{"badexample.com", 443, false},
		// a wildcard matches below its domain only: never a name that merely contains it
		{"a.example.com.evil.test", 443, false},
		{"evil-example.com", 443, false},
		{"example.com.evil.test", 443, false},
		{"203.0.113.7", 443, true},
		{"203.0.113.8", 443, false},
		{"::ffff:203.0.113.7", 80, true},
		{"2001:db8::1", 8443, true},
		{"[2001:db8:0::1]", 8443, true},
		{"2001:db8::1", 443, false},
	} {
		if _, ok := n.Allows(c.host, c.port); ok != c.ok {
			t.Errorf("Allows(%q, %d) = %v, want %v", c.host, c.port, ok, c.ok)
		}
	}
	// A wildcard never matches an IP; a name never matches an IP rule.
	w, _ := policy.NetworkHosts("*.113.7.example")
	if _, ok := w.Allows("1.113.7.example", 443); !ok {
		t.Error("wildcard below a domain with numeric labels should match names")
	}
}

func TestHostRuleRejects(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "empty host"},
		{"   ", "empty host"},
		{"https://pypi.org/simple", `write the host only, e.g. "pypi.org"`},
		{"pypi.org/simple", `has a path`},
		{"pypi.org:0", "not a number in 1..65535"},
		{"pypi.org:65536", "not a number in 1..65535"},
		{"pypi.org:http", "not a number in 1..65535"},
		{"pypi.org:", "not a number in 1..65535"},
		{"*", "allows every host"},
		{"*.com", "too broad"},
		{"a.*.com", `only a leading "*." wildcard`},
		{"foo*.com", `only a leading "*." wildcard`},
		{"10.0.0.*", "exact literals"},
		{"*.0.113.7", "exact literals"},
		{"169.254.169.254", "cloud metadata"},
		{"[fd00:ec2::254]:80", "cloud metadata"},
		{"127.0.0.1", "loopback"},
		{"192.168.1.10", "private"},
		{"100.64.0.1", "CGNAT"},
		{"user@host.com", "not a host name"},
		{"bad_chär.com", "not allowed in a host name"},
		{"a..b", "empty label"},
		{"-a.com", "starts or ends with '-'"},
		{"[::1", "unclosed"},
	} {
		_, err := policy.ParseHostRule(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseHostRule(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

func TestDeniedAddr(t *testing.T) {
	for _, c := range []struct {
		ip     string
		denied bool
	}{
		{"169.254.169.254", true}, {"fd00:ec2::254", true}, {"127.0.0.1", true}, {"127.8.9.10", true},
		{"::1", true}, {"10.1.2.3", true}, {"172.31.0.1", true}, {"192.168.0.1", true}, {"100.100.100.100", true},
		{"0.0.0.0", true}, {"::", true}, {"224.0.0.251", true}, {"ff02::fb", true}, {"fe80::1", true},
		{"fc00::1", true}, {"::ffff:127.0.0.1", true}, {"::ffff:169.254.169.254", true}, {"64:ff9b::a9fe:a9fe", true},
		{"255.255.255.255", true},
		{"203.0.113.7", false}, {"151.101.0.223", false}, {"2a04:4e42::223", false}, {"172.32.0.1", false},
		{"64:ff9b::cb00:7107", false},
		// IPv6 forms that carry an IPv4 address (issue 22): judged by the address inside
		{"64:ff9b::7f00:1", true}, {"64:ff9b::a00:1", true}, {"2002:a9fe:a9fe::1", true}, {"2002:7f00:1::", true},
		{"2002:c0a8:101:1::1", true}, {"::ffff:0:a00:1", true}, {"2001:db8::5efe:a00:1", true}, {"2001:db8::200:5efe:7f00:1", true},
		{"64:ff9b:1::a00:1", true}, {"64:ff9b:1:cb00:71:700::", true}, {"::a00:1", true}, {"::cb00:7107", true},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", true},
		{"2002:cb00:7107::1", false}, {"::ffff:0:cb00:7107", false}, {"2001:db8::5efe:cb00:7107", false},
	} {
		if got := policy.DeniedAddr(netip.MustParseAddr(c.ip)) != ""; got != c.denied {
			t.Errorf("DeniedAddr(%s) denied=%v, want %v", c.ip, got, c.denied)
		}
	}
}

// Every bad entry is reported on its own line with its fix, not just the first one.
func TestNetworkProblemsLocated(t *testing.T) {
	src := withNetwork("allowlist", "[\n  \"pypi.org\",\n  \"https://evil.test/x\",  # a URL\n  \"*\",\n  \"pypi.org\",\n]")
	_, err := policy.Parse("p.toml", []byte(src))
	var pe *policy.Error
	if !errors.As(err, &pe) {
		t.Fatalf("want *Error, got %v", err)
	}
	base := strings.Count(src[:strings.Index(src, "network = [")], "\n") + 1
	want := map[string]struct {
		line int
		msg  string
	}{
		"allowlist.network[1]": {base + 2, `write the host only, e.g. "evil.test"`},
		"allowlist.network[2]": {base + 3, "allows every host"},
		"allowlist.network[3]": {base + 4, "listed twice"},
	}
	if len(pe.Problems) != len(want) {
		t.Errorf("problems: %v", err)
	}
	for _, pr := range pe.Problems {
		w, ok := want[pr.Key]
		if !ok {
			t.Errorf("unexpected problem %s", pr)
			continue
		}
		if pr.Line != w.line || !strings.Contains(pr.Msg, w.msg) || strings.Contains(pr.String(), "fix: fix") {
			t.Errorf("%s: got %s, want line %d and %q", pr.Key, pr, w.line, w.msg)
		}
	}
}

func TestNetworkWrongForms(t *testing.T) {
	for _, c := range []struct{ section, value, key, want string }{
		{"allowlist", `"bridge"`, "allowlist.network", "takes false, true or a list of hosts"},
		{"docker", `true`, "docker.network", "true is not a docker network"},
		{"docker", `[]`, "docker.network", "empty host list"},
		{"allowlist", `[]`, "allowlist.network", "empty host list"},
		{"docker", `"my net"`, "docker.network", "is not a network"},
		{"allowlist", `["pypi.org", 443]`, "allowlist.network", "write each host as a string"},
		{"docker", `42`, "docker.network", "a list of hosts such as"},
	} {
		src := withNetwork(c.section, c.value)
		_, err := policy.Parse("p.toml", []byte(src))
		var pe *policy.Error
		if !errors.As(err, &pe) || len(pe.Problems) != 1 {
			t.Errorf("%s network = %s: want one problem, got %v", c.section, c.value, err)
			continue
		}
		pr := pe.Problems[0]
		line := strings.Count(src[:strings.Index(src, "network = ")], "\n") + 1
		if pr.Key != c.key || pr.Line != line || !strings.Contains(pr.Msg, c.want) {
			t.Errorf("%s network = %s: got %s, want %s at line %d with %q", c.section, c.value, pr, c.key, line, c.want)
		}
	}
}

// SetNet replaces a host list (as the controls do); the effective network and the saved file
// follow.
func TestNetworkSetReplacesList(t *testing.T) {
	p, err := policy.Parse("p.toml", []byte(withNetwork("allowlist", `["pypi.org"]`)))
	if err != nil {
		t.Fatal(err)
	}
	alsec.Of(p).SetNet(policy.Network{Mode: policy.NetAll})
	if alsec.Of(p).Net().Mode != policy.NetAll {
		t.Error("allowlist SetNet(all) must mean all")
	}
	b, _ := policy.Marshal(p)
	if !strings.Contains(string(b), "network = true") {
		t.Errorf("saved:\n%s", b)
	}
	p.Scheme = dksec.Name
	dksec.Of(p).SetNet(policy.Network{Mode: policy.NetNamed, Name: "host"})
	if n := dksec.Of(p).Net(); n.Mode != policy.NetNamed || n.Name != "host" {
		t.Errorf("docker SetNet(host): %+v", n)
	}
	// Sections stay comparable with == (callers compare them).
	if alsec.Of(p.Clone()).Egress != alsec.Of(p).Egress {
		t.Error("a clone's network differs")
	}
}

func TestPresetsAreValid(t *testing.T) {
	for _, name := range []string{"pypi", "npm", "github"} {
		pr, ok := policy.Preset(name)
		if !ok {
			t.Fatalf("preset %s missing", name)
		}
		if _, err := policy.NetworkHosts(pr.Hosts...); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
}
