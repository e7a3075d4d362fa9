package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A user who builds from a git checkout sees the revision they built, and whether their tree
// was modified, instead of "dev".
func TestVersionNamesTheRevision(t *testing.T) {
	parallel(t)
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("SKIP: not a git checkout (or no git): %v; the version's rendering is unit-tested in cmd/mcpsandbox", err)
	}
	st, err := exec.Command("git", "status", "--porcelain").Output()
	if err != nil {
		t.Skipf("SKIP: git status: %v", err)
	}
	if fi, err := os.Stat("../.git"); err == nil && !fi.IsDir() {
		t.Skip("SKIP: this is a git worktree (.git is a file), where the Go toolchain records no VCS information; a clone is stamped")
	}
	bin := filepath.Join(t.TempDir(), "mcpsandbox")
	// -buildvcs=true on the command line: the environment's GOFLAGS may say false.
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "../cmd/mcpsandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("version: %v %s", err, out)
	}
	t.Logf("%s", out)
	want := "revision " + strings.TrimSpace(string(rev))[:12]
	if !strings.Contains(string(out), want) || strings.TrimSpace(string(out)) == "mcpsandbox dev" {
		t.Errorf("version %q does not name %q", out, want)
	}
	if dirty := len(strings.TrimSpace(string(st))) > 0; dirty != strings.Contains(string(out), "modified") {
		t.Errorf("version %q: the tree is modified=%v", out, dirty)
	}
	// go run (as the README's first steps use) records no revision and says so.
	out, err = exec.Command(binPath, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "go1.") {
		t.Errorf("version of the test build: %v %q", err, out)
	}
}
