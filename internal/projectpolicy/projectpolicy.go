// Package projectpolicy finds a user's own policy for a checkout: the portable team form
// (README, "Using mcpsandbox in a team repository"). A repository commits client entries that
// run `mcpsandbox serve --project` and hold no machine paths; each user's policy for their
// checkout lives in their own config directory, never in the checkout: a file there could be
// rewritten by a sandboxed call or committed by a teammate, and must never decide what serve
// allows.
package projectpolicy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// InitCommand is the command that writes a user's policy for a checkout, in words for messages.
const InitCommand = "mcpsandbox init --portable --scheme … --client … --yes"

// Dir is the directory of a user's checkout policies under their config directory.
func Dir(configDir string) string { return filepath.Join(configDir, "mcpsandbox", "projects") }

// Path is the policy file for the checkout at dir: its base name (for a person reading the
// directory) and a hash of its real path (two checkouts of one name stay apart).
func Path(configDir, checkout string) string {
	real := policy.RealPath(checkout)
	sum := sha256.Sum256([]byte(real))
	return filepath.Join(Dir(configDir), baseName(real)+"-"+hex.EncodeToString(sum[:8])+".toml")
}

// baseName is dir's last element as a file name: letters, digits, '.', '_', '-', at most 40.
func baseName(dir string) string {
	b := []rune(filepath.Base(dir))
	out := make([]rune, 0, len(b))
	for _, r := range b {
		if r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			out = append(out, r)
		} else {
			out = append(out, '_')
		}
	}
	s := strings.TrimLeft(string(out), ".")
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		s = "root"
	}
	return s
}

// NotFoundError: no policy of this user for the checkout at Dir or any directory above it.
type NotFoundError struct {
	Dir  string // where serve started looking (real path)
	Want string // the policy file Dir's own would be
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("serve --project: you have no mcpsandbox policy for the checkout %s (looked for %s, and for each directory above it up to its repository's top): "+
		"run, in that checkout, the init command its team gave (README, \"Using mcpsandbox in a team repository\"), of the form `cd %s && %s`",
		e.Dir, e.Want, shellword.Quote(e.Dir), InitCommand)
}

// Find is the policy for the checkout holding dir: this user's file for dir, else for the
// nearest directory above it that has one (a client started in a subdirectory), up to the top
// of the git work tree holding dir, and that checkout's directory. The directory of these files must not lie in the checkout.
func Find(configDir, dir string) (file, checkout string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", "", fmt.Errorf("serve --project %s: not a directory: give the checkout's directory (clients pass ${workspaceFolder}, or start serve in it)", dir)
	}
	real := policy.RealPath(abs)
	if configDir == "" {
		return "", "", fmt.Errorf("serve --project: no config directory to find your policy in (set $HOME or $XDG_CONFIG_HOME)")
	}
	for d := real; ; d = filepath.Dir(d) {
		p := Path(configDir, d)
		if _, err := os.Lstat(p); err == nil {
			if err := outside(configDir, d); err != nil {
				return "", "", err
			}
			return p, d, nil
		}
		if filepath.Dir(d) == d {
			break
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil && !mutated("project-policy-past-repo") {
			// a repository's top: a policy for a directory holding it (~/work, say) is for
			// another checkout, and its workspace wider than the one the client opened
			break
		}
	}
	return "", "", &NotFoundError{Dir: real, Want: Path(configDir, real)}
}

// outside refuses a directory of checkout policies inside the checkout: a sandboxed call
// writes there, and whatever it wrote would be the policy serve runs next.
func outside(configDir, checkout string) error {
	if mutated("project-policy-in-workspace") {
		return nil
	}
	d := policy.RealPath(Dir(configDir))
	if within(d, checkout) {
		return fmt.Errorf("serve --project: your policies for checkouts are in %s, inside the checkout %s, where sandboxed calls write: "+
			"refused (a call could rewrite the policy it runs under); set XDG_CONFIG_HOME to a directory outside it", d, checkout)
	}
	return nil
}

// within says whether path is dir or lies below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// CheckWorkspace refuses a checkout policy whose workspace is not its checkout: serve --project
// serves the checkout the client opened, and a policy that names another directory (a copy of
// another checkout's file, or one edited by hand) would have calls write there instead.
func CheckWorkspace(p *policy.Policy, file, checkout string) error {
	if mutated("project-policy-workspace-unchecked") {
		return nil
	}
	ws := p.WorkspaceDir()
	if ws == "" {
		return fmt.Errorf("%s has no local workspace (scheme %s): serve --project serves a policy whose workspace is the checkout %s; "+
			"write it again with `cd %s && %s --force`", file, p.Scheme, checkout, shellword.Quote(checkout), InitCommand)
	}
	if policy.RealPath(ws) != policy.RealPath(checkout) {
		return fmt.Errorf("%s is your policy for the checkout %s, but its workspace is %s: refused (its calls would work elsewhere than the checkout the client opened); "+
			"set workspace = %q in it, or write it again with `cd %s && %s --force`", file, checkout, ws, checkout, shellword.Quote(checkout), InitCommand)
	}
	return nil
}
