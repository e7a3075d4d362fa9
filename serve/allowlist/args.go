//go:build linux

package allowlist

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/serve"
)

// denyPattern is a compiled deny_args glob. GNU getopt accepts any unambiguous prefix of a long
// option ("--files0=/etc/passwd" means "--files0-from=..."), so a pattern naming a long option
// also denies its abbreviations.
type denyPattern struct {
	glob     string
	re       *regexp.Regexp
	longName string // "--files0-from" for "--files0-from*"; "" when the pattern is not a long option
}

func compileDeny(g string) (denyPattern, error) {
	re, err := policy.CompileGlob(g)
	if err != nil {
		return denyPattern{}, err
	}
	d := denyPattern{glob: g, re: re}
	if strings.HasPrefix(g, "--") {
		name := g
		if i := strings.IndexAny(g, "*?[="); i >= 0 {
			name = g[:i]
		}
		if len(name) > 2 {
			d.longName = name
		}
	}
	return d, nil
}

func (d denyPattern) match(arg string) bool {
	if d.re.MatchString(arg) {
		return true
	}
	if d.longName == "" || !strings.HasPrefix(arg, "--") {
		return false
	}
	name, _, _ := strings.Cut(arg, "=")
	return len(name) > 3 && strings.HasPrefix(d.longName, name)
}

// checkArgs applies deny_args and keeps path-like arguments inside the workspace. Argument
// parsing can be fooled, so this is the first line only: Landlock enforces the same in the kernel.
func (e *Executor) checkArgs(pc *pinned, args []string) error {
	if len(args) > maxArgs {
		return serve.Refuse("tool.arguments", "%d arguments; at most %d", len(args), maxArgs)
	}
	total := 0
	for i, a := range args {
		total += len(a)
		if strings.IndexByte(a, 0) >= 0 {
			return serve.Refuse("tool.arguments", "argument %d contains a NUL byte", i+1)
		}
	}
	if total > maxArgsBytes {
		return serve.Refuse("tool.arguments", "arguments total %d bytes; at most %d", total, maxArgsBytes)
	}
	for i, a := range args {
		for _, d := range pc.denyRe {
			if d.match(a) {
				return serve.Refuse("allowlist.commands["+pc.Name+"].deny_args",
					"argument %d %q matches the denied pattern %q", i+1, a, d.glob)
			}
		}
	}
	if pc.AllowOutsidePaths {
		return nil
	}
	for i, a := range args {
		for _, cand := range pathCandidates(a) {
			resolved, ok := e.insideWorkspace(cand)
			if !ok {
				return serve.Refuse("allowlist.workspace",
					"argument %d %q resolves to %s, outside the workspace %s (paths must stay in the workspace; allow_outside_paths = true on the command permits reads outside)",
					i+1, a, resolved, e.ws)
			}
			if name := hostExecuted(e.ws, resolved); name != "" {
				return serve.Refuse("allowlist.workspace",
					"argument %d %q names %s: files there run programs on the host later (git hooks and config, editor tasks, direnv), so tools may not name them",
					i+1, a, name)
			}
		}
	}
	return nil
}

// hostExecuted are workspace names whose content the host later runs: git hooks and config
// (core.fsmonitor, core.hooksPath), editor task and settings folders, direnv and MCP configs.
var hostExecuted = func() func(ws, p string) string {
	dirs := map[string]bool{".git": true, ".hg": true, ".vscode": true, ".idea": true, ".cursor": true, ".claude": true}
	files := map[string]bool{".envrc": true, ".mcp.json": true, ".gitmodules": true, ".gitattributes": true}
	return func(ws, p string) string {
		rel, err := filepath.Rel(ws, p)
		if err != nil || rel == "." {
			return ""
		}
		parts := strings.Split(rel, string(filepath.Separator))
		for _, c := range parts[:len(parts)-1] {
			if dirs[c] {
				return c + "/"
			}
		}
		if last := parts[len(parts)-1]; dirs[last] || files[last] {
			return last
		}
		return ""
	}
}()

// pathCandidates are the parts of an argument that a program might open as a path: the argument
// itself, the value of --opt=value, and the attached value of a short option (-o/out).
func pathCandidates(a string) []string {
	switch {
	case a == "" || a == "-" || a == "--":
		return nil
	case strings.HasPrefix(a, "--"):
		if _, v, ok := strings.Cut(a, "="); ok && v != "" {
			return []string{v}
		}
		return nil
	case strings.HasPrefix(a, "-"):
		var c []string
		if len(a) > 2 {
			c = append(c, a[2:])
		}
		if i := strings.IndexByte(a, '/'); i > 0 {
			c = append(c, a[i:])
		}
		if _, v, ok := strings.Cut(a, "="); ok && v != "" {
			c = append(c, v)
		}
		return c
	}
	return []string{a}
}

// insideWorkspace resolves p (relative to the workspace) through every symlink on its longest
// existing prefix and reports whether the result stays inside the workspace.
func (e *Executor) insideWorkspace(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.ws, p)
	}
	p = filepath.Clean(p)
	for q := p; ; q = filepath.Dir(q) {
		if _, err := os.Lstat(q); err == nil {
			r, err := filepath.EvalSymlinks(q)
			if err != nil {
				return fmt.Sprintf("%s (a symlink that does not resolve)", q), false
			}
			rest, _ := filepath.Rel(q, p)
			p = filepath.Join(r, rest)
			break
		}
		if q == "/" || q == "." {
			break
		}
	}
	return p, p == e.ws || strings.HasPrefix(p, e.ws+string(filepath.Separator))
}
