package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Pinning a binary opens its install prefix for reading, but never a home or a credentials
// dir: wc copied to ~/bin or ~/.cargo/bin (where cargo keeps credentials.toml) is pinned, and
// what it may read beside the system is ~/.cargo's lib dir at most, not ~ or ~/.cargo; a
// pyenv-style prefix under a home gives its lib dir; a prefix outside homes stays whole.
func TestPinnedPrefixNeverOpensAHome(t *testing.T) {
	root := t.TempDir()
	os.Chmod(root, 0o755)
	home := filepath.Join(root, "home", "me")
	t.Setenv("HOME", home)
	wc, err := os.ReadFile("/usr/bin/wc")
	if err != nil {
		t.Skipf("no /usr/bin/wc to copy: %v", err)
	}
	put := func(rel string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, wc, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	os.MkdirAll(filepath.Join(home, ".pyenv/versions/3.12/lib"), 0o755)
	os.MkdirAll(filepath.Join(home, ".cargo/lib"), 0o755)
	os.WriteFile(filepath.Join(home, ".cargo/credentials.toml"), []byte("token = \"secret\"\n"), 0o644)
	for _, c := range []struct {
		rel  string
		want []string
	}{
		{"home/me/bin/wc", nil},
		{"home/me/.local/bin/wc", nil},
		{"home/me/.cargo/bin/wc", []string{filepath.Join(home, ".cargo/lib")}},
		{"home/me/.pyenv/versions/3.12/bin/wc", []string{filepath.Join(home, ".pyenv/versions/3.12/lib")}},
		{"opt/tool/bin/wc", []string{filepath.Join(root, "opt/tool")}},
	} {
		pc, err := pin(policy.Command{Name: "wc", Path: put(c.rel)})
		if err != nil {
			t.Fatalf("pin %s: %v", c.rel, err)
		}
		if !slices.Equal(pc.readDirs, c.want) {
			t.Errorf("pin %s: reads %q, want %q", c.rel, pc.readDirs, c.want)
		}
	}
	if got := runtimeDirs("/usr/bin/wc", home); len(got) != 1 || got[0] != "/usr" {
		t.Errorf("/usr/bin/wc: %q", got)
	}
	if got := runtimeDirs("/wc", home); got != nil {
		t.Errorf("/wc: %q", got)
	}
}
