package wslayer

import (
	"os"
	"path/filepath"
	"strings"
)

// A glob in a config's command line is matched as sh matches it, for the one match that
// matters: in a program's position sh runs the first match (the others are its arguments), a
// runtime opens its first script. filepath.Glob listed every match of every level (the host's
// tree for `/*/*/*/*/*/*`: 21 s a commit, atk47a F7), from each directory of the line, and
// past 256 matches at the root every change was refused, a bound the call's own files reached
// (atk47a F3). The walk below goes level by level in sorted order (filepath.Glob's order),
// stops at the first match, never leaves the workspace (a pattern outside it names no file a
// call writes) and is charged to one budget per commit.

// maxGlobEntries bounds the directory entries the globs of a commit's config lines read.
var maxGlobEntries = 1 << 16 // a variable for the tests

// readGlobDir is os.ReadDir (the tests count its calls).
var readGlobDir = os.ReadDir

// globFound is a pattern's first match from a directory ("": none) and whether the walk was
// cut by the budget before it found one.
type globFound struct {
	match string
	cut   bool
}

// firstMatch is the first file (sh's order) the pattern pat (Go's spelling) matches from dir,
// inside the workspace.
func (f *follower) firstMatch(dir, pat string) globFound {
	k := [2]string{dir, pat}
	if r, ok := f.lines.globs[k]; ok {
		return r
	}
	if f.lines.globs == nil {
		f.lines.globs = map[[2]string]globFound{}
	}
	start, rest := globStart(dir, pat)
	r := globFound{}
	if f.inWorkspace(start) || mutated("workspace-config-glob-outside") {
		r = f.globWalk(start, rest)
	}
	f.lines.globs[k] = r
	return r
}

// globStart splits pat (from dir) into the directory its fixed leading components name and
// the components after them (the first holds a pattern byte).
func globStart(dir, pat string) (string, []string) {
	start := dir
	if filepath.IsAbs(pat) {
		start = "/"
	}
	parts := strings.Split(pat, "/")
	for len(parts) > 1 && !strings.ContainsAny(parts[0], "*?[\\") {
		start = filepath.Join(start, parts[0])
		parts = parts[1:]
	}
	return start, parts
}

// inWorkspace: p (clean, absolute) is the workspace or below it, in either spelling.
func (f *follower) inWorkspace(p string) bool {
	p = f.g.wsSpelled(filepath.Clean(p))
	return p == f.g.ws || strings.HasPrefix(p, f.g.ws+"/")
}

// globWalk is the first path below dir that the components parts match, depth first in sorted
// order, as sh (and filepath.Glob) order them: `*` and `?` match no leading dot, as in sh.
func (f *follower) globWalk(dir string, parts []string) globFound {
	if len(parts) == 0 {
		return globFound{match: dir}
	}
	if parts[0] == "" || !strings.ContainsAny(parts[0], "*?[\\") {
		// a fixed component below a pattern (`*/bin/x`), `.` or `..`: joined, in the workspace
		next := filepath.Join(dir, parts[0])
		if !f.inWorkspace(next) && !mutated("workspace-config-glob-outside") {
			return globFound{}
		}
		if len(parts) == 1 {
			if _, err := os.Lstat(next); err != nil {
				return globFound{}
			}
		}
		return f.globWalk(next, parts[1:])
	}
	ents, err := readGlobDir(dir)
	if err != nil {
		return globFound{}
	}
	if f.lines.globWork += len(ents); f.lines.globWork > maxGlobEntries && !mutated("workspace-config-glob-budget") {
		return globFound{cut: true}
	}
	for _, e := range ents {
		name := e.Name()
		if name[0] == '.' && parts[0][0] != '.' {
			continue // sh's `*` and `?` match no leading dot
		}
		if ok, err := filepath.Match(parts[0], name); err != nil || !ok {
			continue
		}
		p := filepath.Join(dir, name)
		if len(parts) > 1 {
			if st, err := os.Stat(p); err != nil || !st.IsDir() {
				continue
			}
		}
		if r := f.globWalk(p, parts[1:]); r.match != "" || r.cut {
			return r
		}
	}
	return globFound{}
}
