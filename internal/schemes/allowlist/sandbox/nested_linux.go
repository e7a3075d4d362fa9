package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
)

// Bounds of the walk for protected paths below the workspace's top level.
const (
	maxNestedWalk = 200000 // entries looked at
	maxNested     = 512    // protected paths found (each is a mount for the call)
)

var errNestedStop = errors.New("stop")

// nestedProtected finds the protected paths below the workspace's top level (a nested
// repository's .git and its hooks, docs/CLAUDE.md, a sub-project's .npmrc) for a call of an
// interpreter, which the argument check cannot follow: each is mounted read-only for the call,
// as the top-level ones are. Text tools need none of this: their path arguments are judged.
// A protected directory is taken whole, so nothing below it is looked at.
//
// With a workspace layer, the same walk lists the regular files with more than one hard link
// (linked), which the call's layer hides: another name of such a file may lie outside the
// workspace, and an interpreter opens files no argument names (allowlist.hardlinks = "refuse").
func (e *Executor) nestedProtected() (found, linked []string, err error) {
	prot := e.protection()
	hide := e.layerRoot != "" && e.al.HardLinks != alsec.HardLinksReadOnly && !mutated("hardlink-hide")
	top := make(map[string]bool, len(prot.roots))
	for r := range prot.roots {
		top[r] = true
	}
	n := 0
	var stop error
	err = filepath.WalkDir(e.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == e.ws {
			return nil // unreadable to serve: not readable to the sandbox's uid either
		}
		if top[p] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if n++; n > maxNestedWalk {
			stop = fmt.Errorf("the workspace has more than %d entries to look through", maxNestedWalk)
			return errNestedStop
		}
		rel := strings.TrimPrefix(p, e.ws+"/")
		if !e.protectedName(rel, d.Name()) && !(d.IsDir() && wslayer.EnvMarker(p) != "") && wslayer.EnvPathHook(rel) == "" {
			if hide && d.Type().IsRegular() {
				if info, err := d.Info(); err == nil {
					if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
						linked = append(linked, rel)
					}
				}
			}
			return nil
		}
		if d.Name() == ".git" {
			prot.repo(filepath.Dir(p)) // a nested repository: its core.hooksPath too
		}
		found = append(found, p)
		if len(found) > maxNested {
			stop = fmt.Errorf("more than %d protected paths lie below the workspace's top level", maxNested)
			return errNestedStop
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	if stop != nil {
		return nil, nil, executor.Refuse("allowlist.protect",
			"%v; a call of an allowlisted interpreter mounts each read-only, and this many cannot be: trim the workspace or the protect list, or allowlist no interpreter", stop)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("look for protected paths in the workspace: %w", err)
	}
	for _, r := range e.envRootParts() { // the workspace root is an interpreter environment
		if !top[r] && !slices.Contains(found, r) {
			found = append(found, r)
		}
	}
	for r := range prot.roots { // nested repositories' hooks directories found on the way
		if !top[r] && !slices.Contains(found, r) && within(e.ws, r) {
			found = append(found, r)
		}
	}
	slices.Sort(found)
	return found, linked, nil
}

// protectedName says whether the entry rel (workspace-relative; base is its last element)
// matches the protect list by its own name or, for an anchored pattern, its whole path. The
// walk never descends into a match, so the prefixes above an entry are known not to match.
func (e *Executor) protectedName(rel, base string) bool {
	if e.protNames[base] {
		return true
	}
	for _, pat := range e.protect {
		if pat.literal && !pat.anchored {
			continue // in protNames
		}
		if (pat.anchored && pat.matches(rel)) || (!pat.anchored && pat.matches(base)) {
			return true
		}
	}
	return false
}
