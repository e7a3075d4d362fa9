package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// init --network-hosts, for allowlist and docker: the host list is written (one host a line),
// loads back as the policy, the entry init checked answers MCP, and explain names the hosts.
// Every wrong use is refused with what is wrong and the fix, and nothing is written.
func TestInitNetworkHosts(t *testing.T) {
	cases := []struct {
		name   string
		docker bool // needs an engine and an image
		args   []string
		net    string   // the section's network as the file says it ("" = refused)
		says   []string // on stderr (refused) or in explain's output (written)
	}{
		{name: "allowlist-hosts", args: []string{"--scheme", "allowlist", "--allow", "wc", "--network-hosts", "pypi", "--network-hosts", "api.example.com:443,*.example.org"},
			net:  `["pypi.org", "files.pythonhosted.org", "api.example.com:443", "*.example.org"]`,
			says: []string{"pypi.org, files.pythonhosted.org, api.example.com:443, *.example.org through serve's egress proxy"}},
		{name: "allowlist-none", args: []string{"--scheme", "allowlist", "--allow", "wc"}, net: "false"},
		{name: "docker-hosts", docker: true, args: []string{"--scheme", "docker", "--network-hosts", "npm,github"},
			net:  `["registry.npmjs.org", "github.com", "codeload.github.com", "objects.githubusercontent.com"]`,
			says: []string{"registry.npmjs.org, github.com, codeload.github.com, objects.githubusercontent.com (through serve's egress proxy"}},
		{name: "conflict", args: []string{"--scheme", "allowlist", "--allow", "wc", "--network", "--network-hosts", "pypi"},
			says: []string{"--network (every host, or with =false none) and --network-hosts (only the listed hosts) conflict: give one of them"}},
		{name: "conflict-false", args: []string{"--scheme", "allowlist", "--allow", "wc", "--network=false", "--network-hosts", "pypi"},
			says: []string{"conflict"}},
		{name: "bad-entries", args: []string{"--scheme", "allowlist", "--allow", "wc", "--network-hosts", "pypi,https://files.example.com/simple,pip,169.254.169.254"},
			says: []string{"--network-hosts: 3 entries are wrong", `"https://files.example.com/simple" is a URL: write the host only, e.g. "files.example.com"`,
				`"pip" is neither a preset nor a full host name: did you mean the preset pypi?`, "cloud metadata"}},
		{name: "one-bad-entry", args: []string{"--scheme", "docker", "--network-hosts", "*"},
			says: []string{`--network-hosts: "*" allows every host: list the hosts by name`}},
		{name: "empty", args: []string{"--scheme", "docker", "--network-hosts", ""},
			says: []string{"--network-hosts is empty: name at least one host or preset (pypi, npm, github)"}},
		{name: "e2b", args: []string{"--scheme", "e2b", "--network-hosts", "pypi"},
			says: []string{"--network-hosts is for the allowlist and docker schemes", "remove --network-hosts"}},
		{name: "docker-every-host", args: []string{"--scheme", "docker", "--network"},
			says: []string{"--network (every host) is for the allowlist scheme: for docker, list the hosts calls need with --network-hosts"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newInitEnv(t)
			args := append([]string{"--yes"}, c.args...)
			if slices.Contains(c.args, "allowlist") { // another scheme refuses allowlist's --workspace
				args = append(args, "--workspace", filepath.Join(e.home, "ws"))
			}
			if c.docker {
				args = append(args, "--image", dockerTestImage(t))
			}
			pol := filepath.Join(e.config, "mcpsandbox", "policy.toml")
			out, stderr, code := e.run(t, "", args...)
			if c.net == "" {
				if code == 0 {
					t.Fatalf("accepted: %s", out)
				}
				for _, s := range c.says {
					if !strings.Contains(stderr, s) {
						t.Errorf("stderr lacks %q:\n%s", s, stderr)
					}
				}
				if _, err := os.Stat(pol); err == nil {
					t.Error("a refused init wrote the policy")
				}
				return
			}
			if code != 0 {
				if c.docker && strings.Contains(stderr, "cannot run in this build") {
					t.Skipf("SKIP: this build's serve cannot run docker: %s", stderr)
				}
				t.Fatalf("exit %d: %s %s", code, out, stderr)
			}
			if !strings.Contains(out, "checked: the entry starts and answers MCP") {
				t.Errorf("init did not check the entry:\n%s", out)
			}
			p, err := policy.Load(pol)
			if err != nil {
				t.Fatal(err)
			}
			n := alsec.Of(p).Net()
			if p.Scheme == dksec.Name {
				n = dksec.Of(p).Net()
			}
			if n.String() != c.net {
				t.Errorf("network %s, want %s", n, c.net)
			}
			b, _ := os.ReadFile(pol)
			if n.Mode == policy.NetHosts && !strings.Contains(string(b), "network = [\n  \""+n.Hosts()[0].String()+"\",\n") {
				t.Errorf("the host list is not written one host a line:\n%s", b)
			}
			if len(c.says) > 0 {
				ex, err := exec.Command(binPath, "explain", "--policy", pol).CombinedOutput()
				if err != nil {
					t.Fatalf("explain: %v\n%s", err, ex)
				}
				for _, s := range c.says {
					if !strings.Contains(string(ex), s) {
						t.Errorf("explain lacks %q:\n%s", s, ex)
					}
				}
			}
		})
	}
}
