package policy_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

func TestProtectedExtendsAndTrims(t *testing.T) {
	a := alsec.Allowlist{Protect: []string{"scripts/hooks", "!CLAUDE.md", "!.venv"}}
	got := a.Protected()
	if slices.Contains(got, "CLAUDE.md") || slices.Contains(got, ".venv") || !slices.Contains(got, "scripts/hooks") || !slices.Contains(got, ".husky") {
		t.Errorf("Protected() = %v", got)
	}
	if len((&alsec.Allowlist{}).Protected()) != len(policy.DefaultProtect) {
		t.Error("no protect key: not the default list")
	}
	for _, keep := range []string{"Makefile", "package.json", "pyproject.toml"} {
		if slices.Contains(policy.DefaultProtect, keep) {
			t.Errorf("%s is edited on purpose and must stay writable by default", keep)
		}
	}
}

func TestProtectValidation(t *testing.T) {
	src := strings.Replace(validAllowlist, "[allowlist]\n", "[allowlist]\nprotect = [\"/etc/x\", \"!Makefile\", \"a/../b\", \"[x\", \"ok/*\"]\nhardlinks = \"sometimes\"\n", 1)
	_, err := policy.Parse("p.toml", []byte(src))
	if err == nil {
		t.Fatal("bad protect entries accepted")
	}
	msg := err.Error()
	for _, want := range []string{"allowlist.protect[0]", "allowlist.protect[1]", "allowlist.protect[2]", "allowlist.protect[3]", "allowlist.hardlinks", "p.toml:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("problem %q missing from:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "protect[4]") {
		t.Errorf("a valid glob refused:\n%s", msg)
	}
	ok := strings.Replace(validAllowlist, "[allowlist]\n", "[allowlist]\nprotect = [\"!CLAUDE.md\", \"docs/agents/*.md\"]\nhardlinks = \"read-only\"\n", 1)
	p, err := policy.Parse("p.toml", []byte(ok))
	if err != nil || alsec.Of(p).HardLinks != alsec.HardLinksReadOnly || len(alsec.Of(p).Protect) != 2 {
		t.Fatalf("valid protect/hardlinks: %v %+v", err, p)
	}
	if c := p.Clone(); &alsec.Of(c).Protect[0] == &alsec.Of(p).Protect[0] {
		t.Error("Clone shares the protect list")
	}
}

func TestCheckFileSafe(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix modes only")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "policy.toml")
	os.WriteFile(f, []byte("x"), 0o644)
	if err := policy.CheckFileSafe(f); err != nil {
		t.Errorf("0644 file refused: %v", err)
	}
	os.Chmod(f, 0o666)
	if err := policy.CheckFileSafe(f); err == nil || !strings.Contains(err.Error(), "chmod o-w") {
		t.Errorf("world-writable file: %v", err)
	}
	os.Chmod(f, 0o644)
	os.Chmod(dir, 0o777)
	if err := policy.CheckFileSafe(f); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("world-writable directory: %v", err)
	}
	os.Chmod(dir, 0o777|os.ModeSticky)
	if err := policy.CheckFileSafe(f); err != nil {
		t.Errorf("sticky directory (like /tmp) refused: %v", err)
	}
	os.Chmod(dir, 0o755)
	if os.Geteuid() == 0 {
		os.Chown(f, 4321, 4321)
		if err := policy.CheckFileSafe(f); err == nil || !strings.Contains(err.Error(), "uid 4321") {
			t.Errorf("file of another uid: %v", err)
		}
	}
	good := filepath.Join(dir, "good.toml")
	os.WriteFile(good, []byte(validAllowlist), 0o600)
	if p, err := policy.Load(good); err != nil || p.File != good {
		t.Errorf("Load does not record its file: %v", err)
	}
}
