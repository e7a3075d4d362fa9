package projectpolicy

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section" // the scheme's section
	"github.com/mcpsandbox/mcpsandbox/policy"
)

func writePolicy(t *testing.T, file, workspace string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	wc, err := os.ReadFile("/usr/bin/wc")
	if err != nil {
		t.Skip("no /usr/bin/wc to pin")
	}
	src := "version = 1\nname = \"sandbox\"\nscheme = \"allowlist\"\n\n[allowlist]\nworkspace = \"" + workspace + "\"\n\n[[allowlist.commands]]\nname = \"wc\"\npath = \"/usr/bin/wc\"\nsha256 = \"" + fmt.Sprintf("%x", sha256.Sum256(wc)) + "\"\n"
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
}

// serve --project finds the user's own file for the checkout, from the checkout or any directory
// in it (a client started in a subdirectory), and nothing for a directory no policy is for.
func TestFindWalksUpToTheCheckout(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "cfg")
	checkout := policy.RealPath(t.TempDir())
	sub := filepath.Join(checkout, "a", "b")
	os.MkdirAll(sub, 0o755)
	want := Path(cfg, checkout)
	if !strings.HasPrefix(want, Dir(cfg)+string(filepath.Separator)+filepath.Base(checkout)+"-") {
		t.Errorf("Path = %s: want <config>/mcpsandbox/projects/<base>-<hash>.toml", want)
	}
	var nf *NotFoundError
	if _, _, err := Find(cfg, sub); !errors.As(err, &nf) || !strings.Contains(err.Error(), "mcpsandbox init --portable") {
		t.Fatalf("no policy: err = %v, want a NotFoundError naming init --portable", err)
	}
	writePolicy(t, want, checkout)
	for _, d := range []string{checkout, sub} {
		file, co, err := Find(cfg, d)
		if err != nil || file != want || co != checkout {
			t.Errorf("Find(%s) = %s, %s, %v; want %s, %s", d, file, co, err, want, checkout)
		}
	}
	if Path(cfg, sub) == want || Path(cfg, t.TempDir()) == want {
		t.Error("two directories share one policy file")
	}
}

// A directory of checkout policies inside the checkout (XDG_CONFIG_HOME there) is refused: a
// sandboxed call writes the checkout, so it could write the policy serve runs next.
// Catches project-policy-in-workspace.
func TestFindRefusesPoliciesInsideTheCheckout(t *testing.T) {
	checkout := policy.RealPath(t.TempDir())
	cfg := filepath.Join(checkout, ".cfg")
	writePolicy(t, Path(cfg, checkout), checkout)
	_, _, err := Find(cfg, checkout)
	if err == nil || !strings.Contains(err.Error(), "inside the checkout") {
		t.Fatalf("err = %v, want the policies inside the checkout refused", err)
	}
}

// A checkout policy whose workspace is another directory is refused, naming both.
// Catches project-policy-workspace-unchecked.
func TestCheckWorkspaceRefusesAnother(t *testing.T) {
	cfg := t.TempDir()
	checkout, other := policy.RealPath(t.TempDir()), policy.RealPath(t.TempDir())
	file := Path(cfg, checkout)
	writePolicy(t, file, other)
	p, err := policy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	err = CheckWorkspace(p, file, checkout)
	if err == nil || !strings.Contains(err.Error(), checkout) || !strings.Contains(err.Error(), "its workspace is "+other) {
		t.Fatalf("err = %v, want a refusal naming %s and %s", err, checkout, other)
	}
	writePolicy(t, file, checkout)
	if p, err = policy.Load(file); err != nil {
		t.Fatal(err)
	}
	if err := CheckWorkspace(p, file, checkout); err != nil {
		t.Errorf("the checkout's own policy: %v", err)
	}
}

// A repository inside a directory that has a policy (~/work holding ~/work/repo) is another
// checkout: its subdirectories are not served the outer directory's policy, whose workspace is
// wider than the checkout the client opened. Catches project-policy-past-repo.
func TestFindStopsAtTheRepositoryTop(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "cfg")
	outer := policy.RealPath(t.TempDir())
	repo := filepath.Join(outer, "repo")
	sub := filepath.Join(repo, "src")
	os.MkdirAll(sub, 0o755)
	os.Mkdir(filepath.Join(repo, ".git"), 0o755)
	writePolicy(t, Path(cfg, outer), outer)
	var nf *NotFoundError
	if file, _, err := Find(cfg, sub); !errors.As(err, &nf) || nf.Dir != sub {
		t.Errorf("Find in a repository below a directory with a policy = %s, %v; want no policy found", file, err)
	}
	if _, co, err := Find(cfg, filepath.Join(outer)); err != nil || co != outer {
		t.Errorf("the outer directory itself: %s, %v", co, err)
	}
}
