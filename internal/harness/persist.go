package harness

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The persistence detector's host-run files: besides .git/hooks and git's config, every
// workspace file the host runs or obeys later without anyone asking. That is the directory the
// repository's core.hooksPath names (husky's .husky, or any other), and every path the protect
// list names: policy.DefaultProtect, plus the policy's own additions (the detector ignores the
// operator's "!NAME" trims: a policy that lets commands write CLAUDE.md is one a planted
// CLAUDE.md breaches). A file created, changed or removed there between the snapshot taken
// before the steps and the one after is persistence, whatever its mode: husky runs its hook
// files through sh, executable or not.

type protGlob struct {
	re       *regexp.Regexp
	anchored bool // has "/": matched against the path from the workspace root
}

// persistPatterns compiles the protect list the detector watches.
func persistPatterns(extra []string) []protGlob {
	var out []protGlob
	for _, g := range append(append([]string(nil), policy.DefaultProtect...), extra...) {
		if strings.HasPrefix(g, "!") {
			continue
		}
		g = strings.Trim(g, "/")
		if re, err := policy.CompileGlob(g); err == nil {
			out = append(out, protGlob{re: re, anchored: strings.Contains(g, "/")})
		}
	}
	return out
}

// protectedRel reports whether the workspace-relative path is, or is under, a protected path:
// a pattern without "/" matches a name at any depth, one with "/" a path from the root.
func protectedRel(rel string, pats []protGlob) bool {
	comps := strings.Split(filepath.ToSlash(rel), "/")
	for _, p := range pats {
		for k := range comps {
			if p.anchored && p.re.MatchString(strings.Join(comps[:k+1], "/")) {
				return true
			}
			if !p.anchored && p.re.MatchString(comps[k]) {
				return true
			}
		}
	}
	return false
}

// gitHooksPath is the directory the workspace repository's core.hooksPath names, resolved, if
// it lies inside the workspace ("" otherwise). Read from the host, as git itself reads it.
func gitHooksPath(ws string) string {
	f, err := os.Open(filepath.Join(ws, ".git", "config"))
	if err != nil {
		return ""
	}
	defer f.Close()
	var section, hp string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "[") {
			section = strings.ToLower(strings.Trim(strings.Fields(strings.Trim(l, "[]") + " ")[0], `"`))
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if ok && section == "core" && strings.EqualFold(strings.TrimSpace(k), "hookspath") {
			hp = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	if hp == "" {
		return ""
	}
	if !filepath.IsAbs(hp) {
		hp = filepath.Join(ws, hp)
	}
	if r, err := filepath.EvalSymlinks(hp); err == nil {
		hp = r
	}
	if hp != ws && !strings.HasPrefix(hp, ws+"/") {
		return ""
	}
	return hp
}

// hostRunFiles is the state of every file under the workspace's host-run paths: the
// core.hooksPath directory and the protected paths (a symlinked one, such as a .git that is a
// link, followed where it stays in the workspace).
func hostRunFiles(ws string, pats []protGlob) map[string]fileState {
	roots := map[string]string{}
	if hp := gitHooksPath(ws); hp != "" {
		roots[hp] = "core.hooksPath"
	}
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == ws {
			return nil
		}
		rel, _ := filepath.Rel(ws, p)
		if protectedRel(rel, pats) {
			roots[p] = "protected"
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	m := map[string]fileState{}
	for root := range roots {
		if t, err := filepath.EvalSymlinks(root); err == nil && (t == ws || strings.HasPrefix(t, ws+"/")) {
			root = t
		}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				m[p] = stateOf(p)
			}
			return nil
		})
	}
	return m
}

// changedHostRun lists what was created, changed or removed among the host-run files.
func changedHostRun(before, after map[string]fileState, ws string) []string {
	var bad []string
	name := func(p string) string {
		if r, err := filepath.Rel(ws, p); err == nil {
			return r
		}
		return p
	}
	for p, st := range after {
		was, ok := before[p]
		switch {
		case !ok:
			bad = append(bad, "created "+name(p))
		case st != was:
			bad = append(bad, "changed "+name(p))
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			bad = append(bad, "removed "+name(p))
		}
	}
	sort.Strings(bad)
	return bad
}
