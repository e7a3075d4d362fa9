package allowlist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// copyBin copies the binary from to dir/name, executable.
func copyBin(t *testing.T, from, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Skipf("%s: %v", from, err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// init's --allow of a runtime that reserves address space writes a limits.memory it starts under,
// and says so (trial37 F1: the default 256MiB stopped every Go binary, 512MiB too, and node
// below 768MiB); a policy of other commands keeps its memory, and one already higher is kept.
// Catches the mutant init-memory-not-raised.
func TestAllowRaisesMemoryForAnAddressSpaceRuntime(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goprog := copyBin(t, exe, dir, "goprog") // the test binary is a Go program
	node := copyBin(t, "/bin/true", dir, "node")
	def := policy.Default(Scheme.Name).Limits.Memory
	for _, c := range []struct {
		allow []string
		had   policy.Size
		want  policy.Size
		said  string
	}{
		{[]string{"wc", goprog}, def, 1 << 30, "limits.memory is 1GiB, raised from " + def.String() + ": under " + def.String() + ", goprog (a Go program"},
		{[]string{goprog, node}, def, 2 << 30, "goprog (a Go program: its runtime reserves about 700MiB at start); node (V8 reserves about 700MiB at start) could not start"},
		{[]string{"wc", "sort"}, def, def, ""},
		{[]string{goprog}, 3 << 30, 3 << 30, ""},
	} {
		w := &Answers{Workspace: t.TempDir(), Allow: c.allow}
		p := policy.Default(Scheme.Name)
		p.Limits.Memory = c.had
		if err := w.Apply(&generate.Answers{}, p, policy.Network{Mode: policy.NetNone}, false); err != nil {
			t.Fatalf("%v: %v", c.allow, err)
		}
		if p.Limits.Memory != c.want {
			t.Errorf("%v: limits.memory %s, want %s", c.allow, p.Limits.Memory, c.want)
		}
		said := strings.Join(w.Warnings(p), "\n")
		if c.said == "" && strings.Contains(said, "limits.memory") || !strings.Contains(said, c.said) {
			t.Errorf("%v: init said %q, want %q", c.allow, said, c.said)
		}
	}
}

// init's --allow of a toolchain whose builds and tests start other programs says that they fail
// here and where they work (trial37 F3: go test's fork/exec refused, with nothing said before);
// a name with a version or a target triplet is known too; a plain tool is not. Catches the
// mutant init-toolchain-unsaid.
func TestAllowSaysAToolchainsProgramsCannotStart(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, want string
	}{
		{"go", "go (go build and go test run the compiler, the linker and the test binary): the allowlist scheme lets a call execute only its pinned binary"},
		{"make", "make (make runs each recipe through sh)"},
		{"x86_64-linux-gnu-gcc-12", "the compiler driver runs cc1"},
		{"tr", ""},
	} {
		bin := copyBin(t, "/bin/true", dir, c.name)
		w := &Answers{Workspace: t.TempDir(), Allow: []string{bin}}
		p := policy.Default(Scheme.Name)
		if err := w.Apply(&generate.Answers{}, p, policy.Network{Mode: policy.NetNone}, false); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		said := strings.Join(w.Warnings(p), "\n")
		switch {
		case c.want == "" && strings.Contains(said, "docker"):
			t.Errorf("%s: init said %q", c.name, said)
		case c.want != "" && (!strings.Contains(said, c.want) || !strings.Contains(said, "--scheme docker") || !strings.Contains(said, "node --test")):
			t.Errorf("%s: init said %q, want %q, the docker scheme and what works here", c.name, said, c.want)
		}
	}
}
