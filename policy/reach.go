package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
)

// Unreachable is the directory above (or at) path that this user cannot pass, with why ("" when
// none): a policy written for another user names a workspace and an audit log in their home,
// which this one cannot reach, and no `mkdir -p` fixes that (trial38 F1).
// Only a lookup the kernel refuses counts (an ACL may let this user through what the mode bars);
// the owner and mode of the directory that stops it say why.
var Unreachable = func(path string) string {
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrPermission) {
		return ""
	}
	if at := unreachableAs(path, os.Geteuid(), groups()); at != "" {
		return at
	}
	return path + ": permission denied"
}

func groups() []int {
	g, _ := os.Getgroups()
	return append(g, os.Getegid())
}

// ForeignPath is one path of a policy that this user cannot reach: the key that names it, the
// path, and the directory that stops this user.
type ForeignPath struct {
	Key, Path, At string
}

// ForeignPaths are the workspace and audit.path of p that this user cannot reach (nil when it can
// reach both). home is this user's home: audit.path "" is under it.
func (p *Policy) ForeignPaths() []ForeignPath {
	if mutated("policy-foreign-paths") {
		return nil
	}
	var out []ForeignPath
	if ws := p.WorkspaceDir(); ws != "" && filepath.IsAbs(ws) {
		if at := Unreachable(filepath.Clean(ws)); at != "" {
			out = append(out, ForeignPath{p.Scheme + ".workspace", ws, at})
		}
	}
	if a := p.Audit.Path; a != "" && filepath.IsAbs(a) {
		if at := Unreachable(filepath.Clean(a)); at != "" {
			out = append(out, ForeignPath{"audit.path", a, at})
		}
	}
	return out
}

// ForeignError says plainly that a policy was written for another user or machine, what it names
// that this user cannot reach, and how to make one's own (not "mkdir -p" in someone else's home).
func ForeignError(policyPath string, fps []ForeignPath) error {
	if len(fps) == 0 {
		return nil
	}
	var parts, why []string
	for _, f := range fps {
		parts = append(parts, f.Key+" "+f.Path)
		why = append(why, f.At)
	}
	name := "this policy"
	if policyPath != "" {
		name = "the policy " + policyPath
	}
	return fmt.Errorf("%s was written for another user or machine: its %s lie where you (uid %d) cannot reach (%s). "+
		"Make your own with: mcpsandbox init --workspace DIR (DIR a directory of yours, e.g. your checkout: "+
		"see README, \"Using mcpsandbox in a team repository\"), or copy it and set those keys to paths of yours",
		name, strings.Join(parts, " and "), os.Geteuid(), strings.Join(dedup(why), "; "))
}

func dedup(s []string) []string {
	var out []string
	for _, x := range s {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// unreachableAs walks path from the root down: the first directory uid (with groups gids) may not
// search, or the first that cannot be looked up for want of permission, stops it. A part that
// does not exist ends the walk (that is for "create it", not this).
func unreachableAs(path string, uid int, gids []int) string {
	var up []string
	for a := path; ; a = filepath.Dir(a) {
		up = append(up, a)
		if filepath.Dir(a) == a {
			break
		}
	}
	for i := len(up) - 1; i >= 1; i-- { // the directories above path, root first
		d := up[i]
		st, err := os.Stat(d)
		if errors.Is(err, fs.ErrPermission) {
			return d + ": permission denied"
		}
		if err != nil || !st.IsDir() {
			return ""
		}
		if why := noSearch(st, uid, gids); why != "" {
			return shellword.Quote(d) + " " + why
		}
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrPermission) {
		return path + ": permission denied"
	}
	return ""
}
