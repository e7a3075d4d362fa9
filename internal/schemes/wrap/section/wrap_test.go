package section

import (
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A wrap policy loads with its defaults, round-trips through Marshal with the same hash, and
// every bad key is a problem at its file:line.
func TestWrapSection(t *testing.T) {
	good := `version = 1
scheme = "wrap"
name = "everything"
[wrap]
command = ["npx", "-y", "@modelcontextprotocol/server-everything"]
env = ["GITHUB_TOKEN"]
network = ["api.github.com"]
[wrap.tools]
deny = ["delete_*"]
`
	p, err := policy.Parse("w.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if !Of(p).Tools.HideDenied || Of(p).Tools.MaxArgumentBytes != 64<<10 || Of(p).Net().Mode != policy.NetHosts {
		t.Fatalf("defaults or network: %+v", Of(p))
	}
	if got := Of(p).Tools.WrapVerdict("delete_repo"); !strings.Contains(got, "wrap.tools.deny[0]") {
		t.Errorf("verdict on a denied tool: %q", got)
	}
	if got := Of(p).Tools.WrapVerdict("list_repos"); got != "" {
		t.Errorf("verdict on an allowed tool: %q", got)
	}
	Of(p).Tools.Allow = []string{"get_*"}
	if got := Of(p).Tools.WrapVerdict("list_repos"); !strings.Contains(got, "wrap.tools.allow") {
		t.Errorf("verdict on a tool allow does not list: %q", got)
	}
	Of(p).Tools.Allow = nil
	b, err := policy.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := policy.Parse("back.toml", b)
	if err != nil || back.Hash() != p.Hash() {
		t.Fatalf("round trip: %v\n%s", err, b)
	}
	bad := `version = 1
scheme = "wrap"
name = "x"
[wrap]
read = ["relative/dir"]
write = ["/"]
env = ["PATH", "LD_PRELOAD", "not a name"]
network = "bridge"
[wrap.tools]
deny = ["[unclosed"]
max_argument_bytes = 0
`
	_, err = policy.Parse("bad.toml", []byte(bad))
	if err == nil {
		t.Fatal("a bad wrap section loads")
	}
	for _, want := range []string{"bad.toml:5: wrap.read[0]", "bad.toml:6: wrap.write[0]", "bad.toml:7: wrap.env[0]", "wrap.env[1]", "wrap.env[2]",
		"bad.toml:8: wrap.network", "bad.toml:10: wrap.tools.deny[0]", "bad.toml:11: wrap.tools.max_argument_bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

// A wrap policy that leaves limits.memory and limits.pids unset gets wrap's own defaults (a Go
// or node server dies at start under the common 256MiB); set ones are kept, and other schemes
// keep the common defaults.
func TestWrapLimitDefaults(t *testing.T) {
	p, err := policy.Parse("w.toml", []byte("version = 1\nscheme = \"wrap\"\nname = \"x\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Limits.Memory != WrapDefaultMemory || p.Limits.Pids != WrapDefaultPids {
		t.Errorf("unset: memory %d pids %d, want %d %d", p.Limits.Memory, p.Limits.Pids, WrapDefaultMemory, WrapDefaultPids)
	}
	if d := policy.Default(Name); d.Limits.Memory != WrapDefaultMemory || d.Limits.Pids != WrapDefaultPids {
		t.Errorf("Default(wrap): memory %d pids %d", d.Limits.Memory, d.Limits.Pids)
	}
	p, err = policy.Parse("w.toml", []byte("version = 1\nscheme = \"wrap\"\nname = \"x\"\n[limits]\nmemory = \"1GiB\"\npids = 100\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Limits.Memory != 1<<30 || p.Limits.Pids != 100 {
		t.Errorf("set: memory %d pids %d, want the file's", p.Limits.Memory, p.Limits.Pids)
	}
	q := policy.Default("") // no scheme: the common defaults
	if q.Limits.Memory != 256<<20 || q.Limits.Pids != 64 {
		t.Errorf("no scheme: memory %d pids %d, want the common defaults", q.Limits.Memory, q.Limits.Pids)
	}
}
