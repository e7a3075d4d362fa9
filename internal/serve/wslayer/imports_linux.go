package wslayer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// Agents' instruction files import others: a line of CLAUDE.md (or CLAUDE.local.md, GEMINI.md)
// that says @docs/rules.md makes docs/rules.md part of the instructions the next session obeys
// (Claude Code follows imports 5 deep, Gemini CLI's memory import does the same). The
// instruction files are protected; what they import must be too, or a call writes an ordinary
// file and steers the next session (attack round 15b), as a link from a protected name to an
// ordinary file did before (round 4).
var importers = map[string]bool{"CLAUDE.md": true, "CLAUDE.local.md": true, "GEMINI.md": true}

// Bounds of the imports followed: instruction files the walk keeps, import hops, paths kept.
const (
	maxImporters   = 512
	maxImportDepth = 5
	maxImported    = 4096
)

// importRef is an import: "@" at the start of a line or after white space, then a path.
var importRef = lazy.Regexp(`(?:^|\s)@((?:[^\s\\]|\\ )+)`)

// imports returns the paths (absolute, as written from the importing file) that the
// instruction files the walk found import, followed through the imported files inside the
// workspace. Taken as written, code blocks included: a path named so is protected even where
// the agent would not follow it (fail closed).
func (g *gitGuard) imports() []string {
	if g.importsDone {
		return g.imported
	}
	g.importsDone = true
	g.inside() // the walk finds the instruction files
	seen := map[string]bool{}
	var follow func(file string, depth int)
	follow = func(file string, depth int) {
		if depth > maxImportDepth || seen[file] || len(g.imported) >= maxImported {
			return
		}
		seen[file] = true
		b, err := readSmall(file)
		if err != nil {
			return
		}
		for _, m := range importRef().FindAllStringSubmatch(string(b), -1) {
			ref := strings.ReplaceAll(m[1], `\ `, " ")
			ref = strings.TrimRight(ref, ".,;:)]}>\"'`")
			if ref == "" || strings.HasPrefix(ref, "~") || strings.Contains(ref, "://") {
				continue // the user's home, a URL: not the workspace's
			}
			p := absFrom(filepath.Dir(file), ref)
			if !strings.HasPrefix(p, g.ws+"/") {
				continue
			}
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				continue // an agent imports files: "@src" or "@." (which would protect all) is text
			}
			if len(g.imported) >= maxImported {
				return
			}
			g.imported = append(g.imported, p)
			g.importedBy[p] = file
			follow(p, depth+1)
		}
	}
	for _, f := range g.importers {
		follow(f, 1)
	}
	return g.imported
}

// importMatch says which instruction file imports rel (a path from the workspace root), "" when
// none does.
func (g *gitGuard) importMatch(rel string) string {
	if mutated("workspace-agent-imports") {
		return ""
	}
	for _, p := range g.imports() {
		if g.covers(p, rel, false) {
			by, _ := filepath.Rel(g.ws, g.importedBy[p])
			return "imported by the agent instruction file " + strconv.Quote(filepath.ToSlash(by)) +
				" (@path): the next session reads it as instructions"
		}
	}
	return ""
}
